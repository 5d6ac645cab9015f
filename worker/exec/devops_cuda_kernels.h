/*
 * devops_cuda_kernels.h — the small kernels of the cuda device ops (devops_cuda.c),
 * compiled by nvcc (devops_cuda_kernels.cu). Activations and weights are bf16, layer-
 * norm statistics, optimizer state and the loss float; every kernel accumulates in
 * float. Each launcher queues on `stream` and returns the launch's cudaError_t (0 ok).
 * dt arguments are tsl_dtype_t values.
 */
#ifndef TSL_EXEC_DEVOPS_CUDA_KERNELS_H
#define TSL_EXEC_DEVOPS_CUDA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "devops.h"

/* Floats of workspace the column reductions (layernorm and bias gradients) need. */
#define TSL_K_COLSUM_WS ((size_t)4 << 20)

#ifdef __cplusplus
extern "C" {
#endif

int tsl_xk_fill_uniform(void *p, int dt, size_t n, uint64_t seed, uint64_t stream, uint64_t base,
                        float center, float amp, void *st);
int tsl_xk_fill_ids(int32_t *p, size_t n, uint64_t seed, uint64_t stream, uint64_t base,
                    uint32_t modulo, void *st);
int tsl_xk_convert(void *dst, int ddt, const void *src, int sdt, size_t n, void *st);
int tsl_xk_layernorm_fwd(const void *x, const void *g, const void *b, void *y, float *mean,
                         float *rstd, int rows, int cols, void *st);
int tsl_xk_layernorm_bwd(const void *dy, const void *x, const void *g, const float *mean,
                         const float *rstd, void *dx, void *dg, void *db, int rows, int cols,
                         float *ws, void *st);
int tsl_xk_rmsnorm_fwd(const void *x, const void *g, void *y, float *rstd, int rows, int cols,
                       void *st);
int tsl_xk_rmsnorm_bwd(const void *dy, const void *x, const void *g, const float *rstd, void *dx,
                       void *dg, int rows, int cols, float *ws, void *st);
/* x rows × 2·cols (gate | up): forward out = SiLU(gate)·up (rows × cols); backward
 * out = dgate | dup (rows × 2·cols) from dy (rows × cols). */
int tsl_xk_swiglu(const void *x, const void *dy, void *out, int rows, int cols, int backward,
                  void *st);
int tsl_xk_gelu(const void *x, const void *dy, void *out, size_t n, int backward, void *st);
int tsl_xk_softmax_fwd(const void *x, void *y, int rows, int cols, int causal, void *st);
int tsl_xk_softmax_chunk_fwd(const void *x, void *y, int rows, int cols, int group, int q0,
                             int window, void *st);
int tsl_xk_softmax_bwd(const void *y, const void *dy, void *dx, int rows, int cols, void *st);
int tsl_xk_axpy(float alpha, const void *x, void *y, int dt, size_t n, void *st);
int tsl_xk_scale(float alpha, void *x, int dt, size_t n, void *st);
int tsl_xk_add_bias(void *x, const void *bias, int rows, int cols, void *st);
int tsl_xk_bias_grad(const void *dy, void *db, int rows, int cols, float *ws, void *st);
int tsl_xk_mse(const void *y, const void *t, void *dy, size_t n, float scale, float *loss,
               void *st);
/* vocabulary-parallel embedding and cross-entropy (devops.h vembed_*, vxent*) */
int tsl_xk_vembed(const void *table, const int32_t *ids, void *y, int rows, int cols, int v0,
                  int vl, int backward, void *st);
int tsl_xk_vxent_max(const void *y, float *mx, int rows, int cols, int valid, void *st);
int tsl_xk_vxent_sums(const void *y, const int32_t *t, const float *mxs, int parts, float *sums,
                      int rows, int cols, int valid, int v0, void *st);
int tsl_xk_vxent(const void *y, const int32_t *t, const float *mxs, int parts, const float *sums,
                 void *dy, int dydt, int rows, int cols, int valid, int v0, float scale,
                 float *loss, void *st);
/* mixture of experts (devops.h moe_*, gather_rows, scatter_add_rows, rows_dot); x, y,
 * logits and dlogits are of dtype dt; xrows / yrows bound the indices followed. */
int tsl_xk_moe_topk(const void *logits, int dt, const void *bias, float *probs, int32_t *idx,
                    float *w, int rows, int experts, int k, int sigmoid, int groups,
                    int topk_groups, int norm, float scale, void *st);
int tsl_xk_moe_topk_bwd(const float *probs, const int32_t *idx, const float *dw, void *dlogits,
                        int dt, int rows, int experts, int k, int sigmoid, int norm, float scale,
                        void *st);
int tsl_xk_moe_sort(const int32_t *idx, int32_t *order, int32_t *pos, float *counts, int n,
                    int experts, int cap, void *st);
int tsl_xk_gather_rows(const void *x, size_t xrows, const int32_t *idx, int div, const float *scale,
                       void *y, int dt, int rows, int cols, void *st);
int tsl_xk_scatter_add_rows(const void *x, size_t xrows, const int32_t *pos, const float *w,
                            void *y, int dt, int rows, int k, int cols, void *st);
int tsl_xk_rows_dot(const void *x, const void *y, size_t yrows, const int32_t *pos, float *out,
                    int dt, int n, int k, int cols, void *st);
/* latent attention's rotary embedding and strided copies, the shared experts' gate
 * (devops.h rope, copy2d, gate_fwd, gate_bwd); buffers of dtype dt, gate float */
int tsl_xk_rope(const void *x, void *y, int dt, const tsl_rope_t *r, void *st);
int tsl_xk_copy2d(const void *x, int ldx, int xs, void *y, int ldy, int ys, int dt, int rows,
                  int batch, int cols, void *st);
int tsl_xk_gate_fwd(const void *x, const void *logit, float *gate, void *y, int dt, int rows,
                    int cols, void *st);
int tsl_xk_gate_bwd(const void *x, const float *gate, const void *dy, void *dx, void *dlogit,
                    int dt, int rows, int cols, void *st);
int tsl_xk_adam(void *p, const void *g, float *master, float *m, float *v, size_t n, float lr,
                float b1, float b2, float eps, float c1, float c2, void *st);
int tsl_xk_sgd(void *p, const void *g, float *master, size_t n, float lr, void *st);

#ifdef __cplusplus
}
#endif

#endif
