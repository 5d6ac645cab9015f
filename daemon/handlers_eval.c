/*
 * handlers_eval.c — Planner.EvaluatePlan: a given plan's predicted figures
 * (planner/eval.h), beside what the search finds for the same batch unless
 * no_search; the answer's result_json is the document `tesselctl eval --json`
 * prints (common/eval_doc.h builds both).
 *
 * On the completion-queue thread: the request is checked exactly as Plan
 * checks it (api/request.h: limits, physical bounds, the planner's
 * validation → INVALID_ARGUMENT naming the field) — its target, MTP depths and
 * sequence, where it leaves them open, the plan document's (eval_doc.h, one rule
 * with `tesselctl eval --plan`) — registered-worker profiles
 * attached as for Plan, and plan_json read (a <plan> object or a whole plan
 * document; its global batch held to max_batch). Evaluating is cheap, but the
 * comparison is a search, so the whole evaluation runs as a job on the pool
 * (RESOURCE_EXHAUSTED when it is full), cancelled like a Plan search when the
 * client cancels, its deadline passes or the daemon stops.
 *
 * Answers: OK with fits = true and the document; a plan over its memory
 * budget is an answer too (fits = false, why = the stage, its peak and the
 * budget, result_json its figures); a plan that cannot run at all is
 * INVALID_ARGUMENT with the planner's reason (the layer and the degree); a
 * cancelled search DEADLINE_EXCEEDED / CANCELLED / UNAVAILABLE as for Plan.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "eval_doc.h"
#include "handlers.h"
#include "hf_config.h"
#include "search_job.h"
#include "status.h"

typedef struct eval_job {
    tsl_search_job_t s; /* first (search_job.h) */
    tsl_plan_t given;
    bool no_search;
} eval_job_t;

/* ---- pool thread --------------------------------------------------------- */

/* The search's progress callback is where a passed deadline is noticed. */
static void on_progress(void *ud, double fraction, const char *phase)
{
    eval_job_t *job = ud;
    (void)fraction;
    (void)phase;
    tsl_search_job_late(&job->s);
}

static void answer(tsl_call_t *call, json_t *doc, bool fits, const char *why)
{
    Tessel__V1__EvaluatePlanResponse resp = TESSEL__V1__EVALUATE_PLAN_RESPONSE__INIT;
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    if (text == NULL) {
        tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "EvaluatePlan: out of memory");
        return;
    }
    resp.result_json = text;
    resp.fits = fits;
    resp.why = (char *)(why ? why : "");
    tsl_call_reply(call, &resp.base);
    free(text);
}

static void job_run(tsl_pool_job_t *pj)
{
    eval_job_t *job = (eval_job_t *)pj;
    tsl_call_t *call = job->s.call;
    if (atomic_load(&pj->cancel) || tsl_call_gone(call) || tsl_call_deadline_passed(call)) {
        tsl_search_job_cancelled(call, "eval", -1);
        return;
    }
    tsl_search_hooks_t hooks = {.progress = on_progress, .progress_ud = job, .cancel = &pj->cancel};
    tsl_err_t err = {0};
    json_t *doc = NULL;
    int rc = tsl_eval_document(&job->s.in.model, &job->s.in.cluster, &job->s.in.request,
                               &job->given, !job->no_search, &hooks, &doc, &err);
    if (rc == 0)
        answer(call, doc, true, NULL);
    else if (tsl_err_code(&err) == TSL_E_NOFIT && doc)
        answer(call, doc, false, err.msg);
    else if (tsl_err_code(&err) == TSL_E_CANCELLED)
        tsl_search_job_cancelled(call, "eval", -1);
    else
        tsl_call_fail_err(call, &err);
    json_decref(doc);
}

/* ---- completion-queue thread --------------------------------------------- */

/* plan_json as JSON (NULL: missing or not JSON, the reason in err). */
static json_t *load_plan(const char *text, tsl_err_t *err)
{
    if (text == NULL || *text == '\0') {
        tsl_err_set(err, "plan_json: missing; give a <plan> object or a plan document");
        return NULL;
    }
    json_error_t je;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (doc == NULL)
        tsl_err_set(err, "plan_json: not JSON: line %d: %s", je.line, je.text);
    return doc;
}

/* The plan document's target where the request leaves it open (TARGET_ANY without
 * target_given): eval_doc.h tsl_eval_doc_target, `tesselctl eval --plan`'s rule, set
 * before the request is decoded, so that the model (a target's MTP depths) and the
 * switches are checked under it as Plan checks them. */
static int doc_target(Tessel__V1__EvaluatePlanRequest *req, const json_t *doc, tsl_err_t *err)
{
    uint32_t t;
    bool given = req->target_given || req->request->target != TESSEL__V1__TARGET__TARGET_ANY;
    if (tsl_eval_doc_target(doc, given, (uint32_t)req->request->target, &t, err) != 0)
        return tsl_err_prefix(err, "plan_json");
    req->request->target = (Tessel__V1__Target)t;
    return 0;
}

