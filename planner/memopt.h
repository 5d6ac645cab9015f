/*
 * memopt.h — H3T memory-optimization switches per layer and their solvers
 * (Wang et al., "H3T", Sec. 3.2–3.3 and Appendix B). docs/memopt.md has the
 * derivations and a worked example.
 *
 * What it answers: for a sequence of layers that a group of devices trains with
 * ZeRO-3 (every device holds 1/n of the model states and all-gathers a layer's
 * parameters before using them), which memory switches to turn on in each layer
 * so that one training step is as fast as possible while the peak GPU memory of
 * a device stays under a limit M, and the host memory of a node holds what is
 * offloaded to it.
 *
 * Global mode (one per plan):
 *   TSL_MEMOPT_MODE_OFFLOAD  H3T's default: ZeRO-3 parameter partitioning plus
 *                            optimizer states, fp32 master weights and gradients
 *                            offloaded to host memory, optimizer step on the CPU.
 *                            A device keeps only its fp16 parameter partition
 *                            (2 B/param / n; fp32 training 4: ctx.param_bytes), and
 *                            not even that under lazy prefetch.
 *   TSL_MEMOPT_MODE_ZERO3    plain ZeRO-3: all 16 B/param of mixed-precision Adam
 *                            states sharded on the GPUs (16 B/param / n), optimizer
 *                            on the GPU; lazy prefetch does not apply.
 *
 * Per-layer switches (a bit set, TSL_MEMOPT_*; |S| = 64):
 *   REMAT           rematerialization: drop the layer's intermediate activations
 *                   after forward, recompute them (one more forward) before backward.
 *   OFFLOAD_HIDDEN  offload the layer's input hidden state to host memory after the
 *                   forward, prefetch it back before its backward.
 *   PARTITION       parameter partition: release the gathered parameters after the
 *                   forward and all-gather them again before the backward (off: they
 *                   stay gathered from forward to backward).
 *   LAZY_PREFETCH   keep the layer's parameter partition on the host; prefetch it over
 *                   PCIe before every all-gather and drop it afterwards (off: the
 *                   partition is resident on the GPU for the whole step). OFFLOAD mode.
 *   ECON_FWD        economical forward: in the segment that computes this layer's
 *                   forward, the previous layer's post-processing (offload) finishes
 *                   before the next layer's preparation (prefetch, all-gather)
 *                   starts — less memory, possibly a longer segment.
 *   ECON_BWD        economical backward, the same for the backward segment (the
 *                   previous post-process is the reduce-scatter and gradient offload).
 * Segment synchronization (H3T A.2) is always on: every stream is synchronised at
 * segment boundaries. It is the condition of the DP solver and the model here;
 * unsynchronised execution is not modelled.
 *
 * Three-stream segment model: a segment is the compute of one layer (forward or
 * backward) on the compute stream, overlapped with the post-process of the
 * previous layer and the preparation of the next layer on the collective stream
 * ("NVLink": all-gather / reduce-scatter among the n devices) and the PCIe stream
 * (offload, prefetch). Without NVLink (ctx.coll_shares_pcie, e.g. 2080 Ti) the
 * collectives and the copies share one bus and run one after another. Segment
 * time = overlap(compute, communication end) with the overlap slowdown k:
 * max(C, X) + (k − 1)·min(C, X), as cost.h defines it.
 *
 * Memory model: exact in bytes per buffer (parameters, gathered parameters,
 * gradients, hidden states, intermediate activations) and decomposable per
 * segment as H3T's DP requires: a layer contributes `resident` bytes for the
 * whole step (its parameter partition unless lazily prefetched), `carried` bytes
 * from its forward to its backward (activations, hidden state, gathered
 * parameters when not partitioned), and a `local_peak` over its forward and
 * backward segments that depends only on (previous layer's switches, its own,
 * next layer's). The peak of a plan is
 *   max_i ( Σ_all resident + Σ_{j<i} carried_j + local_peak_i ) + reserved_bytes.
 * tsl_memopt_evaluate and the DP use the same figures: the DP's peak and time for
 * its plan equal the evaluator's exactly.
 *
 * Host memory per device: OFFLOAD mode 16 B/param / n (fp32 master + Adam m, v,
 * fp16 parameter and gradient partitions) plus every offloaded hidden state;
 * ZERO3 mode only the offloaded hidden states. A node's host memory is shared by
 * ctx.devices_per_node devices running the same plan.
 *
 * Solvers (tsl_memopt_solve, H3T Appendix B):
 *   ALL_ON   every switch on in every layer (lowest memory, H3T's manual default).
 *   UNIFORM  the same switch set in every layer, best of the 64 (H3T's "manual").
 *   RANDOM   T_rand uniformly sampled sequences from S^N, seeded and reproducible.
 *   GREEDY   Algorithm 2: all switches on, then the same s_flex at n_flex evenly
 *            spaced layers, for every n_flex and s_flex; Θ(N²|S|) table look-ups.
 *   DP       Algorithm 4: state (i, mem_curr level, mem_peak level, r_{i−1}, r_i)
 *            with r the three communication switches (|R| = 8, pruning 1), memory in
 *            m + 1 levels of M/m, and the dominance scan per (i, r_{i−1}, r_i)
 *            (pruning 2). Feasibility is checked on exact bytes (each state keeps its
 *            representative's bytes), so the DP's plan never exceeds M; the levels
 *            only decide which sub-solutions are merged or pruned.
 * Every solver runs each allowed global mode and returns the fastest valid plan.
 *
 * Purity: no I/O, no globals, no clocks; deterministic; thread-safe with one
 * workspace per thread. All memory is allocated by tsl_memopt_ws_init (or once at
 * the start of tsl_memopt_solve when no workspace is given); the solvers' loops
 * allocate nothing.
 *
 * Units: seconds (_s), bytes (_bytes), FLOP/s, bytes/s. Layers use model.h's
 * per-sample figures (params, fwd_flops, bnd_act_bytes, act_repl_bytes,
 * act_shard_bytes); tensor parallelism is not part of H3T's space (TP degree 1).
 */
