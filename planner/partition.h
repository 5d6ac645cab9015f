/*
 * partition.h — pipeline partitions of L layers into P contiguous stages:
 * time- and memory-balanced partitions and Galvatron-BMW's bi-objective
 * adjustment (galvatron-bmw IV-B, Eq. 5–8, Algorithm 2, Appendix B), and AMP's
 * layer-assignment DP (amp 3.5, Eq. 5–8), exact and faster than the paper's.
 *
 * ---- Input (per layer, under the strategies currently chosen for it) ----
 *
 *   t_l    time_s[l]     forward + backward time of one micro-batch, nominal speed
 *   y_l    sync_s[l]     extra time of the synchronising (last) micro-batch, or 0
 *   o_l    ms_bytes[l]   model states per device
 *   u_l    act_bytes[l]  activations of one micro-batch per device
 *   e_l    p2p_s[l]      cost of a stage boundary right after layer l, or 0
 *   v_i    speed[i]      relative speed of stage i's devices (> 0; 1 = nominal)
 *   E_i    stage_budget_bytes[i], or budget_bytes for every stage
 *
 * A partition is given by stage starts: stage i (0-based) holds layers
 * [first[i], first[i+1]), first[0] = 0, first[P] = L, every stage ≥ 1 layer.
 * For stage i = [x, y):
 *
 *   a_i = Σ_{x≤l<y} t_l / v_i + (y < L ? e_{y−1} : 0)     stage time (C_nosync)
 *   c_i = a_i + Σ_{x≤l<y} y_l                              with gradient sync (C_sync)
 *   M_i = Σ_{x≤l<y} o_l + w_i · Σ_{x≤l<y} u_l,  w_i = min(P − i, m)   (1F1B, pipeline.h)
 *
 *   T   = (m − 1) · max_i a_i + Σ_i c_i                    (Eq. 9; Eq. 5 when y ≡ 0)
 *   α_t = 1 − max_i a_i / Σ_i a_i,  α_m = 1 − max_i M_i / Σ_i M_i     (Eq. 6)
 *
 * A model's last layers may have to stay on the last stage (the MTP depths with the
 * output head, mtp.h): max_cut bounds every cut, first[i] ≤ max_cut for
 * 0 < i < P (0: L − 1, no bound); every function here searches only such
 * partitions, so the optimum each finds is the best one that keeps them together.
 *
 * A partition fits when M_i ≤ E_i for every stage. Sync and p2p times are not
 * divided by the speed (they are communication). Sums are taken through prefix
 * sums: every function here computes a_i, c_i and M_i with the same expression,
 * so a partition's figures are bit-identical whichever function reports them;
 * memory is exact (integer bytes).
 *
 * ---- What each entry point computes ----
 *
 * tsl_partition_time_balanced   p_t: min over partitions of max_i a_i (exact);
 *     among those, min max_i M_i. With within_budget, only fitting partitions
 *     count (then the exact best-balanced partition that fits).
 * tsl_partition_memory_balanced p_m: min over partitions of max_i M_i (exact);
 *     among those, min max_i a_i.
 *     Both: bisection on the cap C over the ordered doubles (time) or integers
 *     (bytes) with an O(P·L) feasibility sweep — a stage ending at y is best
 *     started at the latest reachable start, since a_i and M_i only shrink as
 *     the start moves right. O(64·P·L) time at most (a sweep's own partition
 *     and its least refused figure close the bracket from both sides: about ten
 *     sweeps), exact (the cap found is a stage value of an optimal partition).
 *     Ties: the latest cuts, backtracking from the last stage.
 * tsl_partition_stats           a partition's a_i, c_i, M_i, α_t, α_m, T, fit.
 * tsl_partition_condition7      Eq. 7: α_t(p_m) ≤ α_t(p) ≤ α_t(p_t) and
 *     α_m(p_t) ≤ α_m(p) ≤ α_m(p_m) (1e-12 slack for rounding).
 * tsl_partition_adjust          one step of Algorithm 2 (PP_Partition_Adjust +
 *     Validate): move a boundary layer of the slowest stage k (lowest index on
 *     ties) to a neighbour — its first layer to stage k−1, or its last layer to
 *     stage k+1 — and keep the move only if
 *       1. every stage of p' takes ≤ C_max, the previous max stage time, and the
 *          two stages the move changes strictly less (so (max a_i, #stages at
 *          the max) falls lexicographically every step: the queue cannot cycle);
 *       2. every stage fits its budget, M_i ≤ E_i;
 *       3. every stage's M_i ≤ the max stage memory under p_t.
 *     When both neighbours pass: the lower max a_i of p', then the lower
 *     max M_i, then stage k−1 (towards the shallower stages, where p_t puts
 *     more layers than p_m).
 * tsl_partition_bi_objective    Algorithm 2's queue for fixed per-layer costs:
 *     p = p_m; while adjust(p, C_max(p)) moves, p = p'. Candidates are p_m,
 *     every p' and p_t (the queue's destination), and with with_fit also p_fit,
 *     the exact time-balanced partition within the budget (Tessel's addition:
 *     the queue only ever unloads the slowest stage and stalls when its one
 *     neighbour is full; p_fit does not); the result is the candidate with the
 *     lowest T among those that fit and satisfy Eq. 7 (ties: the earliest
 *     visited, p_fit last). Since p_m and p_t satisfy Eq. 7 exactly when
 *     α_t(p_m) ≤ α_t(p_t) and α_m(p_t) ≤ α_m(p_m) (endpoints_ordered), and no
 *     partition does otherwise, the result is never slower than p_m or p_t when
 *     they fit; when the endpoints are not ordered the Eq. 7 filter is dropped.
 *     When the search re-runs the layer DP per partition (costs change), it
 *     calls tsl_partition_adjust itself.
 * tsl_partition_amp             the partition minimising T exactly (AMP's
 *     objective with the boundary in the stage time, as pipeline.h), optionally
 *     only over fitting partitions. Method — descent over the max-stage cap:
 *       G(C) = min Σ_i c_i over partitions with every a_i < C (a DP over
 *       (stage, last layer): c_i is separable, Σ t/v_i + Σ y = (T_y − T_x)/v_i
 *       + (Y_y − Y_x), so dp[i][y] = e_{y−1} + T_y/v_i + Y_y + min over the
 *       window x ∈ [lo(y), y) of (dp[i−1][x] − T_x/v_i − Y_x); the window's left
 *       end lo(y) (a_i < C, and M_i ≤ E_i) is found by binary search, and the
 *       minimum by binary search in a monotone stack of suffix minima:
 *       O(P·L·log L) per cap).
 *       1. G∞ and its partition (no cap); C₀ = min max a_i (bisection above);
 *          π₀ = the min-Σ partition with every a_i ≤ C₀. best = min of their T.
 *       2. With bound = min(max a(π), (best − G∞)/(m − 1)): π = the min-Σ
 *          partition with every a_i < bound; stop when none exists or when
 *          (m − 1)·C₀ + Σ(π) ≥ best; else keep π if its T is lower and repeat.
 *     Every partition with max a ≥ bound is dominated by one already seen
 *     (same cap, Σ no lower), and one with max a < bound has T ≥ (m − 1)·C₀ +
 *     G(bound), so the result is the exact optimum; each round lowers the
 *     bound strictly to a stage value of the Pareto frontier of (max a, Σ c).
 *     Complexity O((2 + K)·P·L·log L + 64·P·L), K = frontier points inside
 *     [C₀, (best − G∞)/(m − 1)]: K = 0 when Σ c does not depend on the
 *     partition (uniform speed, no p2p; sync only adds a constant); 19 at
 *     L = 200, P = 16 with two speeds and random p2p; at most the number of
 *     distinct stage times, σ·L(L+1)/2 with σ distinct speeds, so the worst
 *     case is O(σ·P·L³·log L), against AMP's O(P·L⁴) for every cap. m = 1:
 *     one DP. docs/partition.md has measurements.
 *
 * Memory: every entry point that takes a workspace allocates nothing; the
 * workspace is sized once (tsl_partition_ws_new) for the largest L and P. Pure,
 * deterministic (ties as stated), thread-safe with one workspace per thread.
 * Units: seconds, bytes.
 */
