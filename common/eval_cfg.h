/*
 * eval_cfg.h — the plan a person gives `tesselctl eval` (docs/tesselctl.md "eval":
 * flags, a Megatron-LM argument line or a torchtitan TOML), as the few
 * numbers a launch configuration fixes, and the tsl_plan_t (eval.h's input) it
 * stands for on a model and a device count.
 *
 * One strategy for the whole model, as Megatron-LM, torchtitan and DeepSpeed
 * run it: TP innermost (consecutive GPUs), then SDP, then DP (torchtitan's mesh
 * order). Checkpointing applies to the Transformer layers (encoder/decoder
 * kinds), not to the embedding or the head, as those stacks recompute. mbs is
 * per data-parallel rank (Megatron's --micro-batch-size): a micro-batch holds
 * mbs × DP × SDP samples.
 */
#ifndef TSL_EVAL_CFG_H
#define TSL_EVAL_CFG_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "eval_shape.h"
#include "model.h"
#include "plan.h"

typedef enum tsl_eval_ckpt {
    TSL_EVAL_CKPT_NONE = 0,
    TSL_EVAL_CKPT_FULL,
    TSL_EVAL_CKPT_SELECTIVE,
} tsl_eval_ckpt_t;

/* A Megatron-LM line's TransformerConfig.cuda_graph_impl (eval_cgraph.h). */
typedef enum tsl_eval_cgraph_impl {
    TSL_EVAL_CGRAPH_NONE = 0,
    TSL_EVAL_CGRAPH_LOCAL,
    TSL_EVAL_CGRAPH_TE, /* transformer_engine */
    TSL_EVAL_CGRAPH_FULL_ITERATION,
} tsl_eval_cgraph_impl_t;

