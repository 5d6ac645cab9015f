/*
 * export.c — what every export shares: the format table, the plan folded onto
 * the source model's layers (export.h), the checks for "one strategy for the
 * whole model", and the way back from a stored plan document.
 */
#include "export.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hf_config.h"
#include "sublayer.h"

typedef int (*export_fn)(const tsl_export_view_t *v, FILE *out, tsl_err_t *err);

static const struct {
    const char *name, *content_type;
    export_fn fn;
} formats[TSL_EXPORT_COUNT] = {
    [TSL_EXPORT_MEGATRON] = {"megatron", "text/plain", tsl_export_megatron},
    [TSL_EXPORT_DEEPSPEED] = {"deepspeed", "application/json", tsl_export_deepspeed},
    [TSL_EXPORT_TORCHTITAN] = {"torchtitan", "application/toml", tsl_export_torchtitan},
    [TSL_EXPORT_GALVATRON] = {"galvatron", "application/json", tsl_export_galvatron},
};

int tsl_export_format_parse(const char *name, tsl_export_format_t *out, tsl_err_t *err)
{
    for (int f = 0; f < TSL_EXPORT_COUNT; f++) {
        if (strcasecmp(name, formats[f].name) == 0) {
            *out = (tsl_export_format_t)f;
            return 0;
        }
    }
    return tsl_err_set(err, "format: '%.40s' is not one of json, megatron, deepspeed, "
                            "torchtitan, galvatron", name);
}

const char *tsl_export_format_name(tsl_export_format_t f)
{
    return f < TSL_EXPORT_COUNT ? formats[f].name : "?";
}

const char *tsl_export_content_type(tsl_export_format_t f)
{
    return f < TSL_EXPORT_COUNT ? formats[f].content_type : "application/octet-stream";
}

const char *tsl_export_layer_kind(const tsl_export_view_t *v, uint32_t layer)
{
    if (layer == 0)
        return "embedding";
    return layer > v->n_blocks ? "head" : "Transformer layer";
}

const char *tsl_export_strategy_str(const tsl_strategy_t *s, char buf[64])
{
    tsl_strategy_t t = *s;
    t.ckpt = false;
    tsl_strategy_format(&t, buf, 64);
    return buf;
}

static bool is_block(const tsl_layer_t *l)
{
    return l->kind == TSL_LAYER_ENCODER || l->kind == TSL_LAYER_DECODER;
}

static int check_model(tsl_export_view_t *v, const tsl_model_t *m, tsl_err_t *err)
{
    uint32_t n = m->n_layers;
    if (n < 3 || m->layers[0].kind != TSL_LAYER_EMBEDDING || m->layers[n - 1].kind != TSL_LAYER_HEAD)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: model %s is not [embedding, Transformer layers..., head]",
                            v->target, m->name);
    for (uint32_t i = 1; i + 1 < n; i++)
        if (!is_block(&m->layers[i]))
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "%s: layer %u of %s is a %s block, not a whole Transformer layer",
                                v->target, i, m->name, tsl_layer_kind_name(m->layers[i].kind));
    v->n_blocks = n - 2;
    return 0;
}

/* A whole-layer plan: strategies and stages as they are. */
static int view_layers(tsl_export_view_t *v, const tsl_plan_t *p, const tsl_model_t *m,
                       tsl_err_t *err)
{
    if (p->n_layers != m->n_layers)
        return tsl_err_set(err, "plan: %u layers, but model %s has %u", p->n_layers, m->name,
                           m->n_layers);
    memcpy(v->layer, p->layer, m->n_layers * sizeof(p->layer[0]));
    for (uint32_t s = 0; s < p->pp; s++) {
        v->stage_first[s] = p->stages[s].first_layer;
        v->stage_count[s] = p->stages[s].n_layers;
    }
    return 0;
}

/* A sub-layer plan folded back: both blocks of a layer in one stage, one strategy. */
static int fold_sublayers(tsl_export_view_t *v, const tsl_plan_t *p, const tsl_sublayer_model_t *sm,
                          tsl_err_t *err)
{
    char a[64], b[64];
    if (p->n_layers != sm->model.n_layers)
        return tsl_err_set(err, "plan: %u sub-layer blocks, but the split model has %u",
                           p->n_layers, sm->model.n_layers);
    for (uint32_t i = 0; i < p->n_layers; i++) {
        uint32_t src = sm->ref[i].layer;
        if (sm->ref[i].part != TSL_SUBLAYER_FFN) {
            v->layer[src] = p->layer[i];
        } else if (!tsl_strategy_equal(&v->layer[src], &p->layer[i])) {
            tsl_strategy_format(&v->layer[src], a, sizeof a);
            tsl_strategy_format(&p->layer[i], b, sizeof b);
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "%s: layer %u's attention block runs %s but its FFN block %s; "
                                "%s takes one strategy per layer", v->target, src, a, b, v->target);
        }
    }
    for (uint32_t s = 0; s < p->pp; s++) {
        uint32_t lo = tsl_sublayer_boundary_halves(sm, p->stages[s].first_layer);
        uint32_t hi = tsl_sublayer_boundary_halves(sm, p->stages[s].first_layer + p->stages[s].n_layers);
        if (lo % 2)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "%s: stage %u starts inside layer %u (at %u.5, between its "
                                "attention and FFN blocks); %s cuts stages at whole layers; plan "
                                "again with --no-sublayer", v->target, s, lo / 2, lo / 2, v->target);
        v->stage_first[s] = lo / 2;
        v->stage_count[s] = (hi - lo + 1) / 2;
    }
    return 0;
}

