/*
 * plan_local.c — `tesselctl plan --local`: the planner in-process, no daemon.
 *
 * --timeout is honoured as for a remote plan: a watchdog thread sets the
 * planner's cancel flag at the deadline, and the exit status is the one a
 * remote DEADLINE_EXCEEDED maps to (api/status.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster_json.h"
#include "commands.h"
#include "export.h"
#include "figures_load.h"
#include "hf_config.h"
#include "mtp.h"
#include "plan_json.h"
#include "plan_proto.h"
#include "progress.h"
#include "request.h"
#include "search.h"
#include "trace_json.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void show_progress(void *ud, double fraction, const char *phase)
{
    tsl_progress_draw(ud, fraction, phase);
}

int tsl_plan_load_model(const tsl_plan_opts_t *po, tsl_model_t *m, tsl_err_t *err)
{
    if (po->model && po->hf_config)
        return tsl_err_set(err, "model: give either --model or --hf-config, not both");
    if (po->model_name && !po->hf_config)
        return tsl_err_set(err, "name: --name names an --hf-config model; a preset keeps its own");
    if (po->model)
        return tsl_model_preset_seq(po->model, po->seq_len, m, err);
    if (po->hf_config &&
        tsl_hf_config_load_as(po->hf_config, po->model_name, po->seq_len, m, err) != 0)
        return -1;
    if (po->hf_config) {
        if (po->model_name)
            snprintf(m->name, sizeof m->name, "%s", po->model_name);
        return 0;
    }
    return tsl_err_set(err, "model: missing; give --model NAME (see `tesselctl models`) or "
                            "--hf-config PATH");
}

/* ---- the --timeout watchdog ---------------------------------------------------- */

typedef struct watchdog {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct timespec deadline; /* CLOCK_MONOTONIC */
    bool done, started;
    atomic_int cancel; /* the planner's cancel flag */
} watchdog_t;

static void *watchdog_main(void *arg)
{
    watchdog_t *w = arg;
    pthread_mutex_lock(&w->lock);
    int rc = 0;
    while (!w->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&w->cond, &w->lock, &w->deadline);
    if (!w->done)
        atomic_store(&w->cancel, 1);
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Starts the watchdog when timeout_s > 0; without one the flag stays 0. */
static void watchdog_start(watchdog_t *w, double timeout_s)
{
    atomic_init(&w->cancel, 0);
    w->done = false;
    w->started = false;
    if (timeout_s <= 0)
        return;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&w->lock, NULL);
    clock_gettime(CLOCK_MONOTONIC, &w->deadline);
    double end = (double)w->deadline.tv_sec + (double)w->deadline.tv_nsec / 1e9 + timeout_s;
    w->deadline.tv_sec = (time_t)end;
    w->deadline.tv_nsec = (long)((end - (double)(time_t)end) * 1e9);
    w->started = pthread_create(&w->thread, NULL, watchdog_main, w) == 0;
    if (!w->started) {
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->lock);
    }
}

static void watchdog_stop(watchdog_t *w)
{
    if (!w->started)
        return;
    pthread_mutex_lock(&w->lock);
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
}

/* ---- the search ----------------------------------------------------------------- */

/* The exit status of a failed search, by its code (api/status.h). */
static int search_failed(int rc, const tsl_err_t *err, const tsl_client_opts_t *co)
{
    if (rc == TSL_SEARCH_CANCELLED) {
        fprintf(stderr, "tesselctl: search cancelled: no plan within %g s (--timeout)\n",
                co->timeout_s);
        return tsl_status_exit(GRPC_STATUS_DEADLINE_EXCEEDED);
    }
    fprintf(stderr, "tesselctl: %s\n", err->msg);
    tsl_errcode_t code = tsl_err_code(err);
    return tsl_errcode_exit(code == TSL_E_NONE ? TSL_E_INVALID : code);
}

/* --export FORMAT: the best plan as that stack takes it, on stdout. */
static int print_export(const tsl_plan_opts_t *po, const tsl_plan_t *best, const tsl_model_t *m)
{
    tsl_export_format_t f;
    tsl_err_t err = {0};
    char *text;
    size_t len;
    if (tsl_export_format_parse(po->export_format, &f, &err) != 0 ||
        tsl_export(f, best, m, &text, &len, &err) != 0) {
        fprintf(stderr, "tesselctl: %s\n", err.msg);
        return tsl_err_code(&err) == TSL_E_UNSUPPORTED ? TSL_EXIT_SERVER : TSL_EXIT_USAGE;
    }
    int rc = fwrite(text, 1, len, stdout) == len ? TSL_EXIT_OK : TSL_EXIT_SERVER;
    free(text);
    /* what the JSON formats hold no comment to carry (the others write it) */
    char notes[TSL_EXPORT_MAX_NOTES][TSL_EXPORT_NOTE_CAP];
    size_t n = tsl_export_side_notes(f, best, notes);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "tesselctl: plan: note: %s: %s\n", po->export_format, notes[i]);
    return rc;
}

