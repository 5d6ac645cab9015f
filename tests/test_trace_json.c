/*
 * test_trace_json.c — common/trace_json.h and pipesim's event output: a real
 * plan's simulated 1F1B timeline checked against the Chrome Trace Event format
 * (complete "X" events with ts/dur in µs, pid/tid, "M" metadata naming every
 * track, ts in order on every track) and against the simulation (each op's
 * duration is its stage's time, the compute tracks cover the iteration without
 * gaps or overlaps, and the timeline ends at the plan's sim_iter_time_s); the
 * same events from the plan's stored document (tsl_export_stored, format trace),
 * a V's chunks with their own times (the stage's "chunk1") as the search priced them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "export.h"
#include "plan_json.h"
#include "pipesim.h"
#include "search.h"
#include "trace_json.h"

#define US_EPS 1e-3 /* µs: the document's rounding */

static void check_format(json_t *doc, const tsl_plan_t *p)
{
    json_t *evs = json_object_get(doc, "traceEvents");
    CHECK(json_is_array(evs) && json_array_size(evs) > 0, "traceEvents is an array");
    double last_ts[TSL_PLAN_MAX_STAGES + 1][4], end[TSL_PLAN_MAX_STAGES + 1] = {0};
    bool named[TSL_PLAN_MAX_STAGES + 1] = {false};
    for (uint32_t s = 0; s <= p->pp; s++)
        for (int t = 0; t < 4; t++)
            last_ts[s][t] = -1;
    size_t i;
    json_t *e;
    int bad = 0;
    json_array_foreach(evs, i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        json_int_t pid = json_integer_value(json_object_get(e, "pid"));
        json_int_t tid = json_integer_value(json_object_get(e, "tid"));
        if (ph == NULL || pid < 1 || pid > p->pp || tid < 1 || tid > 3 ||
            !json_is_string(json_object_get(e, "name"))) {
            bad++;
            continue;
        }
        if (strcmp(ph, "M") == 0) {
            const char *n = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
            if (n && strcmp(json_string_value(json_object_get(e, "name")), "process_name") == 0)
                named[pid] = strncmp(n, "stage ", 6) == 0;
            continue;
        }
        double ts = json_number_value(json_object_get(e, "ts"));
        double dur = json_number_value(json_object_get(e, "dur"));
        bad += strcmp(ph, "X") != 0 || !(ts >= 0) || !(dur > 0) ||
               !json_is_string(json_object_get(e, "cat"));
        bad += ts < last_ts[pid][tid]; /* in order on the track */
        last_ts[pid][tid] = ts;
        if (tid == 1) { /* compute: back to back from 0 */
            bad += fabs(ts - end[pid]) > US_EPS;
            end[pid] = ts + dur;
        }
    }
    CHECK(bad == 0, "%d events break the format or the order", bad);
    for (uint32_t s = 1; s <= p->pp; s++) {
        CHECK(named[s], "stage %u has a process_name", s - 1);
        CHECK(fabs(end[s] - p->sim_iter_time_s * 1e6) < US_EPS,
              "stage %u's compute track ends at %.3f µs, the simulation at %.3f", s - 1, end[s],
              p->sim_iter_time_s * 1e6);
    }
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(doc, "otherData"), "iter_time_s")),
               p->sim_iter_time_s, 1e-12, "otherData.iter_time_s");
}

