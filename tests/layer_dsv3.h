/*
 * layer_dsv3.h — DeepSeek-V3's multi-head latent attention block as a Tessel
 * sub-layer (h 7168, 128 heads, q latent 1536, kv latent 512, no-RoPE / RoPE /
 * value head widths 128 / 64 / 128, s 4096, causal, RMSNorm, no biases, no
 * dropout), the shape several roofline and cost tests price by hand. Underived:
 * the caller runs tsl_layer_derive.
 */
#ifndef TSL_TEST_LAYER_DSV3_H
#define TSL_TEST_LAYER_DSV3_H

#include "model.h"

static inline tsl_layer_t dsv3_mla_attention(void)
{
    return (tsl_layer_t){.kind = TSL_LAYER_ATTENTION,
                         .seq_len = 4096,
                         .hidden = 7168,
                         .heads = 128,
                         .no_bias = true,
                         .rms_norm = true,
                         .no_dropout = true,
                         .causal = true,
                         .q_lora_rank = 1536,
                         .kv_lora_rank = 512,
                         .qk_nope_dim = 128,
                         .qk_rope_dim = 64,
                         .v_head_dim = 128};
}

#endif
