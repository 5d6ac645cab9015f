/*
 * search.h — the outer search (Galvatron-BMW Algorithm 1) and the baselines.
 *
 * For each global batch size (a fixed one, or a sweep), each PP degree P from the
 * divisors of the device count (stages take consecutive device blocks, so PP
 * crosses the slowest links first — Takeaway #1), each micro-batch count m, the
 * model is partitioned into P stages, every stage runs the layer DP (layerdp.h)
 * over the decision-tree strategies of its block (strategy.h), and the pipeline
 * time of Eq. 9 (pipeline.h) ranks the result. The best plan by throughput wins;
 * the k best distinct (P, m, batch) configurations are kept as alternatives.
 *
 * Baselines are the same search restricted to one hand-made strategy: pure DP
 * (PyTorch DDP), pure TP (Megatron), pure PP (GPipe, one device per stage), pure
 * SDP (ZeRO-3/FSDP), DeepSpeed 3D (2-way TP × 2-way PP × the rest DP), DP+TP and
 * DP+PP (Galvatron's restricted variants), and Megatron-LM's heuristics as AMP
 * Sec. 4.1 states them (smallest TP×PP that fits with TP inside a node, uniform
 * layer assignment, every micro-batch size). Baselines use no CKPT.
 *
 * Heterogeneous clusters (mixed GPU types or per-pair bandwidths): each stage's
 * memory budget is the smaller of the request's and its devices' memory, and the
 * search also tries re-ordered node placements (AMP 3.6: which node group takes
 * which stage) — the plan's node_order says which one won.
 *
 * Batch sweep: B = 1, 2, 4, ... until a batch fits nothing after one that fitted
 * (or two doublings gain nothing), then a refinement around the best batch b:
 * 3b/4, 7b/8 and 3b/2 first, then the side below b in steps of a sixteenth of it
 * where 3b/4 or 7b/8 became the best, else the side above it in steps of an eighth (up to
 * request.max_batch). Batches that fit nothing before any has fitted do not stop
 * it below the device count: a small batch cannot shard over every device.
 *
 * Pure and thread-safe: no globals, no clocks, no I/O. Progress and cancellation
 * go through the hooks; the same input gives the same result, byte for byte.
 */
#ifndef TSL_SEARCH_H
#define TSL_SEARCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cluster.h"
#include "model.h"
#include "plan.h"
#include "request_fields.h"
#include "strategy.h"
#include "target.h"

#define TSL_SEARCH_MAX_TOPK 16u
/* Context-parallel degrees searched (search.c cp_degrees, docs/search-space.md):
 * from sequences of CP_MIN_SEQ tokens, up to CP_MAX, keeping CP_MIN_TOKENS per rank;
 * below CP_ALL_SEQ tokens only degree 2. 8192: Megatron-Bridge's Llama 3.1 405B
 * presets run CP 2 at 8192 tokens (scripts/performance/configs/llama/
 * llama31_workload_base_configs.py at 21d102f5e, H100 and B200), the plan the search
 * missed from 16384 (bench/published/vs_search.py); degree 2 alone there keeps the
 * added search time to two engine runs (p2p, a2a) */
#define TSL_SEARCH_CP_MIN_SEQ        8192u
#define TSL_SEARCH_CP_ALL_SEQ        16384u
#define TSL_SEARCH_CP_MAX            32u
#define TSL_SEARCH_CP_MIN_TOKENS     1024u
#define TSL_SEARCH_EP_MAX            64u /* the largest EP degree searched */
#define TSL_SEARCH_ETP_MAX           8u  /* the largest expert TP degree searched */
#define TSL_SEARCH_DEFAULT_TOPK      5u
#define TSL_SEARCH_DEFAULT_MAX_BATCH 4096u

