/*
 * trace_json.c — the simulated 1F1B timeline as Chrome trace events (trace_json.h).
 */
#include "trace_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipesim.h"
#include "sublayer.h"

typedef struct trace {
    json_t *events;
    const tsl_plan_t *p;
    double fwd[TSL_PLAN_MAX_STAGES], bwd[TSL_PLAN_MAX_STAGES], sync[TSL_PLAN_MAX_STAGES],
        p2p[TSL_PLAN_MAX_STAGES], recompute[TSL_PLAN_MAX_STAGES], opt[TSL_PLAN_MAX_STAGES];
    tsl_plan_sim_t sim; /* the simulator's input */
    uint32_t v;         /* model chunks per stage (interleaved 1F1B, ZBV), 1 for plain 1F1B */
    bool zb;            /* a zero-bubble schedule: backwards split into B and W */
    double tie_at;      /* a tied head's all-reduce starts here on stage 0 and tie_peer */
    uint32_t tie_peer;  /* the stage whose copy it sums with stage 0's: the plan's
                           tie_stage (a V's MTP depth on rank 1), else the last, as the
                           simulator pairs them (pipesim.c step_start) */
} trace_t;

/* Slices shorter than this are rounding noise of the simulated times (a
 * "bubble" of 1e-17 s between two ops that meet), not events: a picosecond,
 * far below the document's microsecond resolution. */
#define TRACE_MIN_S 1e-12

static void put(trace_t *t, uint32_t stage, int tid, const char *name, const char *cat,
                double start_s, double dur_s, int micro)
{
    if (dur_s < TRACE_MIN_S)
        return;
    json_t *e =
        json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i}", "name", name, "cat", cat, "ph", "X", "ts",
                  start_s * 1e6, "dur", dur_s * 1e6, "pid", (int)stage + 1, "tid", tid);
    json_t *args = json_pack("{s:i}", "stage", (int)stage);
    if (micro >= 0)
        json_object_set_new(args, "micro", json_integer(micro));
    json_object_set_new(e, "args", args);
    json_array_append_new(t->events, e);
}

static void meta(trace_t *t, const char *what, uint32_t stage, int tid, const char *name)
{
    json_t *e = json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", what, "ph", "M", "pid",
                          (int)stage + 1, "tid", tid, "args", "name", name);
    json_array_append_new(t->events, e);
}

/* The checkpointed layers' share of each stage's forward FLOPs, times its forward. */
static void recompute_times(trace_t *t, const tsl_model_t *m)
{
    const tsl_plan_t *p = t->p;
    tsl_sublayer_model_t sm;
    bool split = p->sublayer && tsl_sublayer_split(m, &sm, NULL) == 0;
    const tsl_model_t *pm = split ? &sm.model : m;
    if (pm->n_layers == p->n_layers) {
        for (uint32_t s = 0; s < p->pp; s++) {
            double all = 0, ck = 0;
            const tsl_plan_stage_t *st = &p->stages[s];
            for (uint32_t i = st->first_layer; i < st->first_layer + st->n_layers; i++) {
                all += pm->layers[i].fwd_flops;
                ck += p->layer[i].ckpt ? pm->layers[i].fwd_flops : 0;
            }
            t->recompute[s] = all > 0 ? t->fwd[s] * ck / all : 0;
            if (t->recompute[s] > t->bwd[s])
                t->recompute[s] = t->bwd[s];
        }
    }
    if (split)
        tsl_sublayer_free(&sm);
}

/* ZBV and DualPipeV: chunk 1 runs the V's way back. */
static bool vshape(const trace_t *t)
{
    return tsl_pipesim_sched_is_v(t->p->schedule);
}

/* An op's name id: "3" or, with chunks, "3.1" (micro-batch 3, chunk 1). */
static void op_id(const tsl_pipesim_event_t *e, uint32_t v, char *id, size_t cap)
{
    if (v > 1)
        snprintf(id, cap, "%u.%u", e->micro, (unsigned)e->chunk);
    else
        snprintf(id, cap, "%u", e->micro);
}

/* DualPipeV's overlapped step: one "F&B" slice from the forward's start to the
 * backward's end (named by both: "F&B 5.0 2.1", forward first), and both inputs'
 * arrivals. */
