/*
 * devops_cuda_moe.h — the cuda device ops of a mixture-of-experts layer (devops.h
 * "mixture of experts"), in devops_cuda_moe.c on the kernels of
 * devops_cuda_kernels.cu; devops_cuda.c puts them in its table.
 */
#ifndef TSL_EXEC_DEVOPS_CUDA_MOE_H
#define TSL_EXEC_DEVOPS_CUDA_MOE_H

#include "devops.h"

int tsl_cuda_moe_topk(tsl_devops_t *o, const tsl_buf_t *logits, const tsl_moe_route_t *rt,
                      tsl_buf_t *probs, tsl_buf_t *idx, tsl_buf_t *w, int rows, int experts, int k,
                      tsl_err_t *err);
int tsl_cuda_moe_topk_bwd(tsl_devops_t *o, const tsl_buf_t *probs, const tsl_buf_t *idx,
                          const tsl_buf_t *dw, const tsl_moe_route_t *rt, tsl_buf_t *dlogits,
                          int rows, int experts, int k, tsl_err_t *err);
int tsl_cuda_moe_sort(tsl_devops_t *o, const tsl_buf_t *idx, tsl_buf_t *order, tsl_buf_t *pos,
                      tsl_buf_t *counts, int n, int experts, int cap, tsl_err_t *err);
int tsl_cuda_gather_rows(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *idx, int div,
                         const tsl_buf_t *scale, tsl_buf_t *y, int rows, int cols, tsl_err_t *err);
int tsl_cuda_scatter_add_rows(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *pos,
                              const tsl_buf_t *w, tsl_buf_t *y, int rows, int k, int cols,
                              tsl_err_t *err);
int tsl_cuda_rows_dot(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *y, const tsl_buf_t *pos,
                      tsl_buf_t *out, int n, int k, int cols, tsl_err_t *err);
int tsl_cuda_gate_fwd(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *logit, tsl_buf_t *gate,
                      tsl_buf_t *y, int rows, int cols, tsl_err_t *err);
int tsl_cuda_gate_bwd(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *gate,
                      const tsl_buf_t *dy, tsl_buf_t *dx, tsl_buf_t *dlogit, int rows, int cols,
                      tsl_err_t *err);

#endif