/*
 * The default memory reserve: what a training process holds on a device beyond
 * the model states and activations the cost model counts, kept out of the budget
 * when the request gives none (mem_budget_bytes 0). Per device:
 *   CUDA context   512 MiB. PyTorch measured 287 MB with lazy module loading
 *                  (CUDA_MODULE_LOADING=LAZY, Linux default since CUDA 12.2) and
 *                  667 MB without (pytorch/pytorch#86509); cuBLAS workspaces come
 *                  on top. An assumption between the two.
 *   NCCL buffers   512 MiB. NCCL_BUFFSIZE defaults to 4 MiB per channel, per peer
 *                  and protocol (NCCL's environment variable documentation); a ring
 *                  of 32 channels with two peers holds 256 MiB, and a hybrid plan
 *                  has a data-, a tensor- and a pipeline-parallel communicator.
 *                  The count of channels in use is the assumption.
 *   fragmentation  5% of the device: the caching allocator's blocks that are free
 *                  but too small or split (an assumption; PyTorch's allocator
 *                  reports it as reserved minus allocated).
 * 80 GiB devices plan against 75 GiB, 40 GiB ones against 37 GiB. Capped at half
 * the device. request.mem_reserve_bytes replaces the default; an explicit
 * mem_budget_bytes is the budget as given, with no reserve taken from it.
 */
#define TSL_SEARCH_RESERVE_CONTEXT_BYTES (512ull << 20)
#define TSL_SEARCH_RESERVE_NCCL_BYTES    (512ull << 20)
#define TSL_SEARCH_RESERVE_FRAG_PCT      5u

/* How a search on a cluster begins its refusal of a request's module_prec where no
 * FP8 plan is weighed there (every GPU lacks the recipe). Megatron-core applies a
 * per-module precision file inside a quantized autocast only, so `tesselctl plan
 * --te-precision-config-file` on tesseld's registered cluster, whose GPUs only
 * tesseld knows, asks again without the overrides on this refusal, as plan --local
 * drops them (client/plan_te_prec.c). */
#define TSL_MODULE_PREC_NO_FP8_PLAN                                                                \
    "module_precision: per-module precision overrides FP8 plans' modules, and no FP8 "             \
    "plan is weighed on this cluster"

/* The request: one member per line of request_fields.h, which documents each
 * field and how to add one. Zero means "default" throughout:
 *   global_batch 0: sweep for the best throughput; max_batch 0:
 *   TSL_SEARCH_DEFAULT_MAX_BATCH, or 4 per device on clusters over 1024
 *   devices (tsl_search_max_batch; the sweep's ceiling only: a global_batch
 *   above it is searched as given); mem_budget_bytes 0: each device's memory
 *   less the reserve (mem_reserve_bytes 0: the default reserve); top_k 0:
 *   default; max_pp 0: no limit beyond the device and layer counts; pp 0: searched; max_micro 0: the global batch; bucket_bytes 0: the
 *   layer DP's default granularity; the no_* switches turn a dimension or a
 *   step of the search off. */
typedef struct tsl_request {
#define TSL_REQUEST_MEMBER_(name, kind, ...) TSL_REQUEST_CTYPE_##kind name;
    TSL_REQUEST_FIELDS(TSL_REQUEST_MEMBER_)
#undef TSL_REQUEST_MEMBER_
} tsl_request_t;

void tsl_request_init(tsl_request_t *r);

/* The request's model switches (model.h tsl_model_for_request): attention kind,
 * dropout, MTP depths under its target's rule, blocks kept bf16 — the model the
 * search builds, and so the one a plan document's request was split on. */
tsl_model_switches_t tsl_request_model_switches(const tsl_request_t *r);

/* The bytes kept back on a device of dev_mem bytes: 0 when the request gives
 * a budget, else its mem_reserve_bytes or the default above. */
uint64_t tsl_request_reserve_bytes(const tsl_request_t *r, uint64_t dev_mem);

/* The memory budget on a device of dev_mem bytes: the request's budget (at most
 * the device's memory), or the device's memory less the reserve. */
uint64_t tsl_request_device_budget(const tsl_request_t *r, uint64_t dev_mem);

/* Checks the request against the model and cluster before any work: names the
 * field and the reason (batch 0 with no sweep, budget above device memory, ...). */
/* How the request's plans keep and sync gradients (cost.h tsl_cost_knobs_t): its
 * target's stack's way (tsl_target_knobs), with the request's explicit switches
 * (grad_reduce_bytes, no_fp32_master, [no_]overlap_grad_reduce,
 * overlap_param_gather) over it. */