/* Each op's slices add up to its stage's times. */
static void check_durations(json_t *doc, const tsl_plan_t *p)
{
    double fwd[TSL_PLAN_MAX_STAGES] = {0}, bwd[TSL_PLAN_MAX_STAGES] = {0},
           sync[TSL_PLAN_MAX_STAGES] = {0}, rec[TSL_PLAN_MAX_STAGES] = {0},
           tie[TSL_PLAN_MAX_STAGES] = {0};
    uint32_t nf[TSL_PLAN_MAX_STAGES] = {0};
    uint32_t v = p->schedule == TSL_PIPESIM_SCHED_ZBV ? 2
                 : !p->schedule && p->interleave > 1  ? p->interleave
                                                      : 1; /* one op per chunk */
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, "traceEvents"), i, e)
    {
        const char *cat = json_string_value(json_object_get(e, "cat"));
        int s = (int)json_integer_value(json_object_get(e, "pid")) - 1;
        double dur = json_number_value(json_object_get(e, "dur")) / 1e6;
        if (cat == NULL || s < 0)
            continue;
        if (strcmp(cat, "forward") == 0) {
            /* a V's chunks their own shares (plan.h chunk1_*): their sum checked below */
            CHECK(p->v_chunks || fabs(dur - p->stages[s].fwd_s / v) <= 1e-9 * fmax(dur, 1e-9),
                  "stage %d forward %g, want %g", s, dur, p->stages[s].fwd_s / v);
            fwd[s] += dur;
            nf[s]++;
        } else if (strcmp(cat, "backward") == 0 || strcmp(cat, "wgrad") == 0) {
            bwd[s] += dur;
        } else if (strcmp(cat, "recompute") == 0) {
            rec[s] += dur;
        } else if (strcmp(cat, "sync") == 0) {
            sync[s] += dur;
        } else if (strcmp(cat, "tie") == 0) {
            tie[s] += dur;
        }
    }
    for (uint32_t s = 0; s < p->pp; s++) {
        const tsl_plan_stage_t *st = &p->stages[s];
        double b = st->time_nosync_s - st->p2p_s - st->fwd_s;
        double sy = st->time_s - st->time_nosync_s;
        CHECK(nf[s] == p->n_micro * v, "stage %u: %u forwards, %u micro-batches x %u chunks", s,
              nf[s], p->n_micro, v);
        CHECK_NEAR(fwd[s], p->n_micro * st->fwd_s, 1e-9, "stage %u forwards", s);
        CHECK_NEAR(bwd[s] + rec[s], p->n_micro * b, 1e-9, "stage %u backward + recompute", s);
        CHECK(sy <= 0 || fabs(sync[s] - sy) < 1e-9, "stage %u grad sync %g, want %g", s, sync[s],
              sy);
        /* a tied head's all-reduce: once, on the first and the last stage only */
        bool ends = p->pp > 1 && (s == 0 || s + 1 == p->pp);
        CHECK_NEAR(tie[s], ends ? p->tie_s : 0.0, 1e-9, "stage %u tied all-reduce %g, plan %g", s,
                   tie[s], p->tie_s);
    }
}

/* Zero-bubble plans: every micro-batch's backward on every stage is a B slice
 * and, later on the same track, a W slice (per chunk under ZBV); other
 * schedules have no W. Returns the W slices seen. */
static uint32_t check_wgrad(json_t *doc, const tsl_plan_t *p)
{
    enum { MAXK = 4096 };
    uint32_t v = p->schedule == TSL_PIPESIM_SCHED_ZBV ? 2 : 1, nw = 0, bad = 0;
    double *b_end = malloc(sizeof(double) * MAXK), *w_start = malloc(sizeof(double) * MAXK);
    for (uint32_t s = 0; s < p->pp; s++) {
        for (uint32_t k = 0; k < MAXK; k++)
            b_end[k] = w_start[k] = -1;
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(doc, "traceEvents"), i, e)
        {
            const char *name = json_string_value(json_object_get(e, "name"));
            if ((uint32_t)json_integer_value(json_object_get(e, "pid")) != s + 1 || name == NULL ||
                (strncmp(name, "B ", 2) != 0 && strncmp(name, "W ", 2) != 0))
                continue;
            unsigned j = 0, c = 0;
            sscanf(name + 2, "%u.%u", &j, &c);
            uint32_t key = (j * v + c) % MAXK;
            double ts = json_number_value(json_object_get(e, "ts"));
            double dur = json_number_value(json_object_get(e, "dur"));
            if (name[0] == 'B')
                b_end[key] = ts + dur;
            else {
                nw++;
                w_start[key] = ts;
                bad += b_end[key] < 0 || ts < b_end[key] - US_EPS; /* W after its B */
            }
        }
        for (uint32_t k = 0; p->schedule && k < p->n_micro * v && k < MAXK; k++)
            bad += b_end[k] < 0 || w_start[k] < 0;
    }
    CHECK(bad == 0, "%u B/W slices missing or out of order", bad);
    CHECK(nw == (p->schedule ? p->pp * p->n_micro * v : 0), "%u W slices under schedule %s", nw,
          tsl_pipesim_sched_name(p->schedule, p->interleave));
    free(b_end);
    free(w_start);
    return nw;
}