#ifndef TSL_PARTITION_H
#define TSL_PARTITION_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "model.h"

#define TSL_PARTITION_MAX_STAGES 64u
#define TSL_PARTITION_MAX_LAYERS (1u << 20)
#define TSL_PARTITION_NO_BUDGET  UINT64_MAX /* budget_bytes: no memory limit */

/* Status of the searches that may find nothing (within a budget). */
#define TSL_PARTITION_OK        0
#define TSL_PARTITION_NONE_FITS 1
#define TSL_PARTITION_ERR       (-1)

typedef struct tsl_partition_in {
    uint32_t n_layers;                  /* L ≥ 1 */
    uint32_t n_stages;                  /* P, 1 ≤ P ≤ L, ≤ the workspace's and MAX_STAGES */
    uint32_t n_micro;                   /* m ≥ 1 */
    const double *time_s;               /* [L] t_l, finite, ≥ 0 */
    const double *sync_s;               /* [L] y_l or NULL (0) */
    const uint64_t *ms_bytes;           /* [L] o_l */
    const uint64_t *act_bytes;          /* [L] u_l */
    const double *p2p_s;                /* [L] e_l or NULL (0); e_{L−1} is never used */
    const double *speed;                /* [P] v_i, finite, > 0, or NULL (all 1) */
    uint64_t budget_bytes;              /* E for every stage, > 0; TSL_PARTITION_NO_BUDGET: none */
    const uint64_t *stage_budget_bytes; /* [P] E_i (> 0), or NULL: budget_bytes */
    uint32_t max_cut; /* the last stage starts at or before this layer (P − 1 ≤ max_cut < L;
                         tsl_partition_max_cut); 0: L − 1, any cut */
} tsl_partition_in_t;

