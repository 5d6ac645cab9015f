/*
 * plan.h — a hybrid-parallel training plan and its predicted figures.
 *
 * A plan is self-contained and fixed-size (no pointers): it can be copied with =,
 * compared with memcmp after tsl_plan_init, and stored as is. Stage s runs layers
 * [first_layer, first_layer + n_layers) on devices [first_device, first_device +
 * n_devices); inside the block, device placement follows the strategy's level
 * order (strategy.h): level 0 takes consecutive devices.
 *
 * Units: seconds, bytes, samples; throughput in samples/s and tokens/s.
 */
#ifndef TSL_PLAN_H
#define TSL_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster.h"
#include "cost.h"
#include "model.h"
#include "pipesim.h"
#include "strategy.h"

#define TSL_PLAN_MAX_STAGES 64u
#define TSL_PLAN_MAX_LAYERS TSL_MODEL_MAX_LAYERS
/* Placements (node_order) are searched and carried for clusters of at most this
 * many nodes; a larger cluster's plan runs in the order given (n_nodes 0), which
 * keeps a plan a fixed ~30 KB however large the cluster. */
#define TSL_PLAN_MAX_ORDER_NODES 1024u

typedef struct tsl_plan_stage {
    uint32_t first_layer, n_layers;
    uint32_t first_device, n_devices;
    uint32_t inflight;    /* micro-batches of activations held (1F1B) */
    double fwd_s;         /* one micro-batch's forward (of time_s), p2p excluded */
    double time_s;        /* one micro-batch, with gradient sync as the iteration
                             prices it after the stage's last backward (Megatron-core's
                             per-chunk reduce too, tsl_pipeline_chunk_rs_cost_s: one
                             figure for the closed form, the simulator, the document) */
    double time_nosync_s; /* one micro-batch, without */
    double p2p_s;         /* boundary send to the next stage, included above */
    double wgrad_s;       /* the weight-gradient GEMMs' part of the backward, included
                             above (tsl_layer_cost_t.wgrad_s summed): a zero-bubble
                             schedule's W; the rest of the backward is its B */
    double ep_save_s;     /* moe_a2a_overlap: what one merged step of a micro-batch's
                             forward and another's backward saves, its EP all-to-alls
                             under the other's compute (tsl_pipesim_fb_save_s over the
                             stage's ep_s; the document's "ep_save_s", so that a plan
                             read back simulates with it) */
    double fb_save_s;     /* DualPipeV: what one overlapped F&B step (a micro-batch's
                             forward with another's backward) saves against F + B
                             (tsl_pipesim_fb_save_s over the stage's communication) */
    double opt_s;         /* the optimizer step, once per iteration (not in time_s) */
    double dp_rs_s;       /* the stage's DP reduce as one collective (tsl_layer_cost_t
                             dp_rs_s summed; not in the plan document) */
    double dp_rs_sync_s;  /* what the layers charge for it under the last backward
                             (dp_rs_sync_s summed; not in the plan document); where
                             the stack reduces per chunk, time_s carries
                             tsl_pipeline_chunk_rs_cost_s in its place */
    double chunk1_fwd_s;  /* a V schedule (tsl_plan_t.v_chunks): what of fwd_s, of the
                             backward and of wgrad_s the rank's second chunk (virtual
                             stage 2P − 1 − s) runs; the first the rest (the plan
                             document's stage "chunk1", tessel.v1 Stage.chunk1) */
    double chunk1_bwd_s, chunk1_wgrad_s;
    uint64_t ms_bytes;   /* model states per device */
    uint64_t act_bytes;  /* activations per device (all in-flight micro-batches) */
    uint64_t peak_bytes; /* Eq. 2 peak per device */
} tsl_plan_stage_t;

