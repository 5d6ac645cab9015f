/*
 * target.h — the training stacks a plan can be handed to, and the one predicate
 * per stack that says whether a plan lies in that stack's space (docs/exports.md).
 *
 * The exporters (common/export_*.c) refuse exactly what tsl_target_check refuses,
 * and `plan --target STACK` (request field `target`) admits exactly what it
 * admits: the search engine drops every configuration the predicate refuses, so
 * a plan searched for a stack exports to it by construction. One exception, on
 * the search's side: torchtitan's predicate admits ring-attention CP, which its
 * job TOML (v0.2.x) writes and its Python form (main) refuses, so the search under
 * torchtitan weighs no CP degree (search.c target_weighs_cp) and its plans export
 * to both forms.
 *
 *   megatron    Megatron-LM: one strategy for every layer, TP innermost, DP with
 *               or without the distributed optimizer (ZeRO-1), or SDP over every
 *               data-parallel rank as Megatron-FSDP (optim_grads_params; not beside
 *               DP, not with MoE layers), sequence parallelism; no ZeRO-2;
 *               whole-layer stages of equal device
 *               counts whose middle stages hold equal Transformer layer counts
 *               (first/last may differ); CKPT of the first N layers of every
 *               stage (the same N; a stage of fewer recomputes all; with v
 *               chunks, the first N of each chunk) or selective recompute of all;
 *               interleaving as Megatron-LM splits ranks into chunks (even, the
 *               embedding and/or the loss counted as a layer, or uneven first/last
 *               stages: tsl_target_megatron_vp). A hybrid Mamba model's blocks
 *               (M, *, -, E) count as its layers (HybridModel); its stages (and
 *               model chunks) are --hybrid-layer-pattern's '|' segments, of any
 *               lengths, the middle stages too (megatron_hybrid_split).
 *   deepspeed   one strategy; ZeRO stage 0–3 (DP, DP+ZeRO-1/2, SDP), not DP with
 *               SDP; ZeRO-2/3 only without stages; TP as AutoTP without stages and
 *               beside them as Megatron-DeepSpeed runs it (TP innermost, no SP, its
 *               GPT's model forms, priced with legacy_p2p: target_rules.c
 *               deepspeed_pipe_tp); stages of equal layer counts (embedding and
 *               head count: 'uniform') or as 'type:transformer' cuts the Transformer
 *               layers (equal counts with the embedding on the first stage and the
 *               head on the last, else DeepSpeed's balanced programme's uneven cut:
 *               tsl_target_ds_partition); CKPT of all Transformer layers or none;
 *               plain 1F1B.
 *   torchtitan  one strategy on its mesh (tp innermost, then dp_shard, then
 *               dp_replicate); no ZeRO-1/2 on replicas; CP ranks sharded (SDP:
 *               its FSDP mesh is dp_shard x cp); whole-layer stages, the
 *               head never alone; CKPT full or none; 1F1B, ZBV, DualPipeV, and
 *               interleaved 1F1B as torch.distributed.pipelining runs it (its
 *               group of m / max(1, m / P) micro-batches the plan's; every
 *               model part holding a Transformer layer:
 *               tsl_target_torchtitan_parts); MoE
 *               layers with the experts laid out as its sparse mesh does
 *               (tsl_target_torchtitan_experts).
 *   galvatron   per-layer strategies (TP degree and consecutiveness, DP or
 *               ZeRO-3), whole layers, every stage holds a Transformer layer and
 *               the same device count, embedding and head at one TP degree; no
 *               sequence parallelism, ZeRO-1/2 or selective recompute; plain 1F1B.
 *
 * Every target: the model is [embedding, Transformer layers..., head]; no H3T
 * memory switches; the embedding and the head are never checkpointed; a
 * sub-layer plan is folded back onto whole layers (a stage may not start inside
 * one, and a layer's attention and FFN blocks share a strategy).
 *
 * Pure: no I/O, no allocation beyond a sub-layer split while folding.
 */
#ifndef TSL_TARGET_H
#define TSL_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "model.h"
#include "plan.h"

