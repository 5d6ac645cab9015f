/*
 * eval_local.c — `tesselctl eval`: the given plan from flags, a plan document,
 * a Megatron-LM argument line or a torchtitan TOML (eval_cfg.h), costed by the
 * planner (eval.h) and set beside what the search finds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_json.h"
#include "eval.h"
#include "eval_cmd.h"
#include "export.h"
#include "plan_json.h"
#include "remote.h"

/* The configuration the plan comes from (flags, Megatron-LM, torchtitan), or the
 * plan document (*doc) of --plan. */
static int load_source(const tsl_eval_opts_t *eo, tsl_eval_cfg_t *cfg, json_t **doc, tsl_err_t *err)
{
    *cfg = eo->cfg;
    if (eo->megatron_args)
        return tsl_eval_cfg_megatron(eo->megatron_args, cfg, err);
    if (eo->torchtitan) {
        char *text = NULL;
        if (tsl_remote_read_file("torchtitan", eo->torchtitan, 1 << 20, &text) != 0)
            return tsl_err_set(err, "torchtitan: cannot read '%s'", eo->torchtitan);
        int rc = tsl_eval_cfg_torchtitan(text, cfg, err);
        free(text);
        return rc;
    }
    if (eo->plan_file) {
        json_error_t je;
        *doc = json_load_file(eo->plan_file, 0, &je);
        if (*doc == NULL)
            return tsl_err_setc(err, TSL_E_INVALID, "plan: %s: line %d: %s", eo->plan_file, je.line,
                                je.text);
    }
    return 0;
}

/* --model/--hf-config, or the plan document's model when it names a preset. */
static int load_model(const tsl_eval_opts_t *eo, const tsl_eval_cfg_t *cfg, const json_t *doc,
                      tsl_model_t *m, tsl_err_t *err)
{
    tsl_plan_opts_t po = {.model = eo->model,
                          .hf_config = eo->hf_config,
                          .seq_len = eo->seq_len ? eo->seq_len : cfg->seq_len};
    const json_t *jm = json_object_get(doc, "model");
    if (!po.model && !po.hf_config && json_string_value(json_object_get(jm, "name"))) {
        po.model = json_string_value(json_object_get(jm, "name"));
        if (!po.seq_len)
            po.seq_len = (uint32_t)json_integer_value(json_object_get(jm, "tokens_per_sample"));
    }
    return tsl_plan_load_model(&po, m, err);
}

/* A plan document's plan (a search result's "plan", or a plan object itself). */
static int plan_of_doc(const json_t *doc, tsl_plan_t *g, tsl_err_t *err)
{
    const json_t *p = json_object_get(doc, "plan") ? json_object_get(doc, "plan") : doc;
    if (tsl_plan_from_json(p, g, err) != 0)
        return -1;
    g->interleave = (uint32_t)json_integer_value(json_object_get(p, "interleave"));
    const json_t *order = json_object_get(p, "node_order");
    for (uint32_t k = 0; k < g->n_nodes && k < TSL_CLUSTER_MAX_NODES; k++)
        g->node_order[k] = (uint16_t)json_integer_value(json_array_get(order, k));
    return 0;
}

/* --strategy TEXT: its degrees for the batch arithmetic, then every layer's. */
static int plan_of_strategy(const tsl_eval_opts_t *eo, const tsl_model_t *m, uint32_t N,
                            tsl_plan_t *g, tsl_err_t *err)
{
    tsl_strategy_t s;
    if (tsl_strategy_parse(eo->strategy, &s, err) != 0)
        return tsl_err_prefix(err, "strategy");
    tsl_eval_cfg_t cfg = eo->cfg;
    cfg.tp = tsl_strategy_degree(&s, TSL_DIM_TP);
    cfg.dp = tsl_strategy_degree(&s, TSL_DIM_DP);
    cfg.sdp = tsl_strategy_degree(&s, TSL_DIM_SDP);
    cfg.sp = false;
    cfg.zero = 0;
    if (tsl_eval_cfg_plan(&cfg, m, N, g, err) != 0)
        return -1;
    for (uint32_t i = 0; i < m->n_layers; i++)
        g->layer[i] = s;
    return 0;
}

static int given_plan(const tsl_eval_opts_t *eo, const tsl_eval_cfg_t *cfg, const json_t *doc,
                      const tsl_model_t *m, const tsl_cluster_t *c, tsl_plan_t *g, tsl_err_t *err)
{
    if (doc)
        return plan_of_doc(doc, g, err);
    if (eo->strategy)
        return plan_of_strategy(eo, m, c->n_devices, g, err);
    return tsl_eval_cfg_plan(cfg, m, c->n_devices, g, err);
}

/* The search for the same model, cluster, budget and batch; NULL (why in err)
 * when it finds nothing. */
static tsl_search_result_t *search_same(const tsl_model_t *m, const tsl_cluster_t *c,
                                        const tsl_request_t *er, uint32_t batch, tsl_err_t *err)
{
    tsl_request_t r = *er;
    r.global_batch = batch;
    r.no_baselines = true;
    tsl_search_result_t *res = malloc(sizeof(*res));
    if (res == NULL) {
        tsl_err_setc(err, TSL_E_NOMEM, "search: out of memory");
        return NULL;
    }
    if (tsl_search(m, c, &r, NULL, res, err) != TSL_SEARCH_OK) {
        free(res);
        return NULL;
    }
    return res;
}

