/*
 * search_internal.h — the steps tsl_search (search.c) composes: re-balancing,
 * placement orders, the H3T space, AutoPipe's simulation and sub-layer split,
 * the baselines. Each lives in its own search_*.c and builds on the engine
 * (search_engine.h); none calls back into search.c.
 */
#ifndef TSL_SEARCH_INTERNAL_H
#define TSL_SEARCH_INTERNAL_H

#include "search_engine.h"

/* Re-balances the partitions of plans[0..n) (search_partition.c): Galvatron-BMW's
 * bi-objective queue and AMP's assignment over the per-layer costs of each plan's
 * strategies (every partition where there are few); a plan is replaced by a faster
 * re-searched one. The fastest is then improved a layer at a time with the engine
 * as the judge. */
void tsl_search_rebalance(tsl_engine_t *e, tsl_plan_t *plans, uint32_t n);

/* Each plan of plans[0..n) with stages costed again on its own partition with every
 * schedule that could beat it weighed, replaced where that is faster
 * (search_partition.c): the sweep costs a configuration's interleaves and ZB-H1
 * only where they could beat its best so far, not what its top-k keeps. */
void tsl_search_reprice(tsl_engine_t *e, tsl_plan_t *plans, uint32_t n);

/* Plan p's configuration (batch, PP, micro-batches) costed by e at p's own partition
 * into *out, under e's knobs and need (search_partition.c): what re-costing a kept plan
 * (tsl_search_reprice) and checking the search's plans (bench/search
 * --check-partitions) both start from. */
void tsl_search_cost_own(tsl_engine_t *e, const tsl_plan_t *p, tsl_plan_t *out);

/* The knobs plan p was costed under by an engine of the search whose run had knobs
 * `run` (search_partition.c): run's, with what the search sets per engine run taken
 * from p — the EP and expert-TP degrees (search.c search_ep), the CP degree and its
 * exchange (search_cp) and the FP8 recipe (search_placement). An engine given them
 * (tsl_engine_rerun) costs p's configuration at p's partition to p's figure, as
 * tsl_search_reprice's engine does (bench/search --check-partitions). */
void tsl_search_plan_knobs(const tsl_cost_knobs_t *run, const tsl_plan_t *p, tsl_cost_knobs_t *k);

/* What the steps after the engine runs search over: the model, cluster and request
 * of the search, the space its runs searched, its hooks (cancel) and its table of
 * topology walks (NULL: each engine its own). */
typedef struct tsl_search_step {
    const tsl_model_t *m;
    const tsl_cluster_t *c;
    const tsl_request_t *r;
    const tsl_space_t *sp;
    const tsl_search_hooks_t *hooks;
    tsl_cost_walks_t *walks;
} tsl_search_step_t;

/* The plans of res->top but the first (each cut at whole layers into two or more
 * stages, with more partitions than are all searched) improved a layer at a time as
 * the re-balancing improves a run's fastest, each by an engine of s under the plan's
 * knobs and node order (search_partition.c); where one became faster res->top is
 * re-sorted, a plan that one before it is (the same configuration, knobs, node order
 * and partition) dropped, and res->best replaced. After every engine run, before the
 * baselines. */
void tsl_search_improve_top(const tsl_search_step_t *s, tsl_search_result_t *res);

/* Placement (search_placement.c): the distinct node orders worth trying on c
 * (identity first); returns the count. */
uint32_t tsl_placement_orders(const tsl_cluster_t *c, uint16_t (*orders)[TSL_PLAN_MAX_ORDER_NODES],
                              uint32_t cap);

/* H3T's space (search_memopt.c): ZeRO-3 over every device with per-layer memory
 * switches and CPU offload; fills res->best / top[0]. For when nothing else fits:
 * err holds the engine's no-fit error on entry. The request's switches hold here
 * too: no_ckpt withholds rematerialisation; no_sdp (on more than one device) and
 * a fixed pp > 1 exclude the space, and err's message then says so. */
int tsl_search_memopt(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                      const tsl_search_hooks_t *hooks, tsl_search_result_t *res, tsl_err_t *err);

/* AutoPipe (search_autopipe.c): fills the plan's simulated 1F1B time, master stage
 * and, when slicer is set and it helps, the slicer's figures. paper: the request's
 * paper_cost (the sync and p2p as tsl_pipeline_iter prices them in each mode). */
void tsl_search_simulate(tsl_plan_t *p, bool slicer, bool paper);
/* AutoPipe's sub-layer granularity (search_autopipe.c): re-partitions each plan
 * of plans[0..n) with two or more stages — configurations of e's run, priced
 * under e's knobs and node order — at attention/FFN granularity (the blocks of
 * tsl_sublayer_split), each (B, P, m) on its compute-balanced and AutoPipe's
 * partition; a plan is replaced by a faster one, which has sublayer set. The
 * caller re-sorts. Takes e's cancel flag and stack, reports no progress. */
void tsl_search_sublayer(tsl_engine_t *e, tsl_plan_t *plans, uint32_t n, double floor);

/* The most a routing imbalance (moe_imbalance) can be on model m: the smallest E/k of
 * its MoE layers, the busiest expert holding every token of its rank; 0 for a dense
 * model (search.c). tsl_search_imbalance_check: imbalance within that most, else the
 * error naming E/k — the search's request check and eval's plan check (eval.c). */
double tsl_search_max_imbalance(const tsl_model_t *m);
int tsl_search_imbalance_check(const tsl_model_t *m, double imbalance, double most, tsl_err_t *err);

/* The baseline spaces, and their search (search_baselines.c); their engines keep
 * their topology walks in walks (the search's: tsl_engine_share_walks; NULL: each
 * its own). */
void tsl_search_baselines(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                          const tsl_search_hooks_t *hooks, tsl_cost_walks_t *walks,
                          tsl_search_result_t *res);

#endif