typedef struct tsl_plan {
    bool valid;     /* false: empty / no plan (e.g. a baseline that OOMs) */
    char label[32]; /* "tessel", "dp", "megatron-tp", ... */
    uint32_t n_devices;
    uint32_t pp; /* number of stages */
    tsl_plan_stage_t stages[TSL_PLAN_MAX_STAGES];
    uint32_t n_layers;
    bool sublayer; /* layers are tsl_sublayer_split()'s attention/FFN blocks */
    tsl_strategy_t layer[TSL_PLAN_MAX_LAYERS];
    uint32_t global_batch;
    uint32_t micro_batch;    /* samples per micro-batch (B_m) */
    uint32_t n_micro;        /* m; global_batch = micro_batch × n_micro */
    uint32_t interleave;     /* v model chunks per stage (interleaved 1F1B, pipeline.h);
                                   0 or 1: plain 1F1B */
    uint32_t vp_group;       /* interleaved: micro-batches per group N of Megatron-LM's
                                schedule (--microbatch-group-size-per-virtual-pipeline-stage,
                                pipeline.h), P <= N <= n_micro; 0: N = P, the default */
    uint32_t schedule;       /* tsl_pipesim_sched_t: 0 1F1B (interleaved with v > 1), ZB-H1,
                             ZBV (2 chunks per stage in a V; interleave stays 0) */
    bool v_chunks;           /* a V schedule's stages carry their chunks' own times
                                (tsl_plan_stage_t.chunk1_*; set by the pricing, and read
                                back where every stage of the document has "chunk1": a
                                document without them simulates each chunk as half) */
    double iter_time_1f1b_s; /* zero-bubble plans: the same stages and strategies under
                                plain 1F1B, the schedule's reason (0 otherwise) */
    double iter_time_s;      /* Eq. 9 (or T_v) + opt_tail_s */
    double opt_tail_s;       /* what the stages' optimizer steps add after the pipeline's
                           end (tsl_pipeline_opt_tail_s), tie_s included */
    double tie_s;            /* a tied LM head in another stage than its embedding: the
                           word embedding's gradient all-reduce between the first and
                           last stages, once per iteration before their steps
                           (tsl_cost_tied_allreduce_elem_s); 0: none */
    uint32_t tie_stage;      /* the stage of the copy tie_s sums with stage 0's, where not
                                the last: a V's MTP depth on rank 1 (cost model 118; set
                                by the pricing, the document's "tie_stage"); 0: the last */
    double samples_per_s;
    double tokens_per_s;
    uint64_t peak_bytes;     /* max over stages */
    uint64_t budget_bytes;   /* the memory budget the plan was searched under */
    double alpha_t, alpha_m; /* Eq. 6 */
    /* Placement: stage blocks index devices of the cluster with its nodes taken in
     * this order (node_order[k] = the k-th node's index in the cluster as given).
     * n_nodes == 0 means the cluster's own order. */
    uint32_t n_nodes;
    uint16_t node_order[TSL_PLAN_MAX_ORDER_NODES];
    /* H3T memory switches (memopt.h), set on plans of the memopt space only:
     * memopt = 1 + tsl_memopt_mode_t (0: none), per-layer switch bits, and the host
     * memory the offloads need per node. */
    uint8_t memopt;
    uint8_t layer_switches[TSL_PLAN_MAX_LAYERS];
    uint64_t cpu_bytes_per_node;
    /* AutoPipe (pipesim.h, autopipe.h): the same stage times through the 1F1B event
     * simulator, its master stage, and the slicer (n_sliced = 0: not applied). */
    double sim_iter_time_s;
    uint32_t master_stage;
    uint32_t n_sliced;
    double sliced_iter_time_s;
    /* How the plan's stack keeps and syncs gradients, as it was priced
     * (tsl_cost_knobs_t in cost.h; all zero: Tessel's executor). */
    uint32_t grad_reduce_bytes; /* 0 (= 2) or 4: fp32 main gradients */
    uint32_t grad_buf_bytes;    /* the gradient buffer's bytes where not the reduce's; 0: its */
    uint32_t attn_kernel;       /* tsl_attn_kernel_t the fused core was priced with; 0: none */
    bool no_fp32_master;        /* 16-bit optimizer states, no fp32 master */
    bool grad_reduce_exposed;   /* DP gradient reduce after the backward */
    bool overlap_param_gather;  /* ZeRO-1 weight all-gather under the next forward */
    bool overlap_tp_dgrad;      /* the backward's TP collectives under the gradient GEMMs */
    bool unfused_grad_accum;    /* weight gradients accumulated by a kernel of their own */
    bool legacy_p2p;            /* Megatron-LM's p2p before core: scatter/gather, blocking */
    bool tp_comm_overlap;       /* SP collectives under their GEMMs (TE userbuffers) */
    bool async_tp;              /* SP collectives under their GEMMs (torch's AsyncTP) */
    bool autocast;              /* PyTorch eager modules under torch.autocast (cost.h) */
    bool eager;                 /* eager modules, no torch.compile (cost.h) */
    bool double_block_fwd;      /* every block's forward run twice (cost.h) */
    /* Context parallelism of every layer (cost.h tsl_cost_knobs_t.cp, cp_comm):
     * 0 or 1 none; the CP ranks are the innermost of each layer's data level. */
    uint32_t cp;
    uint32_t cp_comm; /* tsl_cp_comm_t: 0 p2p (ring), 1 allgather, 2 a2a (Ulysses) */
    /* Expert parallelism of every MoE layer (cost.h tsl_cost_knobs_t.ep): 0 or 1
     * none; the EP ranks are the innermost of each MoE layer's stage block. */
    uint32_t ep;
    /* The routed experts' layout and routing as priced (cost.h tsl_cost_knobs_t): expert
     * TP (0 or 1 none; the innermost etp ranks split each expert's width), the capacity
     * factor (0 dropless), padding to it, the imbalance (0: TSL_COST_MOE_IMBALANCE). */
    uint32_t etp;
    double moe_capacity;
    bool moe_pad;
    double moe_imbalance;
    /* The stack's host time per eager op priced, µs, where the request gave one
     * (cost.h tsl_cost_knobs_t.host_op_s); 0: the built-in TSL_ROOFLINE_HOST_OP_S. */
    double host_op_us;
    uint32_t fp8_recipe;      /* tsl_fp8_recipe_t of the blocks' linear GEMMs; 0: bf16 */
    uint32_t fp8_impl;        /* with fp8_recipe: tsl_fp8_impl_t, who runs it (0 TE, 1 torchao) */
    uint32_t loss_impl;       /* tsl_loss_impl_t: how the LM head's loss ran (0 the executor's,
                              1 torch, 2 megatron, 3 te, 4 torch-compile, 5 fused-xentropy;
                              loss_impl.h) */
    bool fp8_param_gather;    /* FP8 weights in place of bf16 (--fp8-param-gather), gathered
                              in FP8 */
    bool moe_bf16_experts;    /* with fp8_recipe: the routed experts' GEMMs kept bf16 */
    bool moe_fp8_dispatch;    /* with FP8 experts: the dispatch (and the combine's gradient)
                              all-to-all in FP8 */
    bool moe_alltoall;        /* priced with Megatron-LM's all-to-all token dispatcher
                              (cost.h knobs.moe_alltoall) */
    bool moe_unfused_permute; /* priced with MCore v0.8's unfused token permutation
                                 (cost.h knobs.moe_unfused_permute) */
    bool moe_fused_mlp;       /* priced with the experts' MLP through TE's op fuser (cost.h
                                 knobs.moe_fused_mlp) */
    bool moe_fused_srelu;     /* priced with the routing weights inside the experts' fused
                                 squared ReLU (cost.h knobs.moe_fused_srelu) */
    bool moe_flex;            /* priced with a flex dispatcher's all-to-alls (HybridEP,
                              DeepEP; cost.h knobs.moe_flex) */
    /* with moe_flex: its back end, tsl_flex_backend_t (0: tsl_flex_backend_of's default;
     * knobs.moe_flex_backend) */
    uint32_t moe_flex_backend;
    bool moe_a2a_overlap; /* priced with Megatron-LM's EP all-to-all overlap (cost.h
                          knobs.moe_a2a_overlap) */
    /* with it, priced without --delay-wgrad-compute (knobs.moe_a2a_wgrad_inline) */
    bool moe_a2a_wgrad_inline;
    bool fb_serial; /* DualPipeV's F&B priced as F + B (torchtitan runs it so) */
    /* Megatron's recompute modules beside the attention core (recompute.h bits; the
     * core is each layer's +selckpt) and Adam's moments in bf16 (cost.h knobs) */
    uint32_t recompute_modules;
    bool bf16_moments;
    /* with fp8_recipe: the model's first and last blocks kept bf16 (model.h
     * tsl_model_set_bf16_layers; Megatron-LM --num-layers-at-start/end-in-bf16) */
    uint32_t bf16_layers_start, bf16_layers_end;
    bool lazy_grads;       /* gradients from each chunk's first backward (cost.h knobs) */
    uint32_t opt_step;     /* tsl_opt_step_impl_t: the stack's optimizer step (opt_step.h) */
    bool tp_sync;          /* TP collectives between device synchronisations (cost.h knobs) */
    bool ds_pipe_p2p;      /* DeepSpeed's pipeline p2p as AMP's fork runs it (cost.h knobs) */
    bool ds_pipe_engine;   /* stages by DeepSpeed's PipelineEngine: blocking one-way p2p */
    bool ds_grad_bucket;   /* DeepSpeed's ZeRO-0 gradient bucket around the DP all-reduce */
    bool torch_pipelining; /* stages by torch.distributed.pipelining: its interleaved 1F1B
                              waits on every exchange (cost.h knobs) */
    bool nccl_no_tree;     /* NCCL's tree turned off by the stack: ring all-reduces (cost.h) */
    uint32_t norm_impl;    /* tsl_norm_impl_t: whose fused LayerNorm kernels (norm_impl.h) */
    bool tp_whole_heads;   /* all attention heads on every TP rank, 1/t wide (cost.h knobs) */
    bool sdp_nosync;       /* SDP kept unsharded between micro-batches (cost.h knobs) */
    /* SDP keeps the forward's gathered weights to the backward (cost.h knobs) */
    bool sdp_keep_weights;
    /* the modules Megatron-core replays as CUDA graphs (cuda_graph.h bits; cost.h knobs) */
    uint32_t cuda_graph_modules;
    /* the linears run at their own precision (module_prec.h nibbles; cost.h knobs) */
    uint32_t module_prec;
    /* SDP as fairscale's FSDP with a root per layer (cost.h knobs) */
    bool sdp_layer_roots;
    /* DeepSpeed's BF16_Optimizer under pipeline stages (cost.h knobs) */
    bool ds_bf16_optimizer;
    /* every kernel launch synchronous: CUDA_LAUNCH_BLOCKING=1 (cost.h knobs) */
    bool launch_blocking;
    /* DeepSpeed's synchronising timers around every pipeline instruction (cost.h knobs) */
    bool ds_wall_clock;
    /* DeepSpeed 0.3's ZeRO-3 on the SDP level (cost.h knobs) */
    bool ds_zero3_v03;
    /* TE's delayed-scaling amax all-reduce over TP only, async (TE < v1.6; cost.h knobs) */
    bool fp8_amax_tp_only;
    /* FP8 attention: cuDNN's FP8 core, a sliding window's backward over the causal square
       (cost.h knobs.fp8_dpa) */
    bool fp8_dpa;
    /* Megatron-LM v1.1.5's unfused bias, mask and copy kernels (cost.h knobs) */
    bool unfused_elementwise;
    bool fp32;     /* fp32 training, TF32 GEMMs where the GPU has them (cost.h knobs) */
    bool tf32_off; /* with fp32: the GEMMs priced without TF32, at the fp32 peak, as the
                      stacks run them (cost.h knobs.tf32_off), or as every GPU of the
                      cluster runs them, having no TF32 (tsl_cluster_tf32_moot) */
    bool tf32;     /* with fp32: priced with TF32 GEMMs because the request said the stack
                      runs them so (request tf32, cost.h knobs.tf32): the exports take it */
    bool fp16;     /* fp16 mixed precision with a dynamic loss scaler (cost.h knobs.fp16): asked
                      for, or the default on a cluster with a GPU without bf16 */
    bool stack_unfused_attn; /* the target's stack has no fused attention kernel on a GPU of
                                the cluster (cost.h knobs.stack_unfused_attn: Megatron-LM on
                                V100, T4, Turing): priced with the unfused core, and exported
                                with --transformer-impl local */
    /* Activation CPU offloading (cost.h knobs, offload.h): the first N Transformer
     * layers' stashes on the host between their forward and backward; the compute's
     * waits for the copies over the iteration (in the stages' times), and the host
     * memory one device's offloaded stash takes (one micro-batch's). */
    uint32_t cpu_offload_layers;
    double cpu_offload_s;
    uint64_t cpu_offload_bytes;
} tsl_plan_t;

