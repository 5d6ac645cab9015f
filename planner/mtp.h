/*
 * mtp.h — multi-token prediction (MTP) layers as Megatron-LM runs them
 * (megatron/core/transformer/multi_token_prediction.py at 44151194, the commit
 * Megatron-Bridge 21d102f5e pins; DeepSeek-V3 report, Sec. 2.2).
 *
 * MTP depth d (1..D) predicts the token d + 1 ahead of each position: its entry
 * (TSL_LAYER_MTP) normalises the shifted tokens' embedding (enorm) and depth
 * d − 1's output hidden (hnorm; depth 0 is the main model's), concatenates them
 * (2h) and projects them to h (eh_proj, column-parallel, no bias); one layer of
 * the model's own kind follows (a whole Transformer layer: MLA + MoE for
 * DeepSeek-V3; for a hybrid, the blocks of its MTP pattern, "*E" for Nemotron 3
 * Super), then the depth's final norm, the shared output head's logits GEMM and
 * its own cross-entropy loss. In a Tessel model depth d is the layers
 *   [entry, inner layer(s), head copy]       (mtp_depth = d on each)
 * placed after the main model's blocks and before its head, which stays the last
 * layer. The head copy shares the output head's weights (shared_weights): its
 * logits GEMM, loss, and their activations are priced again per depth; its weights
 * once, on the head. The entry's figures (model.h) hold the depth's three norms and
 * eh_proj; the shifted tokens' embedding lookup reads the word embedding, of which
 * a stage other than the first keeps a copy (weights, gradient, optimizer states)
 * summed with the first stage's every step, as a tied head's (cost.h): one copy
 * per stage, held by a tied head where there is one, else by depth 1's entry (its
 * vocab; the other entries' vocab is 0).
 *
 * Repeated layer (mtp_use_repeated_layer; Nemotron 3 Super): one depth's weights
 * (entry and inner layer) serve every depth: depths 2..D are marked
 * shared_weights, so they cost compute and activations per depth and memory once.
 *
 * Placement: Megatron-LM builds every MTP depth on the last pipeline stage
 * (mtp_on_this_rank, get_mtp_num_layers_to_build without a custom layout) with the
 * output head, and asserts the last virtual stage (MultiTokenPredictionBlock);
 * eval's splits put the MTP layers with the head (eval_cfg.c). Megatron's
 * --num-layers and uniform recompute counts do not include them
 * (tsl_model_is_block).
 */
#ifndef TSL_MTP_H
#define TSL_MTP_H

#include <stdint.h>

#include "err.h"
#include "model.h"

#define TSL_MTP_MAX_DEPTHS 16u

/* The model's MTP depths (the largest mtp_depth of its layers; 0: none). */
uint32_t tsl_mtp_depths(const tsl_model_t *m);

/* Whether depth 2 and later reuse depth 1's weights (mtp_use_repeated_layer). */
bool tsl_mtp_repeated(const tsl_model_t *m);

/* The layers of m that belong to MTP depths (0: none). */
uint32_t tsl_mtp_layers(const tsl_model_t *m);

/*
 * Appends MTP depth `depth` to m, after the layers so far (the caller adds the
 * main head afterwards): an entry shaped from `head` (seq_len, hidden, vocab) and
 * the norms of inner[0], copies of the n inner layers, and a copy of `head` with
 * shared weights. shared: the entry and inner layers reuse an earlier depth's
 * weights. Fails naming the field on a bad depth or shape.
 */
int tsl_mtp_add_depth(tsl_model_t *m, uint32_t depth, const tsl_layer_t *inner, uint32_t n,
                      const tsl_layer_t *head, bool shared, tsl_err_t *err);

/*
 * Gives m exactly `depths` MTP depths (0 drops them), in place:
 *   depths = the model's D: unchanged;
 *   depths < D: depths 1..depths kept;
 *   depths > D >= 1: depths D+1.. reuse depth D's weights (the Bridge's Nemotron 3
 *     Super: one depth of weights, mtp_num_layers 2 with mtp_use_repeated_layer);
 *   D = 0: each new depth its own weights, its inner layer a copy of the model's
 *     last Transformer layer (Megatron-LM's GPT path: the decoder's layer spec;
 *     DeepSeek-V3's MTP module is a MoE layer as its last). A hybrid model without
 *     MTP layers has no inner pattern to copy: refused.
 * The model's last layer must be its head. Fails (m unchanged) naming the field.
 */
int tsl_model_set_mtp(tsl_model_t *m, uint32_t depths, tsl_err_t *err);

#endif