#ifndef TSL_MEMOPT_H
#define TSL_MEMOPT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cluster.h"
#include "err.h"
#include "model.h"

/* Per-layer switch bits. */
enum {
    TSL_MEMOPT_REMAT = 1u << 0,
    TSL_MEMOPT_OFFLOAD_HIDDEN = 1u << 1,
    TSL_MEMOPT_PARTITION = 1u << 2,
    TSL_MEMOPT_LAZY_PREFETCH = 1u << 3,
    TSL_MEMOPT_ECON_FWD = 1u << 4,
    TSL_MEMOPT_ECON_BWD = 1u << 5,
    TSL_MEMOPT_ALL = 0x3fu,
    /* The switches a neighbouring segment sees (H3T's R, pruning 1). */
    TSL_MEMOPT_COMM = TSL_MEMOPT_OFFLOAD_HIDDEN | TSL_MEMOPT_PARTITION | TSL_MEMOPT_LAZY_PREFETCH,
};
#define TSL_MEMOPT_N_SWITCH_SETS 64u

typedef enum tsl_memopt_mode {
    TSL_MEMOPT_MODE_OFFLOAD = 0, /* ZeRO-3 + optimizer/parameter CPU offload (H3T) */
    TSL_MEMOPT_MODE_ZERO3,       /* ZeRO-3, states on the GPU */
    TSL_MEMOPT_MODE_COUNT
} tsl_memopt_mode_t;

const char *tsl_memopt_mode_name(tsl_memopt_mode_t mode); /* "zero3-offload", "zero3" */

/* Writes a switch set as "remat+offload+partition+lazy+econ-f+econ-b" ("none" for 0). */
void tsl_memopt_switch_str(uint32_t sw, char *buf, uint32_t cap);