/* What a plan asks beyond its stages' layouts that Tessel's executor (worker/exec)
 * does not run — a zero-bubble or DualPipeV schedule, context parallelism, expert
 * TP, FP8 GEMMs, MoE padding to capacity, Megatron's recompute modules, bf16 Adam
 * moments, H3T's memory switches — refused with TSL_E_UNSUPPORTED and the plan
 * field named, rather than run as another plan (a trial would time something else
 * than what was priced). The executor checks it before any rank starts, tesseld
 * before it starts a trial. 0: the executor runs every plan-level field p holds.
 * Not refused: how a target stack keeps gradients, issues kernels and sends (the
 * tsl_cost_knobs_t switches); the executor runs the same work its own way. */
int tsl_plan_exec_scope(const tsl_plan_t *p, tsl_err_t *err);

/* The model-level half: layers the executor has no kernels for — Mamba-2 mixer
 * layers (mamba.h) — refused with TSL_E_UNSUPPORTED naming the first such layer.
 * The executor checks it with tsl_plan_exec_scope before any rank starts; 0: it
 * runs every layer kind m holds. */
int tsl_model_exec_scope(const tsl_model_t *m, tsl_err_t *err);
/* The same from a plan document's count (its model.mamba_layers, plan_fields.h), as
 * tesseld checks a trial's plan without the model: -1 with TSL_E_UNSUPPORTED when
 * mamba_layers > 0. */
