/*
 * eval_shape.c — a Megatron-LM line's model shape against the model (eval_shape.h).
 */
#include "eval_shape.h"

#include <stddef.h>
#include <stdio.h>
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
    [TSL_EVAL_SHAPE_MAMBA_STATE] = "mamba-state-dim",
    [TSL_EVAL_SHAPE_MAMBA_HEAD] = "mamba-head-dim",
    [TSL_EVAL_SHAPE_MAMBA_GROUPS] = "mamba-num-groups",
    [TSL_EVAL_SHAPE_MAMBA_HEADS] = "mamba-num-heads",
};

/* The switches (no value) and what each sets. */
static const struct {
    const char *name;
    size_t off;
    bool on;
} shape_switch[] = {
    {"group-query-attention", offsetof(tsl_eval_shape_t, gqa), true},
    {"multi-latent-attention", offsetof(tsl_eval_shape_t, mla), true},
    {"swiglu", offsetof(tsl_eval_shape_t, swiglu), true},
    {"quick-geglu", offsetof(tsl_eval_shape_t, quick_geglu), true},
    {"untie-embeddings-and-output-weights", offsetof(tsl_eval_shape_t, untie), true},
    {"add-qkv-bias", offsetof(tsl_eval_shape_t, qkv_bias), true},
    {"use-rotary-position-embeddings", offsetof(tsl_eval_shape_t, rotary), true},
    {"disable-bias-linear", offsetof(tsl_eval_shape_t, bias), false},
    {"add-bias-linear", offsetof(tsl_eval_shape_t, bias), true},
};

/* --position-embedding-type's choices (_add_network_size_args), in sh->pos order */
static const char *const pos_type[] = {"learned_absolute", "rope", "yarn", "mrope",
                                       "relative",         "none"};

static int read_switch(size_t i, const char *key, const char *val, tsl_eval_shape_t *sh,
                       tsl_err_t *err)
{
    if (val)
        return tsl_err_set(err, "megatron: --%s takes no value ('%s')", key, val);
    *(bool *)((char *)sh + shape_switch[i].off) = shape_switch[i].on;
    if (shape_switch[i].off == offsetof(tsl_eval_shape_t, bias))
        sh->bias_set = true;
    return 0;
}

/* --normalization and --position-embedding-type: one of Megatron-LM's choices. */
static int read_named(const char *key, const char *val, tsl_eval_shape_t *sh, tsl_err_t *err)
{
    if (strcmp(key, "normalization") == 0) {
        sh->norm = !val                            ? 0
                   : strcmp(val, "LayerNorm") == 0 ? 1
                   : strcmp(val, "RMSNorm") == 0   ? 2
                                                   : 0;
        if (!sh->norm)
            return tsl_err_set(err, "megatron: --normalization: '%s' is not LayerNorm or RMSNorm",
                               val ? val : "");
        return 0;
    }
    for (size_t i = 0; val && i < sizeof pos_type / sizeof *pos_type; i++)
        if (strcmp(val, pos_type[i]) == 0) {
            sh->pos = (uint8_t)(i + 1);
            return 0;
        }
    return tsl_err_set(err,
                       "megatron: --position-embedding-type: '%s' is not learned_absolute, rope, "
                       "yarn, mrope, relative or none",
                       val ? val : "");
}

int tsl_eval_shape_read(const char *key, const char *val, tsl_eval_shape_t *sh, tsl_err_t *err)
{
    for (size_t i = 0; i < sizeof shape_switch / sizeof *shape_switch; i++)
        if (strcmp(key, shape_switch[i].name) == 0)
            return read_switch(i, key, val, sh, err);
    if (strcmp(key, "normalization") == 0 || strcmp(key, "position-embedding-type") == 0)
        return read_named(key, val, sh, err);
    if (strcmp(key, "make-vocab-size-divisible-by") == 0)
        return tsl_parse_u32(key, val ? val : "", 1, 1u << 24, &sh->vocab_divisor, err);
    for (int i = 0; i < TSL_EVAL_SHAPE_COUNT; i++)
        if (strcmp(key, shape_flag[i]) == 0)
            return tsl_parse_u32(key, val ? val : "", 1, 1u << 30, &sh->v[i], err);
    return 1;
}

