/*
 * eval_cmd.h — `tesselctl eval`: its options (eval_opts.c) and the local run
 * (eval_local.c).
 */
#ifndef TSL_EVAL_CMD_H
#define TSL_EVAL_CMD_H

#include "commands.h"
#include "eval_cfg.h"
#include "figures_load.h"
#include "model.h"
#include "plan.h"

typedef struct tsl_eval_opts {
    const char *model, *hf_config, *cluster;
    const char *model_name; /* --name NAME */
    uint32_t seq_len;
    uint64_t mem_budget_bytes;     /* --memory */
    tsl_eval_cfg_t cfg;            /* --tp, --pp, ... */
    bool have_flags;               /* some plan flag given */
    const char *strategy;          /* --strategy TEXT: every layer's, instead of the degrees */
    const char *layer_flag;        /* the first of --tp --dp --sdp --ckpt --sp --zero given,
                                    * which --strategy replaces (refused beside it) */
    const char *plan_file;         /* --plan FILE */
    const char *megatron_args;     /* --megatron-args "..." */
    const char *torchtitan;        /* --torchtitan FILE */
    const char *profile;           /* --profile FILE (local only) */
    const char *galvatron_profile; /* --galvatron-profile DIR (local only) */
    const char *amp_profile;       /* --amp-profile DIR (local only) */
    bool unfused_attn;             /* --unfused-attn: the request's unfused_attn */
    bool no_dropout;               /* --no-dropout: the request's no_dropout */
    uint32_t mtp_layers;           /* --mtp-layers N: the request's mtp_layers (mtp.h) */
    bool no_mtp;                   /* --no-mtp: the request's no_mtp */
    uint32_t bf16_layers_start;    /* --bf16-layers-start N: the request's (model.h) */
    uint32_t bf16_layers_end;      /* --bf16-layers-end N */
    bool autocast;                 /* --autocast: the request's autocast */
    bool double_block_fwd;         /* --double-block-fwd: the request's double_block_fwd */
    bool eager;                    /* --eager: the request's eager */
    bool paper_cost;               /* --paper-cost: the request's paper_cost */
    bool no_host_floor;            /* --no-host-floor: the request's no_host_floor */
    double host_op_us;             /* --host-op-us US: the request's host_op_us (0: the plan's) */
    /* --grad-reduce-bytes N, --no-fp32-master, --[no-]overlap-grad-reduce,
     * --overlap-param-gather, --[no-]overlap-tp-dgrad: the request's fields of those names, over the
     * imported plan's (docs/cost-model.md "Precision and overlap") */
    uint32_t grad_reduce_bytes;
    uint32_t grad_buf_bytes; /* --grad-buf-bytes N: the request's grad_buf_bytes */
    bool ds_grad_bucket;     /* --ds-grad-bucket: the request's ds_grad_bucket */
    bool tp_whole_heads;     /* --tp-whole-heads: the request's tp_whole_heads */
    bool sdp_nosync;         /* --sdp-nosync: the request's sdp_nosync */
    bool sdp_layer_roots;    /* --sdp-layer-roots: the request's sdp_layer_roots */
    bool sdp_keep_weights;   /* --sdp-keep-weights: the request's sdp_keep_weights */
    bool ds_bf16_optimizer;  /* --ds-bf16-optimizer: the request's ds_bf16_optimizer */
    bool launch_blocking;    /* --launch-blocking: the request's launch_blocking */
    bool ds_wall_clock;      /* --ds-wall-clock: the request's ds_wall_clock */
    bool ds_zero3_v03;       /* --ds-zero3-v03: the request's ds_zero3_v03 */
    bool fp8_amax_tp_only;   /* --fp8-amax-tp-only: the request's fp8_amax_tp_only */
    bool fp8_dpa;            /* --fp8-dpa: the request's fp8_dpa */
    /* --unfused-elementwise: the request's unfused_elementwise */
    bool unfused_elementwise;
    bool fp32;            /* --fp32: the request's fp32 (fp32 training) */
    bool tf32;            /* --tf32: the request's tf32 (the stack's fp32 matmuls TF32) */
    bool fp16;            /* --fp16: the request's fp16 (fp16 mixed precision) */
    uint32_t attn_kernel; /* --attn-kernel KERNEL: the request's attn_kernel (attn_kernel.h) */
    bool no_fp32_master, overlap_grad_reduce, no_overlap_grad_reduce, overlap_param_gather;
    /* --[no-]overlap-tp-dgrad: the request's overlap_tp_dgrad / no_overlap_tp_dgrad */
    bool overlap_tp_dgrad, no_overlap_tp_dgrad;
    bool unfused_grad_accum; /* --unfused-grad-accum: the request's unfused_grad_accum */
    bool legacy_p2p;         /* --legacy-p2p: the request's legacy_p2p */
    bool tp_comm_overlap;    /* --tp-comm-overlap: the request's tp_comm_overlap */
    bool async_tp;           /* --async-tp: the request's async_tp */
    bool bf16_moments;       /* --bf16-moments: the request's bf16_moments */
    bool lazy_grads;         /* --lazy-grads: the request's lazy_grads */
    bool recompute_core;     /* --recompute-modules names core_attn: --ckpt selective */
    /* --fp8 RECIPE / --no-fp8: the request's fp8_recipe / no_fp8 (tsl_fp8_recipe_t) */
    uint32_t fp8_recipe;
    bool no_fp8;
    bool fp8_param_gather; /* --fp8-param-gather: the given plan's fp8_param_gather */
    int fp8_impl;          /* --fp8-impl te|torchao: the given plan's fp8_impl; -1: unset */
    bool cp_comm_given;    /* --cp-comm TYPE given (p2p is cfg.knobs.cp_comm's 0 too) */
    int loss_impl; /* --loss-impl NAME (exec, torch, ... fused-xentropy): the given plan's loss_impl
                              (loss_impl.h); -1: unset */
    int opt_step;  /* --opt-step NAME (opt_step.h): the given plan's; -1: unset */
    int norm_impl; /* --norm-impl te|apex (norm_impl.h): the given plan's; -1: unset */
    bool tp_sync;  /* --tp-sync: the given plan's tp_sync */
    bool ds_pipe_p2p;      /* --ds-pipe-p2p: the given plan's ds_pipe_p2p */
    bool ds_pipe_engine;   /* --ds-pipe-engine: the given plan's ds_pipe_engine */
    bool torch_pipelining; /* --torch-pipelining: the given plan's torch_pipelining */
    bool nccl_no_tree;     /* --nccl-no-tree: the given plan's nccl_no_tree */
    /* --moe-bf16-experts, --moe-fp8-dispatch: the request's fields of those names;
     * --moe-alltoall-dispatcher: its moe_alltoall; --moe-flex-dispatcher: its moe_flex;
     * --moe-a2a-overlap: its moe_a2a_overlap; --moe-a2a-wgrad-inline: its
     * moe_a2a_wgrad_inline; --moe-unfused-permute: its moe_unfused_permute;
     * --moe-fused-mlp: its moe_fused_mlp; --moe-fused-srelu: its moe_fused_srelu */
    bool moe_bf16_experts, moe_fp8_dispatch, moe_alltoall, moe_flex, moe_a2a_overlap;
    bool moe_a2a_wgrad_inline;
    uint32_t moe_flex_backend; /* --moe-flex-backend: tsl_flex_backend_t (0: not given);
                                  the request's moe_flex_backend */
    bool moe_unfused_permute, moe_fused_mlp, moe_fused_srelu;
    double moe_imbalance; /* --moe-imbalance X: the request's moe_imbalance (0: the plan's) */
    uint32_t vp_group;    /* --vp-group N: the request's vp_group (0: the plan's, else pp) */
    /* --cpu-offload-layers N: the request's cpu_offload_layers (0: the plan's) */
    uint32_t cpu_offload_layers;
    /* --target STACK: the request's target (target.h), the stack the plan is priced
     * and checked for; 0: none, or the stack a --torchtitan configuration names.
     * target_given: --target was on the line (--target any keeps a plan document's
     * stack out; without it the document's request's target is eval's) */
    uint32_t target;
    bool target_given;
    bool no_search;
    bool local; /* --local: run here even when a server is named */
} tsl_eval_opts_t;