static json_t *result_doc(const tsl_model_t *m, const tsl_cluster_t *c, const tsl_plan_t *p,
                          const tsl_search_result_t *res, const tsl_err_t *serr, bool searched)
{
    char desc[256];
    tsl_cluster_describe(c, desc, sizeof desc);
    json_t *doc =
        json_pack("{s:{s:s, s:I, s:I, s:I}, s:{s:s, s:I}, s:o}", "model", "name", m->name, "layers",
                  (json_int_t)m->n_layers, "params", (json_int_t)tsl_model_params(m),
                  "tokens_per_sample", (json_int_t)m->tokens_per_sample, "cluster", "description",
                  desc, "devices", (json_int_t)c->n_devices, "plan", tsl_plan_to_json(p));
    if (doc == NULL || !searched)
        return doc;
    json_t *s = json_object();
    json_object_set_new(s, "plan", res ? tsl_plan_to_json(&res->best) : json_null());
    if (res == NULL)
        json_object_set_new(s, "why", json_string(serr->msg));
    json_object_set_new(doc, "search", s);
    if (res)
        json_object_set_new(doc, "ratio", json_real(p->samples_per_s / res->best.samples_per_s));
    return doc;
}

static void print_human(json_t *doc, const tsl_search_result_t *res, const tsl_plan_t *p,
                        const tsl_err_t *serr, bool searched)
{
    json_t *jm = json_object_get(doc, "model");
    printf("Given plan for %s (%lld layers, %.2fB parameters) on %s\n",
           json_string_value(json_object_get(jm, "name")),
           (long long)json_integer_value(json_object_get(jm, "layers")),
           (double)json_integer_value(json_object_get(jm, "params")) / 1e9,
           json_string_value(json_object_get(json_object_get(doc, "cluster"), "description")));
    tsl_print_plan(stdout, json_object_get(doc, "plan"));
    if (!searched)
        return;
    if (res == NULL) {
        printf("\nSearch at the same batch: %s\n", serr->msg);
        return;
    }
    const tsl_plan_t *b = &res->best;
    printf("\nSearch at the same batch (%u), memory budget and cluster\n", p->global_batch);
    printf("  found:     %.4f s/iteration, %.2f samples/s; pp %u, %u micro-batches of %u%s\n",
           b->iter_time_s, b->samples_per_s, b->pp, b->n_micro, b->micro_batch,
           b->interleave > 1 ? ", interleaved" : "");
    printf("  given/search throughput: %.3f (the search's plan is %.2fx %s)\n",
           p->samples_per_s / b->samples_per_s,
           b->samples_per_s >= p->samples_per_s ? b->samples_per_s / p->samples_per_s
                                                : p->samples_per_s / b->samples_per_s,
           b->samples_per_s >= p->samples_per_s ? "faster" : "slower");
}

/* Costs g, compares, prints. */
static int evaluate(const tsl_eval_opts_t *eo, const tsl_client_opts_t *co, const tsl_model_t *m,
                    const tsl_cluster_t *c, const tsl_plan_t *g)
{
    tsl_request_t r;
    tsl_request_init(&r);
    r.mem_budget_bytes = eo->mem_budget_bytes;
    tsl_plan_t *p = malloc(sizeof(*p));
    tsl_err_t err = {0}, serr = {0};
    if (p == NULL || tsl_eval_plan(m, c, &r, g, p, &err) != 0) {
        fprintf(stderr, "tesselctl: %s\n", p ? err.msg : "out of memory");
        free(p);
        return tsl_errcode_exit(p ? tsl_err_code(&err) : TSL_E_NOMEM);
    }
    tsl_search_result_t *res = eo->no_search ? NULL : search_same(m, c, &r, p->global_batch, &serr);
    json_t *doc = result_doc(m, c, p, res, &serr, !eo->no_search);
    int rc = TSL_EXIT_OK;
    if (doc == NULL)
        rc = TSL_EXIT_SERVER;
    else if (co->json)
        rc = tsl_remote_print_json(stdout, json_incref(doc));
    else
        print_human(doc, res, p, &serr, !eo->no_search);
    json_decref(doc);
    free(res);
    free(p);
    return rc;
}

int tsl_eval_local(const tsl_eval_opts_t *eo, const tsl_client_opts_t *co)
{
    tsl_model_t m = {0};
    tsl_cluster_t c = {0};
    tsl_eval_cfg_t cfg;
    tsl_err_t err = {0};
    json_t *doc = NULL;
    tsl_plan_t *g = malloc(sizeof(*g));
    int rc = TSL_EXIT_USAGE;
    if (g == NULL) {
        tsl_err_setc(&err, TSL_E_NOMEM, "out of memory");
        goto fail;
    }
    if (load_source(eo, &cfg, &doc, &err) != 0 || load_model(eo, &cfg, doc, &m, &err) != 0)
        goto fail;
    if (eo->cluster == NULL) {
        tsl_err_set(&err, "cluster: missing; give --cluster 8xA100-80G or a JSON file");
        goto fail;
    }
    if (tsl_cluster_from_arg(eo->cluster, &c, &err) != 0 ||
        given_plan(eo, &cfg, doc, &m, &c, g, &err) != 0)
        goto fail;
    rc = evaluate(eo, co, &m, &c, g);
    goto out;
fail:
    fprintf(stderr, "tesselctl: eval: %s\n", err.msg);
    rc = tsl_errcode_exit(tsl_err_code(&err) == TSL_E_NONE ? TSL_E_INVALID : tsl_err_code(&err));
out:
    json_decref(doc);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
    free(g);
    return rc;
}
