/*
 * exec_block.h — one executor layer alone on a device, for measuring it: the
 * profiler's block times (DESIGN.md "Profiles", docs/profile-format.md "blocks") come
 * from the same tsl_exec_layer_fwd / tsl_exec_layer_bwd a trial runs (exec_layer.c,
 * the attention core of exec_attn.c: fused by query chunks unless the layer says
 * unfused_attn), so that the profile measures what trials run.
 *
 * Contract. The block owns, on `dev`, the layer's TP-part parameters and gradients,
 * its stash for one micro-batch, the engine's backward workspaces sized for this one
 * layer, an input x, an output, the output's gradient and the input's gradient, all
 * filled with seeded values (devops fill_uniform). It has no comm ops: a layer with
 * tp > 1 runs as one device of its TP group (its 1/tp share of heads and FFN columns)
 * without the TP all-reduce, which the profile's collectives measure on their own.
 * Checkpointing, SDP and layout moves are not the block's: l->ckpt, sdp and the
 * moves are ignored. fwd and bwd only queue work on the compute stream; the caller
 * times them with the devops' events. bwd reads the stash the last fwd wrote; weight
 * gradients accumulate (β = 1) over calls, as over micro-batches.
 *
 * Memory: tsl_exec_block_bytes is what the block holds on dev (the devops' count),
 * the unfused layer's b·al·s² softmax stash included. Errors: 0 / -1 with tsl_err_t:
 * TSL_E_NOMEM when dev runs out (nothing is left allocated), TSL_E_UNSUPPORTED for a
 * layer the executor refuses (kinds other than ATTENTION, FFN and ENCODER; heads, FFN
 * or K/V heads that tp does not divide; a MoE layer, whose all-to-alls need its EP
 * group: the planner prices MoE layers on the roofline, not on measured blocks).
 */
#ifndef TSL_EXEC_BLOCK_H
#define TSL_EXEC_BLOCK_H

#include <stdint.h>

#include "devops.h"
#include "exec.h"

typedef struct tsl_exec_block tsl_exec_block_t;

/* l: the layer (its tp and b: the split and local samples); attn_chunk: fused
 * attention's query rows per chunk, 0 for the engine's rule (tsl_exec_opts_t). */
int tsl_exec_block_create(tsl_devops_t *dev, const tsl_exec_layer_t *l, uint32_t attn_chunk,
                          uint64_t seed, tsl_exec_block_t **out, tsl_err_t *err);
int tsl_exec_block_fwd(tsl_exec_block_t *b, tsl_err_t *err);
int tsl_exec_block_bwd(tsl_exec_block_t *b, tsl_err_t *err);
uint64_t tsl_exec_block_bytes(const tsl_exec_block_t *b);
/* The attention core's query rows per chunk: 0 unfused (or no attention). */
uint32_t tsl_exec_block_chunk(const tsl_exec_block_t *b);
void tsl_exec_block_destroy(tsl_exec_block_t *b); /* NULL: no-op */

#endif
