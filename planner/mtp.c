/*
 * mtp.c — multi-token prediction depths in a model (mtp.h).
 */
#include "mtp.h"

#include <stdlib.h>
#include <string.h>

uint32_t tsl_mtp_depths(const tsl_model_t *m)
{
    uint32_t d = 0;
    for (uint32_t i = 0; m && i < m->n_layers; i++)
        d = m->layers[i].mtp_depth > d ? m->layers[i].mtp_depth : d;
    return d;
}

bool tsl_mtp_repeated(const tsl_model_t *m)
{
    for (uint32_t i = 0; m && i < m->n_layers; i++)
        if (m->layers[i].mtp_depth > 1 && m->layers[i].kind == TSL_LAYER_MTP)
            return m->layers[i].shared_weights;
    return false;
}

uint32_t tsl_mtp_layers(const tsl_model_t *m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; m && i < m->n_layers; i++)
        n += m->layers[i].mtp_depth > 0;
    return n;
}

int tsl_mtp_add_depth(tsl_model_t *m, uint32_t depth, const tsl_layer_t *inner, uint32_t n,
                      const tsl_layer_t *head, bool shared, tsl_err_t *err)
{
    if (depth == 0 || depth > TSL_MTP_MAX_DEPTHS)
        return tsl_err_set(err, "mtp_layers: depth %u outside 1..%u", depth, TSL_MTP_MAX_DEPTHS);
    if (n == 0 || head == NULL || head->kind != TSL_LAYER_HEAD)
        return tsl_err_set(err, "mtp_layers: a depth needs an inner layer and the LM head");
    tsl_layer_t e = {0};
    e.kind = TSL_LAYER_MTP;
    e.seq_len = head->seq_len;
    e.hidden = head->hidden;
    /* the word-embedding rows whose copy a later stage keeps (cost.h): one copy per
     * stage, which every depth's lookup reads (Megatron-LM LanguageModule
     * shared_embedding_or_output_weight: the MTP stage's one embedding, the tied
     * output layer's weight too): a tied head's, else depth 1's entry's; 0 on the
     * entries that read it */
    e.vocab = depth == 1 && !head->tied_head ? head->vocab : 0;
    e.rms_norm = inner[0].rms_norm;
    e.no_bias = true; /* eh_proj: bias=False */
    e.no_dropout = inner[0].no_dropout;
    e.causal = inner[0].causal;
    e.mtp_depth = (uint8_t)depth;
    e.shared_weights = shared;
    if (tsl_model_add(m, &e, err) != 0)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        tsl_layer_t l = inner[i];
        l.mtp_depth = (uint8_t)depth;
        l.shared_weights = shared;
        if (tsl_model_add(m, &l, err) != 0)
            return -1;
    }
    tsl_layer_t hd = *head; /* the output head's weights, its logits and loss again */
    hd.mtp_depth = (uint8_t)depth;
    hd.shared_weights = true;
    return tsl_model_add(m, &hd, err);
}

/* The layers of depth d in src (entry, inner..., head copy): first index and count. */
static uint32_t depth_span(const tsl_model_t *src, uint32_t d, uint32_t *first)
{
    uint32_t n = 0;
    *first = 0;
    for (uint32_t i = 0; i < src->n_layers; i++)
        if (src->layers[i].mtp_depth == d && n++ == 0)
            *first = i;
    return n;
}

/* Depth d of dst from src's depth k (the same weights when d == k, else shared). */
static int copy_depth(tsl_model_t *dst, const tsl_model_t *src, uint32_t k, uint32_t d,
                      tsl_err_t *err)
{
    uint32_t first, n = depth_span(src, k, &first);
    const tsl_layer_t *head = &src->layers[first + n - 1];
    if (n < 3 || src->layers[first].kind != TSL_LAYER_MTP || head->kind != TSL_LAYER_HEAD)
        return tsl_err_set(err, "model %s: MTP depth %u is not entry, layers, head", src->name, k);
    bool shared = d != k || src->layers[first].shared_weights;
    return tsl_mtp_add_depth(dst, d, &src->layers[first + 1], n - 2, head, shared, err);
}

/* The model's last Transformer layer: what a new MTP depth copies. */
static int last_block(const tsl_model_t *m, tsl_layer_t *out, tsl_err_t *err)
{
    for (uint32_t i = m->n_layers; i-- > 0;)
        if (tsl_model_is_block(m, i)) {
            *out = m->layers[i];
            return 0;
        }
    return tsl_err_set(err, "mtp_layers: model %s has no Transformer layer to copy", m->name);
}

static int rebuild(const tsl_model_t *m, uint32_t depths, tsl_model_t *out, tsl_err_t *err)
{
    uint32_t have = tsl_mtp_depths(m), L = m->n_layers;
    const tsl_layer_t *head = &m->layers[L - 1];
    tsl_layer_t blk;
    if (have == 0 && depths > 0) {
        if (m->hybrid)
            return tsl_err_set(err,
                               "mtp_layers: %u: hybrid model %s has no MTP pattern to repeat "
                               "(its HF config's mtp_hybrid_override_pattern)",
                               depths, m->name);
        if (last_block(m, &blk, err) != 0)
            return -1;
    }
    tsl_model_t tmp = *m; /* the model-level fields */
    tmp.n_layers = 0;
    tmp.layers = NULL;
    tmp.tokens_per_sample = 0;
    *out = tmp;
    for (uint32_t i = 0; i + 1 < L; i++)
        if (m->layers[i].mtp_depth == 0 && tsl_model_add(out, &m->layers[i], err) != 0)
            return -1;
    for (uint32_t d = 1; d <= depths; d++) {
        int rc = have ? copy_depth(out, m, d <= have ? d : have, d, err)
                      : tsl_mtp_add_depth(out, d, &blk, 1, head, false, err);
        if (rc != 0)
            return -1;
    }
    if (tsl_model_add(out, head, err) != 0)
        return -1;
    out->tokens_per_sample = m->tokens_per_sample;
    return 0;
}

int tsl_model_set_mtp(tsl_model_t *m, uint32_t depths, tsl_err_t *err)
{
    if (m == NULL || m->n_layers == 0 || m->layers == NULL)
        return tsl_err_set(err, "mtp_layers: no model");
    if (depths > TSL_MTP_MAX_DEPTHS)
        return tsl_err_set(err, "mtp_layers: %u exceeds %u depths", depths, TSL_MTP_MAX_DEPTHS);
    if (depths == tsl_mtp_depths(m))
        return 0;
    if (m->layers[m->n_layers - 1].kind != TSL_LAYER_HEAD ||
        m->layers[m->n_layers - 1].head_tokens != 0)
        return tsl_err_set(err, "mtp_layers: model %s does not end with an LM head", m->name);
    tsl_model_t out = {0};
    if (rebuild(m, depths, &out, err) != 0) {
        tsl_model_free(&out);
        return -1;
    }
    free(m->layers);
    *m = out;
    return 0;
}