/* What one device of the group sees. */
typedef struct tsl_memopt_ctx {
    uint32_t zero_degree;         /* n: devices sharing the model states, ≥ 1 */
    uint32_t micro_batch;         /* samples per device per step, ≥ 1 */
    uint64_t gpu_mem_limit_bytes; /* M: the peak must not exceed it */
    uint64_t reserved_bytes;      /* fixed GPU overhead added to every peak (≤ M) */
    double flops_per_s;           /* achieved device FLOP/s */
    double coll_bytes_per_s;   /* bus bandwidth of all-gather/reduce-scatter over the n devices */
    bool coll_shares_pcie;     /* no NVLink: collectives and copies share one bus */
    double pcie_bytes_per_s;   /* host<->device copy bandwidth */
    uint64_t cpu_mem_bytes;    /* host memory of one node; 0 = unknown (not checked) */
    uint32_t devices_per_node; /* devices sharing cpu_mem_bytes, ≥ 1 */
    double cpu_adam_params_per_s; /* CPU optimizer rate for one device's partition; 0 = free */
    double gpu_adam_params_per_s; /* GPU optimizer rate (ZERO3 mode); 0 = free */
    double overlap_slowdown;      /* k ≥ 1 (cluster.h) */
    uint32_t allowed_switches;    /* TSL_MEMOPT_* bits the solvers may set */
    uint32_t allowed_modes;       /* bit (1 << mode) per allowed global mode */
    uint32_t param_bytes;         /* bytes of a gathered parameter and of its gradient before the
                             reduce-scatter: 2 (16-bit mixed precision; 0 reads as 2) or 4
                             (fp32 training, tsl_memopt_ctx_fp32). The states stay 16 B/param
                             either way: fp32 master, m, v and the 16-bit partitions, or the
                             fp32 weight (its own master), its gradient, m and v. */
} tsl_memopt_ctx_t;

/* Defaults: micro_batch 1, zero_degree 1, k = 1, every switch and mode allowed,
 * devices_per_node 1; the hardware figures are 0 and must be set. */
void tsl_memopt_ctx_init(tsl_memopt_ctx_t *ctx);
int tsl_memopt_ctx_validate(const tsl_memopt_ctx_t *ctx, tsl_err_t *err);

/*
 * Fills the hardware part of ctx for the device group [first, first + n) of a
 * cluster: zero_degree = n, the slowest device's FLOP/s and PCIe bandwidth, the
 * group's slowest link for collectives (cluster.h), coll_shares_pcie when a node's
 * GPU-GPU link is no faster than PCIe (no NVLink), the smallest host memory of the nodes the
 * group touches and their GPU count, the cluster's overlap slowdown. mem_limit 0
 * means the smallest device memory of the group. Other fields are left as they are.
 */
int tsl_memopt_ctx_from_cluster(tsl_memopt_ctx_t *ctx, const tsl_cluster_t *c, uint32_t first,
                                uint32_t n, uint64_t mem_limit_bytes, tsl_err_t *err);

/* fp32 training (cost.h knobs.fp32) on the same group: the slowest device's fp32 GEMM
 * rate (tsl_gpu_fp32_flops_as: TF32 or fp32 peak × e_max; the fp32 peak with tf32_off,
 * knobs.tf32_off) and 4-byte parameters and gradients. The activations are the model's
 * (tsl_model_set_fp32 doubles them). Returns -1 when a device has no figure for that
 * rate (tsl_fp32_ok refuses such a request first). */
int tsl_memopt_ctx_fp32(tsl_memopt_ctx_t *ctx, const tsl_cluster_t *c, uint32_t first, uint32_t n,
                        bool tf32_off, tsl_err_t *err);

/* The model simulator for segment i (0-based) — forward and backward segment of
 * layer i, plus the step's prologue/epilogue when i = 0, the forward-to-backward
 * turnaround when i = n − 1, and the layer's share of the optimizer step. */