/* The simulator's events themselves: every op once, in order per stage, inputs
 * arrived before the op starts. */
static void check_events(void)
{
    const double f[3] = {1, 2, 1}, b[3] = {2, 4, 2}, c[2] = {0.5, 0.25};
    tsl_pipesim_in_t in = {.n_stages = 3, .n_micro = 5, .fwd_s = f, .bwd_s = b, .p2p_s = c};
    size_t bytes = tsl_pipesim_ws_bytes(3, 5, 0);
    void *ws = malloc(bytes);
    tsl_pipesim_out_t out;
    tsl_pipesim_event_t ev[30];
    tsl_err_t err = {0};
    CHECK(tsl_pipesim_run(&in, ws, bytes, &out, &err) == 0, "pipesim: %s", err.msg);
    CHECK(tsl_pipesim_events(&in, ws, ev, 29, &err) == -1, "a short buffer is refused");
    int n = tsl_pipesim_events(&in, ws, ev, 30, &err);
    CHECK(n == 30 && (uint32_t)n == out.n_ops, "30 ops, got %d", n);
    double last = 0;
    for (int k = 0; k < n; k++) {
        const tsl_pipesim_event_t *e = &ev[k];
        if (k % 10 == 0)
            last = 0;
        double want = e->op == TSL_PIPESIM_FWD ? f[e->stage] : b[e->stage];
        CHECK(e->start_s >= last - 1e-12 && fabs(e->end_s - e->start_s - want) < 1e-12,
              "op %d: in order, its stage's time", k);
        CHECK(e->sent_s + e->p2p_s <= e->start_s + 1e-12, "op %d starts after its input", k);
        last = e->end_s;
    }
    CHECK(fabs(ev[19].end_s - out.iter_s) < 1e-12 || fabs(ev[9].end_s - out.iter_s) < 1e-12,
          "the iteration ends with a stage's last op");
    free(ws);
}

/* The daemon's path (ExportPlan format trace): the plan through its stored
 * JSON document and back gives the same events, times to the document's
 * precision. */
static void check_stored(const char *model, const tsl_plan_t *p, json_t *doc)
{
    char req[128], *text = NULL;
    size_t len = 0;
    tsl_err_t err = {0};
    snprintf(req, sizeof req, "{\"model_preset\": \"%s\"}", model);
    json_t *result = json_pack("{s:o}", "plan", tsl_plan_to_json(p));
    char *result_text = json_dumps(result, JSON_COMPACT | JSON_REAL_PRECISION(17));
    CHECK(tsl_export_stored(TSL_EXPORT_TRACE, req, result_text, &text, &len, &err) == 0,
          "stored trace: %s", err.msg);
    json_t *back = text ? json_loads(text, 0, NULL) : NULL;
    json_t *a = json_object_get(doc, "traceEvents"), *b = json_object_get(back, "traceEvents");
    bool same = json_array_size(a) == json_array_size(b) && json_array_size(a) > 0;
    for (size_t i = 0; same && i < json_array_size(a); i++) {
        json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
        same = json_equal(json_object_get(x, "name"), json_object_get(y, "name")) &&
               json_equal(json_object_get(x, "pid"), json_object_get(y, "pid")) &&
               json_equal(json_object_get(x, "tid"), json_object_get(y, "tid"));
        for (int k = 0; same && k < 2; k++) {
            double u = json_number_value(json_object_get(x, k ? "dur" : "ts"));
            double v = json_number_value(json_object_get(y, k ? "dur" : "ts"));
            same = fabs(u - v) <= 1e-6 * fmax(1.0, fabs(u));
        }
    }
    CHECK(same && strlen(text) == len, "%s: %zu events direct, %zu through the stored document",
          model, json_array_size(a), json_array_size(b));
    json_decref(back);
    json_decref(result);
    free(result_text);
    free(text);
}