typedef struct tsl_eval_cfg {
    uint32_t tp, pp, dp, sdp; /* 0: unset (tp, pp, sdp 1; dp the rest of a stage's devices) */
    bool sdp_rest;            /* sdp is the rest instead (torchtitan's shard degree -1) */
    bool cp_counted;          /* dp / sdp already hold the CP ranks (knobs.cp) */
    bool cp_shard;            /* FSDP over the CP ranks even at sdp 1 (eval --cp-shard:
                                 torchtitan's dp_shard_cp mesh at dp_shard 1) */
    uint32_t mbs;             /* samples per micro-batch per data-parallel rank; 0: 1 */
    uint32_t n_micro;         /* micro-batches; 0: from global_batch, else pp */
    uint32_t global_batch;    /* samples per iteration; 0: from n_micro */
    uint32_t local_batch;     /* per data-parallel rank (torchtitan); 0: unset */
    tsl_eval_ckpt_t ckpt;
    uint32_t ckpt_per_stage; /* > 0: full recompute of the first N Transformer layers
                                   of every stage only (Megatron --recompute-method block) */
    bool sp;                 /* sequence parallelism (needs tp > 1) */
    uint8_t zero;            /* 0, 1 (distributed optimizer), 2; needs dp > 1 */
    bool zero_one_rank;      /* zero on a stage of one data rank read as 0, not refused:
                                Megatron-LM's --use-distributed-optimizer, which runs there
                                and shards nothing */
    uint32_t interleave;     /* v model chunks per stage; 0/1 plain 1F1B */
    uint32_t schedule;       /* tsl_pipesim_sched_t (eval --schedule): 0 1F1B, interleaved
                                with interleave > 1; zbh1, zbv, dualpipev (no interleave) */
    uint32_t seq_len;        /* the configuration's sequence length; 0: unset */
    uint32_t n_blocks;       /* Transformer layers it names (Megatron --num-layers); 0 unset */
    /* Megatron --moe-layer-freq (arguments.py moe_freq_type): which Transformer
     * layers have experts, checked against the model. moe_every N: layer i when
     * i % N == 0; or moe_len > 0: the pattern's layers (moe_pattern[i] 1: experts).
     * Both 0: unset (Megatron's default 1, every layer of a MoE model) */
    uint32_t moe_every, moe_len;
    uint8_t moe_pattern[TSL_MODEL_MAX_LAYERS];
    /* the layer split, at most one of (none: balanced, as the search starts): */
    bool even_blocks;  /* Transformer layers evenly over the stages (Megatron,
                                   torchtitan), embedding first, head last */
    uint32_t n_counts; /* layers per stage (Tessel's layer indices), n_counts == pp; or
                          torchtitan's model parts (module_fqns_per_model_part): v·pp
                          for a looped schedule (tt_multi: part q on rank q mod pp, v
                          the plan's interleave), 2·pp for a V (tt_zbv: part q on rank
                          q < pp, else 2·pp − 1 − q) */
    uint32_t counts[TSL_PLAN_MAX_STAGES];
    uint32_t first_blocks, last_blocks; /* Megatron's uneven first/last stage (0: even) */
    uint32_t n_split_points;            /* torchtitan "layers.N": a stage starts at block N */
    uint32_t split_points[TSL_PLAN_MAX_STAGES];
    uint32_t vpp_blocks; /* Megatron --num-layers-per-virtual-pipeline-stage */
    uint32_t vp_group;   /* Megatron --microbatch-group-size-per-virtual-pipeline-stage
                            (the plan's vp_group, pipeline.h); 0 unset: pp */
    /* Megatron --account-for-embedding/loss-in-pipeline-split: with even_blocks,
     * the embedding / the loss counts as one Transformer layer of the first /
     * last stage (Megatron-LM d98e8a6 validate_args) */
    bool acct_embed, acct_loss;
    /* torchtitan's split when it names no split points (pipeline_parallel.py
     * _generate_llm_fqn_per_model_part): the embedding weighs tt_in_w layers and
     * the head tt_out_w (its *_stage_less_layers, default 1); the blocks plus
     * weights over pp × v virtual stages, the first (remainder) one layer more,
     * stage i on rank i mod pp. v: 1, or for a looped schedule (tt_multi,
     * Interleaved1F1B) 2 or what tt_layers_per_stage makes it; v > 1 is the
     * plan's interleave */
    bool tt_split, tt_multi;
    bool tt_zbv;       /* pipeline_parallel_schedule ZBVZeroBubble or DualPipeV: 2 virtual
                    stages per rank in a V (stage q on rank q and 2P − 1 − q); the
                    plan's schedule zbv (or dualpipev) */
    bool tt_dualpipev; /* pipeline_parallel_schedule DualPipeV (tt_zbv set too) */
    bool torchtitan;   /* read from a torchtitan configuration: the plan's MoE layers
                          must have their experts laid out as torchtitan does
                          (tsl_target_torchtitan_experts) */
    uint32_t tt_in_w, tt_out_w, tt_layers_per_stage;
    /* a torchtitan TOML's [model] name and flavor (torchtitan's defaults "llama3" and
     * "debugmodel" where the file gives none) and the flavor's line; 0: no flavor
     * given, nothing checked (tsl_eval_cfg_tt_flavor_check) */
    char tt_model[32], tt_flavor[32];
    uint32_t tt_flavor_line;
    /* multi-token prediction (mtp.h): mtp_read, the configuration says whether the
     * run has MTP (a Megatron-LM line: --mtp-num-layers N, mtp_layers; without it
     * Megatron builds none, mtp_layers 0); unset: the model's own depths */
    bool mtp_read;
    uint32_t mtp_layers;
    /* a Megatron-LM line's --recompute-num-layers under full uniform recompute (its
     * chunk size; every layer is recomputed either way), kept because Megatron-LM
     * asserts 1 where MTP depths are recomputed; 0: not given */
    uint32_t ckpt_uniform_chunk;
    uint32_t ckpt_every; /* > 0: full recompute of every N-th Transformer layer of a
                            stage (torchtitan selective_ac_option N: the N-th, 2N-th...) */
    /* how the stack keeps and syncs gradients (cost.h; all zero: Tessel's
       executor): Megatron-LM's precision and --overlap-* flags, torchtitan's
       FSDP2 float32 reduce and training dtype; the plan carries them */
    tsl_cost_knobs_t knobs;
    /* Megatron-LM without --expert-tensor-parallel-size: the routed experts take the
     * attention's TP degree (validate_args), knobs.etp = tp for a model with experts */
    bool etp_follows_tp;
    /* Megatron-LM's --hybrid-layer-pattern (or the deprecated --hybrid-override-pattern):
     * M, *, - and E per layer; checked against the model's blocks (a nemotron_h
     * --hf-config or preset), which it must match; empty: not given */
    char hybrid[TSL_MODEL_MAX_LAYERS + 1];
    /* its MTP part (Megatron-LM's unified pattern "MAIN/MTP/MTP": one depth's blocks
     * per '/', all alike): the blocks of a depth and the depths (which set mtp_layers,
     * as Megatron infers --mtp-num-layers from it); empty, 0: none given */
    char hybrid_mtp[9];
    uint32_t hybrid_mtp_depths;
    /* the pattern's '|' segments (Megatron-LM's stages and virtual stages: segment
     * j·pp + r is rank r's model chunk j; hybrid_layer_allocation.py
     * select_pipeline_segment): their blocks, in order; 0 segments: no '|' given */
    uint32_t hybrid_segs;
    uint16_t hybrid_seg[TSL_MODEL_MAX_LAYERS];
    /* a Megatron-LM line's --attention-backend unfused (Transformer Engine's
     * UnfusedDotProductAttention): the core keeps its s x s scores, priced as the
     * request's unfused_attn (--unfused-attn) is */
    bool unfused_attn;
    /* a Megatron-LM line's --transformer-impl local: Megatron-LM's own modules, whose
     * core attention is the unfused DotProductAttention (gpt_layer_specs.py
     * get_gpt_layer_local_spec at d98e8a6): priced as unfused_attn, and the switches
     * that run in Transformer Engine refused (tsl_target_te_only_knob) */
    bool local_impl;
    /* a Megatron-LM line's CUDA graphs (eval_cgraph.h): the impl it resolves to
     * (tsl_eval_cgraph_impl_t; per-layer modules in knobs.cuda_graph_modules);
     * cuda_graph_whole, a per-layer impl without modules (every layer one graph: its
     * modules set on the model by tsl_eval_cfg_plan); no_host_floor, a full-iteration
     * graph, priced as the request's no_host_floor (--no-host-floor) */
    uint8_t cuda_graph_impl;
    bool cuda_graph_whole;
    bool no_host_floor;
    /* a Megatron-LM line's --delay-wgrad-compute: priced as part of the EP overlap, and
     * what Megatron-LM asserts of it beside the graphs (tsl_cuda_graph_megatron_check) */
    bool delay_wgrad;
    /* a Megatron-LM line's model shape (--hidden-size, --num-experts, ...), checked
     * against the model (eval_shape.h); all 0: none given */
    tsl_eval_shape_t shape;
    /* what the import read differently from the stack or left out, one note a line,
       for the person to see (tsl_eval_cfg_note) */
    char notes[4096];
} tsl_eval_cfg_t;