typedef enum tsl_target {
    TSL_TARGET_ANY = 0, /* no restriction: Tessel's whole space */
    TSL_TARGET_MEGATRON,
    TSL_TARGET_DEEPSPEED,
    TSL_TARGET_TORCHTITAN,
    TSL_TARGET_GALVATRON,
    TSL_TARGET_COUNT
} tsl_target_t;

/* "megatron", ...; "any" for TSL_TARGET_ANY, "?" out of range. */
const char *tsl_target_name(uint32_t t);
/* Case-insensitive; "any" or "" is TSL_TARGET_ANY. Fails naming the stacks. */
int tsl_target_parse(const char *name, uint32_t *out, tsl_err_t *err);
/* A --target flag's value (tesselctl plan and eval): as tsl_target_parse, but ""
 * is refused: on a command line it is an unset shell variable, not a choice. */
int tsl_target_parse_flag(const char *arg, uint32_t *out, tsl_err_t *err);

/* The plan in the source model's layers (a sub-layer plan folded back). */
typedef struct tsl_target_view {
    const tsl_plan_t *plan;
    const tsl_model_t *model;
    const char *target; /* "megatron", ... for messages */
    uint32_t pp;
    uint32_t stage_first[TSL_PLAN_MAX_STAGES];  /* source layer index */
    uint32_t stage_count[TSL_PLAN_MAX_STAGES];  /* source layers */
    uint32_t stage_blocks[TSL_PLAN_MAX_STAGES]; /* Transformer layers among them */
    uint32_t n_blocks;                          /* Transformer layers: 1 .. n_blocks */
    tsl_strategy_t layer[TSL_PLAN_MAX_LAYERS];  /* per source layer */
} tsl_target_view_t;

/* The whole model under one strategy (ckpt aside): what Megatron-LM, DeepSpeed
 * and torchtitan take. */
typedef struct tsl_target_uniform {
    tsl_strategy_t s;        /* layer 1's, ckpt cleared */
    uint32_t tp, dp, sdp;    /* degrees, 1 when unused; without the CP ranks (the stacks
                                count those apart: Megatron-LM's DP = world / (TP·CP·PP)) */
    uint32_t cp;             /* context-parallel degree, 1 when none */
    uint32_t stage_devices;  /* devices per stage */
    uint32_t micro_per_rank; /* samples per micro-batch per data-parallel rank */
    uint32_t ckpt_blocks;    /* Transformer layers with CKPT */
} tsl_target_uniform_t;

/* The rules every target shares; fills v. target names it in messages. */
int tsl_target_view_init(tsl_target_view_t *v, const char *target, const tsl_plan_t *p,
                         const tsl_model_t *m, tsl_err_t *err);
int tsl_target_uniform(const tsl_target_view_t *v, tsl_target_uniform_t *u, tsl_err_t *err);
/* The model-shape rules every target shares (target.c; tsl_target_model_ok
 * adds the stack's own). */
int tsl_target_check_model(const char *target, const tsl_model_t *m, tsl_err_t *err);
/* "embedding", "Transformer layer", "head": what source layer i is, for messages. */
const char *tsl_target_layer_kind(const tsl_target_view_t *v, uint32_t layer);
/* The strategy as text, without CKPT ("tp2-dp4"), into buf[64]. */
const char *tsl_target_strategy_str(const tsl_strategy_t *s, char buf[64]);

/* Whether view v (tsl_target_view_init) lies in target t's space: 0, or -1 with
 * TSL_E_UNSUPPORTED and the rule in err. v is not changed. */
int tsl_target_check_view(uint32_t t, const tsl_target_view_t *v, tsl_err_t *err);

/* tsl_target_view_init and tsl_target_check_view for plan p of model m, the
 * view built in *scratch (caller-owned: it is large). TSL_TARGET_ANY admits
 * every plan. err may be NULL. */
int tsl_target_check(uint32_t t, const tsl_plan_t *p, const tsl_model_t *m,
                     tsl_target_view_t *scratch, tsl_err_t *err);

