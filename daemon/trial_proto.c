/*
 * trial_proto.c — a stored trial as a tessel.v1.Trial message (trial_run.h,
 * tsl_trial_to_proto): GetTrial, ListTrials and WatchTrial answer with it.
 */
#include <jansson.h>

#include "proto_arena.h"
#include "trial_run.h"

static bool set_phase(tsl_arena_t *a, ProtobufCMessage *m, const char *key, json_t *value)
{
    Tessel__V1__TrialRank__PhaseSEntry *e = (Tessel__V1__TrialRank__PhaseSEntry *)m;
    e->value = json_number_value(value);
    return (e->key = tsl_arena_strdup(a, key)) != NULL;
}

static Tessel__V1__TrialRank *rank_to_proto(tsl_arena_t *a, const tsl_trial_rank_t *k)
{
    Tessel__V1__TrialRank *o = tsl_arena_alloc(a, sizeof *o);
    if (!o)
        return NULL;
    tessel__v1__trial_rank__init(o);
    o->rank = k->rank;
    o->device_index = k->device_index;
    o->iter_time_s = k->iter_time_s;
    o->iter_min_s = k->iter_min_s;
    o->iter_max_s = k->iter_max_s;
    o->peak_bytes = k->peak_bytes;
    o->oom = k->oom;
    const tsl_str_copy_t strs[] = {{&o->worker_id, k->worker_id},
                                   {&o->hostname, k->hostname},
                                   {&o->state, k->state},
                                   {&o->error, k->error}};
    size_t n_members;
    o->phase_s = (Tessel__V1__TrialRank__PhaseSEntry **)tsl_proto_map_from_json(
        a, k->phase_json, &tessel__v1__trial_rank__phase_sentry__descriptor, set_phase, &n_members,
        &o->n_phase_s);
    return tsl_proto_copy_strs(a, strs, sizeof strs / sizeof *strs) && o->phase_s ? o : NULL;
}

Tessel__V1__Trial *tsl_trial_to_proto(tsl_arena_t *a, const tsl_trial_t *t)
{
    Tessel__V1__Trial *o = tsl_arena_alloc(a, sizeof *o);
    if (!o)
        return NULL;
    tessel__v1__trial__init(o);
    o->predicted_iter_time_s = t->predicted_iter_time_s;
    o->measured_iter_time_s = t->measured_iter_time_s;
    o->predicted_peak_bytes = t->predicted_peak_bytes;
    o->measured_peak_bytes = t->measured_peak_bytes;
    o->plan_index = t->plan_index;
    o->world_size = t->world_size;
    o->iterations = t->iterations;
    o->warmup = t->warmup;
    o->created_unix = t->created_unix;
    o->started_unix = t->started_unix;
    o->finished_unix = t->finished_unix;
    o->simulated = t->simulated;
    o->time_error = t->time_error;
    o->memory_error = t->memory_error;
    o->chosen = t->chosen;
    o->measured_samples_per_s = t->measured_samples_per_s;
    o->plan_stale = t->plan_stale;
    o->ranks = tsl_arena_alloc(a, (t->n_ranks ? t->n_ranks : 1) * sizeof *o->ranks);
    const tsl_str_copy_t strs[] = {{&o->trial_id, t->trial_id},
                                   {&o->plan_fingerprint, t->plan_fingerprint},
                                   {&o->status, t->status},
                                   {&o->error, t->error},
                                   {&o->plan_label, t->plan_label},
                                   {&o->comm, t->comm},
                                   {&o->devops, t->devops},
                                   {&o->batch_id, t->batch_id},
                                   {&o->kind, t->kind[0] ? t->kind : "plan"}};
    if (!tsl_proto_copy_strs(a, strs, sizeof strs / sizeof *strs) || !o->ranks)
        return NULL;
    for (uint32_t r = 0; r < t->n_ranks; r++)
        if (!(o->ranks[o->n_ranks++] = rank_to_proto(a, &t->ranks[r])))
            return NULL;
    return o;
}