/* The layers the exporter reads the shape from: the first Transformer block, the
 * first with attention heads, the first dense FFN, the first with experts, the
 * first Mamba mixer, and the output head. */
typedef struct shape_layers {
    const tsl_layer_t *block, *attn, *dense, *moe, *mamba, *head;
} shape_layers_t;

static shape_layers_t layers_of(const tsl_model_t *m)
{
    shape_layers_t r = {0};
    for (uint32_t i = 0; i < m->n_layers; i++) {
        const tsl_layer_t *l = &m->layers[i];
        if (l->kind == TSL_LAYER_HEAD && !l->mtp_depth)
            r.head = l;
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
        if (!r.mamba && l->kind == TSL_LAYER_MAMBA)
            r.mamba = l;
    }
    return r;
}

bool tsl_eval_shape_states_model(const tsl_eval_shape_t *sh)
{
    return sh->v[TSL_EVAL_SHAPE_HIDDEN] && sh->v[TSL_EVAL_SHAPE_HEADS];
}

/* Megatron-LM's value of flag k where the line leaves it out (eval_shape.h has the
 * sources), from the effective values eff[] of the flags before k; false: none to
 * compare (no default, or the line does not state the model). --moe-ffn-hidden-
 * size takes --ffn-hidden-size's whenever that is known (validate_args). */
static bool default_value(tsl_eval_shape_key_t k, const tsl_eval_shape_t *sh, const uint32_t *eff,
                          uint32_t *out)
{
    uint64_t h = sh->v[TSL_EVAL_SHAPE_HIDDEN], a = sh->v[TSL_EVAL_SHAPE_HEADS], v = 0;
    if (k == TSL_EVAL_SHAPE_MOE_FFN && eff[TSL_EVAL_SHAPE_FFN]) {
        *out = eff[TSL_EVAL_SHAPE_FFN];
        return true;
    }
    if (!tsl_eval_shape_states_model(sh))
        return false;
    switch (k) {
    case TSL_EVAL_SHAPE_FFN: /* int((4 * h * 2 / 3) / 64) * 64 under --swiglu */
        v = sh->swiglu ? (uint64_t)((double)(8 * h) / 3 / 64) * 64 : 4 * h;
        break;
    case TSL_EVAL_SHAPE_KV_CHANNELS:
        if (h % a) /* Megatron-LM asserts it: heads_check refuses the line */
            return false;
        v = h / a;
        break;
    case TSL_EVAL_SHAPE_QUERY_GROUPS: v = sh->gqa ? 1 : a; break;
    case TSL_EVAL_SHAPE_TOPK: v = 2; break;
    case TSL_EVAL_SHAPE_KV_LORA: v = 32; break;
    case TSL_EVAL_SHAPE_QK_HEAD:
    case TSL_EVAL_SHAPE_V_HEAD: v = 128; break;
    case TSL_EVAL_SHAPE_QK_POS: v = 64; break;
    case TSL_EVAL_SHAPE_EXPERTS:
    case TSL_EVAL_SHAPE_SHARED_FFN:
    case TSL_EVAL_SHAPE_MOE_LATENT:
    case TSL_EVAL_SHAPE_Q_LORA: v = 0; break;
    case TSL_EVAL_SHAPE_MAMBA_STATE: v = 128; break;
    case TSL_EVAL_SHAPE_MAMBA_HEAD: v = 64; break;
    case TSL_EVAL_SHAPE_MAMBA_GROUPS: v = 8; break;
    case TSL_EVAL_SHAPE_MAMBA_HEADS: /* MambaMixer: d_inner = expand (2) x h, over heads */
        if (!eff[TSL_EVAL_SHAPE_MAMBA_HEAD])
            return false;
        v = 2 * h / eff[TSL_EVAL_SHAPE_MAMBA_HEAD];
        break;
    default: return false; /* HIDDEN, HEADS, MAX_POS, VOCAB: required or the tokenizer's */
    }
    if (k >= TSL_EVAL_SHAPE_MAMBA_STATE && !sh->hybrid) /* no Mamba layer reads them */
        return false;
    *out = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    return true;
}