/*
 * Megatron-LM's interleaved split (get_num_layers_to_build and TransformerConfig.
 * __post_init__, megatron/core/transformer/transformer_block.py and
 * transformer_config.py at d98e8a6; arguments.py validate_args) of a view with v =
 * interleave > 1 chunks per stage, its P stages holding b_0 .. b_{P−1} Transformer
 * layers (the middle ones equal, megatron_layout):
 *   even     every b_s = b, v | b: --num-layers-per-virtual-pipeline-stage b/v; the
 *            embedding rides the first chunk of stage 0, the loss the last of stage
 *            P − 1;
 *   account  the embedding (e = 1: --account-for-embedding-in-pipeline-split) and/or
 *            the loss (l = 1: --account-for-loss-in-pipeline-split) count as a layer:
 *            every rank holds R = (L + e + l)/P, v | R, stage 0 R − e Transformer
 *            layers, stage P − 1 R − l, and every chunk R/v — the first chunk of
 *            stage 0 R/v − e besides the embedding (none at R = v: the embedding
 *            alone), the last of stage P − 1 R/v − l besides the loss. Megatron-LM
 *            builds chunk j of rank r from the [(jP + r)·R/v, +R/v) slots of the
 *            L + e + l, the model's layers identical, so a rank's content is Tessel's
 *            stage (its layers contiguous here) cut as tsl_pipeline_chunk_layers does;
 *   uneven   v | b_0, v | b_{P−1}, v | the middle ones, b_0 or b_{P−1} different:
 *            --num-virtual-stages-per-pipeline-rank v with
 *            --decoder-first/last-pipeline-num-layers (arguments.py asserts the
 *            former when the latter are given; TransformerConfig the divisibility).
 * The MTP layers are outside the split, with the loss in the last chunk of the last
 * stage. Anything else: -1, TSL_E_UNSUPPORTED naming the flags.
 */
typedef enum tsl_target_vp_kind {
    TSL_TARGET_VP_EVEN = 0,
    TSL_TARGET_VP_ACCOUNT,
    TSL_TARGET_VP_UNEVEN,
} tsl_target_vp_kind_t;

typedef struct tsl_target_megatron_vp {
    uint32_t kind;      /* tsl_target_vp_kind_t */
    uint32_t per_chunk; /* even / account: the layers of a chunk (the slots counted) */
    bool acct_embed;    /* account: the embedding counts as a layer */
    bool acct_loss;     /* account: the loss counts as a layer */
} tsl_target_megatron_vp_t;

int tsl_target_megatron_vp(const tsl_target_view_t *v, tsl_target_megatron_vp_t *out,
                           tsl_err_t *err);

/*
 * A hybrid's '|' segments of --hybrid-layer-pattern (Megatron-LM d98e8a6,
 * hybrid_layer_allocation.py select_pipeline_segment; arguments.py validate_args
 * derives --virtual-pipeline-model-parallel-size from them): the pattern's blocks in
 * order, cut into S = P·v segments, segment k = j·P + r building rank r's model chunk
 * j (chunk-major, as get_transformer_layer_offset lays out interleaved chunks); any
 * lengths. Tessel prices rank r as its stage's contiguous layers (stage_count[r] of
 * them, the embedding on stage 0, the head and m's MTP layers on the last) cut into
 * v chunks as tsl_pipeline_chunk_layers cuts them; seg[j·P + r] gets the blocks of
 * that chunk. Megatron-LM builds chunk j of rank r from the pattern's blocks at the
 * segment's own offset, which are other blocks of the model: the plan runs as priced
 * only where each such block is the priced one's alike (tsl_layer_key: its character,
 * shape and bf16 mark). 0, or -1 with TSL_E_UNSUPPORTED naming the first segment
 * that differs, or one without blocks (not written: HybridStack's build of an empty
 * segment is not checked). v ≤ 1 gives the stages' blocks, always alike. seg holds
 * P·max(v, 1) entries, filled also on that -1 (not past Tessel's limits: P above
 * TSL_PLAN_MAX_STAGES, v above TSL_PIPELINE_MAX_CHUNKS).
 */
