/*
 * eval_shape.c — a Megatron-LM line's model shape against the model (eval_shape.h).
 */
#include "eval_shape.h"

#include <string.h>

#include "args.h"

static const char *const shape_flag[TSL_EVAL_SHAPE_COUNT] = {
    [TSL_EVAL_SHAPE_HIDDEN] = "hidden-size",
    [TSL_EVAL_SHAPE_FFN] = "ffn-hidden-size",
    [TSL_EVAL_SHAPE_HEADS] = "num-attention-heads",
    [TSL_EVAL_SHAPE_QUERY_GROUPS] = "num-query-groups",
    [TSL_EVAL_SHAPE_KV_CHANNELS] = "kv-channels",
    [TSL_EVAL_SHAPE_MAX_POS] = "max-position-embeddings",
    [TSL_EVAL_SHAPE_VOCAB] = "vocab-size",
    [TSL_EVAL_SHAPE_EXPERTS] = "num-experts",
    [TSL_EVAL_SHAPE_TOPK] = "moe-router-topk",
    [TSL_EVAL_SHAPE_MOE_FFN] = "moe-ffn-hidden-size",
    [TSL_EVAL_SHAPE_SHARED_FFN] = "moe-shared-expert-intermediate-size",
    [TSL_EVAL_SHAPE_MOE_LATENT] = "moe-latent-size",
    [TSL_EVAL_SHAPE_Q_LORA] = "q-lora-rank",
    [TSL_EVAL_SHAPE_KV_LORA] = "kv-lora-rank",
    [TSL_EVAL_SHAPE_QK_HEAD] = "qk-head-dim",
    [TSL_EVAL_SHAPE_QK_POS] = "qk-pos-emb-head-dim",
    [TSL_EVAL_SHAPE_V_HEAD] = "v-head-dim",
};

int tsl_eval_shape_read(const char *key, const char *val, tsl_eval_shape_t *sh, tsl_err_t *err)
{
    bool *flag = strcmp(key, "group-query-attention") == 0    ? &sh->gqa
                 : strcmp(key, "multi-latent-attention") == 0 ? &sh->mla
                                                              : NULL;
    if (flag) {
        if (val)
            return tsl_err_set(err, "megatron: --%s takes no value ('%s')", key, val);
        *flag = true;
        return 0;
    }
    if (strcmp(key, "make-vocab-size-divisible-by") == 0)
        return tsl_parse_u32(key, val ? val : "", 1, 1u << 24, &sh->vocab_divisor, err);
    for (int i = 0; i < TSL_EVAL_SHAPE_COUNT; i++)
        if (strcmp(key, shape_flag[i]) == 0)
            return tsl_parse_u32(key, val ? val : "", 1, 1u << 30, &sh->v[i], err);
    return 1;
}

/* The layers the exporter reads the shape from: the first Transformer block, the
 * first with attention heads, the first dense FFN and the first with experts. */
typedef struct shape_layers {
    const tsl_layer_t *block, *attn, *dense, *moe;
} shape_layers_t;

static shape_layers_t layers_of(const tsl_model_t *m)
{
    shape_layers_t r = {0};
    for (uint32_t i = 0; i < m->n_layers; i++) {
        const tsl_layer_t *l = &m->layers[i];
        if (!tsl_model_is_block(m, i) || l->mtp_depth)
            continue;
        if (!r.block)
            r.block = l;
        if (!r.attn && l->heads && l->kind != TSL_LAYER_MAMBA)
            r.attn = l;
        if (!r.dense && l->ffn_hidden && !l->experts)
            r.dense = l;
        if (!r.moe && l->experts)
            r.moe = l;
    }
    return r;
}

/* The model's value of flag k, or false where the flag does not apply to it (a
 * dense model's router, MLA ranks on a line without --multi-latent-attention,
 * ...: Megatron-LM does not read them there either). */
static bool model_value(tsl_eval_shape_key_t k, const tsl_eval_shape_t *sh, const shape_layers_t *r,
                        uint32_t *out)
{
    const tsl_layer_t *a = r->attn, *e = r->moe;
    bool mla = a && a->kv_lora_rank;
    switch (k) {
    case TSL_EVAL_SHAPE_HIDDEN: *out = r->block->hidden; return true;
    case TSL_EVAL_SHAPE_FFN: /* an all-MoE model: the experts' width, unless given apart
                                (Megatron-LM's moe_ffn_hidden_size default) */
        if (r->dense || (e && !sh->v[TSL_EVAL_SHAPE_MOE_FFN]))
            *out = (r->dense ? r->dense : e)->ffn_hidden;
        return r->dense || (e && !sh->v[TSL_EVAL_SHAPE_MOE_FFN]);
    case TSL_EVAL_SHAPE_HEADS: *out = a ? a->heads : 0; return a != NULL;
    case TSL_EVAL_SHAPE_QUERY_GROUPS: /* read only with --group-query-attention */
        *out = a ? (a->kv_heads ? a->kv_heads : a->heads) : 0;
        return a && sh->gqa && !mla;
    case TSL_EVAL_SHAPE_KV_CHANNELS:
        *out = a ? (a->attn_dim ? a->attn_dim : a->hidden) / a->heads : 0;
        return a && !mla;
    case TSL_EVAL_SHAPE_EXPERTS: *out = e ? e->experts : 0; return true;
    case TSL_EVAL_SHAPE_TOPK: *out = e ? e->experts_per_tok : 0; return e != NULL;
    case TSL_EVAL_SHAPE_MOE_FFN: *out = e ? e->ffn_hidden : 0; return e != NULL;
    case TSL_EVAL_SHAPE_SHARED_FFN:
        *out = e ? e->shared_experts * (e->shared_ffn_hidden ? e->shared_ffn_hidden : e->ffn_hidden)
                 : 0;
        return e != NULL;
    case TSL_EVAL_SHAPE_MOE_LATENT: *out = e ? e->moe_latent : 0; return e != NULL;
    case TSL_EVAL_SHAPE_Q_LORA: *out = mla ? a->q_lora_rank : 0; return sh->mla;
    case TSL_EVAL_SHAPE_KV_LORA: *out = mla ? a->kv_lora_rank : 0; return sh->mla;
    case TSL_EVAL_SHAPE_QK_HEAD: *out = mla ? a->qk_nope_dim : 0; return sh->mla;
    case TSL_EVAL_SHAPE_QK_POS: *out = mla ? a->qk_rope_dim : 0; return sh->mla;
    case TSL_EVAL_SHAPE_V_HEAD: *out = mla ? a->v_head_dim : 0; return sh->mla;
    default: return false; /* MAX_POS, VOCAB: positions_check, vocab_check */
    }
}