/* The iteration the event simulator gives plan p (STACK, as tsl_search_simulate). */
static double sim_iter_s(const tsl_plan_t *p)
{
    tsl_plan_sim_t *sim = malloc(sizeof(*sim));
    tsl_err_t err = {0};
    double iter = -1;
    tsl_plan_sim_input(p, false, sim);
    size_t bytes = tsl_pipesim_in_ws_bytes(&sim->in);
    void *ws = malloc(bytes ? bytes : 1);
    tsl_pipesim_out_t out;
    if (tsl_pipesim_run(&sim->in, ws, bytes, &out, &err) == 0)
        iter = out.iter_s;
    CHECK(iter >= 0, "simulate: %s", err.msg);
    free(ws);
    free(sim);
    return iter;
}

/* plan_text's <plan> read back (tsl_plan_from_json) after edit(plan) on it; the
 * reader's message in err. */
static int read_edited(const char *plan_text, void (*edit)(json_t *plan), tsl_plan_t *q,
                       tsl_err_t *err)
{
    json_t *o = json_loads(plan_text, 0, NULL);
    if (edit)
        edit(o);
    int rc = tsl_plan_from_json(o, q, err);
    json_decref(o);
    return rc;
}

static void drop_all_chunk1(json_t *plan)
{
    size_t s;
    json_t *st;
    json_array_foreach(json_object_get(plan, "stages"), s, st) json_object_del(st, "chunk1");
}

static void drop_last_chunk1(json_t *plan)
{
    json_t *stages = json_object_get(plan, "stages");
    json_object_del(json_array_get(stages, json_array_size(stages) - 1), "chunk1");
}

static void chunk1_not_object(json_t *plan)
{
    json_object_set_new(json_array_get(json_object_get(plan, "stages"), 0), "chunk1",
                        json_real(0.5));
}

static void chunk1_no_bwd(json_t *plan)
{
    json_object_del(json_object_get(json_array_get(json_object_get(plan, "stages"), 1), "chunk1"),
                    "bwd_s");
}

static void chunk1_negative(json_t *plan)
{
    json_object_set_new(
        json_object_get(json_array_get(json_object_get(plan, "stages"), 0), "chunk1"), "fwd_s",
        json_real(-1e-3));
}

static void run_zbh1(json_t *plan)
{
    json_object_set_new(plan, "schedule", json_string("zbh1"));
}

/* A V plan priced with its chunks' own times (v_chunks): its document carries each
 * stage's second chunk ("chunk1"), read back as written, so that the plan simulates
 * from its document as the search simulated it (sim_iter_time_s, to the bit at the
 * stored precision). A document without them (written before they were) still reads,
 * its V split in halves — another figure for this plan's uneven chunks; some stages
 * only, or a chunk1 of the wrong form, is refused naming the key; on a schedule edited
 * to another, they are left unread. */
static uint32_t v_stored_checked; /* plans check_v_stored saw */

