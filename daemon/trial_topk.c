/*
 * trial_topk.c — the measured best of a batch becomes the plan's answer
 * (trial_run.h; AMP Alg. 1: run the top predicted plans, keep the fastest).
 *
 * When every trial of a batch is over and at least one is done without OOM,
 * the one with the highest measured samples/s is marked chosen, and the stored
 * document of its fingerprint is rewritten: that plan becomes "plan" with a
 * "measured" object {trial_id, iter_time_s, samples_per_s,
 * predicted_iter_time_s}; the previous "plan" takes the chosen one's place
 * among "alternatives" (so the trials' plan_index keeps naming the document
 * as it was when they ran: the "measured" object names the trial). When the
 * predicted best is the measured best, only "measured" is added. The row's
 * summary columns follow the new plan, its stale flag is kept, and the packed
 * answer cache forgets the fingerprint, so GetPlan and a cached Plan answer
 * the measured best at once.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers.h"
#include "log.h"
#include "trial_run.h"

typedef struct batch {
    uint32_t n, over;
    tsl_trial_t best; /* ranks not kept */
    bool have_best, any_chosen;
} batch_t;

static int scan(void *ud, const tsl_trial_t *t)
{
    batch_t *b = ud;
    b->n++;
    b->over += tsl_trial_over(t);
    b->any_chosen = b->any_chosen || t->chosen;
    if (strcmp(t->status, "done") == 0 && !t->any_oom && t->measured_samples_per_s > 0 &&
        (!b->have_best || t->measured_samples_per_s > b->best.measured_samples_per_s)) {
        b->best = *t;
        b->best.ranks = NULL;
        b->best.n_ranks = 0;
        b->have_best = true;
    }
    return 0;
}

/* The document with the chosen plan as "plan" and "measured" in it. */
static int rewrite(json_t *doc, const tsl_trial_t *t)
{
    json_t *alts = json_object_get(doc, "alternatives");
    json_t *old = json_object_get(doc, "plan");
    json_t *chosen = t->plan_index == 0 ? old : json_array_get(alts, t->plan_index - 1);
    if (!json_is_object(chosen))
        return -1;
    json_incref(chosen);
    if (t->plan_index > 0) {
        json_object_del(old, "measured");
        json_array_set(alts, t->plan_index - 1, old); /* the previous best, in its place */
        json_object_set(doc, "plan", chosen);
    }
    json_object_set_new(chosen, "measured",
                        json_pack("{s:s, s:f, s:f, s:f}", "trial_id", t->trial_id, "iter_time_s",
                                  t->measured_iter_time_s, "samples_per_s",
                                  t->measured_samples_per_s, "predicted_iter_time_s",
                                  t->predicted_iter_time_s));
    json_decref(chosen);
    return 0;
}

static void store_answer(tsl_server_t *srv, const tsl_trial_t *t)
{
    tsl_stored_plan_t row;
    tsl_err_t err = {0};
    memset(&row, 0, sizeof row);
    if (tsl_store_get_plan(srv->store, t->plan_fingerprint, &row, &err) != 0)
        return;
    json_t *doc = json_loads(row.result_json, 0, NULL);
    char *text = NULL;
    if (doc && rewrite(doc, t) == 0 && (text = json_dumps(doc, JSON_INDENT(2)))) {
        const json_t *p = json_object_get(doc, "plan");
        bool stale = row.stale;
        free(row.result_json);
        row.result_json = text;
        row.iter_time_s = json_number_value(json_object_get(p, "iter_time_s"));
        row.samples_per_s = json_number_value(json_object_get(p, "samples_per_s"));
        row.peak_bytes = (uint64_t)json_integer_value(json_object_get(p, "peak_bytes"));
        row.global_batch = (uint32_t)json_integer_value(json_object_get(p, "global_batch"));
        tsl_plan_cache_forget(srv->plans, row.fingerprint);
        if (tsl_store_put_plan(srv->store, &row, &err) != 0 ||
            (stale && tsl_store_mark_stale(srv->store, row.fingerprint, true, &err) != 0))
            tsl_log_error("plan %s: the measured best not stored: %s", row.fingerprint, err.msg);
        else
            tsl_log_info("plan %s: trial %s (plan #%u, %s) measured best at %.2f samples/s: %s",
                         row.fingerprint, t->trial_id, t->plan_index, t->plan_label,
                         t->measured_samples_per_s,
                         t->plan_index ? "now the plan's answer" : "the predicted best holds");
        tsl_plan_cache_forget(srv->plans, row.fingerprint);
    }
    json_decref(doc);
    tsl_stored_plan_clear(&row);
}

bool tsl_trial_topk_locked(tsl_server_t *srv, const char *batch_id,
                           char chosen[TSL_TRIAL_ID_LEN + 1])
{
    batch_t b;
    tsl_err_t err = {0};
    memset(&b, 0, sizeof b);
    if (tsl_trials_list_batch(srv->store, batch_id, scan, &b, &err) != 0 || b.n == 0 ||
        b.over < b.n || !b.have_best || b.any_chosen)
        return false;
    if (tsl_trials_set_chosen(srv->store, b.best.trial_id, &err) != 0) {
        tsl_log_error("trial %s: not marked chosen: %s", b.best.trial_id, err.msg);
        return false;
    }
    store_answer(srv, &b.best);
    snprintf(chosen, TSL_TRIAL_ID_LEN + 1, "%s", b.best.trial_id);
    return true;
}
