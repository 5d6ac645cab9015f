/*
 * tiny_hybrid.h — the small hybrid Mamba model the export and offload tests share:
 * Llama-shaped attention and FFN blocks (hidden 1024, 16 heads of 64, seq 512) beside
 * Mamba-2 blocks (32 heads of 64, state 128, 8 groups, conv 4, chunk 128), its layers
 * given as Megatron's hybrid_layer_pattern (M, *, -, E). Header-only, as search_tiny.h.
 */
#ifndef TSL_TEST_TINY_HYBRID_H
#define TSL_TEST_TINY_HYBRID_H

#include <stdio.h>
#include <string.h>

#include "model.h"

/* Builds the hybrid of pattern pat (one block a character) into m; 0, or -1 with err. */
static inline int tiny_hybrid_build(const char *pat, tsl_model_t *m, tsl_err_t *err)
{
    tsl_arch_spec_t sp = {.arch = TSL_ARCH_LLAMA,
                          .layers = (uint32_t)strlen(pat),
                          .hidden = 1024,
                          .ffn_hidden = 4096,
                          .heads = 16,
                          .kv_heads = 16,
                          .head_dim = 64,
                          .seq_len = 512,
                          .vocab = 32000,
                          .ssm_heads = 32,
                          .ssm_head_dim = 64,
                          .ssm_state = 128,
                          .ssm_groups = 8,
                          .ssm_conv = 4,
                          .ssm_chunk = 128};
    snprintf(sp.hybrid, sizeof sp.hybrid, "%s", pat);
    return tsl_model_build(&sp, "tiny-hybrid", m, err);
}

#endif
