/*
 * eval.h — the cost of a GIVEN plan, without searching (`tesselctl eval`,
 * Planner.EvaluatePlan; docs/tesselctl.md "eval").
 *
 * The plan is read from a tsl_plan_t holding what a person decides: the
 * pipeline degree pp, the layer split (stages[s].first_layer; every
 * stages[s].n_layers 0 means "balanced": the search's starting partition,
 * tsl_partition_by_flops), each layer's strategy layer[0..L), micro_batch and
 * n_micro (global batch = their product), interleave v (0 or 1: plain 1F1B),
 * sublayer (layers are tsl_sublayer_split()'s blocks) and node_order/n_nodes
 * (placement on a heterogeneous cluster). The figures come from the search's
 * own costing (search_eval.c, tsl_engine_eval_given): the result is filled
 * exactly as the search fills a plan — stage times, Eq. 9 iteration time,
 * throughput, per-stage peak memory and budget, the 1F1B simulator's time — so
 * evaluating the search's best plan reproduces its figures.
 *
 * Units: seconds, bytes, samples (plan.h).
 */
#ifndef TSL_EVAL_H
#define TSL_EVAL_H

#include "plan.h"
#include "search.h"

/*
 * Costs `given` on model m and cluster c under the request's memory budget, the
 * search's (search.h tsl_request_device_budget: r->mem_budget_bytes, 0: each device's
 * memory less the reserve, mem_reserve_bytes or the default), attention kind (unfused_attn),
 * cost mode (paper_cost) and slicer switch into out, priced with the request's
 * target's defaults (r->target: what the plan and the switches leave open).
 * Returns 0, or -1 with err:
 *   TSL_E_INVALID  naming what cannot run: pp not dividing the devices, a layer
 *                  split that does not cover the layers, a layer whose degrees
 *                  do not multiply to its stage's devices, a TP degree that does
 *                  not divide a layer's heads / K/V heads / FFN width (the layer
 *                  and the degree), a micro-batch not divisible by a layer's
 *                  data width, an interleave the schedule cannot run, a layer
 *                  with SP under tp_sync (search.h tsl_plan_tp_sync_check), an
 *                  interleaved or zero-bubble schedule under ds_pipe_engine;
 *   TSL_E_NOFIT    a stage's peak above its budget (the stage, its peak and the
 *                  budget); out then holds the figures all the same;
 *   TSL_E_UNSUPPORTED a memory-switch (H3T) plan, or a plan the request's target
 *                  cannot run (tsl_target_check's rule); out then holds the figures.
 */
int tsl_eval_plan(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                  const tsl_plan_t *given, tsl_plan_t *out, tsl_err_t *err);

/*
 * The request a search compared with the given plan g runs under (eval_doc.h),
 * and the one g's switches are priced from: r, with each switch g records about
 * how its stack runs taken where r sets none (r's win, then g's, then r's
 * target's, as for the pricing). Taken from g: the gradients' reduce bytes and
 * overlap, no fp32 master, bf16 moments, lazy gradients, param-gather and dgrad
 * overlap, TP comm overlap, unfused gradient accumulation, legacy p2p, autocast,
 * eager modules, a block's forward run twice, synchronised TP collectives (tp_sync,
 * so the search leaves SP out as for such a request), the FP8 recipe (not under r's
 * no_fp8), the loss, the recompute modules, activation CPU offloading, the MoE
 * capacity factor, padding, imbalance, bf16 experts, FP8 dispatch and all-to-all
 * dispatcher. The stack switches no request field names (fp8_impl, opt_step,
 * fp8_param_gather, fb_serial) go to the search as its hooks' stack
 * (tsl_plan_stack_knobs; under torchao the search skips trying the target's FP8
 * recipe where torchao does not run it). Left to the search, as g's choices: pp, the layer split,
 * each layer's strategy (degrees, SP, ZeRO, checkpointing), the micro-batching,
 * interleave, schedule and vp_group (plain 1F1B only where g records ds_pipe_engine:
 * DeepSpeed's TrainSchedule), sub-layer stages, node placement, and the
 * CP (and its exchange), EP and expert TP degrees. Recording nothing leaves r.
 */
void tsl_eval_search_request(const tsl_request_t *r, const tsl_plan_t *g, tsl_request_t *out);

/* The figures of two plans agree (iteration, simulated and sliced times,
 * throughput, per-stage times and bytes): what eval(search best) == search best
 * means. Labels and search bookkeeping are not compared. */
bool tsl_eval_same_figures(const tsl_plan_t *a, const tsl_plan_t *b);

#endif
