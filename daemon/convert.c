/*
 * convert.c — tessel.v1.PlanRequest → model, cluster, request, with every
 * field checked before a search starts (convert.h).
 */
#include "convert.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_json.h"
#include "hf_config.h"

static int check_fields(const Tessel__V1__PlanRequest *req, const tsl_config_t *cfg,
                        tsl_err_t *err)
{
    if (req->model_case == TESSEL__V1__PLAN_REQUEST__MODEL__NOT_SET)
        return tsl_err_set(err, "model: set model_preset (e.g. GPT3-15B) or hf_config_json");
    if (req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER__NOT_SET)
        return tsl_err_set(err, "cluster: set cluster_spec (e.g. 2x8xA100-40G:ib100) or cluster_json");
    if (req->model_case == TESSEL__V1__PLAN_REQUEST__MODEL_MODEL_PRESET &&
        strlen(req->model_preset) >= TSL_NAME_MAX)
        return tsl_err_set(err, "model_preset: longer than %u characters", TSL_NAME_MAX - 1);
    if (req->seq_len && req->model_case != TESSEL__V1__PLAN_REQUEST__MODEL_HF_CONFIG_JSON)
        return tsl_err_set(err, "seq_len: only applies with hf_config_json (a preset has its own)");
    if (req->seq_len > TSL_CONVERT_MAX_SEQ_LEN)
        return tsl_err_set(err, "seq_len: %u is above the limit %u", req->seq_len,
                           TSL_CONVERT_MAX_SEQ_LEN);
    if (req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_SPEC &&
        strlen(req->cluster_spec) > TSL_CONVERT_MAX_SPEC)
        return tsl_err_set(err, "cluster_spec: longer than %u characters", TSL_CONVERT_MAX_SPEC);
    if (req->global_batch > cfg->max_batch)
        return tsl_err_set(err, "global_batch: %u is above the limit max_batch=%u",
                           req->global_batch, cfg->max_batch);
    if (req->max_batch > cfg->max_batch)
        return tsl_err_set(err, "max_batch: %u is above the limit max_batch=%u", req->max_batch,
                           cfg->max_batch);
    if (req->top_k > TSL_SEARCH_MAX_TOPK)
        return tsl_err_set(err, "top_k: %u is above the limit %u", req->top_k, TSL_SEARCH_MAX_TOPK);
    return 0;
}

static int build_model(const Tessel__V1__PlanRequest *req, const tsl_config_t *cfg,
                       tsl_model_t *m, tsl_err_t *err)
{
    if (req->model_case == TESSEL__V1__PLAN_REQUEST__MODEL_MODEL_PRESET) {
        if (tsl_model_preset(req->model_preset, m, err) != 0)
            return tsl_err_prefix(err, "model_preset");
    } else if (tsl_hf_config_parse(req->hf_config_json, "", req->seq_len, m, err) != 0) {
        return tsl_err_prefix(err, "hf_config_json");
    }
    if (m->n_layers > cfg->max_layers)
        return tsl_err_set(err, "model: %u layers is above the limit max_layers=%u", m->n_layers,
                           cfg->max_layers);
    return 0;
}

static int build_cluster(const Tessel__V1__PlanRequest *req, const tsl_config_t *cfg,
                         tsl_cluster_t *c, tsl_err_t *err)
{
    if (req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_SPEC) {
        if (tsl_cluster_parse_spec(c, req->cluster_spec, err) != 0)
            return tsl_err_prefix(err, "cluster_spec");
    } else if (tsl_cluster_json_parse(req->cluster_json, c, err) != 0) {
        return tsl_err_prefix(err, "cluster_json");
    }
    if (c->n_devices > cfg->max_devices)
        return tsl_err_set(err, "cluster: %u devices is above the limit max_devices=%u",
                           c->n_devices, cfg->max_devices);
    return 0;
}