typedef struct tsl_partition_stats {
    uint32_t n_stages;
    double stage_time_s[TSL_PARTITION_MAX_STAGES];      /* a_i */
    double stage_sync_s[TSL_PARTITION_MAX_STAGES];      /* c_i */
    uint64_t stage_mem_bytes[TSL_PARTITION_MAX_STAGES]; /* M_i */
    double max_time_s;                                  /* max a_i (C_max) */
    uint32_t slowest_stage;                             /* argmax a_i, lowest index on ties */
    double sum_sync_s;                                  /* Σ c_i */
    uint64_t max_mem_bytes;                             /* max M_i */
    double alpha_t, alpha_m;                            /* Eq. 6, in [0, 1 − 1/P] */
    double pipeline_s;                                  /* T, Eq. 9 */
    bool fits;                                          /* every M_i ≤ E_i */
} tsl_partition_stats_t;

typedef struct tsl_partition_ws tsl_partition_ws_t;

/* Workspace for up to max_layers layers and max_stages stages (≤ MAX_STAGES);
 * NULL when out of memory or a size is 0 or too large. */
tsl_partition_ws_t *tsl_partition_ws_new(uint32_t max_layers, uint32_t max_stages);
void tsl_partition_ws_free(tsl_partition_ws_t *ws);

/* Figures of partition first[0..P] (validated: -1 with err naming first[i]). */
int tsl_partition_stats(const tsl_partition_in_t *in, const uint32_t *first,
                        tsl_partition_stats_t *out, tsl_err_t *err);

/* p_t into first[0..P] and its figures into out (may be NULL). Returns
 * TSL_PARTITION_OK, TSL_PARTITION_NONE_FITS (within_budget only: no partition
 * fits; first untouched) or TSL_PARTITION_ERR. */
int tsl_partition_time_balanced(const tsl_partition_in_t *in, tsl_partition_ws_t *ws,
                                bool within_budget, uint32_t *first, tsl_partition_stats_t *out,
                                tsl_err_t *err);

/* p_m into first[0..P] and its figures into out (may be NULL); 0 / -1. */
int tsl_partition_memory_balanced(const tsl_partition_in_t *in, tsl_partition_ws_t *ws,
                                  uint32_t *first, tsl_partition_stats_t *out, tsl_err_t *err);

/* Eq. 7 for p relative to p_m and p_t (same P). */
bool tsl_partition_condition7(const tsl_partition_stats_t *p, const tsl_partition_stats_t *pm,
                              const tsl_partition_stats_t *pt);