/* What the default of flag k is made of, for the message ("" for a constant). */
static const char *default_why(tsl_eval_shape_key_t k, const tsl_eval_shape_t *sh)
{
    switch (k) {
    case TSL_EVAL_SHAPE_FFN:
        return sh->swiglu ? " = int(8 x --hidden-size / 3 / 64) x 64 under --swiglu"
                          : " = 4 x --hidden-size";
    case TSL_EVAL_SHAPE_KV_CHANNELS: return " = --hidden-size / --num-attention-heads";
    case TSL_EVAL_SHAPE_QUERY_GROUPS: return " with --group-query-attention";
    case TSL_EVAL_SHAPE_MOE_FFN: return " = --ffn-hidden-size";
    case TSL_EVAL_SHAPE_MAMBA_HEADS: return " = 2 x --hidden-size / --mamba-head-dim";
    default: return "";
    }
}

/* The value flag k takes in Megatron-LM (the line's, else its default: *dflt);
 * false: none to compare. --num-query-groups is read only with
 * --group-query-attention (core_transformer_config_from_args). */
static bool effective(tsl_eval_shape_key_t k, const tsl_eval_shape_t *sh, const uint32_t *eff,
                      uint32_t *out, bool *dflt)
{
    *dflt = false;
    if (sh->v[k] && (k != TSL_EVAL_SHAPE_QUERY_GROUPS || sh->gqa)) {
        *out = sh->v[k];
        return true;
    }
    *dflt = true;
    return default_value(k, sh, eff, out);
}

/* The model's value of flag k, or false where the flag does not apply to it (a
 * dense model's router, MLA ranks on a line without --multi-latent-attention,
 * the FFN width of a model whose every FFN has experts: --moe-ffn-hidden-size's
 * ...: Megatron-LM does not read them there either). */
static bool model_value(tsl_eval_shape_key_t k, const tsl_eval_shape_t *sh, const shape_layers_t *r,
                        uint32_t *out)
{
    const tsl_layer_t *a = r->attn, *e = r->moe, *s = r->mamba;
    bool mla = a && a->kv_lora_rank;
    switch (k) {
    case TSL_EVAL_SHAPE_HIDDEN: *out = r->block->hidden; return true;
    case TSL_EVAL_SHAPE_FFN: *out = r->dense ? r->dense->ffn_hidden : 0; return r->dense != NULL;
    case TSL_EVAL_SHAPE_HEADS: *out = a ? a->heads : 0; return a != NULL;
    case TSL_EVAL_SHAPE_QUERY_GROUPS:
        *out = a ? (a->kv_heads ? a->kv_heads : a->heads) : 0;
        return a && !mla;
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
    case TSL_EVAL_SHAPE_MAMBA_STATE: *out = s ? s->ssm_state : 0; return true;
    case TSL_EVAL_SHAPE_MAMBA_HEAD: *out = s ? s->ssm_head_dim : 0; return true;
    case TSL_EVAL_SHAPE_MAMBA_GROUPS: *out = s ? s->ssm_groups : 0; return true;
    case TSL_EVAL_SHAPE_MAMBA_HEADS: *out = s ? s->ssm_heads : 0; return true;
    default: return false; /* MAX_POS, VOCAB: positions_check, vocab_check */
    }
}

static const char *num(uint32_t v, char buf[16])
{
    if (!v)
        return "none";
    snprintf(buf, 16, "%u", v);
    return buf;
}

