/*
 * devops_cpu_moe.h — the cpu device ops of a mixture-of-experts layer (devops.h
 * "mixture of experts"), in devops_cpu_moe.c; devops_cpu.c puts them in its table.
 */
#ifndef TSL_EXEC_DEVOPS_CPU_MOE_H
#define TSL_EXEC_DEVOPS_CPU_MOE_H

#include "devops.h"

int tsl_cpu_moe_topk(tsl_devops_t *o, const tsl_buf_t *logits, tsl_buf_t *probs, tsl_buf_t *idx,
                     tsl_buf_t *w, int rows, int experts, int k, tsl_err_t *err);
int tsl_cpu_moe_topk_bwd(tsl_devops_t *o, const tsl_buf_t *probs, const tsl_buf_t *idx,
                         const tsl_buf_t *dw, tsl_buf_t *dlogits, int rows, int experts, int k,
                         tsl_err_t *err);
int tsl_cpu_moe_sort(tsl_devops_t *o, const tsl_buf_t *idx, tsl_buf_t *order, tsl_buf_t *pos,
                     tsl_buf_t *counts, int n, int experts, int cap, tsl_err_t *err);
int tsl_cpu_gather_rows(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *idx, int div,
                        const tsl_buf_t *scale, tsl_buf_t *y, int rows, int cols, tsl_err_t *err);
int tsl_cpu_scatter_add_rows(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *pos,
                             const tsl_buf_t *w, tsl_buf_t *y, int rows, int k, int cols,
                             tsl_err_t *err);
int tsl_cpu_rows_dot(tsl_devops_t *o, const tsl_buf_t *x, const tsl_buf_t *y, const tsl_buf_t *pos,
                     tsl_buf_t *out, int n, int k, int cols, tsl_err_t *err);

#endif