/* The request the plan is priced (and the comparison searched) under (eval_local.c): the
 * options' memory budget, attention and cost mode, the rest defaults. */
void tsl_eval_request(const tsl_eval_opts_t *eo, tsl_request_t *r);

/* What both modes need before costing: the model (and the options it was
 * loaded by, which the remote mode sends), the cluster, and the given plan;
 * doc is --plan's document (NULL otherwise). */
typedef struct tsl_eval_input {
    tsl_plan_opts_t po; /* model, hf_config, seq_len as used (a preset the document names) */
    tsl_model_t model;
    tsl_cluster_t cluster;
    tsl_plan_t *given;
    json_t *doc;
    tsl_figures_load_t figures; /* --profile / --galvatron-profile attached to cluster */
    bool mtp_dropped;           /* the model's own MTP depths left out (--no-mtp, a Megatron-LM
                         line without --mtp-num-layers, a document's no_mtp; mtp.h) */
    /* the stack the plan is priced as and the comparison searched in (target.h):
     * --target, else a plan document's request's target (a plan searched with plan
     * --target STACK is compared within STACK's space, as plan compared it) */
    uint32_t target;
    /* the configuration's attention core: a Megatron-LM line's --attention-backend
     * unfused (eval_cfg.h unfused_attn), priced as --unfused-attn */
    bool unfused_attn;
    /* a Megatron-LM line's full-iteration CUDA graph (eval_cfg.h no_host_floor), priced
     * as --no-host-floor */
    bool no_host_floor;
} tsl_eval_input_t;