/* The numbers: each flag's effective value against the model's. */
static int numbers_check(const tsl_eval_shape_t *sh, const tsl_model_t *m, const shape_layers_t *r,
                         tsl_err_t *err)
{
    uint32_t eff[TSL_EVAL_SHAPE_COUNT] = {0};
    for (int i = 0; i < TSL_EVAL_SHAPE_COUNT; i++) {
        tsl_eval_shape_key_t k = (tsl_eval_shape_key_t)i;
        uint32_t want = 0, got = 0;
        bool dflt;
        if (!effective(k, sh, eff, &got, &dflt))
            continue;
        eff[i] = got;
        if (!model_value(k, sh, r, &want) || got == want)
            continue;
        char g[16], w[16];
        if (k == TSL_EVAL_SHAPE_QUERY_GROUPS && !sh->gqa)
            return tsl_err_set(err,
                               "megatron: --group-query-attention not given (Megatron's default, "
                               "not in the line): Megatron-LM builds %u K/V heads, one per query "
                               "head; the model %s has %u",
                               got, m->name, want);
        if (dflt)
            return tsl_err_set(err,
                               "megatron: --%s %s (Megatron's default, not in the line)%s: the "
                               "model %s has %s",
                               shape_flag[i], num(got, g), default_why(k, sh), m->name,
                               num(want, w));
        return tsl_err_set(err, "megatron: --%s %u: the model %s has %s", shape_flag[i], got,
                           m->name, num(want, w));
    }
    return 0;
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

/* One switch or named value of the model's form: what the line builds (given:
 * said, else Megatron's default) against what the model has. */
typedef struct shape_form {
    bool applies;     /* the model has the part the flag shapes */
    bool given;       /* the line says it */
    bool line, model; /* on / off in each */
    const char *line_is, *model_is;
} shape_form_t;

static int form_check(const shape_form_t *f, const tsl_eval_shape_t *sh, const tsl_model_t *m,
                      tsl_err_t *err)
{
    if (!f->applies || f->line == f->model || (!f->given && !tsl_eval_shape_states_model(sh)))
        return 0;
    if (f->given)
        return tsl_err_set(err, "megatron: %s: the model %s has %s", f->line_is, m->name,
                           f->model_is);
    return tsl_err_set(err,
                       "megatron: %s (Megatron's default, not in the line): the model %s has %s",
                       f->line_is, m->name, f->model_is);
}

/* The FFN's activation and the output layer's weights. */
static int ffn_head_check(const tsl_eval_shape_t *sh, const tsl_model_t *m, const shape_layers_t *r,
                          tsl_err_t *err)
{
    const tsl_layer_t *f = r->dense ? r->dense : r->moe, *h = r->head, *e = &m->layers[0];
    bool gated = sh->swiglu || sh->quick_geglu, untied = h && !h->tied_head && h->params;
    shape_form_t ffn = {
        f != NULL,
        gated,
        gated,
        f && f->gated_ffn,
        gated ? (sh->swiglu ? "--swiglu (a gated FFN)" : "--quick-geglu (a gated FFN)")
              : "--swiglu not given, a GeLU FFN without a gate",
        f && f->gated_ffn ? "a gated FFN (SwiGLU)" : "an FFN without a gate"};
    shape_form_t tie = {
        h && e->kind == TSL_LAYER_EMBEDDING && !e->patch_embed && e->vocab,
        sh->untie,
        sh->untie,
        untied,
        sh->untie ? "--untie-embeddings-and-output-weights"
                  : "--untie-embeddings-and-output-weights not given, the output layer tied to "
                    "the embedding",
        untied ? "an output layer of its own" : "its output layer tied to the embedding"};
    if (form_check(&ffn, sh, m, err) != 0)
        return -1;
    return form_check(&tie, sh, m, err);
}

/* The norms, the position embedding and the linear layers' biases. */
static int norm_pos_bias_check(const tsl_eval_shape_t *sh, const tsl_model_t *m,
                               const shape_layers_t *r, tsl_err_t *err)
{
    const tsl_layer_t *l = r->attn ? r->attn : r->block, *e = &m->layers[0];
    bool rms = sh->norm == 2, learned = sh->pos <= 1 && !sh->rotary;
    bool bias = sh->bias_set ? sh->bias : true, qkv = sh->qkv_bias || bias;
    bool m_qkv = m->qkv_bias || !l->no_bias;
    char pos_is[96], pos_has[64];
    snprintf(pos_is, sizeof pos_is, "--position-embedding-type %s",
             sh->rotary && sh->pos <= 1 ? "rope" : pos_type[sh->pos ? sh->pos - 1 : 0]);
    snprintf(pos_has, sizeof pos_has,
             e->positions ? "%u learned positions" : "no learned position table", e->positions);
    shape_form_t f[] = {
        {true, sh->norm != 0, rms, l->rms_norm,
         rms ? "--normalization RMSNorm" : "--normalization LayerNorm",
         l->rms_norm ? "RMSNorm" : "LayerNorm"},
        {e->kind == TSL_LAYER_EMBEDDING, sh->pos || sh->rotary, learned, e->positions > 0, pos_is,
         pos_has},
        {true, sh->bias_set, bias, !l->no_bias,
         bias ? (sh->bias_set ? "--add-bias-linear" : "--disable-bias-linear not given, biases")
              : "--disable-bias-linear",
         l->no_bias ? "no linear biases" : "linear biases"},
        {r->attn != NULL, sh->qkv_bias || sh->bias_set, qkv, m_qkv,
         qkv ? (sh->qkv_bias ? "--add-qkv-bias" : "Q/K/V biases (--add-bias-linear)")
             : "--add-qkv-bias not given, no Q/K/V biases",
         m_qkv ? "Q/K/V biases" : "no Q/K/V biases"},
    };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        if (form_check(&f[i], sh, m, err) != 0)
            return -1;
    return 0;
}

/* validate_args asserts hidden_size % num_attention_heads == 0 where --kv-channels
 * is left out (it divides them into the default). */
static int heads_check(const tsl_eval_shape_t *sh, tsl_err_t *err)
{
    uint32_t h = sh->v[TSL_EVAL_SHAPE_HIDDEN], a = sh->v[TSL_EVAL_SHAPE_HEADS];
    if (!tsl_eval_shape_states_model(sh) || sh->v[TSL_EVAL_SHAPE_KV_CHANNELS] || h % a == 0)
        return 0;
    return tsl_err_set(err,
                       "megatron: --kv-channels not given and --hidden-size %u is not a multiple "
                       "of --num-attention-heads %u (Megatron-LM asserts it for the default "
                       "h / heads)",
                       h, a);
}

/* Multi-latent attention and Mamba layers, which a line without their flags
 * does not build. */
static int parts_check(const tsl_eval_shape_t *sh, const tsl_model_t *m, const shape_layers_t *r,
                       tsl_err_t *err)
{
    bool mla = r->attn && r->attn->kv_lora_rank;
    if (sh->mla && !mla)
        return tsl_err_set(err, "megatron: --multi-latent-attention: the model %s has none",
                           m->name);
    if (!tsl_eval_shape_states_model(sh))
        return 0;
    if (mla && !sh->mla)
        return tsl_err_set(err,
                           "megatron: --multi-latent-attention not given (Megatron's default, "
                           "not in the line): the model %s has multi-latent attention",
                           m->name);
    if (r->mamba && !sh->hybrid)
        return tsl_err_set(err,
                           "megatron: --hybrid-layer-pattern not given (Megatron's default, not "
                           "in the line): a GPT model without Mamba layers; the model %s has %u",
                           m->name, tsl_model_mamba_layers(m));
    return 0;
}

int tsl_eval_shape_check(const tsl_eval_shape_t *sh, const tsl_model_t *m, uint32_t tp,
                         tsl_err_t *err)
{
    shape_layers_t r = layers_of(m);
    if (!r.block)
        return 0;
    if (heads_check(sh, err) != 0 || parts_check(sh, m, &r, err) != 0 ||
        numbers_check(sh, m, &r, err) != 0 || positions_check(sh, m, &r, err) != 0 ||
        vocab_check(sh, m, tp, err) != 0 || ffn_head_check(sh, m, &r, err) != 0)
        return -1;
    return norm_pos_bias_check(sh, m, &r, err);
}