static void build_request(const Tessel__V1__PlanRequest *req, const tsl_config_t *cfg,
                          tsl_request_t *r)
{
    tsl_request_init(r);
    r->global_batch = req->global_batch;
    r->max_batch = req->max_batch;
    if (!r->global_batch && !r->max_batch)
        r->max_batch = cfg->max_batch < TSL_SEARCH_DEFAULT_MAX_BATCH ? cfg->max_batch
                                                                     : TSL_SEARCH_DEFAULT_MAX_BATCH;
    r->mem_budget_bytes = req->memory_bytes;
    r->top_k = req->top_k;
    r->no_pp = req->no_pp;
    r->no_tp = req->no_tp;
    r->no_dp = req->no_dp;
    r->no_sdp = req->no_sdp;
    r->no_ckpt = req->no_ckpt;
    r->no_baselines = req->no_baselines;
    r->no_placement = req->no_placement;
    r->no_memopt = req->no_memopt;
    r->no_slicer = req->no_slicer;
    r->no_sublayer = req->no_sublayer;
    r->no_bi_objective = req->no_bi_objective;
    r->no_interleave = req->no_interleave;
    r->pp = req->pp;
}

/* An embedded JSON document as an object when it parses, else as its text. */
static json_t *embedded(const char *text)
{
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    return v ? v : json_string(text);
}

static char *request_json(const Tessel__V1__PlanRequest *req)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    if (req->model_case == TESSEL__V1__PLAN_REQUEST__MODEL_MODEL_PRESET)
        json_object_set_new(o, "model_preset", json_string(req->model_preset));
    else
        json_object_set_new(o, "hf_config", embedded(req->hf_config_json));
    if (req->cluster_case == TESSEL__V1__PLAN_REQUEST__CLUSTER_CLUSTER_SPEC)
        json_object_set_new(o, "cluster_spec", json_string(req->cluster_spec));
    else
        json_object_set_new(o, "cluster", embedded(req->cluster_json));
    json_object_set_new(o, "seq_len", json_integer(req->seq_len));
    json_object_set_new(o, "memory_bytes", json_integer((json_int_t)req->memory_bytes));
    json_object_set_new(o, "global_batch", json_integer(req->global_batch));
    json_object_set_new(o, "max_batch", json_integer(req->max_batch));
    json_object_set_new(o, "top_k", json_integer(req->top_k));
    json_object_set_new(o, "no_pp", json_boolean(req->no_pp));
    json_object_set_new(o, "no_tp", json_boolean(req->no_tp));
    json_object_set_new(o, "no_dp", json_boolean(req->no_dp));
    json_object_set_new(o, "no_sdp", json_boolean(req->no_sdp));
    json_object_set_new(o, "no_ckpt", json_boolean(req->no_ckpt));
    json_object_set_new(o, "no_baselines", json_boolean(req->no_baselines));
    json_object_set_new(o, "no_placement", json_boolean(req->no_placement));
    json_object_set_new(o, "no_memopt", json_boolean(req->no_memopt));
    json_object_set_new(o, "no_slicer", json_boolean(req->no_slicer));
    json_object_set_new(o, "no_sublayer", json_boolean(req->no_sublayer));
    json_object_set_new(o, "no_bi_objective", json_boolean(req->no_bi_objective));
    json_object_set_new(o, "no_interleave", json_boolean(req->no_interleave));
    json_object_set_new(o, "pp", json_integer(req->pp));
    char *text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    return text;
}

int tsl_convert_plan_request(const Tessel__V1__PlanRequest *req, const tsl_config_t *cfg,
                             tsl_plan_input_t *in, tsl_err_t *err)
{
    if (check_fields(req, cfg, err) != 0)
        return -1;
    if (build_model(req, cfg, &in->model, err) != 0)
        goto fail;
    if (build_cluster(req, cfg, &in->cluster, err) != 0)
        goto fail;
    build_request(req, cfg, &in->request);
    if (tsl_request_validate(&in->request, &in->model, &in->cluster, err) != 0)
        goto fail;
    tsl_request_fingerprint(&in->request, &in->model, &in->cluster, in->fingerprint);
    in->force = req->force;
    in->request_json = request_json(req);
    if (!in->request_json) {
        tsl_err_set(err, "request: out of memory");
        goto fail;
    }
    return 0;
fail:
    tsl_plan_input_free(in);
    return -1;
}

void tsl_plan_input_free(tsl_plan_input_t *in)
{
    tsl_model_free(&in->model);
    tsl_cluster_free(&in->cluster);
    free(in->request_json);
    memset(in, 0, sizeof *in);
}