int tsl_exec_scope_mamba(uint32_t mamba_layers, tsl_err_t *err);

/* The plan a trial of p runs, in place: the executor has no split backward, so a ZB-H1
 * plan runs as 1F1B over its own stages (the same layers, devices and in-flight
 * activations; tesseld holds it to iter_time_1f1b_s). Every other plan as it is. */
void tsl_plan_trial_form(tsl_plan_t *p);

/* The plan's knobs as the cost model takes them, and back. */
void tsl_plan_get_knobs(const tsl_plan_t *p, tsl_cost_knobs_t *k);
void tsl_plan_set_knobs(tsl_plan_t *p, const tsl_cost_knobs_t *k);

/* The stack switches p records that no request field names, over k where p records
 * one: who runs its FP8 (fp8_impl), its optimizer step (opt_step), FP8 weights'
 * gathers (fp8_param_gather), DualPipeV's F&B run serially (fb_serial) and its TP
 * collectives between device synchronisations (tp_sync), its stage boundaries by
 * DeepSpeed's pipeline engine (ds_pipe_p2p, ds_pipe_engine) or by
 * torch.distributed.pipelining (torch_pipelining). A
 * request takes these from its target; an evaluated plan and the search it is
 * compared with (eval.h, tsl_eval_search_request) from the plan. */