void tsl_request_knobs(const tsl_request_t *r, tsl_cost_knobs_t *k);

/* Whether the request's precision, overlap and stack switches go together
 * (search and eval alike): each pair a stack refuses or that contradicts itself
 * (both on and off, tp_comm_overlap without SP or beside nvfp4, a switch only
 * megatron runs with another target, ...); err names the field(s). */
int tsl_request_knobs_check(const tsl_request_t *r, tsl_err_t *err);

/* A gradient width in bytes (grad_reduce_bytes, grad_buf_bytes): 0 (unset), 2 (the
 * 16-bit kind `narrow` names) or 4 (fp32); else fails naming field. */
int tsl_grad_width_check(const char *field, uint32_t bytes, const char *narrow, tsl_err_t *err);
/* A stack's host time per eager op in µs, the request's or a given plan's host_op_us:
 * 0 (the built-in figure) or from TSL_HOST_OP_MIN_US to TSL_HOST_OP_MAX_US
 * (request_fields.h); NaN and negatives refused, naming the field. */
int tsl_host_op_check(double us, tsl_err_t *err);

/* Synchronised TP collectives (tp_sync: AMP's Megatron-LM v1.1.5 fork; docs/
 * cost-model.md "Synchronised TP collectives") and what the fork runs. The fork
 * has no sequence parallelism: the search leaves SP out under r->tp_sync (and
 * hashes that into the fingerprint), tsl_request_knobs_check refuses it beside
 * tp_comm_overlap, and tsl_plan_tp_sync_check refuses a given plan with any SP
 * layer when tp_sync (the plan's or the request's) is set, naming tp_sync and the
 * layer (eval, local and remote). */
int tsl_plan_tp_sync_check(const tsl_plan_t *p, bool tp_sync, tsl_err_t *err);

/* The note a plan or eval shows when tp_sync cannot change anything: with p (an
 * eval's given plan, p->tp_sync set) no layer runs TP >= 2; without p (a plan
 * request) r->tp_sync under no_tp or on n_devices < 2. Written into buf (n bytes),
 * true; false and buf empty otherwise. */
bool tsl_tp_sync_note(const tsl_request_t *r, uint32_t n_devices, const tsl_plan_t *p, char *buf,
                      size_t n);

/* The note a plan request shows when its MoE token-dispatch switches
 * (moe_alltoall_dispatcher, moe_flex_dispatcher, moe_a2a_overlap) cannot change
 * anything: the model m has no MoE layer (the search drops them from its plans), or
 * no_ep / ep 1 leaves no EP all-to-all to dispatch by or overlap. Written into buf
 * (n bytes), true; false and buf empty otherwise. */
bool tsl_moe_switch_note(const tsl_request_t *r, const tsl_model_t *m, char *buf, size_t n);

/* Whether every GPU of c runs FP8 recipe r (0: always): FP8 tensor cores
 * (tsl_gpu_spec_t.fp8_peak_flops), for mxfp8 a Blackwell part, for nvfp4 FP4
 * tensor cores (fp4_peak_flops). err names the first GPU type that does not. */
int tsl_cluster_fp8_ok(const tsl_cluster_t *c, uint32_t r, tsl_err_t *err);
/* fp16 mixed precision as knobs k have it (after tsl_knobs_fp16: asked, or forced by a
 * GPU of c without bf16) under target: 0, or -1 with err naming a bf16 switch beside it
 * (fp8_recipe, no_fp32_master, bf16_moments, ds_bf16_optimizer; the GPU without bf16
 * named where c forced it), or, TSL_E_UNSUPPORTED, a target without an fp16 path
 * (torchtitan; galvatron, whose strategy file carries no precision). 0 without fp16. */
int tsl_fp16_ok(const tsl_cost_knobs_t *k, uint32_t target, const tsl_cluster_t *c, tsl_err_t *err);

/* fp32 training (fp32 true) on model m and cluster c: every GPU type with a figure for
 * the rate its GEMMs run at (tsl_gpu_fp32_peak_as: with TF32 off, tf32_off, as the stacks
 * run them (cost.h knobs.tf32_off), its fp32 figure; else its TF32 or fp32 one;
 * cluster_hw.c), no layer whose fp32 pricing is not modelled (routed experts, Mamba);
 * fails naming the GPU or the layer. 0 when fp32 is false. */
