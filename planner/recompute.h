/*
 * recompute.h — Megatron-LM's selective recompute of named modules
 * (--recompute-granularity selective --recompute-modules ...;
 * TransformerConfig.recompute_modules, megatron/core/transformer, Megatron-LM
 * d98e8a6): which modules a plan recomputes beside the attention core, and the
 * activation stash each one drops (docs/cost-model.md "Recompute of named
 * modules").
 *
 * The attention core (Megatron's default module, core_attn) stays what it was:
 * the strategy's per-layer +selckpt (strategy.h). The other modules are one
 * per-plan bitmask (tsl_cost_knobs_t.recompute_modules, the plan field
 * recompute_modules), applied to every Transformer layer that is not fully
 * checkpointed (+ckpt), each layer taking the modules it has:
 *
 *   module          layers                     what Megatron-core recomputes
 *   moe_act         MoE FFN                    the routed experts' activation function
 *                                              (experts.py TEGroupedMLP: an output-
 *                                              discarding checkpoint; fc1's output kept)
 *   layernorm       MLA attention, MoE FFN     the standalone norms, input_layernorm and
 *                                              pre_mlp_layernorm (transformer_layer.py;
 *                                              output-discarding). A dense layer's norms
 *                                              are fused into the next linear in the
 *                                              TransformerEngine spec (IdentityOp):
 *                                              nothing to recompute there
 *   mla_up_proj     MLA attention              the latent norms, up projections and RoPE
 *                                              (multi_latent_attention.py; output-
 *                                              discarding; the latents kept)
 *   mlp             dense FFN                  the whole MLP, its fused norm included
 *                                              (transformer_layer.py, a normal checkpoint
 *                                              of the block input); MoE layers excluded
 *   moe             MoE FFN                    the whole MoE layer: router, dispatch,
 *                                              experts, combine, shared experts
 *                                              (moe_layer.py; a normal checkpoint of the
 *                                              norm's output); moe_act and shared_experts
 *                                              beside it checkpoint again inside it, so
 *                                              the backward runs them a third time
 *   shared_experts  MoE FFN with shared ones   the shared experts (moe_layer.py)
 *   torchtitan_op   dense Transformer block    not Megatron's: torchtitan's op-level
 *                   (encoder kind, no experts, selective AC (parallelize_llama.py at
 *                   no latent attention)       9dec370, selective_ac_option "op"): it
 *                                              saves the outputs of aten.mm (every other
 *                                              one, counted through the block), of SDPA
 *                                              and of abs/max, and recomputes the rest —
 *                                              half the block's linear GEMMs on average
 *                                              and every pointwise op; the attention core
 *                                              is not recomputed (a plan takes it with
 *                                              --ckpt none)
 *
 * Stash dropped per sample (bytes; s tokens, h hidden, g 1 or 2 gated, k top-k, E
 * experts, f one expert's width or the dense FFN's, S shared experts of f_s, a
 * heads, n / r / v the head widths, q / c the latent widths; model.h's stash):
 *   layernorm       repl 2·s·h per standalone norm (its output, the next GEMM's input)
 *   mla_up_proj     repl 2·s·(q + c) (the latents' norm outputs); shard
 *                   4·s·a·(n + r) + 2·s·a·v (Q, K and V; the core's output stays)
 *   mlp             repl 2·s·h (the fused norm's output); shard 2·g·s·f + 2·s·f
 *   moe             repl 2·k·s·h + 4·s·E; shard k·(2·g·s·f + 2·s·f) + S·(2·g·s·f_s
 *                   + 2·s·f_s): all of the MoE FFN's stash but its input (moe_act
 *                   and shared_experts then add nothing). Latent MoE (ℓ = moe_latent;
 *                   cost model 179): repl 2·k·s·ℓ + 4·s·E + 2·s·ℓ — the dispatched
 *                   copies are ℓ wide, and fc1_latent_proj / fc2_latent_proj run
 *                   inside the checkpointed custom_forward (Megatron-LM 44151194
 *                   moe_layer.py preprocess / postprocess), so fc2_latent_proj's
 *                   ℓ-wide input goes too; fc1_latent_proj reads the kept input
 *   moe_act         shard 2·k·s·f (the routed copies' activation outputs)
 *   shared_experts  shard S·(2·g·s·f_s + 2·s·f_s)
 *   torchtitan_op   all of the block's stash but what it saves: the larger of the
 *                   two sets of alternate mm outputs, wq, wv, w1, w2 (shard
 *                   2·s·(d + e + f), repl 2·s·h), and SDPA's output and logsumexp
 *                   (shard 2·s·d + 4·s·a)
 * Time: the recomputed modules' forward again in the backward (roofline.h
 * tsl_roofline_recompute_fwd_s; cost.c adds the MLP's and the MoE layer's TP
 * communication and the MoE layer's dispatch and combine; torchtitan_op: the
 * block's forward but its attention core and half its linear GEMMs, and its TP
 * collectives but the saved reduce-scatters).
 *
 * Pure, no allocation.
 */