void tsl_plan_stack_knobs(const tsl_plan_t *p, tsl_cost_knobs_t *k);

void tsl_plan_init(tsl_plan_t *p);

/*
 * Checks: every layer placed exactly once in order, stages cover the devices
 * without overlap, each layer's strategy multiplies to its stage's device count,
 * micro_batch × n_micro = global_batch, per-stage peak within budget, figures
 * finite and positive. The message names the stage/layer and what is wrong.
 * m is the model as given; a sub-layer plan is checked against its split.
 */
int tsl_plan_validate(const tsl_plan_t *p, const tsl_model_t *m, const tsl_cluster_t *c,
                      tsl_err_t *err);

/*
 * Folds runs of equal strategies (and equal memory switches) per stage, like the
 * paper's Fig. 6:
 * "tp2-dp4 ×12". Calls fn once per run.
 */
typedef void (*tsl_plan_run_fn)(void *ud, uint32_t stage, uint32_t first_layer, uint32_t count,
                                const tsl_strategy_t *s);
void tsl_plan_foreach_run(const tsl_plan_t *p, tsl_plan_run_fn fn, void *ud);

/*
 * Canonical fingerprint: a stable 64-bit FNV-1a hash over a canonical encoding of
 * the model's layer shapes, the cluster's devices and links, and the request's
 * fields (passed as an opaque canonical byte string by search.h). Independent of
 * pointer values, struct padding and host byte order.
 */