typedef struct tsl_memopt_seg {
    double time_s;             /* everything below, summed */
    double fwd_s, bwd_s;       /* the two segments */
    double edge_s;             /* prologue + epilogue (i = 0), turnaround (i = n − 1) */
    double opt_s;              /* optimizer step share (and partition upload) */
    uint64_t resident_bytes;   /* held for the whole step */
    uint64_t carried_bytes;    /* held from forward i to backward i */
    uint64_t local_peak_bytes; /* peak of its segments above Σ resident + Σ_{j<i} carried */
} tsl_memopt_seg_t;

void tsl_memopt_segment(const tsl_layer_t *layers, uint32_t n, uint32_t i,
                        const tsl_memopt_ctx_t *ctx, tsl_memopt_mode_t mode, uint32_t sw_prev,
                        uint32_t sw, uint32_t sw_next, tsl_memopt_seg_t *out);

/* A plan: fixed-size, copyable with =. */
typedef struct tsl_memopt_plan {
    bool valid; /* gpu_peak ≤ M and host memory within the node's */
    tsl_memopt_mode_t mode;
    uint32_t n_layers;
    uint8_t sw[TSL_MODEL_MAX_LAYERS];   /* per-layer switch sets */
    double step_s;                      /* predicted time of one step */
    double fwd_s, bwd_s, edge_s, opt_s; /* its parts */
    double compute_s;                   /* pure compute (forward, backward, recompute) */
    uint64_t gpu_peak_bytes;            /* including reserved_bytes */
    uint32_t peak_layer;                /* segment where the peak occurs */
    uint64_t cpu_bytes_per_device;
    uint64_t cpu_bytes_per_node; /* × devices_per_node */
    uint32_t n_on[6];            /* layers with each switch bit on (bit order above) */
} tsl_memopt_plan_t;

/* Predicts time and memory of a given switch sequence (sw[0 .. n−1]). Returns -1
 * only for bad input; an over-budget plan comes back with valid = false. */
int tsl_memopt_evaluate(const tsl_layer_t *layers, uint32_t n, const tsl_memopt_ctx_t *ctx,
                        tsl_memopt_mode_t mode, const uint8_t *sw, tsl_memopt_plan_t *out,
                        tsl_err_t *err);

typedef enum tsl_memopt_solver {
    TSL_MEMOPT_SOLVER_ALL_ON = 0,
    TSL_MEMOPT_SOLVER_UNIFORM,
    TSL_MEMOPT_SOLVER_RANDOM,
    TSL_MEMOPT_SOLVER_GREEDY,
    TSL_MEMOPT_SOLVER_DP,
    TSL_MEMOPT_SOLVER_COUNT
} tsl_memopt_solver_t;

const char *tsl_memopt_solver_name(tsl_memopt_solver_t s); /* "all-on", "uniform", ... */

#define TSL_MEMOPT_DEFAULT_MEM_LEVELS     128u /* H3T's m */
#define TSL_MEMOPT_DEFAULT_RANDOM_SAMPLES 10000u

typedef struct tsl_memopt_opts {
    tsl_memopt_solver_t solver;
    uint32_t mem_levels;      /* m for the DP; 0 = default */
    uint32_t random_samples;  /* T_rand; 0 = default */
    uint64_t seed;            /* random solver */
    bool dp_no_dominance;     /* turn pruning 2 off (for tests / comparison) */
    const atomic_int *cancel; /* NULL, or non-zero: stop at the next check (once per DP
                                 layer, greedy round, 64 random samples, mode) and fail
                                 with TSL_E_CANCELLED */
} tsl_memopt_opts_t;

/* Whether o carries a cancel flag that is set. */
static inline bool tsl_memopt_cancelled(const tsl_memopt_opts_t *o)
{
    return o && o->cancel && atomic_load(o->cancel) != 0;
}

void tsl_memopt_opts_init(tsl_memopt_opts_t *o, tsl_memopt_solver_t solver);

typedef struct tsl_memopt_stats {
    uint64_t evaluations;    /* full sequences evaluated (random, greedy, uniform) */
    uint64_t dp_transitions; /* transfers tried */
    uint64_t dp_states;      /* distinct states reached */
    uint64_t dp_kept;        /* states left after pruning 2 */
    uint64_t dp_nodes;       /* back-pointer nodes used */
} tsl_memopt_stats_t;

