/*
 * store_trials_calib.c — finished trials as calibration samples
 * (store_trials.h, tsl_trials_calib_samples; planner/calibrate.h).
 *
 * Per-iteration figures on both sides: the executor's phase_s are per
 * iteration, the plan's stage times per micro-batch (docs/cost-model.md,
 * "Pipeline"), so the slowest stage's are scaled by n_micro.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "hf_config.h"
#include "model.h"
#include "store_trials.h"
#include "strategy.h"

#define MAX_SAMPLES 10000u

/* The model's hidden size (the largest of its layers): the stored request's
 * preset or HuggingFace config, rebuilt; 0 when it cannot be. */
static uint32_t model_hidden(const char *request_json, const json_t *doc)
{
    json_t *req = json_loads(request_json ? request_json : "", 0, NULL);
    const char *preset = json_string_value(json_object_get(req, "model_preset"));
    const json_t *hf = json_object_get(req, "hf_config");
    uint32_t seq = (uint32_t)json_integer_value(json_object_get(req, "seq_len")), hidden = 0;
    tsl_model_t m = {0};
    tsl_err_t err = {0};
    int rc = -1;
    if (preset) {
        rc = tsl_model_preset_seq(preset, seq, &m, &err);
    } else if (hf) {
        char *text = json_is_string(hf) ? strdup(json_string_value(hf)) : json_dumps(hf, 0);
        const char *name =
            json_string_value(json_object_get(json_object_get(doc, "model"), "name"));
        rc = text ? tsl_hf_config_parse(text, name ? name : "", seq, &m, &err) : -1;
        free(text);
    }
    for (uint32_t i = 0; rc == 0 && i < m.n_layers; i++)
        if (m.layers[i].hidden > hidden)
            hidden = m.layers[i].hidden;
    tsl_model_free(&m);
    json_decref(req);
    return hidden;
}

/* The slowest rank: the largest median. */
static const tsl_trial_rank_t *slowest_rank(const tsl_trial_t *t)
{
    const tsl_trial_rank_t *best = NULL;
    for (uint32_t r = 0; r < t->n_ranks; r++)
        if (!best || t->ranks[r].iter_time_s > best->iter_time_s)
            best = &t->ranks[r];
    return best;
}

static double phase(const char *phase_json, const char *key)
{
    json_t *o = json_loads(phase_json, 0, NULL);
    double v = json_number_value(json_object_get(o, key));
    json_decref(o);
    return v;
}

/* The predicted side and the shape from the plan object; false when it has no stages. */
static bool predicted(const json_t *plan, uint32_t tokens_per_sample, tsl_calib_sample_t *s)
{
    const json_t *st, *slow = NULL;
    size_t i;
    json_array_foreach(json_object_get(plan, "stages"), i, st)
    {
        if (!slow || json_number_value(json_object_get(st, "time_s")) >
                         json_number_value(json_object_get(slow, "time_s")))
            slow = st;
    }
    if (!slow)
        return false;
    double n_micro = (double)json_integer_value(json_object_get(plan, "n_micro"));
    double t = json_number_value(json_object_get(slow, "time_s"));
    double nosync = json_number_value(json_object_get(slow, "time_nosync_s"));
    double p2p = json_number_value(json_object_get(slow, "p2p_s"));
    n_micro = n_micro > 0 ? n_micro : 1;
    s->pred_iter_s = json_number_value(json_object_get(plan, "iter_time_s"));
    s->pred_compute_s = n_micro * (nosync - p2p > 0 ? nosync - p2p : 0);
    s->pred_comm_s = (t - nosync > 0 ? t - nosync : 0) + n_micro * p2p;
    s->pred_peak_bytes = (uint64_t)json_integer_value(json_object_get(plan, "peak_bytes"));
    tsl_strategy_t sg = {0};
    const char *text = json_string_value(
        json_object_get(json_array_get(json_object_get(slow, "runs"), 0), "strategy"));
    uint32_t width = 1;
    s->tp = 1;
    if (text && tsl_strategy_parse(text, &sg, NULL) == 0) {
        s->tp = tsl_strategy_degree(&sg, TSL_DIM_TP);
        width = tsl_strategy_data_width(&sg);
    }
    uint32_t mb = (uint32_t)json_integer_value(json_object_get(plan, "micro_batch"));
    s->tokens = (mb / (width ? width : 1) ? mb / (width ? width : 1) : 1) * tokens_per_sample;
    return true;
}

/* One trial as a sample; false when its plan cannot be read, or when another
 * cost model priced it (a plan stored by an older tesseld, store.h): the fit is
 * a ratio of measured to predicted, and its predictions are not this binary's. */
static bool sample_of(tsl_store_t *st, const tsl_trial_t *t, tsl_calib_sample_t *s)
{
    tsl_stored_plan_t row;
    tsl_err_t err = {0};
    char *plan_text = NULL;
    bool ok = false;
    memset(&row, 0, sizeof row);
    memset(s, 0, sizeof *s);
    if (tsl_trials_plan_json(st, t->trial_id, &plan_text, &err) != 0)
        return false;
    json_t *plan = json_loads(plan_text, 0, NULL), *doc = NULL;
    if (tsl_store_get_plan(st, t->plan_fingerprint, &row, &err) == 0 &&
        row.cost_model_version == TSL_COST_MODEL_VERSION)
        doc = json_loads(row.result_json, 0, NULL);
    uint32_t tps = (uint32_t)json_integer_value(
        json_object_get(json_object_get(doc, "model"), "tokens_per_sample"));
    const tsl_trial_rank_t *k = slowest_rank(t);
    if (doc && k && predicted(plan, tps, s)) {
        s->hidden = model_hidden(row.request_json, doc);
        s->meas_compute_s = phase(k->phase_json, "fwd") + phase(k->phase_json, "bwd");
        s->meas_comm_s = phase(k->phase_json, "comm");
        s->meas_iter_s = t->measured_iter_time_s;
        s->meas_peak_bytes = t->measured_peak_bytes;
        ok = true;
    }
    json_decref(plan);
    json_decref(doc);
    free(plan_text);
    tsl_stored_plan_clear(&row);
    return ok;
}

int tsl_trials_calib_samples(tsl_store_t *s, const char *gpu_model, bool simulated,
                             tsl_calib_sample_fn fn, void *ud, tsl_err_t *err)
{
    char(*ids)[TSL_TRIAL_ID_LEN + 1] = calloc(MAX_SAMPLES, sizeof *ids);
    size_t n = 0;
    if (!ids)
        return tsl_err_setc(err, TSL_E_NOMEM, "trials: out of memory");
    int rc = tsl_trials_done_ids(s, gpu_model, simulated, ids, MAX_SAMPLES, &n, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        tsl_trial_t t;
        tsl_calib_sample_t sample;
        int got = tsl_trials_get(s, ids[i], &t, err);
        if (got < 0)
            rc = -1;
        else if (got == 0 && sample_of(s, &t, &sample))
            fn(ud, &sample);
        if (got == 0)
            tsl_trial_clear(&t);
    }
    free(ids);
    return rc;
}
