/*
 * layer_dense.h — the two dense Transformer layers the unit tests build most often:
 * the 4k layer (hidden 4096, FFN 16384, 32 heads, 2048 tokens) the FP8 / FP4 roofline,
 * tile and cost tests price by hand, and GPT-2 medium's block (hidden 1024, FFN 4096,
 * 16 heads) at a test's own sequence, the small models of the cost, schedule,
 * relayout and offload tests. A test that sets more fields sets them on the copy.
 * Header-only so that its CHECKs count in the including test (check.h).
 */
#ifndef TSL_TEST_LAYER_DENSE_H
#define TSL_TEST_LAYER_DENSE_H

#include "check.h"
#include "model.h"

/* The 4k layer as a `kind` layer, underived: the caller derives it. */
static inline tsl_layer_t dense_4k(tsl_layer_kind_t kind)
{
    return (tsl_layer_t){
        .kind = kind, .seq_len = 2048, .hidden = 4096, .ffn_hidden = 16384, .heads = 32};
}

/* The 4k layer's FFN block without dropout or biases, derived. */
static inline tsl_layer_t ffn_4k(void)
{
    tsl_err_t err = {0};
    tsl_layer_t l = dense_4k(TSL_LAYER_FFN);
    l.no_dropout = l.no_bias = true;
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    return l;
}

/* The 4k layer as an encoder block (dropout and biases on), derived. */
static inline tsl_layer_t encoder_4k(void)
{
    tsl_err_t err = {0};
    tsl_layer_t l = dense_4k(TSL_LAYER_ENCODER);
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    return l;
}

/* GPT-2 medium's block as an encoder layer of `seq` tokens, underived. */
static inline tsl_layer_t gpt2_medium(uint32_t seq)
{
    return (tsl_layer_t){
        .kind = TSL_LAYER_ENCODER, .seq_len = seq, .hidden = 1024, .ffn_hidden = 4096, .heads = 16};
}

#endif