/* The request of tsl_eval_request under what *in loaded: its target (--target, else
 * the plan document's), the configuration's attention core and its full-iteration graph. Both modes price the
 * plan under it. */
void tsl_eval_input_request(const tsl_eval_opts_t *eo, const tsl_eval_input_t *in,
                            tsl_request_t *r);

/* Loads *in from the options; cluster_json, when not NULL, is the cluster
 * document to use instead of --cluster (the registered workers'). 0, or -1
 * with err naming the option. Free with tsl_eval_input_free either way. */
int tsl_eval_input_load(const tsl_eval_opts_t *eo, const char *cluster_json, tsl_eval_input_t *in,
                        tsl_err_t *err);
void tsl_eval_input_free(tsl_eval_input_t *in);

/* The exit status of a failed tsl_eval_input_load: its code's (api/status.h),
 * except that the loaders' TSL_E_NOTFOUND (a --profile, --amp-profile or
 * --hf-config path that is not there) is bad input, 2, as plan --local exits; 3
 * is tesseld's NOT_FOUND (docs/tesselctl.md "Exit status"). */
int tsl_eval_input_exit(const tsl_err_t *err);

/* In this process (eval_local.c), or through tesseld's Planner.EvaluatePlan
 * (eval_remote.c). Both print with tsl_eval_print. */
int tsl_eval_local(const tsl_eval_opts_t *eo, const tsl_client_opts_t *co);
int tsl_eval_remote(const tsl_eval_opts_t *eo, const tsl_client_opts_t *co);

/* Prints common/eval_doc.h's document (the table and the comparison, or JSON
 * with co->json); steals doc (NULL: out of memory). */
int tsl_eval_print(json_t *doc, tsl_print_tie_t tie, const tsl_client_opts_t *co);

#endif
