/*
 * export_galvatron.c — a plan as a Galvatron strategy JSON, the
 * galvatron_config_*.json its search writes and its runtime loads
 * (--galvatron_config_path).
 *
 * Galvatron's space is layer-level, like Tessel's: per Transformer layer a TP
 * degree (tp_sizes_enc), whether the TP ranks are consecutive GPUs
 * (tp_consecutive_flags), data parallelism replicated or ZeRO-3 (dp_types_enc
 * 0 = default_dp_type "ddp", 1 = zero3) and CKPT (checkpoint); the embedding and
 * head share one vocabulary TP degree (vtp) and ZeRO-3 flag (embed_sdp in
 * v2.4.0, vocab_sdp in 3.0: both written); stages hold whole
 * layers (pp_division counts Transformer layers per stage) of equal device
 * counts; chunks is the number of micro-batches, pipedream_flush is 1F1B. The
 * rules are planner/target_rules.c's (tsl_export checks them first).
 */
#include <stdio.h>
#include <stdlib.h>

#include "export.h"

static void layer_fields(const tsl_export_view_t *v, uint32_t i, uint32_t *tp, uint32_t *consec,
                         uint32_t *sdp)
{
    const tsl_strategy_t *s = &v->layer[i];
    *tp = tsl_strategy_degree(s, TSL_DIM_TP);
    *consec = *tp == 1 || tsl_strategy_stride(s, TSL_DIM_TP) == 1;
    *sdp = tsl_strategy_degree(s, TSL_DIM_SDP) > 1;
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

static json_t *strategy_doc(const tsl_export_view_t *v, uint32_t *f)
{
    uint32_t n = v->n_blocks, *tp = f, *consec = f + n, *dpt = f + 2 * n, *ck = f + 3 * n;
    uint32_t *sp = f + 4 * n, *div = f + 5 * n;
    for (uint32_t i = 0; i < n; i++) {
        layer_fields(v, i + 1, &tp[i], &consec[i], &dpt[i]);
        ck[i] = v->layer[i + 1].ckpt;
        sp[i] = 0;
    }
    uint32_t vtp, c, esdp;
    layer_fields(v, 0, &vtp, &c, &esdp);
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
    /* the embedding and head's ZeRO-3 flag: v2.4.0 reads embed_sdp, 3.0 (main
     * since 1a86294) vocab_sdp; each ignores the other's key */
    json_object_set_new(o, "embed_sdp", json_integer(esdp));
    json_object_set_new(o, "vocab_sdp", json_integer(esdp));
    return o;
}

int tsl_export_galvatron(const tsl_export_view_t *v, FILE *out, tsl_err_t *err)
{
    uint32_t *fields = calloc((size_t)v->n_blocks * 6 + TSL_PLAN_MAX_STAGES, sizeof(uint32_t));
    if (fields == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "galvatron: out of memory");
    json_t *o = strategy_doc(v, fields);
    free(fields);
    if (o == NULL)
        return -1;
    int rc = json_dumpf(o, out, JSON_INDENT(4)) == 0 && fputc('\n', out) != EOF ? 0 : -1;
    json_decref(o);
    return rc == 0 ? 0 : tsl_err_setc(err, TSL_E_NOMEM, "galvatron: out of memory");
}