/* Appends a note (a line) to cfg->notes; a note that does not fit is cut. */
void tsl_eval_cfg_note(tsl_eval_cfg_t *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The plan cfg stands for on model m over n_devices (the layer split left
 * unset, i.e. balanced, when cfg gives none). Fails naming the setting: degrees
 * that do not multiply to a stage's devices, a batch that does not divide into
 * micro-batches, a split that does not cover the layers, ... */
int tsl_eval_cfg_plan(const tsl_eval_cfg_t *cfg, const tsl_model_t *m, uint32_t n_devices,
                      tsl_plan_t *out, tsl_err_t *err);

/* A Megatron-LM argument line ("--tensor-model-parallel-size 8 ..."; words split
 * as a shell splits them, quotes and backslash-newlines included; '#' starts a
 * comment to the end of the line, so an `--export megatron` file reads as is).
 * Every flag is read, refused by name (one Megatron refuses, or one that changes
 * a plan in a way Tessel does not model: context or expert parallelism, ...),
 * noted (out->notes: accepted, not modelled), a model-shape flag (out->shape,
 * checked against the model by tsl_eval_cfg_plan: eval_shape.h) or on the list of
 * flags that do not change the plan (data, logging, optimizer settings); an unknown
 * flag fails naming it, and so does a line without a word (empty, blank or comments
 * only), which would price Megatron-LM's defaults. docs/tesselctl.md, "eval", lists the rules and the
 * Megatron-LM version they follow. */
int tsl_eval_cfg_megatron(const char *args, tsl_eval_cfg_t *out, tsl_err_t *err);

/* A torchtitan configuration: the job TOML of the versions that read one
 * ([parallelism], [training] and [activation_checkpoint]: sections, `key =
 * value` with integers, strings, booleans and arrays of strings, '#' comments),
 * or the Python function returning Trainer.Config of current torchtitan, read
 * without running it (literal assignments and keywords of the known keys).
 * Keys that change the plan in ways Tessel does not model (Ulysses context
 * parallelism, expert tensor parallelism, other schedules, op-level selective
 * checkpointing) are refused by name. Fails naming the key and line. */
int tsl_eval_cfg_torchtitan(const char *toml, tsl_eval_cfg_t *out, tsl_err_t *err);

/* Whether Tessel knows torchtitan's flavor of model name (its table: llama3,
 * llama3_ft, llama4, deepseek_v3, qwen3, gpt_oss at 9810191bb~1, the last TOML
 * torchtitan; a suffixed variant such as "8B_flex" as its base). */
bool tsl_eval_tt_flavor_known(const char *name, const char *flavor);

/* A torchtitan TOML's [model] flavor against the model priced (--model /
 * --hf-config): the flavor's hidden size, Transformer layers and routed experts
 * (torchtitan/models/<name>/__init__.py) against m's. 0 when they agree, or when no
 * flavor was given or Tessel does not know it (tsl_eval_tt_flavor_known; the
 * import notes it); -1 (TSL_E_INVALID) naming [model] flavor, both sizes and the
 * Tessel preset of the flavor where there is one. */
int tsl_eval_cfg_tt_flavor_check(const tsl_eval_cfg_t *cfg, const tsl_model_t *m, tsl_err_t *err);

#endif