static void put_fused(trace_t *t, const tsl_pipesim_event_t *f, const tsl_pipesim_event_t *b)
{
    char name[64], fid[24], bid[24];
    uint32_t s = f->stage;
    op_id(f, t->v, fid, sizeof fid);
    op_id(b, t->v, bid, sizeof bid);
    snprintf(name, sizeof name, "F&B %s %s", fid, bid);
    put(t, s, 1, name, "overlap", f->start_s, b->end_s - f->start_s, (int)f->micro);
    snprintf(name, sizeof name, "recv F %s", fid);
    put(t, s, f->chunk == 1 ? 3 : 2, name, "p2p", f->sent_s, f->p2p_s, (int)f->micro);
    snprintf(name, sizeof name, "recv B %s", bid);
    put(t, s, b->chunk == 1 ? 2 : 3, name, "p2p", b->sent_s, b->p2p_s, (int)b->micro);
}

/* An op's share of its stage's figure whole: a V's chunks their own where the
 * simulator was given them (c1: chunk 1's part, pipesim.h c1_*_s; cost model 113),
 * else 1/v each (interleaved 1F1B, and a V without them). */
static double chunk_share(const trace_t *t, const double *c1, double whole,
                          const tsl_pipesim_event_t *e, uint32_t v)
{
    if (c1 != NULL && vshape(t) && v == 2)
        return e->chunk == 1 ? c1[e->stage] : whole - c1[e->stage];
    return whole / v;
}

/* One op: its compute slices on tid 1, its input's arrival on tid 2 or 3.
 * With chunks (v > 1) an op is one chunk's, its share of the stage's times
 * (chunk_share), and named "F 3.1" (micro-batch 3, chunk 1). */
static void put_op(trace_t *t, const tsl_pipesim_event_t *e, uint32_t v)
{
    char name[48], id[24];
    int j = (int)e->micro;
    uint32_t s = e->stage;
    /* ZBV's chunk 1 runs the other way: its forward's input comes from the next
     * stage, its backward's from the previous one */
    bool up = vshape(t) && e->chunk == 1;
    op_id(e, v, id, sizeof id);
    if (e->op == TSL_PIPESIM_P2P) { /* DeepSpeed's broadcast: both stages sit in it */
        snprintf(name, sizeof name, "p2p %s%s with stage %u", e->half & 1 ? "activation" : "",
                 e->half == 3  ? " and gradient"
                 : e->half & 2 ? "gradient"
                               : "",
                 e->peer);
        put(t, s, 1, name, "p2p", e->start_s, e->end_s - e->start_s, j);
        return;
    }
    const tsl_pipesim_in_t *in = &t->sim.in;
    double f = chunk_share(t, in->c1_fwd_s, t->fwd[s], e, v);
    if (e->op == TSL_PIPESIM_FWD) {
        snprintf(name, sizeof name, "F %s", id);
        put(t, s, 1, name, "forward", e->start_s, f, j);
        snprintf(name, sizeof name, "send F %s", id);
        put(t, s, 1, name, "p2p", e->start_s + f, (e->end_s - e->start_s) - f, j);
        snprintf(name, sizeof name, "recv F %s", id);
        put(t, s, up ? 3 : 2, name, "p2p", e->sent_s, e->p2p_s, j);
        return;
    }
    if (e->op == TSL_PIPESIM_WGT) { /* the weight gradient (and, last, a paper sync) */
        snprintf(name, sizeof name, "W %s", id);
        put(t, s, 1, name, "wgrad", e->start_s, e->end_s - e->start_s, j);
        return;
    }
    /* zero-bubble: B is the input gradient, the backward less its W (DualPipeV's
     * whole backwards keep theirs) */
    double bwd = chunk_share(t, in->c1_bwd_s, t->bwd[s], e, v) -
                 (t->zb && !e->whole ? chunk_share(t, in->c1_wgrad_s, t->sim.wgrad[s], e, v) : 0.0);
    /* the checkpointed layers' recompute in the chunk's share of the forward */
    double r = t->fwd[s] > 0 ? t->recompute[s] * f / t->fwd[s] : 0.0, grad = bwd - r;
    /* a blocking send (plain 1F1B) fills the rest of the op */
    double send = (e->end_s - e->start_s) - bwd;
    snprintf(name, sizeof name, "R %s", id);
    put(t, s, 1, name, "recompute", e->start_s, r, j);
    snprintf(name, sizeof name, "B %s", id);
    put(t, s, 1, name, "backward", e->start_s + r, grad, j);
    snprintf(name, sizeof name, "send B %s", id);
    put(t, s, 1, name, "p2p", e->start_s + r + grad, send, j);
    snprintf(name, sizeof name, "recv B %s", id);
    put(t, s, up ? 2 : 3, name, "p2p", e->sent_s, e->p2p_s, j);
}