int tsl_target_megatron_hybrid_segments(const tsl_model_t *m, uint32_t P, uint32_t v,
                                        const uint32_t *stage_count, uint32_t *seg, tsl_err_t *err);

/*
 * torchtitan's interleaved pipeline (Interleaved1F1B: torchtitan b5bcd76c6
 * distributed/pipeline_parallel.py _get_pp_rank_to_stage_indices_mapping, style
 * "loop"; module_fqns_per_model_part, one list of modules a virtual stage, in model
 * order): P·v model parts, part q on rank q mod P, so rank r runs parts r, r + P,
 * ... Tessel prices rank r as its stage's contiguous layers (stage_count[r], the
 * embedding on stage 0 and the head on the last) cut into v chunks as
 * tsl_pipeline_chunk_layers cuts them; part j·P + r gets the size of chunk j of
 * stage r (count[0 .. P·v)), so every rank runs as many layers, and the same
 * chunks, as priced — other layers of one shape (a uniform model's; torchtitan's
 * space has one strategy for every block). Part 0 then starts with the embedding
 * and part P·v − 1 ends with the head, as torchtitan requires. 0, or -1 with
 * TSL_E_UNSUPPORTED naming the first chunk without a Transformer layer (the
 * embedding or the head alone: torchtitan v0.1.0's split points name blocks, and
 * Tessel's checkpointing of every block would leave it out) or a count past
 * Tessel's limits (P·v above TSL_PLAN_MAX_STAGES: eval reads no more parts back).
 * vc ≤ 1: the stages' own counts.
 */
int tsl_target_torchtitan_parts(const tsl_target_view_t *v, uint32_t vc, uint32_t *count,
                                tsl_err_t *err);

/* The cut the search weighs for v > 1 chunks over P stages of model m, as
 * Megatron-LM splits it when the stage's own cut (tsl_target_partition) does not
 * divide into v: even, or with the embedding, the loss or both counted (the
 * R − e, R, ..., R, R − l above), of those whose L + e + l divide by P·v the one
 * with the smallest largest stage in forward FLOPs. first[0 .. P]; false when
 * none divides. */
bool tsl_target_megatron_vp_cut(const tsl_model_t *m, uint32_t P, uint32_t v, uint32_t *first);

/* The layers Megatron-LM's block recompute of N per model chunk checkpoints on
 * stage s of P, which holds n_layers of m (the embedding on stage 0; the head and
 * m's MTP layers on the last) in v chunks (pipeline.h tsl_pipeline_chunk_ckpt). */
uint32_t tsl_target_megatron_stage_ckpt(const tsl_model_t *m, uint32_t n_layers, uint32_t s,
                                        uint32_t P, uint32_t v, uint32_t N);

/* Megatron's --recompute-num-layers N (--recompute-method block: per model
 * chunk) for a view that passed the megatron check with some but not all
 * layers checkpointed. */
uint32_t tsl_target_megatron_recompute(const tsl_target_view_t *v);

/* How stack t keeps and syncs gradients when launched as its export launches it
 * (target_rules.c; docs/cost-model.md "Precision and overlap"): all zero
 * (Tessel's executor) for TSL_TARGET_ANY and galvatron. */
void tsl_target_knobs(uint32_t t, tsl_cost_knobs_t *k);

/* The FP8 recipe stack t runs when a plan is priced in FP8 and the search
 * weighs it (docs/exports.md "FP8"): megatron delayed (Megatron-LM's default
 * --fp8-recipe), torchtitan tensorwise (torchao's Float8Linear), Tessel's own
 * space delayed; 0 for deepspeed and galvatron, whose exports have no FP8. */
uint32_t tsl_target_fp8_recipe(uint32_t t);

/* Who runs stack t's FP8 (fp8_impl.h): torchao for torchtitan, Transformer
 * Engine for the rest (Megatron-LM's TE linears; Tessel's own space). */
uint32_t tsl_target_fp8_impl(uint32_t t);

/* How stack t runs an LM head's cross-entropy (loss_impl.h): megatron's
 * vocabulary-parallel loss for megatron, deepspeed and galvatron, torch's eager
 * cross_entropy for torchtitan, the executor's for Tessel's own space. */
