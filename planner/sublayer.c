/*
 * sublayer.c — splits Transformer layers into attention and FFN blocks
 * (AutoPipe III-B, sub-layer granularity). See sublayer.h for the exactness rule.
 */
#include "sublayer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool splittable(const tsl_layer_t *l)
{
    return (l->kind == TSL_LAYER_ENCODER || l->kind == TSL_LAYER_DECODER) && l->ffn_hidden > 0;
}

/* The FFN block of layer l: the layer's shape as an FFN layer, derived. The
 * extra_* figures (final norms and the like) stay with the attention block. */
static int ffn_block(const tsl_layer_t *l, uint32_t idx, tsl_layer_t *ffn, tsl_err_t *err)
{
    *ffn = *l;
    ffn->kind = TSL_LAYER_FFN;
    ffn->cross_seq_len = 0;
    ffn->extra_params = 0;
    ffn->extra_fwd_flops = 0;
    ffn->extra_act_bytes = 0;
    if (tsl_layer_derive(ffn, err))
        return tsl_err_prefix(err, "layer %u: FFN block", idx);
    if (ffn->params > l->params || ffn->fwd_flops > l->fwd_flops ||
        ffn->act_repl_bytes > l->act_repl_bytes || ffn->act_shard_bytes > l->act_shard_bytes ||
        ffn->tp_allreduces > l->tp_allreduces)
        return tsl_err_set(err,
                           "layer %u: the FFN block's figures exceed the whole %s layer's "
                           "(params %llu > %llu or FLOPs %.0f > %.0f); the layer was not "
                           "derived from its shape",
                           idx, tsl_layer_kind_name(l->kind), (unsigned long long)ffn->params,
                           (unsigned long long)l->params, ffn->fwd_flops, l->fwd_flops);
    return 0;
}

int tsl_sublayer_split(const tsl_model_t *src, tsl_sublayer_model_t *out, tsl_err_t *err)
{
    int rc = -1;
    if (out == NULL)
        return tsl_err_set(err, "sublayer: out is NULL");
    memset(out, 0, sizeof(*out));
    if (src == NULL || src->n_layers == 0 || src->layers == NULL)
        return tsl_err_set(err, "model: no layers to split");

    uint32_t n = 0;
    for (uint32_t i = 0; i < src->n_layers; i++)
        n += splittable(&src->layers[i]) ? 2u : 1u;
    if (n > TSL_MODEL_MAX_LAYERS)
        return tsl_err_set(err,
                           "model: %u layers split into %u blocks, more than the %u a "
                           "model may hold",
                           src->n_layers, n, TSL_MODEL_MAX_LAYERS);

    tsl_layer_t *layers = calloc(n, sizeof(*layers));
    tsl_sublayer_ref_t *ref = calloc(n, sizeof(*ref));
    if (layers == NULL || ref == NULL) {
        tsl_err_setc(err, TSL_E_NOMEM, "sublayer: out of memory for %u blocks", n);
        goto out;
    }

    uint32_t k = 0;
    for (uint32_t i = 0; i < src->n_layers; i++) {
        const tsl_layer_t *l = &src->layers[i];
        if (!splittable(l)) {
            layers[k] = *l;
            ref[k].layer = i;
            ref[k].part = TSL_SUBLAYER_WHOLE;
            k++;
            continue;
        }
        tsl_layer_t ffn;
        if (ffn_block(l, i, &ffn, err))
            goto out;
        tsl_layer_t attn = *l;
        attn.kind = TSL_LAYER_ATTENTION;
        attn.ffn_hidden = 0;
        attn.gated_ffn = false;
        attn.params = l->params - ffn.params;
        attn.fwd_flops = l->fwd_flops - ffn.fwd_flops;
        attn.act_repl_bytes = l->act_repl_bytes - ffn.act_repl_bytes;
        attn.act_shard_bytes = l->act_shard_bytes - ffn.act_shard_bytes;
        attn.tp_allreduces = l->tp_allreduces - ffn.tp_allreduces;
        attn.bnd_act_bytes = l->bnd_act_bytes;
        /* integer FLOP counts subtract exactly; a fractional extra_fwd_flops may
         * leave the sum an ulp off, which the nearest doubles repair */
        for (int step = 0; step < 8 && attn.fwd_flops + ffn.fwd_flops != l->fwd_flops; step++)
            attn.fwd_flops =
                nextafter(attn.fwd_flops,
                          attn.fwd_flops + ffn.fwd_flops < l->fwd_flops ? INFINITY : -INFINITY);
        if (attn.fwd_flops + ffn.fwd_flops != l->fwd_flops || attn.fwd_flops < 0) {
            tsl_err_set(err, "layer %u: forward FLOPs %.17g do not split exactly (%.17g + %.17g)",
                        i, l->fwd_flops, attn.fwd_flops, ffn.fwd_flops);
            goto out;
        }
        layers[k] = attn;
        ref[k].layer = i;
        ref[k].part = TSL_SUBLAYER_ATTN;
        k++;
        layers[k] = ffn;
        ref[k].layer = i;
        ref[k].part = TSL_SUBLAYER_FFN;
        k++;
    }

    snprintf(out->model.name, sizeof(out->model.name), "%s", src->name);
    out->model.n_layers = n;
    out->model.layers = layers;
    out->model.tokens_per_sample = src->tokens_per_sample;
    out->model.hybrid = src->hybrid; /* a hybrid's blocks are not split: layers as they were */
    out->ref = ref;
    out->n_src_layers = src->n_layers;
    layers = NULL;
    ref = NULL;
    rc = 0;
out:
    free(layers);
    free(ref);
    return rc;
}

void tsl_sublayer_free(tsl_sublayer_model_t *sm)
{
    if (sm == NULL)
        return;
    free(sm->model.layers);
    free(sm->ref);
    memset(sm, 0, sizeof(*sm));
}

const char *tsl_sublayer_part_name(tsl_sublayer_part_t part)
{
    switch (part) {
    case TSL_SUBLAYER_WHOLE: return "layer";
    case TSL_SUBLAYER_ATTN: return "attention";
    case TSL_SUBLAYER_FFN: return "ffn";
    }
    return "?";
}

uint32_t tsl_sublayer_boundary_halves(const tsl_sublayer_model_t *sm, uint32_t i)
{
    if (i >= sm->model.n_layers)
        return 2u * sm->n_src_layers;
    return 2u * sm->ref[i].layer + (sm->ref[i].part == TSL_SUBLAYER_FFN ? 1u : 0u);
}

int tsl_sublayer_boundary_str(const tsl_sublayer_model_t *sm, uint32_t i, char *buf, size_t n)
{
    if (sm == NULL || i > sm->model.n_layers)
        return -1;
    uint32_t h = tsl_sublayer_boundary_halves(sm, i);
    return snprintf(buf, n, h % 2 ? "%u.5" : "%u", h / 2);
}