/*
 * Workspace: everything the solvers need for up to max_layers layers and m memory
 * levels, allocated here once. dp_max_nodes bounds the DP's back-pointer pool
 * (one node per state kept after pruning 2, 5 bytes each); 0 = max_layers · 64 ·
 * 8(m + 1), 4× or more what H3T's settings use. Without pruning 2 (dp_no_dominance) the
 * worst case is max_layers · 64 · (m+1)(m+2)/2; tsl_memopt_solve sizes its own
 * workspace for that. A workspace without the DP (m = 0) is small.
 */
typedef struct tsl_memopt_ws {
    uint32_t max_layers, mem_levels;
    uint64_t max_nodes;
    /* private below */
    uint32_t loaded_n; /* layers of the table now loaded (0: none) */
    tsl_memopt_mode_t loaded_mode;
    double *tab_time;       /* [layer][r_prev 8][s 64][r_next 8]: segment time */
    uint64_t *tab_mem;      /* same index × 3: resident, carried, local_peak */
    uint64_t *hidden_bytes; /* per layer: the hidden state an offload moves */
    uint8_t *seq, *best;    /* scratch sequences */
    uint64_t tri;           /* (m+1)(m+2)/2 cells per r-pair */
    double *rt[2];
    uint64_t *curr[2], *peak[2];
    uint32_t *parent[2];
    uint8_t *chosen[2];
    uint32_t *kept;
    double *pmin;
    uint32_t *node_parent;
    uint8_t *node_sw;
} tsl_memopt_ws_t;

int tsl_memopt_ws_init(tsl_memopt_ws_t *ws, uint32_t max_layers, uint32_t mem_levels,
                       uint64_t dp_max_nodes, tsl_err_t *err);
void tsl_memopt_ws_free(tsl_memopt_ws_t *ws);

/*
 * Runs one solver over every allowed global mode and returns the fastest valid
 * plan. ws may be NULL (one is allocated for the call). Returns 0, or -1 with err
 * naming what does not fit (code TSL_E_NOFIT; plan then holds the all-switches-on
 * plan of the first allowed mode, valid = false), which argument is wrong, or that
 * opts->cancel was set (TSL_E_CANCELLED). stats may be NULL.
 */
int tsl_memopt_solve(const tsl_layer_t *layers, uint32_t n, const tsl_memopt_ctx_t *ctx,
                     const tsl_memopt_opts_t *opts, tsl_memopt_ws_t *ws, tsl_memopt_plan_t *plan,
                     tsl_memopt_stats_t *stats, tsl_err_t *err);

/*
 * Building blocks of tsl_memopt_solve for callers that drive one mode themselves.
 * tsl_memopt_ws_load fills the workspace's segment table for (layers, ctx, mode);
 * tsl_memopt_dp then runs the DP over it with the switches in `allowed` and
 * writes the best sequence to sw[0 .. n−1]. It returns 0 when it found one, 1
 * when no sequence fits M (err says so), -1 on bad input, when the workspace's
 * back-pointer pool is exhausted (err names dp_max_nodes) or when opts->cancel
 * is set (TSL_E_CANCELLED). stats are added to.
 * The DP checks GPU memory only; tsl_memopt_solve keeps host memory in bounds by
 * withholding OFFLOAD_HIDDEN when the node could not hold every hidden state.
 */
int tsl_memopt_ws_load(tsl_memopt_ws_t *ws, const tsl_layer_t *layers, uint32_t n,
                       const tsl_memopt_ctx_t *ctx, tsl_memopt_mode_t mode, tsl_err_t *err);
int tsl_memopt_dp(tsl_memopt_ws_t *ws, uint32_t n, const tsl_memopt_ctx_t *ctx, uint32_t allowed,
                  const tsl_memopt_opts_t *opts, uint8_t *sw, tsl_memopt_stats_t *stats,
                  tsl_err_t *err);

#endif