static void put_stage(trace_t *t, const tsl_pipesim_event_t *ev, uint32_t n, uint32_t s,
                      double end_s)
{
    const tsl_plan_stage_t *st = &t->p->stages[s];
    char name[64];
    snprintf(name, sizeof name, "stage %u (GPUs %u-%u)", s, st->first_device,
             st->first_device + st->n_devices - 1);
    meta(t, "process_name", s, 1, name);
    meta(t, "thread_name", s, 1, "compute");
    meta(t, "thread_name", s, 2, "recv from the previous stage");
    meta(t, "thread_name", s, 3, "recv from the next stage");
    double at = 0;
    for (uint32_t k = 0; k < n; k++) {
        put(t, s, 1, "bubble", "bubble", at, ev[k].start_s - at, -1);
        if (ev[k].fused == 1 && k + 1 < n) {
            put_fused(t, &ev[k], &ev[k + 1]);
            k++;
        } else {
            put_op(t, &ev[k], t->v);
        }
        at = ev[k].end_s;
    }
    put(t, s, 1, "grad sync", "sync", at, t->sync[s], -1); /* after its own last op */
    at += t->sync[s];
    if (t->p->tie_s > 0 && t->p->pp > 1 && (s == 0 || s == t->tie_peer)) {
        put(t, s, 1, "bubble", "bubble", at, t->tie_at - at, -1); /* the other end's backward */
        put(t, s, 1, "tied all-reduce", "tie", t->tie_at, t->p->tie_s, -1);
        at = t->tie_at + t->p->tie_s;
    }
    put(t, s, 1, "optimizer", "optimizer", at, t->opt[s], -1); /* once, after its last op */
    at += t->opt[s];
    put(t, s, 1, "bubble", "bubble", at, end_s - at, -1);
}

/* The plan's stages through the simulator as the stacks run them (STACK:
 * tsl_plan_sim_input, as tsl_search_simulate fills sim_iter_time_s). */
static int simulate(trace_t *t, tsl_pipesim_event_t **ev, double *iter_s, size_t *n_ev,
                    tsl_err_t *err)
{
    const tsl_plan_t *p = t->p;
    tsl_plan_sim_input(p, false, &t->sim);
    for (uint32_t s = 0; s < p->pp; s++) {
        t->fwd[s] = t->sim.fwd[s];
        t->bwd[s] = t->sim.bwd[s];
        t->sync[s] = t->sim.tail[s];
        t->p2p[s] = t->sim.p2p[s];
        t->opt[s] = t->sim.opt[s];
    }
    const tsl_pipesim_in_t in = t->sim.in;
    size_t bytes = tsl_pipesim_in_ws_bytes(&in), n = tsl_pipesim_n_ops(&in);
    void *ws = malloc(bytes ? bytes : 1);
    *ev = malloc(n * sizeof(**ev));
    tsl_pipesim_out_t out;
    int rc = -1;
    if (ws == NULL || *ev == NULL)
        tsl_err_setc(err, TSL_E_NOMEM, "trace: out of memory");
    else if (tsl_pipesim_run(&in, ws, bytes, &out, err) == 0 &&
             tsl_pipesim_events(&in, ws, *ev, n, err) == (int)n)
        rc = 0;
    *iter_s = rc == 0 ? out.iter_s : 0;
    *n_ev = rc == 0 ? n : 0;
    free(ws);
    return rc;
}

/* A slice's place: metadata first, then by stage, track, start (and as put). */
typedef struct slot {
    json_t *e;
    size_t at;
} slot_t;

static int slot_key(const json_t *e, json_int_t *pid, json_int_t *tid, double *ts)
{
    *pid = json_integer_value(json_object_get(e, "pid"));
    *tid = json_integer_value(json_object_get(e, "tid"));
    *ts = json_number_value(json_object_get(e, "ts"));
    return strcmp(json_string_value(json_object_get(e, "ph")), "M") == 0 ? 0 : 1;
}