int tsl_fp32_ok(bool fp32, bool tf32_off, const tsl_model_t *m, const tsl_cluster_t *c,
                tsl_err_t *err);
/* The request's tf32 (the stack runs fp32 matmuls as TF32) on c: 0, or -1 with err
 * naming tf32 where no GPU of c has TF32 (tsl_cluster_tf32_moot: it would price
 * nothing). */
int tsl_tf32_ok(bool tf32, const tsl_cluster_t *c, tsl_err_t *err);
/* Whether recipe r admits an FP8 MoE dispatch (moe_fp8_dispatch): not nvfp4, whose
 * experts take no MXFP8 payload (Megatron-LM's only low-precision wire). */
int tsl_fp8_dispatch_ok(uint32_t r, bool moe_fp8_dispatch, tsl_err_t *err);
/* Whether Megatron-LM's all-to-all dispatcher (moe_alltoall) goes with the MoE
 * dispatch's wire: not with moe_fp8_dispatch, which Megatron-LM sends through the
 * flex dispatcher. err names moe_alltoall_dispatcher. */
int tsl_moe_alltoall_ok(bool moe_alltoall, bool moe_fp8_dispatch, tsl_err_t *err);

/* Whether a flex dispatcher (moe_flex) goes with the all-to-all one: Megatron-LM runs
 * one token dispatcher. err names moe_flex_dispatcher. */
int tsl_moe_flex_ok(bool moe_flex, bool moe_alltoall, tsl_err_t *err);

/* Whether Transformer Engine's op fuser (moe_fused_mlp) runs model m's routed experts:
 * Megatron-LM's TEGroupedMLP fuses a gated SwiGLU or quick-GeGLU, and a non-gated squared
 * ReLU only with the routing weights inside it (moe_fused_srelu: ScaledSReLU); it asserts
 * otherwise (experts.py _is_fused_impl_supported at 00225507 and d98e8a64). err names
 * moe_fused_mlp. */
int tsl_moe_fused_mlp_ok(const tsl_model_t *m, bool fused_mlp, bool fused_srelu, tsl_err_t *err);

/* Whether a flex back end (moe_flex_backend, tsl_flex_backend_t; 0 always passes) goes
 * with the plan: one cost.h names, on a plan with the flex dispatcher (moe_flex), and
 * not deepep with the experts padded to capacity (moe_pad), which Megatron-LM refuses.
 * err names moe_flex_backend. */
int tsl_moe_flex_backend_ok(bool moe_flex, uint32_t backend, bool moe_pad, tsl_err_t *err);

/* Whether the request's memory budget (mem_budget_bytes; 0: the default) is one a
 * device of c holds: at most the largest device's memory, at least 64 MiB. err names
 * memory. Part of tsl_request_validate; eval applies it to a given plan too. */
int tsl_request_budget_check(const tsl_request_t *r, const tsl_cluster_t *c, tsl_err_t *err);

int tsl_request_validate(const tsl_request_t *r, const tsl_model_t *m, const tsl_cluster_t *c,
                         tsl_err_t *err);

/* Fingerprint of (model, cluster, request). */
void tsl_request_fingerprint(const tsl_request_t *r, const tsl_model_t *m, const tsl_cluster_t *c,
                             char hex[17]);

typedef enum tsl_baseline {
    TSL_BASELINE_DP = 0,
    TSL_BASELINE_TP,
    TSL_BASELINE_PP,
    TSL_BASELINE_SDP,
    TSL_BASELINE_3D,
    TSL_BASELINE_DP_TP,
    TSL_BASELINE_DP_PP,
    TSL_BASELINE_MEGATRON,       /* Megatron-LM's heuristics as AMP Sec. 4.1 states them */
    TSL_BASELINE_GALVATRON_BASE, /* Tessel's search without re-balancing the partition */
    TSL_BASELINE_COUNT
} tsl_baseline_t;

const char *tsl_baseline_name(tsl_baseline_t b);  /* "dp", "megatron-tp", ... */
const char *tsl_baseline_title(tsl_baseline_t b); /* "Pure DP (PyTorch DDP)", ... */