static void check_v_stored(const char *model, const tsl_plan_t *p)
{
    v_stored_checked++;
    tsl_err_t err = {0};
    tsl_plan_t *q = malloc(sizeof(*q));
    json_t *doc = tsl_plan_to_json(p);
    char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
    size_t s;
    json_t *st;
    uint32_t with = 0;
    json_array_foreach(json_object_get(doc, "stages"), s, st) with +=
        json_is_object(json_object_get(st, "chunk1"));
    CHECK(with == p->pp, "%s: chunk1 on %u of %u stages", model, with, p->pp);

    CHECK(read_edited(text, NULL, q, &err) == 0, "%s: read back: %s", model, err.msg);
    bool same = q->v_chunks;
    for (uint32_t k = 0; k < p->pp; k++)
        same = same && q->stages[k].chunk1_fwd_s == p->stages[k].chunk1_fwd_s &&
               q->stages[k].chunk1_bwd_s == p->stages[k].chunk1_bwd_s &&
               q->stages[k].chunk1_wgrad_s == p->stages[k].chunk1_wgrad_s;
    CHECK(same, "%s: the chunks' times read back as written", model);
    double iter = sim_iter_s(q);
    CHECK(fabs(iter - p->sim_iter_time_s) <= 1e-12 * p->sim_iter_time_s,
          "%s: the stored V simulates to %.12g s, the search's %.12g", model, iter,
          p->sim_iter_time_s);

    CHECK(read_edited(text, drop_all_chunk1, q, &err) == 0 && !q->v_chunks,
          "%s: an older document without chunk1 reads: %s", model, err.msg);
    double halves = sim_iter_s(q);
    CHECK(fabs(halves - p->sim_iter_time_s) > 1e-9 * p->sim_iter_time_s,
          "%s: in halves %.12g s, not the priced chunks' %.12g", model, halves, p->sim_iter_time_s);

    char want[64];
    snprintf(want, sizeof want, "plan: stages[%u].chunk1: missing, but stages[0]", p->pp - 1);
    CHECK(read_edited(text, drop_last_chunk1, q, &err) != 0 && strstr(err.msg, want),
          "%s: chunk1 on some stages: %s", model, err.msg);
    CHECK(read_edited(text, chunk1_not_object, q, &err) != 0 &&
              strstr(err.msg, "plan: stages[0].chunk1: expected an object"),
          "chunk1 0.5: %s", err.msg);
    CHECK(read_edited(text, chunk1_no_bwd, q, &err) != 0 &&
              strstr(err.msg, "plan: stages[1].chunk1.bwd_s: missing"),
          "chunk1 without bwd_s: %s", err.msg);
    CHECK(read_edited(text, chunk1_negative, q, &err) != 0 &&
              strstr(err.msg, "plan: stages[0].chunk1.fwd_s: -0.001 is not a time >= 0"),
          "chunk1 fwd_s -1e-3: %s", err.msg);
    CHECK(read_edited(text, run_zbh1, q, &err) == 0 && !q->v_chunks &&
              q->stages[0].chunk1_fwd_s == 0,
          "%s: chunk1 on a plan edited to zbh1 is left unread: %s", model, err.msg);
    free(text);
    json_decref(doc);
    free(q);
}

/* The stages whose tracks hold a "tied all-reduce" slice, as a bit mask. */
static uint64_t tie_tracks(json_t *doc)
{
    uint64_t mask = 0;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, "traceEvents"), i, e)
    {
        const char *cat = json_string_value(json_object_get(e, "cat"));
        if (cat && strcmp(cat, "tie") == 0)
            mask |= 1ull << (json_integer_value(json_object_get(e, "pid")) - 1);
    }
    return mask;
}

/* A V's MTP depth on rank 1 sums its embedding copy's gradient with stage 0's (plan.h
 * tie_stage, cost model 118): the same V plan given a tie of 5 ms there is traced with
 * the all-reduce on stages 0 and 1 — where the simulator times it — not on the last,
 * ending at its simulated iteration; its document keeps "tie_stage", read back to the
 * same simulation and the same trace (a document without it paired the last stage);
 * a tie_stage past the stages is refused naming the key. */
