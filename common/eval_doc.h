/*
 * eval_doc.h — the answer to "evaluate this given plan" (planner/eval.h) as one JSON
 * document, built in one place for both `tesselctl eval` (in-process) and
 * tesseld's Planner.EvaluatePlan, so that `eval --json` prints the same bytes
 * either way (EvaluatePlanResponse.result_json is this document).
 *
 * The document:
 *   { "model": {"name","layers","params","tokens_per_sample"},
 *     "cluster": {"description","devices"},
 *     "plan": <plan> (plan_json.h: the given plan with its predicted figures),
 *     "memory": {"memory_bytes", "memory_reserve_bytes"}   the request's (0: absent): its
 *                                  budget, else each device's memory less the reserve
 *                                  (search.h: the one default of plan and eval),
 *     "target": "megatron" | ...   the request's target (priced with its defaults,
 *                                  checked against its rules), only when set,
 *     "search": {"plan": <plan>|null, "why" (only when null)},   unless no search
 *     "ratio": given samples/s over the search's                  when it found one }
 *
 * The search runs at the given plan's global batch, the request's memory
 * budget and cluster, without baselines, and under the switches the given plan
 * was priced with: the request's, then those the plan records about how its
 * stack runs (autocast, CPU offloading, the FP8 recipe and who runs it, the loss,
 * the optimizer step, the overlaps, ...; eval.h tsl_eval_search_request says
 * which), so that the ratio compares two plans of one stack and the search's own
 * plan given back is 1.0. What the plan chose — pp, the layer split, each layer's
 * degrees, SP, ZeRO and checkpointing, the micro-batching, schedule, placement,
 * the CP, EP and expert TP degrees — the search chooses for itself. "Nothing
 * found" is part of the answer ("search.why"), not a failure.
 */
#ifndef TSL_EVAL_DOC_H
#define TSL_EVAL_DOC_H

#include <stdbool.h>

#include <jansson.h>

#include "err.h"
#include "plan.h"
#include "search.h"

/*
 * The given plan of a JSON value: a whole plan document (its "plan") or a
 * <plan> object itself, read by tsl_plan_from_json (export.h) plus the keys it
 * leaves out that a cost depends on ("interleave", "node_order"). Fails
 * TSL_E_INVALID naming what is wrong.
 */
int tsl_eval_plan_of_json(const json_t *doc, tsl_plan_t *given, tsl_err_t *err);

/*
 * The stack an evaluation prices a plan document as, into *target: `asked` where the
 * request says one (given: eval --target, EvaluatePlanRequest.target_given or a
 * target other than ANY) or there is no document (doc NULL), else the document's
 * request's target (plan_json.h: by name or by number), TSL_TARGET_ANY where it names
 * none, a number this build does not know, or doc is a <plan> object. The plan is
 * then priced as that stack and compared within its space, as `plan --target STACK`
 * compared it — one rule for `tesselctl eval --plan` and Planner.EvaluatePlan. The
 * document is checked even when `asked` wins: a name none of the stacks has (a typo:
 * "megatorn") or a value neither a name nor a number fails naming request.target
 * and the accepted names; a "request" that is not an object fails naming request;
 * its "mtp_layers" other than a whole number 0..2^32-1 (above 16, TSL_MTP_MAX_DEPTHS, the
 * model refuses it as tsl_eval_doc_mtp hands it on) or null, or
 * its "no_mtp" other than a boolean or null, fails naming the key (tsl_eval_doc_mtp
 * reads them).
 */
int tsl_eval_doc_target(const json_t *doc, bool given, uint32_t asked, uint32_t *target,
                        tsl_err_t *err);

/*
 * The MTP switches a plan document's request was searched with (its "mtp_layers"
 * and "no_mtp", read as every request document is: plan_json.h), for an
 * evaluation whose own request leaves both out (0 and false): the document's plan
 * was split on the layers they build (under its target's rule, target.h
 * tsl_target_mtp_depths), so those are the layers to build again. *mtp_layers and
 * *no_mtp are left as they are where either is set, or where doc is NULL or has no
 * request (a <plan> object). One rule for `tesselctl eval --plan` and
 * Planner.EvaluatePlan.
 */
void tsl_eval_doc_mtp(const json_t *doc, uint32_t *mtp_layers, bool *no_mtp);

/*
 * The sequence a plan document's figures assume, for an evaluation that asks for
 * none (no --seq-len, no configuration's, EvaluatePlanRequest.request.seq_len 0):
 * m is the model the evaluation names (a preset, an HF config, or the document's
 * own model) loaded at its own sequence. Where the document's model.name is m's
 * name (any case) and its model.tokens_per_sample another length than m's,
 * *seq_len is that length, the sequence to load m again at (a plan searched at
 * --seq-len 512 was priced at the preset's 1024); else 0: the model as loaded (a
 * document of another model, none (a <plan> object), no tokens_per_sample, or the
 * model's own length — a ViT's 197 tokens, which its image sets and no sequence
 * asked for may change). tokens_per_sample other than a whole number 1..2^32-1 or
 * null fails naming it. One rule for `tesselctl eval --plan` and
 * Planner.EvaluatePlan.
 */
int tsl_eval_doc_seq_len(const json_t *doc, const tsl_model_t *m, uint32_t *seq_len,
                         tsl_err_t *err);

/*
 * Costs `given` (eval.h, tsl_eval_plan) on m and c under r, then, when search,
 * runs the search for the same batch (hooks may be NULL: progress and cancel of
 * the search). Returns 0 with *doc (a new reference), or -1 with err:
 *   what tsl_eval_plan fails with; for TSL_E_NOFIT *doc still holds the
 *     document of the given plan's figures (no search), for the rest NULL;
 *   TSL_E_CANCELLED when the search was cancelled through hooks (*doc NULL);
 *   TSL_E_NOMEM.
 */
int tsl_eval_document(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                      const tsl_plan_t *given, bool search, const tsl_search_hooks_t *hooks,
                      json_t **doc, tsl_err_t *err);

#endif