uint32_t tsl_target_loss_impl(uint32_t t);
/* Whether a configuration of stack t runs loss impl: its own, and for megatron
 * TE's fused loss too (--cross-entropy-loss-fusion --cross-entropy-fusion-impl te
 * of a Megatron-LM before 168cb15d70, which eval reads). */
bool tsl_target_loss_runs(uint32_t t, uint32_t impl);
/* Whether stack t runs recompute_modules mods (recompute.h bits): under megatron
 * Megatron-LM's named modules (--recompute-modules) but not torchtitan_op, for which it
 * has no policy; under torchtitan torchtitan_op alone (its op-level selective AC; it
 * names no modules); under deepspeed and galvatron none (they checkpoint whole layers);
 * any in Tessel's own space (TSL_TARGET_ANY). No module (0) runs everywhere. The one
 * rule of the request check (search.c), the target's rules (target_rules.c) and the
 * exports (common/export.c); tsl_recompute_modules_check has refused a mix already. */
bool tsl_target_recompute_runs(uint32_t t, uint32_t mods);
/* For those refusals' messages: whose policy mods is ("Megatron-LM's
 * --recompute-modules", or "torchtitan's op-level selective checkpointing" for
 * torchtitan_op), and what stack t runs instead ("it recomputes whole layers"). */
const char *tsl_target_recompute_policy(uint32_t mods);
const char *tsl_target_recompute_instead(uint32_t t);
/* 0, or -1 with TSL_E_UNSUPPORTED naming why: today's Megatron-LM (target t
 * megatron) runs no loss_impl te outside autocast (its validate_args refuses TE's
 * fused loss since 168cb15d70), so neither `plan --target megatron` nor the
 * megatron export takes such a plan. */
int tsl_megatron_te_loss_ok(uint32_t t, uint32_t loss_impl, bool autocast, tsl_err_t *err);
/* Whether stack t runs optimizer step s (opt_step.h): megatron Megatron-core's or
 * its fp16 optimizer's, torchtitan torch's foreach AdamW, deepspeed its fp16
 * optimizer; the executor's fused step passes everywhere (Tessel's own space). */
bool tsl_target_opt_step_runs(uint32_t t, uint32_t s);

/* Whether stack t runs no fused (flash) attention kernel on a GPU of c, so that its
 * plans there keep the s x s scores (the request's unfused_attn, as --unfused-attn):
 * megatron where a GPU is older than Ampere (tsl_cluster_no_flash: Transformer Engine
 * does not run there, and Megatron-LM's --transformer-impl local has only the unfused
 * DotProductAttention; docs/cost-model.md "Attention on GPUs older than Ampere").
 * False for the others: DeepSpeed's attention is the user's model code, torchtitan's
 * SDPA runs its memory-efficient kernel from sm50, and galvatron trains no fp16;
 * without a target Tessel's executor computes its chunked core on any GPU. */
bool tsl_target_unfused_attn(uint32_t t, const tsl_cluster_t *c);
/* 0, or -1 with TSL_E_UNSUPPORTED naming a switch of knobs k that runs in Transformer
 * Engine (tp_comm_overlap, cp > 1, moe_a2a_overlap's --delay-wgrad-compute, an FP8
 * recipe) where tsl_target_unfused_attn(t, c):
 * Megatron-LM's local impl has none of them. */
int tsl_target_unfused_attn_ok(uint32_t t, const tsl_cluster_t *c, const tsl_cost_knobs_t *k,
                               tsl_err_t *err);
/* The first switch of knobs k that runs in Transformer Engine and not in Megatron-LM's
 * --transformer-impl local (tp_comm_overlap, cp, moe_a2a_overlap, fp8_recipe), or NULL:
 * what tsl_target_unfused_attn_ok and eval's --megatron-args --transformer-impl local
 * refuse. */
const char *tsl_target_te_only_knob(const tsl_cost_knobs_t *k);

/* Whether stack t runs recipe r (0, bf16: every stack); err says why not. */
int tsl_target_fp8_ok(uint32_t t, uint32_t r, tsl_err_t *err);

