/*
 * trial_proto.c — a stored trial as a tessel.v1.Trial message (trial_run.h,
 * tsl_trial_to_proto): GetTrial, ListTrials and WatchTrial answer with it.
 */
#include <jansson.h>

#include "trial_run.h"

static Tessel__V1__TrialRank__PhaseSEntry **phases(tsl_arena_t *a, const char *json, size_t *n_out)
{
    json_t *o = json_loads(json, 0, NULL);
    size_t n = json_is_object(o) ? json_object_size(o) : 0;
    Tessel__V1__TrialRank__PhaseSEntry **v = tsl_arena_alloc(a, (n ? n : 1) * sizeof *v);
    const char *k;
    json_t *val;
    *n_out = 0;
    if (v && n)
        json_object_foreach(o, k, val)
        {
            Tessel__V1__TrialRank__PhaseSEntry *e = tsl_arena_alloc(a, sizeof *e);
            if (!e)
                break;
            tessel__v1__trial_rank__phase_sentry__init(e);
            if (!(e->key = tsl_arena_strdup(a, k)))
                break;
            e->value = json_number_value(val);
            v[(*n_out)++] = e;
        }
    json_decref(o);
    return v;
}

static Tessel__V1__TrialRank *rank_to_proto(tsl_arena_t *a, const tsl_trial_rank_t *k)
{
    Tessel__V1__TrialRank *o = tsl_arena_alloc(a, sizeof *o);
    if (!o)
        return NULL;
    tessel__v1__trial_rank__init(o);
    o->rank = k->rank;
    o->worker_id = tsl_arena_strdup(a, k->worker_id);
    o->hostname = tsl_arena_strdup(a, k->hostname);
    o->device_index = k->device_index;
    o->state = tsl_arena_strdup(a, k->state);
    o->iter_time_s = k->iter_time_s;
    o->iter_min_s = k->iter_min_s;
    o->iter_max_s = k->iter_max_s;
    o->peak_bytes = k->peak_bytes;
    o->oom = k->oom;
    o->error = tsl_arena_strdup(a, k->error);
    o->phase_s = phases(a, k->phase_json, &o->n_phase_s);
    return o->worker_id && o->hostname && o->state && o->error && o->phase_s ? o : NULL;
}

Tessel__V1__Trial *tsl_trial_to_proto(tsl_arena_t *a, const tsl_trial_t *t)
{
    Tessel__V1__Trial *o = tsl_arena_alloc(a, sizeof *o);
    if (!o)
        return NULL;
    tessel__v1__trial__init(o);
    o->trial_id = tsl_arena_strdup(a, t->trial_id);
    o->plan_fingerprint = tsl_arena_strdup(a, t->plan_fingerprint);
    o->status = tsl_arena_strdup(a, t->status);
    o->predicted_iter_time_s = t->predicted_iter_time_s;
    o->measured_iter_time_s = t->measured_iter_time_s;
    o->predicted_peak_bytes = t->predicted_peak_bytes;
    o->measured_peak_bytes = t->measured_peak_bytes;
    o->error = tsl_arena_strdup(a, t->error);
    o->plan_index = t->plan_index;
    o->plan_label = tsl_arena_strdup(a, t->plan_label);
    o->world_size = t->world_size;
    o->iterations = t->iterations;
    o->warmup = t->warmup;
    o->created_unix = t->created_unix;
    o->started_unix = t->started_unix;
    o->finished_unix = t->finished_unix;
    o->comm = tsl_arena_strdup(a, t->comm);
    o->devops = tsl_arena_strdup(a, t->devops);
    o->simulated = t->simulated;
    o->time_error = t->time_error;
    o->memory_error = t->memory_error;
    o->chosen = t->chosen;
    o->batch_id = tsl_arena_strdup(a, t->batch_id);
    o->measured_samples_per_s = t->measured_samples_per_s;
    o->kind = tsl_arena_strdup(a, t->kind[0] ? t->kind : "plan");
    o->ranks = tsl_arena_alloc(a, (t->n_ranks ? t->n_ranks : 1) * sizeof *o->ranks);
    if (!o->trial_id || !o->plan_fingerprint || !o->status || !o->error || !o->plan_label ||
        !o->comm || !o->devops || !o->batch_id || !o->kind || !o->ranks)
        return NULL;
    for (uint32_t r = 0; r < t->n_ranks; r++)
        if (!(o->ranks[o->n_ranks++] = rank_to_proto(a, &t->ranks[r])))
            return NULL;
    return o;
}