/* --trace FILE: the best plan's simulated 1F1B timeline as Chrome trace events. */
static int write_trace(const char *path, const tsl_plan_t *best, const tsl_model_t *m)
{
    tsl_err_t err = {0};
    json_t *doc = tsl_trace_plan(best, m, &err);
    if (doc == NULL) {
        fprintf(stderr, "tesselctl: %s\n", err.msg);
        return TSL_EXIT_SERVER;
    }
    int rc = json_dump_file(doc, path, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_decref(doc);
    if (rc != 0) {
        fprintf(stderr, "tesselctl: trace: cannot write '%s': %m\n", path);
        return TSL_EXIT_SERVER;
    }
    return TSL_EXIT_OK;
}

/* note: what inputs_load printed as a note ("" none), kept in the document's
 * "notes" as tesseld stores it (docs/plan-format.md), so both --json agree. */
static int run_search(const tsl_plan_opts_t *po, const tsl_model_t *m, const tsl_cluster_t *c,
                      const tsl_request_t *r, const tsl_client_opts_t *co, json_t *figures,
                      const char *note)
{
    tsl_search_result_t *res = malloc(sizeof(*res));
    if (res == NULL) {
        fprintf(stderr, "tesselctl: out of memory\n");
        return TSL_EXIT_SERVER;
    }
    tsl_progress_t pg;
    watchdog_t wd;
    tsl_progress_init(&pg);
    tsl_search_hooks_t hooks = {
        .progress = pg.on ? show_progress : NULL, .progress_ud = &pg, .cancel = &wd.cancel};
    tsl_err_t err = {0};
    watchdog_start(&wd, co->timeout_s);
    double t0 = now_s();
    int rc = tsl_search(m, c, r, &hooks, res, &err);
    double elapsed = now_s() - t0;
    watchdog_stop(&wd);
    tsl_progress_clear(&pg);
    if (rc != TSL_SEARCH_OK) {
        free(res);
        return search_failed(rc, &err, co);
    }
    if (po->trace && (rc = write_trace(po->trace, &res->best, m)) != TSL_EXIT_OK) {
        free(res);
        return rc;
    }
    if (po->export_format) {
        rc = print_export(po, &res->best, m);
        free(res);
        return rc;
    }
    char fp[17];
    tsl_request_fingerprint(r, m, c, fp);
    tsl_plan_head_t head;
    tsl_plan_head_fill(&head, res, m, c, fp);
    head.search_time_s = elapsed;
    head.created_unix = (int64_t)time(NULL);
    json_t *made = tsl_search_result_to_json(res, m, r, &head, figures);
    if (made && note[0])
        json_object_set_new(made, "notes", tsl_notes_json(note));
    /* printed as a plan from tesseld is: through tessel.v1.Plan and back */
    json_t *doc = made ? tsl_plan_doc_canonical(made, &err) : NULL;
    json_decref(made);
    if (doc == NULL) {
        fprintf(stderr, "tesselctl: %s\n", made ? err.msg : "out of memory");
        free(res);
        return TSL_EXIT_SERVER;
    }
    if (co->json)
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    else
        tsl_print_result(stdout, doc, tsl_print_tie_of(m));
    if (co->json)
        fputc('\n', stdout);
    json_decref(doc);
    free(res);
    return TSL_EXIT_OK;
}

/* What a plan runs on: the model and cluster of po with the figures of
 * --profile / --galvatron-profile attached (figures_load.h). */
typedef struct inputs {
    tsl_model_t m;
    tsl_cluster_t c;
    tsl_figures_load_t f;
    char note[TSL_NOTES_CAP]; /* the notes printed on stderr, a line each ("" none) */
} inputs_t;

static void inputs_free(inputs_t *in)
{
    tsl_model_free(&in->m);
    tsl_cluster_free(&in->c);
    tsl_figures_load_free(&in->f);
}

static int inputs_load(const tsl_plan_opts_t *po, inputs_t *in, tsl_err_t *err)
{
    memset(in, 0, sizeof(*in));
    if (tsl_plan_load_model(po, &in->m, err) != 0)
        return -1;
    /* the request's MTP depths on the model shown and searched (mtp.h; the search
     * would apply them again to a copy, a no-op then): under a stack that trains
     * none by default, none unless asked, and a note says so (target.h) */
    const tsl_request_t *r = &po->req;
    uint32_t have = tsl_mtp_depths(&in->m), t = r->target < TSL_TARGET_COUNT ? r->target : 0;
    uint32_t want = tsl_target_mtp_depths(t, have, r->mtp_layers, r->no_mtp);
    if (!(r->mtp_layers && r->no_mtp) && tsl_model_set_mtp(&in->m, want, err) != 0)
        return -1;
    if (tsl_target_mtp_note(t, in->m.name, have, want, in->note, sizeof in->note))
        fprintf(stderr, "tesselctl: plan: note: %s\n", in->note);
    if (po->cluster == NULL)
        return tsl_err_set(err, "cluster: missing; give --cluster 8xA100-80G or a JSON file");
    if (tsl_cluster_from_arg(po->cluster, &in->c, err) != 0)
        return -1;
    /* the bounds tesseld holds a request's figures to (api/request.h), so that a
     * unit slip in a cluster file is refused here as there, not planned */
    if (tsl_request_check_cluster(&in->c, err) != 0)
        return tsl_err_prefix(err, "%s", po->cluster);
    /* tp_sync where no layer can run TP (search.h); never beside the MTP note, which
     * needs a target that tp_sync is refused under */
    if (!in->note[0] && tsl_tp_sync_note(r, in->c.n_devices, NULL, in->note, sizeof in->note))
        fprintf(stderr, "tesselctl: plan: note: %s\n", in->note);
    /* MoE dispatch switches on a dense model or at EP 1 (search.h) */
    if (!in->note[0] && tsl_moe_switch_note(r, &in->m, in->note, sizeof in->note))
        fprintf(stderr, "tesselctl: plan: note: %s\n", in->note);
    /* the one-NIC trap (cluster.h), beside any of those, last as tesseld has it */
    char nic[TSL_NOTES_CAP];
    const char *spec = tsl_cluster_arg_is_file(po->cluster) ? NULL : po->cluster;
    if (tsl_cluster_nic_warning(&in->c, spec, nic, sizeof nic)) {
        fprintf(stderr, "tesselctl: plan: note: %s\n", nic);
        tsl_notes_add(in->note, sizeof in->note, nic);
    }
    return tsl_figures_load(po->profile, po->galvatron_profile, po->amp_profile, &in->m, &in->c,
                            &in->f, err);
}

int tsl_plan_local(const tsl_plan_opts_t *po, const tsl_client_opts_t *co)
{
    inputs_t *in = malloc(sizeof(*in));
    tsl_err_t err = {0};
    int rc = TSL_EXIT_USAGE;
    if (in == NULL || inputs_load(po, in, &err) != 0) {
        fprintf(stderr, "tesselctl: %s\n", in ? err.msg : "out of memory");
    } else {
        json_t *figures = tsl_figures_load_json(&in->f);
        rc = run_search(po, &in->m, &in->c, &po->req, co, figures, in->note);
        json_decref(figures);
    }
    if (in != NULL)
        inputs_free(in);
    free(in);
    return rc;
}

int tsl_plan_galvatron_cluster(const tsl_plan_opts_t *po, char **json_text, json_t **sources)
{
    inputs_t *in = malloc(sizeof(*in));
    tsl_err_t err = {0};
    int rc = TSL_EXIT_USAGE;
    *json_text = NULL;
    if (in == NULL || inputs_load(po, in, &err) != 0) {
        fprintf(stderr, "tesselctl: %s\n", in ? err.msg : "out of memory");
    } else {
        json_t *doc = tsl_cluster_to_json(&in->c);
        *json_text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
        json_decref(doc);
        char sent[700];
        const tsl_gpu_spec_t *gpu = &in->c.gpu_types[in->c.nodes[0].gpu_type];
        double intra = in->c.nodes[0].intra_bw > 0 ? in->c.nodes[0].intra_bw : gpu->intra_bw;
        snprintf(sent, sizeof sent,
                 "galvatron-profile %s: sent as the cluster JSON: efficiency %.3f (the "
                 "measured FFN block rate over peak), intra-node %.1f GB/s, inter-node "
                 "%.2f GB/s (%s), overlap %.3f",
                 po->galvatron_profile, gpu->efficiency, intra / 1e9, in->c.inter_bw / 1e9,
                 in->f.gal.inter_bw > 0 ? "galvatron" : "the cluster's", in->c.overlap_slowdown);
        *sources = json_pack("[s, s]", sent,
                             "not sent: per-micro-batch block times and memory profiles (a "
                             "PlanRequest carries neither; --local plans on them)");
        rc = *json_text && *sources ? 0 : TSL_EXIT_SERVER;
        if (rc != 0)
            fprintf(stderr, "tesselctl: out of memory\n");
    }
    if (in != NULL)
        inputs_free(in);
    free(in);
    return rc;
}