typedef struct tsl_partition_step {
    bool moved;          /* next holds p' */
    uint32_t from_stage; /* the slowest stage k of p */
    uint32_t to_stage;   /* k − 1 or k + 1 (when moved) */
    uint32_t layer;      /* the layer moved (when moved) */
    double max_time_s;   /* max a_i of p' (when moved) */
    char why[256];       /* when not moved: which limit stopped each neighbour */
} tsl_partition_step_t;

/*
 * One adjustment step (limits above). c_max_s is the previous max stage time
 * (the search's C_max; pass the max a_i of first under in when the costs are
 * in's); pt_max_mem_bytes is the max stage memory under p_t (limit 3). next
 * (P + 1 entries, may alias first) receives p' when step->moved, else a copy of
 * first. Returns 0 (moved or not) or -1 with err on malformed input.
 */
int tsl_partition_adjust(const tsl_partition_in_t *in, const uint32_t *first, double c_max_s,
                         uint64_t pt_max_mem_bytes, uint32_t *next, tsl_partition_step_t *step,
                         tsl_err_t *err);

typedef enum tsl_partition_source {
    TSL_PARTITION_FROM_PM = 0, /* the memory-balanced start */
    TSL_PARTITION_FROM_QUEUE,  /* an adjusted partition p' */
    TSL_PARTITION_FROM_PT,     /* the time-balanced destination */
    TSL_PARTITION_FROM_FIT,    /* p_fit (with_fit only) */
} tsl_partition_source_t;

typedef struct tsl_partition_biobj {
    bool found;                                   /* some candidate fits */
    uint32_t first[TSL_PARTITION_MAX_STAGES + 1]; /* the chosen partition */
    tsl_partition_stats_t stats;
    tsl_partition_source_t source;
    uint32_t chosen_step;   /* 0 = p_m, k = the k-th p', steps + 1 = p_t,
                               steps + 2 = p_fit */
    bool cond7;             /* the chosen partition satisfies Eq. 7 */
    bool endpoints_ordered; /* α_t(p_m) ≤ α_t(p_t) and α_m(p_t) ≤ α_m(p_m) */
    uint32_t steps;         /* adjustments made */
    bool step_cap_hit;      /* stopped at max_steps, not by the limits */
    char stop_why[256];     /* why the queue ended (the last step's why) */
    uint32_t pm_first[TSL_PARTITION_MAX_STAGES + 1];
    tsl_partition_stats_t pm;
    uint32_t pt_first[TSL_PARTITION_MAX_STAGES + 1];
    tsl_partition_stats_t pt;
    bool fit_found; /* p_fit exists (computed with or without with_fit) */
    uint32_t fit_first[TSL_PARTITION_MAX_STAGES + 1];
    tsl_partition_stats_t fit;
} tsl_partition_biobj_t;

/* Algorithm 2's queue for fixed per-layer costs (above). max_steps: 0 = L·P.
 * with_fit: p_fit is a candidate too (false: the paper's algorithm alone; p_fit
 * is reported either way). Returns 0 (out->found says whether anything fits)
 * or -1 with err. */
int tsl_partition_bi_objective(const tsl_partition_in_t *in, tsl_partition_ws_t *ws,
                               uint32_t max_steps, bool with_fit, tsl_partition_biobj_t *out,
                               tsl_err_t *err);

typedef struct tsl_partition_amp {
    uint32_t first[TSL_PARTITION_MAX_STAGES + 1]; /* the optimal partition */
    tsl_partition_stats_t stats;                  /* stats.pipeline_s is the optimum T */
    double min_max_time_s; /* C₀ = max a_i of p_t (within the budget if asked) */
    double min_sum_s;      /* G∞ = min Σ c_i */
    uint32_t caps_tried;   /* capped DPs run in the descent (K + 1) */
    uint32_t dp_runs;      /* all (stage, last layer) DPs run */
    uint32_t bisect_steps; /* feasibility sweeps for C₀ */
} tsl_partition_amp_t;

/* AMP's layer assignment, exact (above). Returns TSL_PARTITION_OK,
 * TSL_PARTITION_NONE_FITS (within_budget only) or TSL_PARTITION_ERR. */
int tsl_partition_amp(const tsl_partition_in_t *in, tsl_partition_ws_t *ws, bool within_budget,
                      tsl_partition_amp_t *out, tsl_err_t *err);