typedef struct tsl_fp {
    uint64_t h;
} tsl_fp_t;

void tsl_fp_init(tsl_fp_t *fp);
void tsl_fp_u64(tsl_fp_t *fp, uint64_t v);
void tsl_fp_f64(tsl_fp_t *fp, double v); /* hashed via its %.17g text */
void tsl_fp_str(tsl_fp_t *fp, const char *s);
void tsl_fp_model(tsl_fp_t *fp, const tsl_model_t *m);
void tsl_fp_cluster(tsl_fp_t *fp, const tsl_cluster_t *c);
/* 16 lowercase hex digits + NUL into buf[17]. */
void tsl_fp_hex(const tsl_fp_t *fp, char buf[17]);

/* Whether a is the better plan: faster, then (deterministic tie-breaks) less
 * memory, fewer stages, fewer micro-batches. The one ranking the search and its
 * top-k use. */
bool tsl_plan_better(const tsl_plan_t *a, const tsl_plan_t *b);

/* A plan's stages as the event simulator's input (pipesim.h), the same figures
 * tsl_pipeline_iter prices: per stage the forward, the backward without p2p, one
 * hop's p2p (p2p_s / (2·v)) and the step. paper (TSL_COST_PAPER): Eq. 9's sync
 * inside the last backward and AutoPipe's asynchronous sends; otherwise the
 * stacks': each stage's sync after its own last op (sync_tail_s) and, in plain
 * 1F1B (interleaved too under legacy_p2p, Megatron-LM before core), Megatron's
 * blocking sends. Zero-bubble plans (schedule): the schedule,
 * each stage's W (wgrad_s) and asynchronous sends (torch.distributed.pipelining's);
 * ZBV's and DualPipeV's hops as interleave 2's (p2p_s / 4); DualPipeV's F&B saving
 * (fb_save_s); a V's chunks their own times where the pricing gave them (v_chunks:
 * chunk1_*, each within its stage's figure), else half each. sim->in points into
 * sim: keep sim alive while in is used. */
typedef struct tsl_plan_sim {
    double fwd[TSL_PLAN_MAX_STAGES], bwd[TSL_PLAN_MAX_STAGES], sync[TSL_PLAN_MAX_STAGES],
        tail[TSL_PLAN_MAX_STAGES], p2p[TSL_PLAN_MAX_STAGES], opt[TSL_PLAN_MAX_STAGES],
        wgrad[TSL_PLAN_MAX_STAGES], fb_save[TSL_PLAN_MAX_STAGES];
    double fwd1[TSL_PLAN_MAX_STAGES], bwd1[TSL_PLAN_MAX_STAGES], wgrad1[TSL_PLAN_MAX_STAGES];
    tsl_pipesim_in_t in;
} tsl_plan_sim_t;

/* The simulator's input from plan p's stages; under moe_a2a_overlap each stage's
 * backward less tsl_plan_ep_overlap_s, as the closed form prices it. */
void tsl_plan_sim_input(const tsl_plan_t *p, bool paper, tsl_plan_sim_t *sim);

/* Whether Megatron-LM runs p's EP all-to-all overlap (moe_a2a_overlap): EP > 1, 1F1B
 * (not a zero-bubble or DualPipeV schedule), PP 1 or interleaved, no layer under full
 * recompute (TransformerConfig asserts a virtual pipeline at PP > 1 and
 * recompute_granularity != 'full'). Where it does not, nothing is saved and no
 * export writes it. */
bool tsl_plan_ep_overlap_runs(const tsl_plan_t *p);

/* Whether some layer of p has an SDP (ZeRO-3 / FSDP) level; a plan with n_layers 0 (a
 * given plan's layers left to the model) is read over every layer slot. */
bool tsl_plan_has_sdp(const tsl_plan_t *p);

/* What stage s of p saves per micro-batch by Megatron-LM's EP all-to-all overlap
 * (pipeline.h tsl_pipeline_ep_overlap_s over its ep_save_s): 0 where it does not run
 * (tsl_plan_ep_overlap_runs). */
double tsl_plan_ep_overlap_s(const tsl_plan_t *p, uint32_t s);

#endif
