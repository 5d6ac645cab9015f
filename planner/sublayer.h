/*
 * sublayer.h — sub-layer granularity (AutoPipe III-B, Fig. 3): a model whose
 * Transformer layers are split into blocks the partitioner may cut between.
 *
 *   ENCODER  →  ATTENTION block (LN + self-attention + residual)
 *               FFN block       (LN + FFN + residual)
 *   DECODER  →  ATTENTION block (LN + self-attention, LN + cross-attention, residuals)
 *               FFN block       (LN + FFN + residual)
 *   anything else (embedding, head, blocks already split) is kept as is.
 *
 * Exactness. The FFN block's figures are tsl_layer_derive() of an FFN layer of the
 * same shape (without the layer's extra_* figures, which stay with the attention
 * block); the attention block gets the whole layer's figures minus the FFN
 * block's. So parameters, forward FLOPs, stashed activation bytes (act_repl_bytes,
 * act_shard_bytes) and TP all-reduces of the two blocks sum exactly to the whole
 * layer's (FLOPs are integers far below 2^53, so the double subtraction is exact).
 * The boundary activation bnd_act_bytes is each block's own input (2·s·h for both
 * blocks of a layer): it is what a stage boundary or a checkpoint at that block
 * keeps, and is not additive. A decoder's attention block keeps kind ATTENTION and
 * the layer's cross_seq_len; its figures include the cross-attention — do not
 * re-derive it.
 *
 * The map ref[i] gives, for sub-layer i, the source layer and the part, so that a
 * plan can name cut points in the source model's terms: the boundary before the
 * FFN block of layer 7 is "7.5", before any other block of layer 7 it is "7".
 *
 * Ownership: tsl_sublayer_split() allocates the split model's layers and the map;
 * release both with tsl_sublayer_free() (not tsl_model_free()).
 */
#ifndef TSL_SUBLAYER_H
#define TSL_SUBLAYER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "model.h"

typedef enum tsl_sublayer_part {
    TSL_SUBLAYER_WHOLE = 0, /* the source layer, unsplit */
    TSL_SUBLAYER_ATTN,      /* its attention block (first half) */
    TSL_SUBLAYER_FFN,       /* its FFN block (second half) */
} tsl_sublayer_part_t;

typedef struct tsl_sublayer_ref {
    uint32_t layer; /* index in the source model */
    tsl_sublayer_part_t part;
} tsl_sublayer_ref_t;

typedef struct tsl_sublayer_model {
    tsl_model_t model;       /* the split model; layers owned */
    tsl_sublayer_ref_t *ref; /* model.n_layers entries; owned */
    uint32_t n_src_layers;
} tsl_sublayer_model_t;

/* Splits every encoder and decoder layer of src (see above). Fails when src is
 * empty, a layer's FFN block does not fit inside it (an inconsistent derivation),
 * the split model would exceed TSL_MODEL_MAX_LAYERS, or memory runs out. On
 * failure out is left empty (safe to free). */
int tsl_sublayer_split(const tsl_model_t *src, tsl_sublayer_model_t *out, tsl_err_t *err);

void tsl_sublayer_free(tsl_sublayer_model_t *sm);

/* Part name: "layer", "attention", "ffn". */
const char *tsl_sublayer_part_name(tsl_sublayer_part_t part);

/* Position of the boundary just before sub-layer i, in half layers of the source
 * model: 2·layer, plus 1 before an FFN block. i = n (the end) gives 2·n_src_layers. */
uint32_t tsl_sublayer_boundary_halves(const tsl_sublayer_model_t *sm, uint32_t i);

/* The same boundary as text: "7" or "7.5". Returns the snprintf length, or -1 when
 * i is out of range. */
int tsl_sublayer_boundary_str(const tsl_sublayer_model_t *sm, uint32_t i, char *buf, size_t n);

#endif
