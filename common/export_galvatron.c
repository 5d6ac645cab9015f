/*
 * export_galvatron.c — a plan as a Galvatron strategy JSON, the
 * galvatron_config_*.json its search writes and its runtime loads
 * (--galvatron_config_path).
 *
 * Galvatron's space is layer-level, like Tessel's: per Transformer layer a TP
 * degree (tp_sizes_enc), whether the TP ranks are consecutive GPUs
 * (tp_consecutive_flags), data parallelism replicated or ZeRO-3 (dp_types_enc
 * 0 = default_dp_type "ddp", 1 = zero3) and CKPT (checkpoint); the embedding and
 * head share one vocabulary TP degree (vtp) and embed_sdp; stages hold whole
 * layers (pp_division counts Transformer layers per stage) of equal device
 * counts; chunks is the number of micro-batches, pipedream_flush is 1F1B. It does
 * not mix replicated and sharded data parallelism inside one layer.
 */
#include <stdio.h>
#include <stdlib.h>

#include "export.h"

static int layer_fields(const tsl_export_view_t *v, uint32_t i, uint32_t *tp, uint32_t *consec,
                        uint32_t *sdp, tsl_err_t *err)
{
    char b[64];
    const tsl_strategy_t *s = &v->layer[i];
    *tp = tsl_strategy_degree(s, TSL_DIM_TP);
    *consec = *tp == 1 || tsl_strategy_stride(s, TSL_DIM_TP) == 1;
    *sdp = tsl_strategy_degree(s, TSL_DIM_SDP) > 1;
    if (*sdp && tsl_strategy_degree(s, TSL_DIM_DP) > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "galvatron: layer %u (%s) runs %s, replicated and sharded data "
                            "parallelism at once; Galvatron takes one data-parallel type per "
                            "layer", i, tsl_export_layer_kind(v, i), tsl_export_strategy_str(s, b));
    return 0;
}

static int check_stages(const tsl_export_view_t *v, tsl_err_t *err)
{
    const tsl_plan_t *p = v->plan;
    for (uint32_t s = 0; s < v->pp; s++) {
        if (p->stages[s].n_devices != p->stages[0].n_devices)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "galvatron: stage %u has %u devices but stage 0 has %u; "
                                "Galvatron gives every stage the same number", s,
                                p->stages[s].n_devices, p->stages[0].n_devices);
        if (v->stage_blocks[s] == 0)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "galvatron: stage %u holds no Transformer layer (pp_division "
                                "counts Transformer layers)", s);
    }
    uint32_t tp0, tph, c, sdp;
    layer_fields(v, 0, &tp0, &c, &sdp, NULL);
    layer_fields(v, v->n_blocks + 1, &tph, &c, &sdp, NULL);
    if (tp0 != tph)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "galvatron: the embedding runs tp%u but the head tp%u; Galvatron "
                            "gives both one vocabulary TP degree (vtp)", tp0, tph);
    return 0;
}

/* "1,1,2,2": one field per Transformer layer. */
static void put_list(json_t *o, const char *key, const uint32_t *vals, uint32_t n)
{
    char *text = malloc((size_t)n * 11 + 1), *q = text;
    if (text == NULL)
        return;
    *q = '\0';
    for (uint32_t i = 0; i < n; i++)
        q += sprintf(q, i ? ",%u" : "%u", vals[i]);
    json_object_set_new(o, key, json_string(text));
    free(text);
}

static json_t *strategy_doc(const tsl_export_view_t *v, uint32_t *f, tsl_err_t *err)
{
    uint32_t n = v->n_blocks, *tp = f, *consec = f + n, *dpt = f + 2 * n, *ck = f + 3 * n;
    uint32_t *sp = f + 4 * n, *div = f + 5 * n;
    for (uint32_t i = 0; i < n; i++) {
        if (layer_fields(v, i + 1, &tp[i], &consec[i], &dpt[i], err) != 0)
            return NULL;
        ck[i] = v->layer[i + 1].ckpt;
        sp[i] = 0;
    }
    uint32_t vtp, c, esdp;
    if (layer_fields(v, 0, &vtp, &c, &esdp, err) != 0 ||
        layer_fields(v, n + 1, &vtp, &c, &esdp, err) != 0 || check_stages(v, err) != 0)
        return NULL;
    layer_fields(v, 0, &vtp, &c, &esdp, NULL);
    for (uint32_t s = 0; s < v->pp; s++)
        div[s] = v->stage_blocks[s];
    json_t *o = json_object();
    json_object_set_new(o, "pp_deg", json_integer(v->pp));
    put_list(o, "tp_sizes_enc", tp, n);
    put_list(o, "tp_consecutive_flags", consec, n);
    put_list(o, "dp_types_enc", dpt, n);
    put_list(o, "use_sp", sp, n);
    put_list(o, "checkpoint", ck, n);
    json_object_set_new(o, "global_bsz", json_integer(v->plan->global_batch));
    json_object_set_new(o, "chunks", json_integer(v->plan->n_micro));
    put_list(o, "pp_division", div, v->pp);
    json_object_set_new(o, "pipeline_type", json_string("pipedream_flush"));
    json_object_set_new(o, "default_dp_type", json_string("ddp"));
    json_object_set_new(o, "vtp", json_integer(vtp));
    json_object_set_new(o, "vsp", json_integer(0));
    json_object_set_new(o, "embed_sdp", json_integer(esdp));
    return o;
}

int tsl_export_galvatron(const tsl_export_view_t *v, FILE *out, tsl_err_t *err)
{
    uint32_t *fields = calloc((size_t)v->n_blocks * 6 + TSL_PLAN_MAX_STAGES, sizeof(uint32_t));
    if (fields == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "galvatron: out of memory");
    json_t *o = strategy_doc(v, fields, err);
    free(fields);
    if (o == NULL)
        return -1;
    int rc = json_dumpf(o, out, JSON_INDENT(4)) == 0 && fputc('\n', out) != EOF ? 0 : -1;
    json_decref(o);
    return rc == 0 ? 0 : tsl_err_setc(err, TSL_E_NOMEM, "galvatron: out of memory");
}
