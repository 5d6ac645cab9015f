/*
 * devops_cuda.c — the device ops on one GPU: cuBLAS bf16 GEMMs with fp32 accumulation
 * (cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_32F), the small kernels of
 * devops_cuda_kernels.cu, a compute and a communication stream, CUDA events.
 *
 * Row-major through column-major cuBLAS: C = op(A)·op(B) row-major is Cᵀ = op(B)ᵀ·op(A)ᵀ
 * column-major, so the call swaps A and B (and m and n) and keeps the leading dims.
 * Memory: cudaMalloc at setup only (the engine allocates nothing while stepping); a
 * failed cudaMalloc is TSL_E_NOMEM, a result, and the error is cleared.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "devops.h"
#include "devops_cuda_kernels.h"
#include "devops_cuda_moe.h"

typedef struct cuda_ctx {
    int device;
    tsl_memcount_t mem;
    cudaStream_t s[2];
    cublasHandle_t blas;
    float *ws; /* column-reduction workspace, like cuBLAS's own: not in the counters */
} cuda_ctx_t;

struct tsl_event {
    cudaEvent_t ev;
};

static cuda_ctx_t *cx(tsl_devops_t *o)
{
    return o->ctx;
}

static int cuerr(cudaError_t e, const char *what, tsl_err_t *err)
{
    if (e == cudaSuccess)
        return 0;
    return tsl_err_setc(err, TSL_E_DEVICE, "cuda: %s: %s", what, cudaGetErrorString(e));
}

static int kerr(int e, const char *what, tsl_err_t *err)
{
    return cuerr((cudaError_t)e, what, err);
}

static int blaserr(cublasStatus_t s, const char *what, tsl_err_t *err)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return 0;
    return tsl_err_setc(err, TSL_E_DEVICE, "cublas: %s: status %d", what, (int)s);
}

static void *S(tsl_devops_t *o)
{
    return cx(o)->s[TSL_STREAM_COMPUTE];
}

static int cu_alloc(tsl_devops_t *o, tsl_buf_t *out, size_t n, tsl_dtype_t dt, tsl_err_t *err)
{
    cuda_ctx_t *c = cx(o);
    uint64_t bytes = (uint64_t)n * tsl_dtype_bytes(dt);
    memset(out, 0, sizeof(*out));
    if (tsl_memcount_admit(&c->mem, "cuda", bytes, err))
        return -1;
    cudaError_t e = cudaMalloc(&out->ptr, bytes ? bytes : 1);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError(); /* clear it: running out is a result, not a broken context */
        out->ptr = NULL;
        return tsl_err_setc(err, TSL_E_NOMEM,
                            "cuda: out of memory allocating %llu bytes with "
                            "%llu in use",
                            (unsigned long long)bytes, (unsigned long long)c->mem.used_bytes);
    }
    if (cuerr(e, "cudaMalloc", err))
        return -1;
    out->n = n;
    out->dt = dt;
    tsl_memcount_add(&c->mem, (int64_t)bytes);
    return 0;
}

static void cu_free(tsl_devops_t *o, tsl_buf_t *b)
{
    if (!b->ptr)
        return;
    tsl_memcount_add(&cx(o)->mem, -(int64_t)(b->n * tsl_dtype_bytes(b->dt)));
    cudaFree(b->ptr);
    memset(b, 0, sizeof(*b));
}

static uint64_t cu_peak(tsl_devops_t *o)
{
    return cx(o)->mem.peak_bytes;
}
static uint64_t cu_used(tsl_devops_t *o)
{
    return cx(o)->mem.used_bytes;
}
static void cu_reset_peak(tsl_devops_t *o)
{
    cx(o)->mem.peak_bytes = cx(o)->mem.used_bytes;
}

