/*
 * devops_cuda_moe.c — the cuda device ops of a mixture-of-experts layer: argument
 * checks shared with the cpu ops (tsl_devops_check_moe), then a kernel of
 * devops_cuda_kernels.cu queued on the compute stream.
 */
#include <cuda_runtime.h>

#include "devops_cuda_kernels.h"
#include "devops_cuda_moe.h"

static int kerr(int e, const char *what, tsl_err_t *err)
{
    if (e == 0)
        return 0;
    return tsl_err_setc(err, TSL_E_DEVICE, "cuda: %s: %s", what,
                        cudaGetErrorString((cudaError_t)e));
}

static void *stream_of(tsl_devops_t *o)
{
    return o->stream(o, TSL_STREAM_COMPUTE);
}

int tsl_cuda_moe_topk(tsl_devops_t *o, const tsl_buf_t *logits, const tsl_moe_route_t *rt,
                      tsl_buf_t *probs, tsl_buf_t *idx, tsl_buf_t *w, int rows, int experts, int k,
                      tsl_err_t *err)
{
    tsl_moe_args_t a = {.x = logits,
                        .probs = probs,
                        .idx = idx,
                        .w = w,
                        .rows = rows,
                        .experts = experts,
                        .k = k,
                        .rt = rt};
    if (tsl_devops_check_moe("moe_topk", &a, err))
        return -1;
    tsl_moe_route_t plain = {0};
    rt = rt ? rt : &plain;
    return kerr(tsl_xk_moe_topk(logits->ptr, (int)logits->dt, rt->bias ? rt->bias->ptr : NULL,
                                probs->ptr, idx->ptr, w->ptr, rows, experts, k, rt->sigmoid,
                                rt->groups, rt->topk_groups, rt->norm,
                                rt->scale > 0 ? rt->scale : 1.0f, stream_of(o)),
                "moe_topk", err);
}

int tsl_cuda_moe_topk_bwd(tsl_devops_t *o, const tsl_buf_t *probs, const tsl_buf_t *idx,
                          const tsl_buf_t *dw, const tsl_moe_route_t *rt, tsl_buf_t *dlogits,
                          int rows, int experts, int k, tsl_err_t *err)
{
    tsl_moe_args_t a = {.probs = probs,
                        .idx = idx,
                        .w = dw,
                        .y = dlogits,
                        .rows = rows,
                        .experts = experts,
                        .k = k,
                        .rt = rt};
    if (tsl_devops_check_moe("moe_topk_bwd", &a, err))
        return -1;
    tsl_moe_route_t plain = {0};
    rt = rt ? rt : &plain;
    return kerr(tsl_xk_moe_topk_bwd(probs->ptr, idx->ptr, dw->ptr, dlogits->ptr, (int)dlogits->dt,
                                    rows, experts, k, rt->sigmoid, rt->norm,
                                    rt->scale > 0 ? rt->scale : 1.0f, stream_of(o)),
                "moe_topk_bwd", err);
}

int tsl_cuda_moe_sort(tsl_devops_t *o, const tsl_buf_t *idx, tsl_buf_t *order, tsl_buf_t *pos,
                      tsl_buf_t *counts, int n, int experts, int cap, tsl_err_t *err)
{
    tsl_moe_args_t a = {
        .idx = idx, .order = order, .pos = pos, .counts = counts, .n = n, .experts = experts};
    if (tsl_devops_check_moe("moe_sort", &a, err))
        return -1;
    return kerr(
        tsl_xk_moe_sort(idx->ptr, order->ptr, pos->ptr, counts->ptr, n, experts, cap, stream_of(o)),
        "moe_sort", err);
}

int tsl_cuda_gather_rows(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *idx, int div,
                         const tsl_buf_t *scale, tsl_buf_t *y, int rows, int cols, tsl_err_t *err)
{
    tsl_moe_args_t a = {
        .x = x, .idx = idx, .w = scale, .y = y, .rows = rows, .cols = cols, .div = div};
    if (tsl_devops_check_moe("gather_rows", &a, err))
        return -1;
    return kerr(tsl_xk_gather_rows(x->ptr, x->n / (size_t)cols, idx->ptr, div,
                                   scale ? scale->ptr : NULL, y->ptr, (int)y->dt, rows, cols,
                                   stream_of(o)),
                "gather_rows", err);
}

int tsl_cuda_scatter_add_rows(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *pos,
                              const tsl_buf_t *w, tsl_buf_t *y, int rows, int k, int cols,
                              tsl_err_t *err)
{
    tsl_moe_args_t a = {.x = x, .pos = pos, .w = w, .y = y, .rows = rows, .cols = cols, .k = k};
    if (tsl_devops_check_moe("scatter_add_rows", &a, err))
        return -1;
    return kerr(tsl_xk_scatter_add_rows(x->ptr, x->n / (size_t)cols, pos->ptr, w ? w->ptr : NULL,
                                        y->ptr, (int)y->dt, rows, k, cols, stream_of(o)),
                "scatter_add_rows", err);
}

int tsl_cuda_rows_dot(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *y, const tsl_buf_t *pos,
                      tsl_buf_t *out, int n, int k, int cols, tsl_err_t *err)
{
    tsl_moe_args_t a = {.x = x, .y = y, .pos = pos, .out = out, .n = n, .cols = cols, .k = k};
    if (tsl_devops_check_moe("rows_dot", &a, err))
        return -1;
    return kerr(tsl_xk_rows_dot(x->ptr, y->ptr, y->n / (size_t)cols, pos->ptr, out->ptr, (int)x->dt,
                                n, k, cols, stream_of(o)),
                "rows_dot", err);
}

int tsl_cuda_gate_fwd(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *logit, tsl_buf_t *gate,
                      tsl_buf_t *y, int rows, int cols, tsl_err_t *err)
{
    if (tsl_devops_check_gate("gate_fwd", x, logit, gate, y, rows, cols, err))
        return -1;
    return kerr(tsl_xk_gate_fwd(x->ptr, logit->ptr, gate->ptr, y->ptr, (int)y->dt, rows, cols,
                                stream_of(o)),
                "gate_fwd", err);
}

int tsl_cuda_gate_bwd(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *gate,
                      const tsl_buf_t *dy, tsl_buf_t *dx, tsl_buf_t *dlogit, int rows, int cols,
                      tsl_err_t *err)
{
    if (tsl_devops_check_gate("gate_bwd", x, dlogit, gate, dy, rows, cols, err) ||
        tsl_devops_check_gate("gate_bwd", dx, NULL, NULL, dy, rows, cols, err))
        return -1;
    return kerr(tsl_xk_gate_bwd(x->ptr, gate->ptr, dy->ptr, dx->ptr, dlogit->ptr, (int)dy->dt, rows,
                                cols, stream_of(o)),
                "gate_bwd", err);
}