typedef struct tsl_search_stats {
    uint64_t dp_runs;   /* layer DP invocations */
    uint64_t dp_states; /* DP cells evaluated */
    uint64_t configs;   /* (batch, P, m) configurations costed */
    uint32_t batches_tried;
    /* zero-bubble schedules over the memory budget on the 1F1B plan's strategies
     * (search_eval.c zb_own_choice): layer DPs solved again under the schedule's own
     * in-flight counts, and those skipped where its stages' floors prove the result
     * below the bar (zb_floor_s) */
    uint64_t zb_resolves, zb_resolves_skipped;
    /* the re-balancing's local improvement: partitions of a plan tried again under an
     * incumbent they are known not to beat, not costed again (planner/tried.h); the
     * returned plans' engine re-runs left out where the plan is not improved
     * (search_partition.c tsl_search_improve_top: every partition searched already) */
    uint64_t tries_skipped, reruns_skipped;
} tsl_search_stats_t;

typedef struct tsl_search_result {
    tsl_plan_t best;
    uint32_t n_top;
    tsl_plan_t top[TSL_SEARCH_MAX_TOPK];       /* best first; top[0] == best */
    tsl_plan_t baseline[TSL_BASELINE_COUNT];   /* .valid false: OOM / not applicable */
    char baseline_why[TSL_BASELINE_COUNT][96]; /* why a baseline has no plan */
    tsl_search_stats_t stats;
    /* A request with a target (request.target): the same request searched
     * without it, for what the restriction costs. unrestricted_valid false: no
     * target, or nothing found without it either. */
    bool unrestricted_valid;
    double unrestricted_samples_per_s;
    double unrestricted_iter_time_s;
    /* Why the best plan has its context-parallel degree (search.c, cp_reason):
     * "" when CP was not searched and not asked for. */
    char cp_why[192];
    /* Why the best plan has its expert-parallel degree (search.c, search_ep): ""
     * for a dense model and when EP was not searched. */
    char ep_why[128];
} tsl_search_result_t;

/* The request's max_batch, or the default: TSL_SEARCH_DEFAULT_MAX_BATCH, doubled
 * while below 4 samples per device (at most 2^20), so that on a cluster of more
 * than 1024 devices the sweep still reaches the batches where every device
 * holds a sample (and ZeRO-3 spreads over all of them). */
uint32_t tsl_search_max_batch(const tsl_request_t *r, uint32_t n_devices);
/* n without its factors of two (100,000 → 3125): the sweep doubles from it too
 * when it is above 1, so that every data-parallel degree divides some batch. */
uint32_t tsl_search_odd_part(uint32_t n);

/* Progress: fraction in [0, 1] and a phase name ("search", "baselines").
 * Called from the searching thread; keep it cheap. */
typedef void (*tsl_progress_fn)(void *ud, double fraction, const char *phase);

typedef struct tsl_search_hooks {
    tsl_progress_fn progress;
    void *progress_ud;
    const atomic_int *cancel; /* non-zero: stop at the next check, return TSL_SEARCH_CANCELLED */
    /* NULL, or a plan whose recorded stack switches that no request field names
     * (tsl_plan_stack_knobs: fp8_impl, opt_step, fp8_param_gather, fb_serial) every
     * plan searched runs under, over the target's: eval's comparison search runs
     * where the given plan was priced (eval.h, tsl_eval_search_request) */
    const tsl_plan_t *stack;
} tsl_search_hooks_t;

enum {
    TSL_SEARCH_OK = 0,
    TSL_SEARCH_ERR = -1, /* bad input or nothing fits; err says which */
    TSL_SEARCH_CANCELLED = -2,
};

/*
 * Runs the search. result is large (fixed-size plans): allocate it on the heap.
 * Returns TSL_SEARCH_OK, TSL_SEARCH_ERR with err naming the field or saying that
 * no strategy fits the memory budget, or TSL_SEARCH_CANCELLED.
 */
int tsl_search(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
               const tsl_search_hooks_t *hooks, tsl_search_result_t *result, tsl_err_t *err);

#endif