/* bf16 by round-to-nearest-even of the float's bits (NaN kept quiet). */
static uint16_t f2bf(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static float bf2f(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static int cu_upload(tsl_devops_t *o, tsl_buf_t *dst, const void *host, tsl_err_t *err)
{
    if (cuerr(cudaStreamSynchronize(cx(o)->s[0]), "sync", err))
        return -1;
    if (dst->dt != TSL_DT_BF16)
        return cuerr(cudaMemcpy(dst->ptr, host, dst->n * 4u, cudaMemcpyHostToDevice), "upload",
                     err);
    uint16_t *t = malloc(dst->n * 2u + 2);
    if (!t)
        return tsl_err_setc(err, TSL_E_NOMEM, "cuda: out of host memory for an upload");
    for (size_t i = 0; i < dst->n; i++)
        t[i] = f2bf(((const float *)host)[i]);
    int rc = cuerr(cudaMemcpy(dst->ptr, t, dst->n * 2u, cudaMemcpyHostToDevice), "upload", err);
    free(t);
    return rc;
}

static int cu_download(tsl_devops_t *o, const tsl_buf_t *src, void *host, tsl_err_t *err)
{
    if (cuerr(cudaStreamSynchronize(cx(o)->s[0]), "sync", err))
        return -1;
    if (src->dt != TSL_DT_BF16)
        return cuerr(cudaMemcpy(host, src->ptr, src->n * 4u, cudaMemcpyDeviceToHost), "download",
                     err);
    uint16_t *t = malloc(src->n * 2u + 2);
    if (!t)
        return tsl_err_setc(err, TSL_E_NOMEM, "cuda: out of host memory for a download");
    int rc = cuerr(cudaMemcpy(t, src->ptr, src->n * 2u, cudaMemcpyDeviceToHost), "download", err);
    for (size_t i = 0; !rc && i < src->n; i++)
        ((float *)host)[i] = bf2f(t[i]);
    free(t);
    return rc;
}

static int cu_copy(tsl_devops_t *o, tsl_buf_t *dst, const tsl_buf_t *src, tsl_err_t *err)
{
    if (dst->n != src->n)
        return tsl_err_set(err, "copy: %zu elements into %zu", src->n, dst->n);
    if (dst->dt == src->dt)
        return cuerr(cudaMemcpyAsync(dst->ptr, src->ptr, src->n * tsl_dtype_bytes(src->dt),
                                     cudaMemcpyDeviceToDevice, cx(o)->s[0]),
                     "copy", err);
    return kerr(tsl_xk_convert(dst->ptr, dst->dt, src->ptr, src->dt, src->n, S(o)), "convert", err);
}

static int cu_fill_uniform(tsl_devops_t *o, tsl_buf_t *b, uint64_t seed, uint64_t stream,
                           uint64_t base, float center, float amp, tsl_err_t *err)
{
    return kerr(tsl_xk_fill_uniform(b->ptr, b->dt, b->n, seed, stream, base, center, amp, S(o)),
                "fill", err);
}

static int cu_fill_ids(tsl_devops_t *o, tsl_buf_t *b, uint64_t seed, uint64_t stream, uint64_t base,
                       uint32_t modulo, tsl_err_t *err)
{
    return kerr(tsl_xk_fill_ids(b->ptr, b->n, seed, stream, base, modulo, S(o)), "fill ids", err);
}

static int cu_zero(tsl_devops_t *o, tsl_buf_t *b, tsl_err_t *err)
{
    return cuerr(cudaMemsetAsync(b->ptr, 0, b->n * tsl_dtype_bytes(b->dt), cx(o)->s[0]), "memset",
                 err);
}

static int cu_gemm(tsl_devops_t *o, const tsl_gemm_t *g, tsl_err_t *err)
{
    cublasOperation_t opa = g->tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                      opb = g->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    return blaserr(cublasGemmStridedBatchedEx(cx(o)->blas, opa, opb, g->n, g->m, g->k, &g->alpha,
                                              g->b.ptr, CUDA_R_16BF, g->ldb, g->stride_b, g->a.ptr,
                                              CUDA_R_16BF, g->lda, g->stride_a, &g->beta, g->c.ptr,
                                              CUDA_R_16BF, g->ldc, g->stride_c, g->batch,
                                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   "gemm", err);
}

static int cu_ln_fwd(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *gamma,
                     const tsl_buf_t *beta, tsl_buf_t *y, tsl_buf_t *mean, tsl_buf_t *rstd,
                     int rows, int cols, tsl_err_t *err)
{
    return kerr(tsl_xk_layernorm_fwd(x->ptr, gamma->ptr, beta->ptr, y->ptr, mean->ptr, rstd->ptr,
                                     rows, cols, S(o)),
                "layernorm", err);
}

static int cu_ln_bwd(tsl_devops_t *o, const tsl_buf_t *dy, const tsl_buf_t *x,
                     const tsl_buf_t *gamma, const tsl_buf_t *mean, const tsl_buf_t *rstd,
                     tsl_buf_t *dx, tsl_buf_t *dgamma, tsl_buf_t *dbeta, int rows, int cols,
                     tsl_err_t *err)
{
    return kerr(tsl_xk_layernorm_bwd(dy->ptr, x->ptr, gamma->ptr, mean->ptr, rstd->ptr, dx->ptr,
                                     dgamma->ptr, dbeta->ptr, rows, cols, cx(o)->ws, S(o)),
                "layernorm backward", err);
}

static int cu_rms_fwd(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *gamma, tsl_buf_t *y,
                      tsl_buf_t *rstd, int rows, int cols, tsl_err_t *err)
{
    return kerr(tsl_xk_rmsnorm_fwd(x->ptr, gamma->ptr, y->ptr, rstd->ptr, rows, cols, S(o)),
                "rmsnorm", err);
}

static int cu_rms_bwd(tsl_devops_t *o, const tsl_buf_t *dy, const tsl_buf_t *x,
                      const tsl_buf_t *gamma, const tsl_buf_t *rstd, tsl_buf_t *dx,
                      tsl_buf_t *dgamma, int rows, int cols, tsl_err_t *err)
{
    return kerr(tsl_xk_rmsnorm_bwd(dy->ptr, x->ptr, gamma->ptr, rstd->ptr, dx->ptr, dgamma->ptr,
                                   rows, cols, cx(o)->ws, S(o)),
                "rmsnorm backward", err);
}

static int cu_swiglu_fwd(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, int rows, int cols,
                         tsl_err_t *err)
{
    return kerr(tsl_xk_swiglu(x->ptr, NULL, y->ptr, rows, cols, 0, S(o)), "swiglu", err);
}

static int cu_swiglu_bwd(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *dy, tsl_buf_t *dx,
                         int rows, int cols, tsl_err_t *err)
{
    return kerr(tsl_xk_swiglu(x->ptr, dy->ptr, dx->ptr, rows, cols, 1, S(o)), "swiglu backward",
                err);
}

static int cu_gelu_fwd(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, tsl_err_t *err)
{
    return kerr(tsl_xk_gelu(x->ptr, NULL, y->ptr, x->n, 0, S(o)), "gelu", err);
}

static int cu_gelu_bwd(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *dy, tsl_buf_t *dx,
                       tsl_err_t *err)
{
    return kerr(tsl_xk_gelu(x->ptr, dy->ptr, dx->ptr, x->n, 1, S(o)), "gelu backward", err);
}

static int cu_softmax_fwd(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, int rows, int cols,
                          bool causal, tsl_err_t *err)
{
    return kerr(tsl_xk_softmax_fwd(x->ptr, y->ptr, rows, cols, causal, S(o)), "softmax", err);
}

static int cu_softmax_chunk_fwd(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, int rows,
                                int cols, int group, int q0, int window, tsl_err_t *err)
{
    if (tsl_devops_check_softmax_chunk(x, y, rows, cols, group, q0, window, err))
        return -1;
    return kerr(tsl_xk_softmax_chunk_fwd(x->ptr, y->ptr, rows, cols, group, q0, window, S(o)),
                "softmax chunk", err);
}

static int cu_softmax_bwd(tsl_devops_t *o, const tsl_buf_t *y, const tsl_buf_t *dy, tsl_buf_t *dx,
                          int rows, int cols, tsl_err_t *err)
{
    return kerr(tsl_xk_softmax_bwd(y->ptr, dy->ptr, dx->ptr, rows, cols, S(o)), "softmax backward",
                err);
}

static int cu_axpy(tsl_devops_t *o, float alpha, const tsl_buf_t *x, tsl_buf_t *y, tsl_err_t *err)
{
    if (x->n != y->n || x->dt != y->dt)
        return tsl_err_set(err, "axpy: %zu elements into %zu", x->n, y->n);
    return kerr(tsl_xk_axpy(alpha, x->ptr, y->ptr, y->dt, y->n, S(o)), "axpy", err);
}

static int cu_scale(tsl_devops_t *o, float alpha, tsl_buf_t *x, tsl_err_t *err)
{
    return kerr(tsl_xk_scale(alpha, x->ptr, x->dt, x->n, S(o)), "scale", err);
}

static int cu_add_bias(tsl_devops_t *o, tsl_buf_t *x, const tsl_buf_t *bias, int rows, int cols,
                       tsl_err_t *err)
{
    return kerr(tsl_xk_add_bias(x->ptr, bias->ptr, rows, cols, S(o)), "add bias", err);
}

static int cu_bias_grad(tsl_devops_t *o, const tsl_buf_t *dy, tsl_buf_t *db, int rows, int cols,
                        tsl_err_t *err)
{
    return kerr(tsl_xk_bias_grad(dy->ptr, db->ptr, rows, cols, cx(o)->ws, S(o)), "bias gradient",
                err);
}

static int cu_mse(tsl_devops_t *o, const tsl_buf_t *y, const tsl_buf_t *t, tsl_buf_t *dy,
                  float scale, tsl_buf_t *loss, tsl_err_t *err)
{
    return kerr(tsl_xk_mse(y->ptr, t->ptr, dy->ptr, y->n, scale, loss->ptr, S(o)), "mse", err);
}

/* ---- vocabulary-parallel embedding and cross-entropy (devops.h) ---- */

static int cu_vembed_fwd(tsl_devops_t *o, const tsl_buf_t *table, const tsl_buf_t *ids,
                         tsl_buf_t *y, int rows, int cols, int v0, int vl, tsl_err_t *err)
{
    return kerr(tsl_xk_vembed(table->ptr, ids->ptr, y->ptr, rows, cols, v0, vl, 0, S(o)),
                "vocab-parallel embedding", err);
}

static int cu_vembed_bwd(tsl_devops_t *o, const tsl_buf_t *dy, const tsl_buf_t *ids,
                         tsl_buf_t *dtable, int rows, int cols, int v0, int vl, tsl_err_t *err)
{
    return kerr(tsl_xk_vembed(dtable->ptr, ids->ptr, dy->ptr, rows, cols, v0, vl, 1, S(o)),
                "vocab-parallel embedding backward", err);
}

static int cu_vxent_max(tsl_devops_t *o, const tsl_buf_t *y, tsl_buf_t *mx, int rows, int cols,
                        int valid, tsl_err_t *err)
{
    return kerr(tsl_xk_vxent_max(y->ptr, mx->ptr, rows, cols, valid, S(o)), "vocab-parallel max",
                err);
}

static int cu_vxent_sums(tsl_devops_t *o, const tsl_buf_t *y, const tsl_buf_t *t,
                         const tsl_buf_t *mxs, int parts, tsl_buf_t *sums, int rows, int cols,
                         int valid, int v0, tsl_err_t *err)
{
    return kerr(
        tsl_xk_vxent_sums(y->ptr, t->ptr, mxs->ptr, parts, sums->ptr, rows, cols, valid, v0, S(o)),
        "vocab-parallel sums", err);
}

static int cu_vxent(tsl_devops_t *o, const tsl_buf_t *y, const tsl_buf_t *t, const tsl_buf_t *mxs,
                    int parts, const tsl_buf_t *sums, tsl_buf_t *dy, int rows, int cols, int valid,
                    int v0, float scale, tsl_buf_t *loss, tsl_err_t *err)
{
    return kerr(tsl_xk_vxent(y->ptr, t->ptr, mxs->ptr, parts, sums->ptr, dy->ptr, (int)dy->dt, rows,
                             cols, valid, v0, scale, loss->ptr, S(o)),
                "vocab-parallel cross-entropy", err);
}

static int cu_adam(tsl_devops_t *o, tsl_buf_t *p, const tsl_buf_t *g, tsl_buf_t *master,
                   tsl_buf_t *m, tsl_buf_t *v, float lr, float b1, float b2, float eps, int step,
                   tsl_err_t *err)
{
    float c1 = 1.0f - powf(b1, (float)step), c2 = 1.0f - powf(b2, (float)step);
    return kerr(tsl_xk_adam(p->ptr, g->ptr, master->ptr, m->ptr, v->ptr, p->n, lr, b1, b2, eps, c1,
                            c2, S(o)),
                "adam", err);
}

static int cu_sgd(tsl_devops_t *o, tsl_buf_t *p, const tsl_buf_t *g, tsl_buf_t *master, float lr,
                  tsl_err_t *err)
{
    return kerr(tsl_xk_sgd(p->ptr, g->ptr, master->ptr, p->n, lr, S(o)), "sgd", err);
}

static void *cu_stream(tsl_devops_t *o, int which)
{
    return cx(o)->s[which ? 1 : 0];
}

static int cu_event_create(tsl_devops_t *o, tsl_event_t **ev, tsl_err_t *err)
{
    (void)o;
    *ev = calloc(1, sizeof(**ev));
    if (!*ev)
        return tsl_err_setc(err, TSL_E_NOMEM, "cuda: out of host memory for an event");
    if (cuerr(cudaEventCreate(&(*ev)->ev), "cudaEventCreate", err)) {
        free(*ev);
        *ev = NULL;
        return -1;
    }
    return 0;
}

static void cu_event_destroy(tsl_devops_t *o, tsl_event_t *ev)
{
    (void)o;
    if (ev)
        cudaEventDestroy(ev->ev);
    free(ev);
}

static int cu_event_record(tsl_devops_t *o, tsl_event_t *ev, int stream, tsl_err_t *err)
{
    return cuerr(cudaEventRecord(ev->ev, cx(o)->s[stream ? 1 : 0]), "cudaEventRecord", err);
}

static int cu_stream_wait(tsl_devops_t *o, int stream, tsl_event_t *ev, tsl_err_t *err)
{
    return cuerr(cudaStreamWaitEvent(cx(o)->s[stream ? 1 : 0], ev->ev, 0), "cudaStreamWaitEvent",
                 err);
}

static int cu_elapsed(tsl_devops_t *o, tsl_event_t *a, tsl_event_t *b, double *s, tsl_err_t *err)
{
    (void)o;
    float ms = 0;
    if (cuerr(cudaEventElapsedTime(&ms, a->ev, b->ev), "cudaEventElapsedTime", err))
        return -1;
    *s = ms * 1e-3;
    return 0;
}

static int cu_sync(tsl_devops_t *o, tsl_err_t *err)
{
    return cuerr(cudaStreamSynchronize(cx(o)->s[1]), "sync comm stream", err) ||
                   cuerr(cudaStreamSynchronize(cx(o)->s[0]), "sync compute stream", err)
               ? -1
               : 0;
}

static int cu_host_alloc(tsl_devops_t *o, size_t bytes, void **out, tsl_err_t *err)
{
    (void)o;
    *out = NULL;
    return cuerr(cudaMallocHost(out, bytes ? bytes : 1), "cudaMallocHost", err);
}

static void cu_host_free(tsl_devops_t *o, void *p)
{
    (void)o;
    if (p)
        cudaFreeHost(p);
}

static int cu_rope(tsl_devops_t *o, const tsl_buf_t *x, tsl_buf_t *y, const tsl_rope_t *r,
                   tsl_err_t *err)
{
    if (tsl_devops_check_rope(x, y, r, err))
        return -1;
    return kerr(tsl_xk_rope(x->ptr, y->ptr, (int)y->dt, r, S(o)), "rope", err);
}

static int cu_copy2d(tsl_devops_t *o, const tsl_buf_t *x, int ldx, int xs, tsl_buf_t *y, int ldy,
                     int ys, int rows, int batch, int cols, tsl_err_t *err)
{
    if (tsl_devops_check_copy2d(x, ldx, xs, y, ldy, ys, rows, batch, cols, err))
        return -1;
    return kerr(
        tsl_xk_copy2d(x->ptr, ldx, xs, y->ptr, ldy, ys, (int)y->dt, rows, batch, cols, S(o)),
        "copy2d", err);
}

static int cu_copy_bytes(tsl_devops_t *o, tsl_copy_dir_t dir, void *dst, const void *src,
                         size_t bytes, int stream, tsl_err_t *err)
{
    enum cudaMemcpyKind k = dir == TSL_COPY_H2D   ? cudaMemcpyHostToDevice
                            : dir == TSL_COPY_D2H ? cudaMemcpyDeviceToHost
                                                  : cudaMemcpyDeviceToDevice;
    return cuerr(cudaMemcpyAsync(dst, src, bytes, k, cx(o)->s[stream ? 1 : 0]), "cudaMemcpyAsync",
                 err);
}

static void cu_destroy(tsl_devops_t *o)
{
    if (!o)
        return;
    cuda_ctx_t *c = cx(o);
    if (c) {
        if (c->blas)
            cublasDestroy(c->blas);
        cudaFree(c->ws);
        for (int i = 0; i < 2; i++)
            if (c->s[i])
                cudaStreamDestroy(c->s[i]);
    }
    free(c);
    free(o);
}

static const tsl_devops_t cuda_table = {
    .name = "cuda",
    .act_dtype = TSL_DT_BF16,
    .alloc = cu_alloc,
    .free = cu_free,
    .peak_bytes = cu_peak,
    .used_bytes = cu_used,
    .reset_peak = cu_reset_peak,
    .upload = cu_upload,
    .download = cu_download,
    .copy = cu_copy,
    .fill_uniform = cu_fill_uniform,
    .fill_ids = cu_fill_ids,
    .zero = cu_zero,
    .gemm = cu_gemm,
    .layernorm_fwd = cu_ln_fwd,
    .layernorm_bwd = cu_ln_bwd,
    .rmsnorm_fwd = cu_rms_fwd,
    .rmsnorm_bwd = cu_rms_bwd,
    .swiglu_fwd = cu_swiglu_fwd,
    .swiglu_bwd = cu_swiglu_bwd,
    .gelu_fwd = cu_gelu_fwd,
    .gelu_bwd = cu_gelu_bwd,
    .softmax_fwd = cu_softmax_fwd,
    .softmax_chunk_fwd = cu_softmax_chunk_fwd,
    .softmax_bwd = cu_softmax_bwd,
    .rope = cu_rope,
    .copy2d = cu_copy2d,
    .gate_fwd = tsl_cuda_gate_fwd,
    .gate_bwd = tsl_cuda_gate_bwd,
    .axpy = cu_axpy,
    .scale = cu_scale,
    .add_bias = cu_add_bias,
    .bias_grad = cu_bias_grad,
    .mse = cu_mse,
    .vembed_fwd = cu_vembed_fwd,
    .vembed_bwd = cu_vembed_bwd,
    .vxent_max = cu_vxent_max,
    .vxent_sums = cu_vxent_sums,
    .vxent = cu_vxent,
    .moe_topk = tsl_cuda_moe_topk,
    .moe_topk_bwd = tsl_cuda_moe_topk_bwd,
    .moe_sort = tsl_cuda_moe_sort,
    .gather_rows = tsl_cuda_gather_rows,
    .scatter_add_rows = tsl_cuda_scatter_add_rows,
    .rows_dot = tsl_cuda_rows_dot,
    .adam = cu_adam,
    .sgd = cu_sgd,
    .stream = cu_stream,
    .event_create = cu_event_create,
    .event_destroy = cu_event_destroy,
    .event_record = cu_event_record,
    .stream_wait = cu_stream_wait,
    .event_elapsed_s = cu_elapsed,
    .sync = cu_sync,
    .host_alloc = cu_host_alloc,
    .host_free = cu_host_free,
    .copy_bytes = cu_copy_bytes,
    .destroy = cu_destroy,
};

int tsl_devops_cuda_create(int device, uint64_t limit_bytes, tsl_devops_t **out, tsl_err_t *err)
{
    tsl_devops_t *o = malloc(sizeof(*o));
    cuda_ctx_t *c = calloc(1, sizeof(*c));
    if (!o || !c) {
        free(o);
        free(c);
        return tsl_err_setc(err, TSL_E_NOMEM, "cuda: out of host memory");
    }
    *o = cuda_table;
    o->ctx = c;
    c->device = device;
    c->mem.limit_bytes = limit_bytes;
    if (cuerr(cudaSetDevice(device), "cudaSetDevice", err) ||
        cuerr(cudaMalloc((void **)&c->ws, TSL_K_COLSUM_WS * sizeof(float)), "workspace", err) ||
        cuerr(cudaStreamCreateWithFlags(&c->s[0], cudaStreamNonBlocking), "stream", err) ||
        cuerr(cudaStreamCreateWithFlags(&c->s[1], cudaStreamNonBlocking), "stream", err) ||
        blaserr(cublasCreate(&c->blas), "cublasCreate", err) ||
        blaserr(cublasSetStream(c->blas, c->s[0]), "cublasSetStream", err)) {
        cu_destroy(o);
        return -1;
    }
    *out = o;
    return 0;
}