static void check_tie_stage(const char *model, const tsl_plan_t *p, const tsl_model_t *m)
{
    tsl_err_t err = {0};
    tsl_plan_t *q = malloc(sizeof(*q)), *back = malloc(sizeof(*back));
    *q = *p;
    q->tie_s = 5e-3;
    q->tie_stage = 1;
    q->sim_iter_time_s = sim_iter_s(q);
    json_t *doc = tsl_trace_plan(q, m, &err);
    CHECK(doc != NULL, "trace with tie_stage 1: %s", err.msg);
    if (doc) {
        check_format(doc, q);
        CHECK(tie_tracks(doc) == 0x3, "%s: the tied all-reduce on stages 0 and 1 (mask %llx)",
              model, (unsigned long long)tie_tracks(doc));
        check_stored(model, q, doc);
    }
    json_t *pj = tsl_plan_to_json(q);
    CHECK(json_integer_value(json_object_get(pj, "tie_stage")) == 1,
          "%s: tie_stage in the document", model);
    char *text = json_dumps(pj, JSON_COMPACT | JSON_REAL_PRECISION(17));
    CHECK(read_edited(text, NULL, back, &err) == 0 && back->tie_stage == 1 &&
              sim_iter_s(back) == q->sim_iter_time_s,
          "%s: tie_stage read back, simulated to %.12g s: %s", model, q->sim_iter_time_s, err.msg);
    json_object_set_new(pj, "tie_stage", json_integer(p->pp));
    free(text);
    text = json_dumps(pj, JSON_COMPACT);
    char want[64];
    snprintf(want, sizeof want, "plan.tie_stage: %u is not a stage of the plan's %u", p->pp, p->pp);
    CHECK(read_edited(text, NULL, back, &err) != 0 && strstr(err.msg, want), "tie_stage %u: %s",
          p->pp, err.msg);
    free(text);
    json_decref(pj);
    json_decref(doc);
    free(back);
    free(q);
}

/* The same stages under DualPipeV (at least 2P micro-batches, an F&B saving of a
 * fifth of the forward): its overlapped steps as "F&B" slices (2m − 3P + s + 1 per
 * stage, one fewer on the last), 2P − s − 1 W slices per stage, F slices. */
static void check_dualpipev(tsl_plan_t *p, const tsl_model_t *m)
{
    uint32_t P = p->pp;
    if (P < 2)
        return;
    tsl_err_t err = {0};
    p->schedule = TSL_PIPESIM_SCHED_DUALPIPEV;
    p->interleave = 0;
    if (p->n_micro < 2 * P)
        p->n_micro = 2 * P;
    for (uint32_t s = 0; s < P; s++)
        p->stages[s].fb_save_s = p->stages[s].fwd_s / 5;
    tsl_plan_sim_t *sim = malloc(sizeof(*sim));
    tsl_plan_sim_input(p, false, sim);
    size_t bytes = tsl_pipesim_in_ws_bytes(&sim->in);
    void *ws = malloc(bytes);
    tsl_pipesim_out_t out;
    CHECK(tsl_pipesim_run(&sim->in, ws, bytes, &out, &err) == 0, "dualpipev: %s", err.msg);
    p->sim_iter_time_s = out.iter_s;
    free(ws);
    free(sim);
    json_t *doc = tsl_trace_plan(p, m, &err);
    CHECK(doc != NULL, "dualpipev trace: %s", err.msg);
    if (doc == NULL)
        return;
    check_format(doc, p);
    uint32_t fb[TSL_PLAN_MAX_STAGES] = {0}, w[TSL_PLAN_MAX_STAGES] = {0},
             f[TSL_PLAN_MAX_STAGES] = {0};
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, "traceEvents"), i, e)
    {
        const char *name = json_string_value(json_object_get(e, "name"));
        const char *cat = json_string_value(json_object_get(e, "cat"));
        uint32_t s = (uint32_t)json_integer_value(json_object_get(e, "pid")) - 1;
        if (name == NULL || cat == NULL || s >= P)
            continue;
        fb[s] += strncmp(name, "F&B ", 4) == 0 && strcmp(cat, "overlap") == 0;
        w[s] += strncmp(name, "W ", 2) == 0;
        f[s] += strncmp(name, "F ", 2) == 0;
    }
    uint32_t mm = p->n_micro;
    for (uint32_t s = 0; s < P; s++) {
        uint32_t want = 2 * mm - 3 * P + s + 1 - (s == P - 1);
        CHECK(fb[s] == want && w[s] == 2 * P - s - 1 && f[s] == 2 * mm - want,
              "dualpipev stage %u: %u F&B (want %u), %u W (want %u), %u F", s, fb[s], want, w[s],
              2 * P - s - 1, f[s]);
    }
    CHECK(strcmp(json_string_value(json_object_get(json_object_get(doc, "otherData"), "schedule")),
                 "dualpipev") == 0,
          "otherData.schedule dualpipev");
    json_decref(doc);
}