/* Whether TransformerEngine's userbuffers (tp_comm_overlap) run beside FP8 recipe
 * r: not nvfp4 (TE's fill_userbuffers_buffer_for_all_gather, module/base.py at
 * release_v2.16, takes bf16, FP8 and MXFP8 tensors and raises "Unsupported
 * quantizer for Userbuffers" for the rest; Megatron-Bridge turns the overlap off
 * under nvfp4). err names both fields. */
int tsl_target_tp_comm_overlap_ok(uint32_t r, bool tp_comm_overlap, tsl_err_t *err);

/* Whether torch's micro-pipelined TP (async_tp: torchtitan's AsyncTP) can run as
 * asked: it micro-pipelines the sequence-parallel collectives, so not where SP is
 * off (no_sp); not beside TransformerEngine's userbuffers (tp_comm_overlap: both
 * would price the same collectives, and no stack runs both); not eager (torchtitan
 * 9dec370 parallelize_llama.py:53-57 raises "Async TP requires --training.compile":
 * the fusion is an inductor pass). err names the fields; 0 when async_tp is off. */
int tsl_async_tp_ok(bool async_tp, bool no_sp, bool tp_comm_overlap, bool eager, tsl_err_t *err);

/*
 * Multi-token prediction (mtp.h) per stack:
 *   megatron    builds the depths the config asks for (--mtp-num-layers; Megatron-
 *               Bridge passes an HF config's num_nextn_predict_layers), on the last
 *               stage with the head;
 *   torchtitan  DeepSeek-V3 only (models/deepseek_v3/mtp.py at b5bcd76c6, since
 *               f59c215e8): none unless model_registry(num_mtp_layers=N) asks (its
 *               deepseek_v3_671b builds none), and then without pipeline or
 *               context parallelism (MTPDecoder.Config.update_from_config raises);
 *   deepspeed, galvatron: no MTP.
 * tsl_target_mtp_default: whether t trains the model's own depths when the
 * request leaves them open (megatron, and Tessel's own space). tsl_target_mtp_
 * depths: the depths a request trains under t on a model with `have`: none with
 * no_mtp, mtp_layers when given, else `have` where t trains them by default, else
 * 0 (the stack's run without them; the caller says so). tsl_target_mtp_ok: an
 * explicit mtp_layers under t (with pp and cp as asked, 0: open): 0, or -1 with
 * TSL_E_UNSUPPORTED naming mtp_layers.
 */
bool tsl_target_mtp_default(uint32_t t);
uint32_t tsl_target_mtp_depths(uint32_t t, uint32_t have, uint32_t mtp_layers, bool no_mtp);
int tsl_target_mtp_ok(uint32_t t, uint32_t mtp_layers, uint32_t pp, uint32_t cp, tsl_err_t *err);

/* Whether t refuses m's output head tied to its embedding (tied_head) at pp
 * stages: torchtitan raises NotImplementedError for weight tying with pipeline
 * parallelism (b5bcd76c6 models/common/decoder.py), so pp > 1 there; every other
 * stack, and pp 1, runs it (Megatron-LM and DeepSpeed all-reduce the two copies,
 * a V keeps both on rank 0). check_torchtitan refuses such a plan by name, a fixed
 * pp (tsl_target_pp_ok) the request, and the search weighs pp 1 only. */
bool tsl_target_tied_pp_refused(uint32_t t, const tsl_model_t *m, uint32_t pp);
/* The note a plan or eval under t shows when it left a model's `have` depths out
 * (tsl_target_mtp_depths gave 0 for have > 0): written into buf, true; false and
 * buf empty when nothing was left out. */
bool tsl_target_mtp_note(uint32_t t, const char *model, uint32_t have, uint32_t depths, char *buf,
                         size_t n);

/* Whether model m can be run by target t at all (its shape); err says why not. */
int tsl_target_model_ok(uint32_t t, const tsl_model_t *m, tsl_err_t *err);

/* torchtitan's layout of the routed experts (target_rules.c): for model m (no
 * rule without MoE layers) under strategy s with context parallelism cp and
 * expert parallelism ep (0 or 1: off), 0 where torchtitan lays the experts out
 * as Tessel prices them; else -1 with TSL_E_UNSUPPORTED naming the rule. The
 * export and `eval --torchtitan` share it. */