/* validate_args asserts max_position_embeddings >= seq_length; a learned position
 * table (the embedding's positions) has exactly that many rows. */
static int positions_check(const tsl_eval_shape_t *sh, const tsl_model_t *m,
                           const shape_layers_t *r, tsl_err_t *err)
{
    uint32_t v = sh->v[TSL_EVAL_SHAPE_MAX_POS], pos = m->layers[0].positions;
    if (!v)
        return 0;
    if (v < r->block->seq_len)
        return tsl_err_set(err,
                           "megatron: --max-position-embeddings %u: below the sequence length "
                           "%u (Megatron-LM asserts max_position_embeddings >= seq_length)",
                           v, r->block->seq_len);
    if (pos && v != pos)
        return tsl_err_set(err,
                           "megatron: --max-position-embeddings %u: the model %s has %u learned "
                           "positions",
                           v, m->name, pos);
    return 0;
}

static uint64_t round_up(uint64_t x, uint64_t d)
{
    return (x + d - 1) / d * d;
}

/* --vocab-size is the tokenizer's; Megatron-LM pads it to a multiple of
 * make-vocab-size-divisible-by x TP (_vocab_size_with_padding): the same padded
 * table as the model's vocabulary, or another model's. */
static int vocab_check(const tsl_eval_shape_t *sh, const tsl_model_t *m, uint32_t tp,
                       tsl_err_t *err)
{
    uint32_t v = sh->v[TSL_EVAL_SHAPE_VOCAB], mv = m->layers[0].vocab;
    uint64_t d = (uint64_t)(sh->vocab_divisor ? sh->vocab_divisor : 128) * (tp ? tp : 1);
    if (!v || !mv || m->layers[0].patch_embed || round_up(v, d) == round_up(mv, d))
        return 0;
    return tsl_err_set(err,
                       "megatron: --vocab-size %u: the model %s has %u tokens (%llu and %llu "
                       "padded to a multiple of %llu)",
                       v, m->name, mv, (unsigned long long)round_up(v, d),
                       (unsigned long long)round_up(mv, d), (unsigned long long)d);
}

/* A line without --group-query-attention builds one K/V head per query head
 * (Megatron-LM core_transformer_config_from_args: num_query_groups None). */
static int gqa_check(const tsl_eval_shape_t *sh, const tsl_model_t *m, const shape_layers_t *r,
                     tsl_err_t *err)
{
    const tsl_layer_t *a = r->attn;
    if (sh->gqa || !sh->v[TSL_EVAL_SHAPE_HEADS] || !a || a->kv_lora_rank || !a->kv_heads ||
        a->kv_heads == a->heads)
        return 0;
    return tsl_err_set(err,
                       "megatron: --group-query-attention not given (Megatron-LM builds %u K/V "
                       "heads, one per query head): the model %s has %u",
                       sh->v[TSL_EVAL_SHAPE_HEADS], m->name, a->kv_heads);
}

int tsl_eval_shape_check(const tsl_eval_shape_t *sh, const tsl_model_t *m, uint32_t tp,
                         tsl_err_t *err)
{
    shape_layers_t r = layers_of(m);
    if (!r.block)
        return 0;
    for (int i = 0; i < TSL_EVAL_SHAPE_COUNT; i++) {
        uint32_t want = 0;
        if (!sh->v[i] || !model_value((tsl_eval_shape_key_t)i, sh, &r, &want) || sh->v[i] == want)
            continue;
        if (want == 0)
            return tsl_err_set(err, "megatron: --%s %u: the model %s has none", shape_flag[i],
                               sh->v[i], m->name);
        return tsl_err_set(err, "megatron: --%s %u: the model %s has %u", shape_flag[i], sh->v[i],
                           m->name, want);
    }
    if (sh->mla && !(r.attn && r.attn->kv_lora_rank))
        return tsl_err_set(err, "megatron: --multi-latent-attention: the model %s has none",
                           m->name);
    if (gqa_check(sh, m, &r, err) != 0 || positions_check(sh, m, &r, err) != 0)
        return -1;
    return vocab_check(sh, m, tp, err);
}