/* The same stages run by DeepSpeed's pipeline engine (ds_pipe_p2p): each exchange a
 * "p2p" slice on both of its stages' compute tracks, one per DeepSpeed step that moves
 * anything over the boundary — m + min(m, P − b − 1) over boundary b — and no
 * receive slices (the transfer holds the receiver itself). */
static void check_ds_pipe_p2p(tsl_plan_t *p, const tsl_model_t *m)
{
    uint32_t P = p->pp, mm = p->n_micro;
    if (P < 2)
        return;
    tsl_err_t err = {0};
    p->schedule = TSL_PIPESIM_SCHED_1F1B;
    p->interleave = 1;
    p->ds_pipe_p2p = true;
    tsl_plan_sim_t *sim = malloc(sizeof(*sim));
    tsl_plan_sim_input(p, false, sim);
    size_t bytes = tsl_pipesim_in_ws_bytes(&sim->in);
    void *ws = malloc(bytes);
    tsl_pipesim_out_t out;
    CHECK(tsl_pipesim_run(&sim->in, ws, bytes, &out, &err) == 0, "ds_pipe_p2p: %s", err.msg);
    p->sim_iter_time_s = out.iter_s;
    free(ws);
    free(sim);
    json_t *doc = tsl_trace_plan(p, m, &err);
    CHECK(doc != NULL, "ds_pipe_p2p trace: %s", err.msg);
    p->ds_pipe_p2p = false;
    if (doc == NULL)
        return;
    check_format(doc, p);
    uint32_t x[TSL_PLAN_MAX_STAGES] = {0}, recv = 0;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, "traceEvents"), i, e)
    {
        const char *name = json_string_value(json_object_get(e, "name"));
        uint32_t s = (uint32_t)json_integer_value(json_object_get(e, "pid")) - 1;
        if (name == NULL || s >= P)
            continue;
        x[s] += strncmp(name, "p2p ", 4) == 0 && strstr(name, " with stage ") != NULL;
        recv += strncmp(name, "recv ", 5) == 0;
    }
    for (uint32_t s = 0; s < P; s++) {
        uint32_t want = (s > 0 ? mm + (P - s < mm ? P - s : mm) : 0) +
                        (s + 1 < P ? mm + (P - s - 1 < mm ? P - s - 1 : mm) : 0);
        CHECK(x[s] == want, "ds_pipe_p2p stage %u: %u exchanges (want %u)", s, x[s], want);
    }
    CHECK(recv == 0, "no receive slices: %u", recv);
    json_decref(doc);
}