int tsl_target_torchtitan_experts(const tsl_model_t *m, const tsl_strategy_t *s, uint32_t cp,
                                  uint32_t ep, tsl_err_t *err);

/* Megatron-LM builds identical self-attention layers, or for a hybrid (model.h
 * tsl_model_t.hybrid) identical blocks per --hybrid-layer-pattern character
 * (target_rules.c). */
int tsl_target_megatron_shapes(const tsl_model_t *m, tsl_err_t *err);

/* A starting partition into P stages in t's space: whole Transformer layers,
 * embedding in the first stage, head in the last, the middle stages equal
 * (megatron, torchtitan, galvatron: the split with the smallest largest stage
 * in forward FLOPs), or for deepspeed its PipelineModule's cut: equal layer counts
 * ('uniform') where P divides m's layers, else 'type:transformer' (tsl_target_ds_blocks_cut):
 * equal Transformer layer counts with the embedding and head beside them where P divides
 * those, else (cost model 111) DeepSpeed's balanced programme's uneven cut.
 * first[0..P]. Returns false when t cannot cut the model into P stages. */
bool tsl_target_partition(uint32_t t, const tsl_model_t *m, uint32_t P, uint32_t *first);

/* The megatron/torchtitan/galvatron starting cut's shape — the first stage f
 * Transformer layers and the embedding, the P − 2 middle ones mid each, the last l,
 * the head and the MTP layers — by other weights: the (f, mid, l) whose largest stage,
 * the sum of layer_s[0..n_layers) over its layers (each layer's priced time, s), is
 * smallest, into first[0..P] and that stage's sum into *worst_s. The search re-cuts
 * a configuration by it (search_eval.c ends_priced_cut): a layer whose time is not
 * proportional to its FLOPs (BERT's head) moves the cut. false where no such cut
 * exists or a weight is negative or not finite. O(B² / P) for B blocks. */
bool tsl_target_ends_cut(const tsl_model_t *m, uint32_t P, const double *layer_s, uint32_t *first,
                         double *worst_s);

/* Which of DeepSpeed's PipelineModule partition methods (runtime/pipe/module.py
 * _partition_layers) cuts m into P stages of stage_count[0..P-1] layers each:
 * "uniform" (P divides m->n_layers, every stage n_layers / P layers), else
 * "type:transformer" (the stages of tsl_target_ds_blocks_cut), else NULL. Where both
 * cut alike (P 2, an even block count) "uniform". The deepspeed check and export share
 * it. */
const char *tsl_target_ds_partition(const tsl_model_t *m, uint32_t P, const uint32_t *stage_count);

/* DeepSpeed's 'type:transformer' cut of m into P stages, first[0..P]: partition_balanced
 * (ds_partition.h) over m's layers as one PipelineModule layer each, weights 1 for the
 * Transformer layers and 0 for the embedding and the head — equal blocks where P divides
 * them, else the programme's uneven cut (cost model 111), which cuts Megatron-DeepSpeed's
 * GPTModelPipe list alike. False where P exceeds the blocks or a stage would hold none (or
 * out of memory). */
bool tsl_target_ds_blocks_cut(const tsl_model_t *m, uint32_t P, uint32_t *first);

/* Whether a fixed pp (the request's; 0 or 1: none) is one t's partition can cut m
 * into: DeepSpeed's PipelineModule 'uniform' partition gives every stage the same
 * count of m's layers and 'type:transformer' every stage a Transformer layer (cost
 * model 111: uneven where pp divides neither), so pp must divide the layers or be at
 * most the blocks (check_deepspeed refuses every plan otherwise, and the search found
 * none). Under torchtitan a pp > 1 with m's head tied to its embedding is refused too
 * (tsl_target_tied_pp_refused). err names pp (TSL_E_INVALID). */
int tsl_target_pp_ok(uint32_t t, const tsl_model_t *m, uint32_t pp, tsl_err_t *err);

#endif
