/*
 * plan_local.c — `tesselctl plan --local`: the planner in-process, no daemon.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cluster_json.h"
#include "commands.h"
#include "hf_config.h"
#include "plan_json.h"
#include "search.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A bar on stderr when it is a terminal; nothing when piped. */
static void show_progress(void *ud, double fraction, const char *phase)
{
    (void)ud;
    int width = 30, filled = (int)(fraction * width);
    fprintf(stderr, "\r%-9s [", phase);
    for (int i = 0; i < width; i++)
        fputc(i < filled ? '#' : ' ', stderr);
    fprintf(stderr, "] %3.0f%%", fraction * 100);
    fflush(stderr);
}

int tsl_plan_load_model(const tsl_plan_opts_t *po, tsl_model_t *m, tsl_err_t *err)
{
    if (po->model && po->hf_config)
        return tsl_err_set(err, "model: give either --model or --hf-config, not both");
    if (po->model)
        return tsl_model_preset_seq(po->model, po->seq_len, m, err);
    if (po->hf_config)
        return tsl_hf_config_load(po->hf_config, po->seq_len, m, err);
    return tsl_err_set(err, "model: missing; give --model NAME (see `tesselctl models`) or "
                            "--hf-config PATH");
}

void tsl_plan_fill_request(const tsl_plan_opts_t *po, tsl_request_t *r)
{
    tsl_request_init(r);
    r->global_batch = po->batch;
    r->max_batch = po->max_batch;
    r->mem_budget_bytes = po->memory_bytes;
    r->top_k = po->top_k;
    r->pp = po->pp;
    r->no_pp = po->no_pp;
    r->no_tp = po->no_tp;
    r->no_dp = po->no_dp;
    r->no_sdp = po->no_sdp;
    r->no_ckpt = po->no_ckpt;
    r->no_baselines = po->no_baselines;
    r->no_placement = po->no_placement;
    r->no_memopt = po->no_memopt;
    r->no_slicer = po->no_slicer;
    r->no_sublayer = po->no_sublayer;
    r->no_bi_objective = po->no_bi_objective;
    /* issue-10 cost-model switches */
    r->unfused_attn = po->unfused_attn;
    r->no_seq_par = po->no_seq_par;
    r->no_zero = po->no_zero;
    r->no_selective = po->no_selective;
}

static int run_search(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_request_t *r,
                      const tsl_client_opts_t *co)
{
    tsl_search_result_t *res = malloc(sizeof(*res));
    if (res == NULL) {
        fprintf(stderr, "tesselctl: out of memory\n");
        return TSL_EXIT_SERVER;
    }
    tsl_search_hooks_t hooks = {0};
    bool bar = isatty(STDERR_FILENO);
    if (bar)
        hooks.progress = show_progress;
    tsl_err_t err = {0};
    double t0 = now_s();
    int rc = tsl_search(m, c, r, &hooks, res, &err);
    double elapsed = now_s() - t0;
    if (bar)
        fprintf(stderr, "\r%60s\r", "");
    if (rc != TSL_SEARCH_OK) {
        fprintf(stderr, "tesselctl: %s\n", err.msg);
        free(res);
        return TSL_EXIT_USAGE;
    }
    json_t *doc = tsl_search_result_to_json(res, m, c, r, elapsed);
    if (co->json)
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    else
        tsl_print_result(stdout, doc);
    if (co->json)
        fputc('\n', stdout);
    json_decref(doc);
    free(res);
    return TSL_EXIT_OK;
}

int tsl_plan_local(const tsl_plan_opts_t *po, const tsl_client_opts_t *co)
{
    tsl_model_t m = {0};
    tsl_cluster_t c = {0};
    tsl_err_t err = {0};
    int rc = TSL_EXIT_USAGE;
    if (tsl_plan_load_model(po, &m, &err) != 0)
        goto fail;
    if (po->cluster == NULL) {
        tsl_err_set(&err, "cluster: missing; give --cluster 8xA100-80G or a JSON file");
        goto fail;
    }
    if (tsl_cluster_from_arg(po->cluster, &c, &err) != 0)
        goto fail;
    tsl_request_t r;
    tsl_plan_fill_request(po, &r);
    rc = run_search(&m, &c, &r, co);
    goto out;
fail:
    fprintf(stderr, "tesselctl: %s\n", err.msg);
out:
    tsl_model_free(&m);
    tsl_cluster_free(&c);
    return rc;
}