static void check_plan(const char *model, const char *cluster, uint32_t pp, bool ckpt)
{
    tsl_model_t m = {0};
    tsl_cluster_t c = {0};
    tsl_request_t r;
    tsl_search_result_t *res = malloc(sizeof(*res));
    tsl_err_t err = {0};
    CHECK(tsl_model_preset(model, &m, &err) == 0 && tsl_cluster_parse_spec(&c, cluster, &err) == 0,
          "inputs: %s", err.msg);
    tsl_request_init(&r);
    r.global_batch = 32;
    r.pp = pp;
    r.no_baselines = true;
    r.no_slicer = true;
    CHECK(tsl_search(&m, &c, &r, NULL, res, &err) == TSL_SEARCH_OK, "search: %s", err.msg);
    tsl_plan_t *p = &res->best;
    if (ckpt)
        for (uint32_t i = 1; i < p->n_layers; i += 2)
            p->layer[i].ckpt = true;
    CHECK(p->pp == pp && p->sim_iter_time_s > 0, "%s: a %u-stage plan with a simulated time", model,
          pp);
    /* both presets tie the head: pp >= 2 sums its copy's gradient (plan.h tie_s),
     * but for a V, whose head sits beside its embedding on rank 0 (cost model 113) */
    bool v = p->schedule == TSL_PIPESIM_SCHED_ZBV || p->schedule == TSL_PIPESIM_SCHED_DUALPIPEV;
    CHECK(m.layers[m.n_layers - 1].tied_head && (p->tie_s > 0) == (pp > 1 && !v),
          "%s: tied all-reduce %g at pp %u", model, p->tie_s, pp);
    json_t *doc = tsl_trace_plan(p, &m, &err);
    CHECK(doc != NULL, "trace: %s", err.msg);
    if (doc) {
        check_format(doc, p);
        check_durations(doc, p);
        check_wgrad(doc, p);
        char *text = json_dumps(doc, JSON_COMPACT);
        CHECK(text && (strstr(text, "\"cat\": \"recompute\"") ||
                       strstr(text, "\"cat\":\"recompute\"")) == ckpt,
              "recompute slices %s", ckpt ? "present" : "absent");
        free(text);
        /* the stored document carries a V's chunk times (stage "chunk1"): its
         * trace is the search's, chunk for chunk */
        check_stored(model, p, doc);
        if (p->v_chunks) {
            check_v_stored(model, p);
            check_tie_stage(model, p, &m);
        }
    }
    json_decref(doc);
    /* the same stages under ZB-H1: B and W slices on every stage */
    p->schedule = TSL_PIPESIM_SCHED_ZBH1;
    p->interleave = 0;
    tsl_plan_sim_t *sim = malloc(sizeof(*sim));
    tsl_plan_sim_input(p, false, sim);
    size_t bytes = tsl_pipesim_in_ws_bytes(&sim->in);
    void *ws = malloc(bytes);
    tsl_pipesim_out_t out;
    CHECK(tsl_pipesim_run(&sim->in, ws, bytes, &out, &err) == 0, "zbh1: %s", err.msg);
    p->sim_iter_time_s = out.iter_s;
    doc = tsl_trace_plan(p, &m, &err);
    CHECK(doc != NULL, "zbh1 trace: %s", err.msg);
    if (doc) {
        check_format(doc, p);
        check_durations(doc, p);
        CHECK(check_wgrad(doc, p) == pp * p->n_micro, "zbh1: a W per stage and micro-batch");
        CHECK(strcmp(
                  json_string_value(json_object_get(json_object_get(doc, "otherData"), "schedule")),
                  "zbh1") == 0,
              "otherData.schedule zbh1");
    }
    json_decref(doc);
    check_ds_pipe_p2p(p, &m);
    check_dualpipev(p, &m);
    free(ws);
    free(sim);
    free(res);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

int main(void)
{
    check_events();
    check_plan("GPT2-345M", "8xA100-80G", 4, false);
    check_plan("GPT2-345M", "8xA100-80G", 2, true);
    /* a zero-bubble plan of 8 stages over two nodes with its tied head's all-reduce:
     * GPT-2 345M (ZB-H1); then BERT-Large, whose best since cost model 119 is a ZB-V
     * with uneven chunks (the plan's chunk1_*), each op its chunk's own share (the
     * trace once split them evenly and its slices overlapped) */
    check_plan("GPT2-345M", "2x4xA100-40G:ib100", 8, false);
    check_plan("BERT-Large", "2x4xA100-40G:ib100", 8, false);
    CHECK(v_stored_checked > 0, "a V plan with its chunks' times went through its document");
    return CHECK_DONE();
}
