/*
 * search_internal.h — what search.c, search_eval.c and search_baselines.c share.
 *
 * A search "space" is the set of plans one search may return: Tessel's full
 * space, or a baseline's restriction of it. The same engine (Algorithm 1) runs
 * over every space; only the space differs.
 */
#ifndef TSL_SEARCH_INTERNAL_H
#define TSL_SEARCH_INTERNAL_H

#include "cost.h"
#include "layerdp.h"
#include "search.h"

#define TSL_SEARCH_MAX_GROUPS 128u   /* distinct stage sizes (divisors of N) */

typedef struct tsl_space {
    const char *label;
    tsl_strategy_opts_t opts;
    uint32_t fixed_pp;          /* 0: every divisor of N */
    bool only_one_strategy;     /* keep only `only` (DeepSpeed 3D) */
    tsl_strategy_t only;
    bool accumulate;            /* allow m > 1 micro-batches when P == 1 */
    bool uniform_layers;        /* partition by layer count (Megatron), not by FLOPs */
} tsl_space_t;

/* Strategies of one stage size, enumerated once per search. */
typedef struct tsl_group_strategies {
    uint32_t group_size;
    uint32_t n;
    tsl_strategy_t *items;      /* owned */
    uint32_t *layout;           /* owned */
} tsl_group_strategies_t;

/* Everything one search needs, allocated once up front. */
typedef struct tsl_engine {
    const tsl_model_t *model;
    const tsl_cluster_t *cluster;
    const tsl_request_t *req;
    const tsl_search_hooks_t *hooks;
    const tsl_space_t *space;
    uint64_t budget_bytes;
    uint64_t bucket_bytes;

    uint32_t n_groups;
    tsl_group_strategies_t groups[TSL_SEARCH_MAX_GROUPS];
    uint32_t max_strategies;

    uint32_t *layer_class;      /* [L]: equal ids ⇔ identical layer shapes */
    uint32_t n_classes;

    /* per-stage DP inputs, [L × S_max] (rows of the stage's layers) */
    double *time_s;
    uint64_t *fwd_bytes, *bwd_bytes, *ms_bytes;
    double *trans_s;
    /* per-layer-class costs, [classes × S_max] */
    tsl_layer_cost_t *class_cost;
    double *class_trans_s;
    uint8_t *class_done;
    tsl_strategy_bw_t *bw;      /* [S_max] */
    uint32_t *choice;           /* [L] */
    tsl_layerdp_ws_t *ws;

    /* stage partitions by PP degree: part[P-index][stage] = first layer */
    uint32_t *partition;        /* [(max stages + 1) per P], see search_eval.c */

 const uint16_t *node_order;  /* placement being costed (NULL: as given) */
    bool saw_divisible;         /* some (layer, strategy) split its micro-batch evenly */
    tsl_search_stats_t stats;
} tsl_engine_t;

/* Tessel's own space under the request's switches. */
tsl_space_t tsl_space_tessel(const tsl_request_t *r);

int tsl_engine_init(tsl_engine_t *e, const tsl_model_t *m, const tsl_cluster_t *c,
                    const tsl_request_t *r, const tsl_search_hooks_t *hooks,
                    const tsl_space_t *space, tsl_err_t *err);
void tsl_engine_free(tsl_engine_t *e);

/* Adds one run's counters to a result's. */
void tsl_search_add_stats(tsl_search_stats_t *into, const tsl_search_stats_t *s);

const tsl_group_strategies_t *tsl_engine_group(const tsl_engine_t *e, uint32_t group_size);

/* Memory budget of the stage on devices [first, first + n): the request's, or
 * less on devices with less memory. */
uint64_t tsl_engine_stage_budget(const tsl_engine_t *e, uint32_t first, uint32_t n);

/* Re-balances the partitions of plans[0..n) (search_partition.c): Galvatron-BMW's
 * bi-objective queue and AMP's assignment over the per-layer costs of each plan's
 * strategies; a plan is replaced by a faster re-searched one. */
void tsl_search_rebalance(tsl_engine_t *e, tsl_plan_t *plans, uint32_t n);

/* Balanced contiguous partition of the model into P stages by compute (min-max
 * of forward FLOPs, exact DP); first[0..P] with first[P] = L. */
void tsl_partition_by_flops(const tsl_model_t *m, uint32_t P, uint32_t *first);
/* Equal layer counts (Megatron's uniform assignment); the first stages take the
 * remainder. */
void tsl_partition_uniform(uint32_t n_layers, uint32_t P, uint32_t *first);

/*
 * Costs one configuration (global batch B, P stages, m micro-batches) over the
 * engine's space and fills plan (plan->valid false when nothing fits).
 */
void tsl_engine_eval(tsl_engine_t *e, uint32_t B, uint32_t P, uint32_t m,
                     const uint32_t *first_layer, tsl_plan_t *plan);

/*
 * Algorithm 1 over the engine's space: the best plan into best, the top-k into
 * top (may be NULL). Returns TSL_SEARCH_OK, TSL_SEARCH_ERR (nothing fits; err
 * says why) or TSL_SEARCH_CANCELLED. progress_lo/hi map this run's progress into
 * the caller's overall fraction.
 */
int tsl_engine_run(tsl_engine_t *e, tsl_plan_t *best, tsl_plan_t *top, uint32_t top_cap,
                   uint32_t *n_top, double progress_lo, double progress_hi, tsl_err_t *err);

/* Placement (search_placement.c): a copy of c with its nodes in `order`, and the
 * distinct node orders worth trying on c (identity first); returns the count. */
int tsl_cluster_permute(const tsl_cluster_t *c, const uint16_t *order, tsl_cluster_t *out,
                        tsl_err_t *err);
uint32_t tsl_placement_orders(const tsl_cluster_t *c, uint16_t (*orders)[TSL_CLUSTER_MAX_NODES],
                              uint32_t cap);

/* H3T's space (search_memopt.c): ZeRO-3 over every device with per-layer memory
 * switches and CPU offload; fills res->best / top[0]. For when nothing else fits. */
int tsl_search_memopt(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                      const tsl_search_hooks_t *hooks, tsl_search_result_t *res, tsl_err_t *err);

/* AutoPipe (search_autopipe.c): fills the plan's simulated 1F1B time, master stage
 * and, when slicer is set and it helps, the slicer's figures. */
void tsl_search_simulate(tsl_plan_t *p, bool slicer);
/* Re-partitions res->best at attention/FFN granularity; keeps it when faster. */
void tsl_search_sublayer(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                         tsl_search_result_t *res);

/* The baseline spaces, and their search (search_baselines.c). */
void tsl_search_baselines(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                          const tsl_search_hooks_t *hooks, tsl_search_result_t *res);

#endif