/* The MTP depths the plan document was split on where the request leaves both
 * mtp_layers and no_mtp out (eval_doc.h tsl_eval_doc_mtp, `tesselctl eval --plan`'s
 * rule): a client that sends the document alone gets its layers, not the model's
 * default depths. Set before the request is decoded, which builds the model. */
static void doc_mtp(Tessel__V1__PlanRequest *r, const json_t *doc)
{
    bool no_mtp = r->no_mtp;
    tsl_eval_doc_mtp(doc, &r->mtp_layers, &no_mtp);
    r->no_mtp = no_mtp;
}

/* The request's model at its own sequence into *m: 0, or -1 where it cannot be
 * built (the decode then names what is wrong with it). */
static int own_model(const Tessel__V1__PlanRequest *r, tsl_model_t *m)
{
    tsl_err_t ignored = {0};
    if (r->model_case == TESSEL__V1__PLAN_REQUEST__MODEL_MODEL_PRESET)
        return tsl_model_preset_seq(r->model_preset, 0, m, &ignored);
    if (r->model_case == TESSEL__V1__PLAN_REQUEST__MODEL_HF_CONFIG_JSON)
        return tsl_hf_config_parse(r->hf_config_json, "", 0, m, &ignored);
    return -1;
}

/* The sequence the plan document's figures assume where the request asks for none
 * (seq_len 0): eval_doc.h tsl_eval_doc_seq_len, `tesselctl eval --plan`'s rule — the
 * document's model.tokens_per_sample where it names the request's model and says
 * another length than the model's own. A client that sent a plan searched at
 * seq_len 512 without seq_len had it priced at the preset's 1024 tokens. Set before
 * the request is decoded, which builds the model at seq_len and holds it to
 * the request's limit. */
static int doc_seq(Tessel__V1__PlanRequest *r, const json_t *doc, tsl_err_t *err)
{
    tsl_model_t m = {0};
    if (r->seq_len || doc == NULL || own_model(r, &m) != 0) {
        tsl_model_free(&m);
        return 0;
    }
    uint32_t seq = 0;
    int rc = tsl_eval_doc_seq_len(doc, &m, &seq, err);
    tsl_model_free(&m);
    if (rc != 0)
        return tsl_err_prefix(err, "plan_json");
    if (seq > TSL_REQUEST_MAX_SEQ_LEN)
        return tsl_err_set(err, "plan_json: model.tokens_per_sample: %u is above the limit %u", seq,
                           TSL_REQUEST_MAX_SEQ_LEN);
    r->seq_len = seq;
    return 0;
}

/* The plan of doc into job->given; INVALID naming plan_json on failure. */
static int read_plan(const json_t *doc, uint32_t max_batch, eval_job_t *job, tsl_err_t *err)
{
    if (tsl_eval_plan_of_json(doc, &job->given, err) != 0)
        return tsl_err_prefix(err, "plan_json");
    if (job->given.global_batch > max_batch)
        return tsl_err_set(err, "plan_json: global_batch %u is above the limit max_batch=%u",
                           job->given.global_batch, max_batch);
    return 0;
}

/* Checks the request as Plan does (under the plan document's target where it
 * names none), then the plan; 0 or -1 with err. */
static int decode(tsl_call_t *call, Tessel__V1__EvaluatePlanRequest *req, eval_job_t *job,
                  tsl_err_t *err)
{
    if (req->request == NULL)
        return tsl_err_set(err, "request: missing; give the model, the cluster and the options");
    tsl_err_t perr = {0};
    json_t *doc = load_plan(req->plan_json, &perr);
    int rc = -1;
    if (doc_target(req, doc, err) != 0)
        goto out;
    doc_mtp(req->request, doc);
    if (doc_seq(req->request, doc, err) != 0)
        goto out;
    if (tsl_search_job_decode(call, req->request, &job->s, err) != 0)
        goto out;
    job->no_search = req->no_search;
    if (doc == NULL) {
        *err = perr;
        goto out;
    }
    rc = read_plan(doc, call->srv->cfg->max_batch, job, err);
out:
    json_decref(doc);
    return rc;
}

void tsl_handle_evaluate_plan(tsl_call_t *call)
{
    Tessel__V1__EvaluatePlanRequest *req = (Tessel__V1__EvaluatePlanRequest *)tsl_call_read(
        call, &tessel__v1__evaluate_plan_request__descriptor);
    if (!req)
        return;
    eval_job_t *job = calloc(1, sizeof *job);
    tsl_err_t err = {0};
    if (!job) {
        tsl_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "EvaluatePlan: out of memory");
    } else if (decode(call, req, job, &err) != 0) {
        tsl_call_fail_err(call, &err);
        tsl_search_job_free(job);
    } else {
        tsl_search_job_submit(call, &job->s, job_run, NULL);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