/* CKPT of the embedding or the head: no target recomputes those. */
static int check_ckpt_outside_blocks(const tsl_export_view_t *v, tsl_err_t *err)
{
    uint32_t ends[2] = {0, v->n_blocks + 1};
    for (int k = 0; k < 2; k++)
        if (v->layer[ends[k]].ckpt)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "%s: layer %u (%s) is checkpointed; %s recomputes Transformer "
                                "layers only", v->target, ends[k],
                                tsl_export_layer_kind(v, ends[k]), v->target);
    return 0;
}

int tsl_export_view_init(tsl_export_view_t *v, const char *target, const tsl_plan_t *p,
                         const tsl_model_t *m, tsl_err_t *err)
{
    memset(v, 0, sizeof(*v));
    v->plan = p;
    v->model = m;
    v->target = target;
    v->pp = p->pp;
    if (!p->valid || p->pp == 0 || p->pp > TSL_PLAN_MAX_STAGES)
        return tsl_err_set(err, "plan: empty; there is nothing to export");
    if (p->memopt)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: the plan uses H3T's memory switches and CPU offload, which %s "
                            "does not take per layer; plan again with --no-memopt", target, target);
    if (check_model(v, m, err) != 0)
        return -1;
    int rc;
    if (!p->sublayer) {
        rc = view_layers(v, p, m, err);
    } else {
        tsl_sublayer_model_t sm;
        if (tsl_sublayer_split(m, &sm, err) != 0)
            return -1;
        rc = fold_sublayers(v, p, &sm, err);
        tsl_sublayer_free(&sm);
    }
    if (rc != 0)
        return -1;
    for (uint32_t s = 0; s < p->pp; s++)
        for (uint32_t i = v->stage_first[s]; i < v->stage_first[s] + v->stage_count[s]; i++)
            v->stage_blocks[s] += i >= 1 && i <= v->n_blocks;
    return check_ckpt_outside_blocks(v, err);
}

static int check_same_strategy(const tsl_export_view_t *v, const tsl_strategy_t *ref,
                               tsl_err_t *err)
{
    char a[64], b[64];
    for (uint32_t i = 0; i < v->model->n_layers; i++) {
        tsl_strategy_t t = v->layer[i];
        t.ckpt = false;
        if (!tsl_strategy_equal(&t, ref))
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "%s: layer %u (%s) runs %s but layer 1 runs %s; %s runs the "
                                "whole model under one strategy", v->target, i,
                                tsl_export_layer_kind(v, i), tsl_export_strategy_str(&t, a),
                                tsl_export_strategy_str(ref, b), v->target);
    }
    return 0;
}

int tsl_export_uniform(const tsl_export_view_t *v, tsl_export_uniform_t *u, tsl_err_t *err)
{
    const tsl_plan_t *p = v->plan;
    memset(u, 0, sizeof(*u));
    u->s = v->layer[1];
    u->s.ckpt = false;
    if (check_same_strategy(v, &u->s, err) != 0)
        return -1;
    u->stage_devices = p->stages[0].n_devices;
    for (uint32_t s = 1; s < p->pp; s++)
        if (p->stages[s].n_devices != u->stage_devices)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "%s: stage %u has %u devices but stage 0 has %u; %s gives every "
                                "stage the same number", v->target, s, p->stages[s].n_devices,
                                u->stage_devices, v->target);
    u->tp = tsl_strategy_degree(&u->s, TSL_DIM_TP);
    u->dp = tsl_strategy_degree(&u->s, TSL_DIM_DP);
    u->sdp = tsl_strategy_degree(&u->s, TSL_DIM_SDP);
    uint32_t width = u->dp * u->sdp;
    if (p->micro_batch % width)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "%s: a micro-batch of %u samples does not divide over %u "
                            "data-parallel ranks", v->target, p->micro_batch, width);
    u->micro_per_rank = p->micro_batch / width;
    for (uint32_t i = 1; i <= v->n_blocks; i++)
        u->ckpt_blocks += v->layer[i].ckpt;
    return 0;
}

int tsl_export(tsl_export_format_t f, const tsl_plan_t *p, const tsl_model_t *m, char **text,
               size_t *len, tsl_err_t *err)
{
    *text = NULL;
    *len = 0;
    if (f >= TSL_EXPORT_COUNT)
        return tsl_err_set(err, "format: %d is not an export format", (int)f);
    tsl_export_view_t *v = malloc(sizeof(*v));
    char *buf = NULL;
    size_t n = 0;
    FILE *out = NULL;
    int rc = -1;
    if (v == NULL || (out = open_memstream(&buf, &n)) == NULL) {
        tsl_err_setc(err, TSL_E_NOMEM, "export: out of memory");
        goto out;
    }
    if (tsl_export_view_init(v, formats[f].name, p, m, err) != 0 ||
        formats[f].fn(v, out, err) != 0)
        goto out;
    if (fclose(out) != 0) {
        out = NULL;
        tsl_err_setc(err, TSL_E_NOMEM, "export: out of memory");
        goto out;
    }
    out = NULL;
    *text = buf;
    *len = n;
    buf = NULL;
    rc = 0;
out:
    if (out)
        fclose(out);
    free(buf);
    free(v);
    return rc;
}