static int slot_cmp(const void *pa, const void *pb)
{
    const slot_t *a = pa, *b = pb;
    json_int_t pa_, ta, pb_, tb;
    double sa, sb;
    int ka = slot_key(a->e, &pa_, &ta, &sa), kb = slot_key(b->e, &pb_, &tb, &sb);
    if (ka != kb)
        return ka - kb;
    if (ka && pa_ != pb_)
        return pa_ < pb_ ? -1 : 1;
    if (ka && ta != tb)
        return ta < tb ? -1 : 1;
    if (ka && sa != sb)
        return sa < sb ? -1 : 1;
    return a->at < b->at ? -1 : a->at > b->at;
}

/* DualPipeV: an F&B step's two inputs arrive out of the op order (a forward's long
 * before the backward's), so each track's slices are put in time order. */
static int sort_tracks(trace_t *t)
{
    size_t n = json_array_size(t->events);
    slot_t *v = malloc((n ? n : 1) * sizeof(*v));
    json_t *sorted = json_array();
    if (v == NULL || sorted == NULL) {
        free(v);
        json_decref(sorted);
        return -1;
    }
    for (size_t k = 0; k < n; k++)
        v[k] = (slot_t){json_array_get(t->events, k), k};
    qsort(v, n, sizeof(*v), slot_cmp);
    for (size_t k = 0; k < n; k++)
        json_array_append(sorted, v[k].e);
    free(v);
    json_decref(t->events);
    t->events = sorted;
    return 0;
}

json_t *tsl_trace_plan(const tsl_plan_t *p, const tsl_model_t *m, tsl_err_t *err)
{
    if (!p->valid || p->pp == 0 || p->n_micro == 0) {
        tsl_err_set(err, "trace: no plan to trace");
        return NULL;
    }
    trace_t *t = calloc(1, sizeof(*t));
    tsl_pipesim_event_t *ev = NULL;
    double iter_s;
    json_t *doc = NULL;
    if (t == NULL) {
        tsl_err_setc(err, TSL_E_NOMEM, "trace: out of memory");
        return NULL;
    }
    t->p = p;
    t->zb = p->schedule != TSL_PIPESIM_SCHED_1F1B;
    t->v = tsl_pipesim_sched_chunks(p->schedule, p->interleave);
    size_t n = 0, first[TSL_PLAN_MAX_STAGES + 1] = {0}; /* stage s: ev[first[s] .. first[s + 1]) */
    if (simulate(t, &ev, &iter_s, &n, err) != 0)
        goto out;
    if (m)
        recompute_times(t, m);
    for (size_t k = 0; k < n; k++)
        first[ev[k].stage + 1] = k + 1;
    t->tie_peer = t->sim.in.tie_stage ? t->sim.in.tie_stage : p->pp - 1;
    t->tie_at = fmax(ev[first[1] - 1].end_s + t->sync[0],
                     ev[first[t->tie_peer + 1] - 1].end_s + t->sync[t->tie_peer]);
    t->events = json_array();
    for (uint32_t s = 0; s < p->pp; s++)
        put_stage(t, ev + first[s], (uint32_t)(first[s + 1] - first[s]), s, iter_s);
    if (p->schedule == TSL_PIPESIM_SCHED_DUALPIPEV && sort_tracks(t) != 0) {
        json_decref(t->events);
        tsl_err_setc(err, TSL_E_NOMEM, "trace: out of memory");
        goto out;
    }
    doc = json_pack("{s:o, s:s, s:{s:s, s:s, s:f, s:i, s:i, s:i}}", "traceEvents", t->events,
                    "displayTimeUnit", "ms", "otherData", "model", m ? m->name : "", "schedule",
                    t->zb      ? tsl_pipesim_sched_name(p->schedule, 1)
                    : t->v > 1 ? "interleaved 1F1B"
                               : "1F1B",
                    "iter_time_s", iter_s, "pp", (int)p->pp, "n_micro", (int)p->n_micro,
                    "micro_batch", (int)p->micro_batch);
out:
    free(ev);
    free(t);
    return doc;
}