/*
 * The V schedules' partition (ZBV, DualPipeV): rank s runs the model's parts s and
 * 2P − 1 − s, ceil(n_s / 2) and floor(n_s / 2) of its n_s layers (pipeline.h
 * tsl_pipeline_v_parts, the layout the engine costs), so rank 0 holds the first
 * layers and the last (a tied model's embedding and head), rank P − 1 the middle —
 * not the contiguous stages the functions above balance. Into first[0..P] the
 * stage counts as prefix sums (the engine's first_layer for a V plan), every n_s
 * ≥ 2 and first[P − 1] ≤ max_cut, whose largest rank load
 *
 *   a^V_s = (Σ_{l ∈ part s ∪ part 2P−1−s} t_l) / v_s + e after part s (s < P − 1)
 *           + e after part 2P − 1 − s (s > 0)
 *
 * is least (into *max_rank_s, may be NULL): exact, a DP over the ranks whose state
 * is (layers taken from the front, ranks of odd n_s so far), O(P²·L²) time and a
 * table of (P + 1)²·(L + 1) cells allocated per call. Neither the sync, the memory
 * nor the schedule's fill and drain is weighed: the engine judges the partition
 * (search_partition.c). Returns TSL_PARTITION_OK, TSL_PARTITION_NONE_FITS (L < 2P,
 * or no such partition within max_cut) or TSL_PARTITION_ERR.
 */
int tsl_partition_v(const tsl_partition_in_t *in, uint32_t *first, double *max_rank_s,
                    tsl_err_t *err);

/*
 * The latest layer m's last stage may start at: its first MTP layer, so that
 * every MTP depth (entry, inner layers, head copy) stays on the output head's
 * stage, as Megatron-LM builds them (mtp.h); n_layers − 1 for a model without
 * MTP (the head alone). A sub-layer split model (sublayer.h) keeps mtp_depth on
 * its blocks, so this holds for it too.
 */
uint32_t tsl_partition_max_cut(const tsl_model_t *m);

/* Whether first[0..P] keeps every cut at or before max_cut (0: L − 1). */
bool tsl_partition_cuts_ok(const uint32_t *first, uint32_t P, uint32_t max_cut);

/*
 * The one check that a P-stage split of m whose last stage starts at layer
 * last_first keeps every MTP depth on the head's stage (at or before
 * tsl_partition_max_cut(m)), for a given plan's layer split (eval.c) and a
 * plan's validation (plan.c) alike. 0, or -1 with err naming the stage, its
 * first layer and the first MTP layer; the caller prefixes what it checked.
 */
int tsl_partition_mtp_check(const tsl_model_t *m, uint32_t P, uint32_t last_first, tsl_err_t *err);

/*
 * The search's starting partitions (first[0..P], first[P] = L), both with every
 * cut at or before tsl_partition_max_cut(m). By compute: the min-max contiguous
 * split of forward FLOPs (tsl_autopipe_minmax, the MTP layers and the head
 * weighed as one unit; equal counts of those units when that cannot run).
 * Uniform: equal counts of the units, Megatron's assignment, the first stages
 * taking the remainder. Requires P ≤ tsl_partition_max_cut(m) + 1.
 */
void tsl_partition_by_flops(const tsl_model_t *m, uint32_t P, uint32_t *first);
void tsl_partition_uniform(const tsl_model_t *m, uint32_t P, uint32_t *first);

/*
 * Every contiguous partition of n_layers into P non-empty stages whose cuts lie
 * at or before max_cut (0: n_layers − 1, every partition), for small cases:
 * tsl_partition_count gives their number C(max_cut, P − 1) (UINT32_MAX when it
 * would overflow), tsl_partition_first the first (stages of one layer, the last
 * taking the rest), tsl_partition_next the next in lexicographic order of the
 * cuts (false after the last). Requires 1 <= P <= max_cut + 1 <= n_layers.
 */
uint32_t tsl_partition_count(uint32_t n_layers, uint32_t max_cut, uint32_t P);
void tsl_partition_first(uint32_t n_layers, uint32_t P, uint32_t *first);
bool tsl_partition_next(uint32_t n_layers, uint32_t max_cut, uint32_t P, uint32_t *first);

#endif