#ifndef TSL_RECOMPUTE_H
#define TSL_RECOMPUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "model.h"

/* The modules, one bit each; the order is the names' (tsl_recompute_module_name)
 * and the proto field's bit order. */
typedef enum tsl_recompute_module {
    TSL_RECOMPUTE_MOE_ACT = 1u << 0,
    TSL_RECOMPUTE_LAYERNORM = 1u << 1,
    TSL_RECOMPUTE_MLA_UP_PROJ = 1u << 2,
    TSL_RECOMPUTE_MLP = 1u << 3,
    TSL_RECOMPUTE_MOE = 1u << 4,
    TSL_RECOMPUTE_SHARED_EXPERTS = 1u << 5,
    TSL_RECOMPUTE_TORCHTITAN_OP = 1u << 6,
} tsl_recompute_module_t;

#define TSL_RECOMPUTE_COUNT 7u
#define TSL_RECOMPUTE_ALL   ((1u << TSL_RECOMPUTE_COUNT) - 1u)
/* A module a plan document names that this build does not price (refused). */
#define TSL_RECOMPUTE_UNKNOWN (1u << 31)

/* Megatron's name of bit i ("moe_act", ...); NULL past the end. */
const char *tsl_recompute_module_name(uint32_t i);

/*
 * A list of Megatron's module names, separated by commas and/or spaces
 * ("mla_up_proj,mlp", "core_attn moe_act"), into *mask; *core_attn (may be NULL:
 * then core_attn is refused) says whether the list names core_attn, which is
 * the strategy's +selckpt rather than a bit. An empty list is no module. Fails
 * naming an unknown module and the known ones.
 */
int tsl_recompute_modules_parse(const char *list, uint32_t *mask, bool *core_attn, tsl_err_t *err);

/*
 * tsl_recompute_modules_parse for plan's and eval's --recompute-modules, whose list
 * must name a module: "" (an unset shell variable) or ",," asked for nothing and got
 * a plan without the recompute. No comma-separated item may be empty or blanks only
 * ("mlp,,moe", ",mlp", "mlp,": refused naming the item's number — a name lost, as
 * from an unset variable). Megatron-LM's line, where the flag alone is an empty
 * list, parses with tsl_recompute_modules_parse.
 */
int tsl_recompute_modules_flag(const char *list, uint32_t *mask, bool *core_attn, tsl_err_t *err);

/* 0 where mask is one policy: Megatron-LM's modules, or torchtitan_op alone (its
 * op-level selective AC replaces the stash the others would trim); else -1 with
 * `recompute_modules:` and the clash named. */
int tsl_recompute_modules_check(uint32_t mask, tsl_err_t *err);

/* The names of mask's bits, comma-separated in bit order ("" for 0); returns
 * the length snprintf would (cap 96 holds them all). */
size_t tsl_recompute_modules_format(uint32_t mask, char *buf, size_t cap);

/* The bits of mask that layer l has a module for (table above). */
uint32_t tsl_recompute_applies(const tsl_layer_t *l, uint32_t mask);

/* The stash bytes per sample mask's modules drop from l's act_repl_bytes
 * (*repl) and act_shard_bytes (*shard); both within those (table above). */
void tsl_recompute_drop(const tsl_layer_t *l, uint32_t mask, uint64_t *repl, uint64_t *shard);

#endif
