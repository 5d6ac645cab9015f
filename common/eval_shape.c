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
    [TSL_EVAL_SHAPE_ROTARY_BASE] = "rotary-base",
    [TSL_EVAL_SHAPE_ROUTER_GROUPS] = "moe-router-num-groups",
    [TSL_EVAL_SHAPE_ROUTER_GROUP_TOPK] = "moe-router-group-topk",
    [TSL_EVAL_SHAPE_MAMBA_STATE] = "mamba-state-dim",
    [TSL_EVAL_SHAPE_MAMBA_HEAD] = "mamba-head-dim",
    [TSL_EVAL_SHAPE_MAMBA_GROUPS] = "mamba-num-groups",
    [TSL_EVAL_SHAPE_MAMBA_HEADS] = "mamba-num-heads",
    [TSL_EVAL_SHAPE_YARN_ORIG] = "yarn-original-max-position-embeddings",
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
    {"qk-layernorm", offsetof(tsl_eval_shape_t, qk_ln), true},
    {"qk-l2-norm", offsetof(tsl_eval_shape_t, qk_l2), true},
    {"squared-relu", offsetof(tsl_eval_shape_t, relu2), true},
    {"use-rope-scaling", offsetof(tsl_eval_shape_t, rope_scaling), true},
    {"moe-router-pre-softmax", offsetof(tsl_eval_shape_t, pre_softmax), true},
    {"moe-router-enable-expert-bias", offsetof(tsl_eval_shape_t, expert_bias), true},
    {"moe-shared-expert-gate", offsetof(tsl_eval_shape_t, shared_gate), true},
    /* Megatron-DeepSpeed's (BLOOM's): a LayerNorm on the embedding (arguments.py at
     * bigscience-workshop/Megatron-DeepSpeed 8387ae1) */
    {"embed-layernorm", offsetof(tsl_eval_shape_t, embed_ln), true},
};

/* The real-valued flags (eval_shape.h tsl_eval_shape_real_t), their defaults and
 * bounds (a dropout is a probability). */
static const struct {
    const char *name;
    double dflt, max;
} shape_real[TSL_EVAL_SHAPE_REAL_COUNT] = {
    [TSL_EVAL_SHAPE_NORM_EPS] = {"norm-epsilon", 1e-5, 1.0},
    [TSL_EVAL_SHAPE_ATTN_DROPOUT] = {"attention-dropout", 0.1, 1.0},
    [TSL_EVAL_SHAPE_HIDDEN_DROPOUT] = {"hidden-dropout", 0.1, 1.0},
    [TSL_EVAL_SHAPE_ROPE_FACTOR] = {"rope-scaling-factor", 8.0, 1e6},
    [TSL_EVAL_SHAPE_TOPK_SCALE] = {"moe-router-topk-scaling-factor", 1.0, 1e6},
    [TSL_EVAL_SHAPE_ROTARY_SCALING] = {"rotary-scaling-factor", 1.0, 1e6},
    [TSL_EVAL_SHAPE_MSCALE] = {"mscale", 1.0, 1e6},
    [TSL_EVAL_SHAPE_MSCALE_ALL_DIM] = {"mscale-all-dim", 0.0, 1e6},
    [TSL_EVAL_SHAPE_YARN_BETA_FAST] = {"yarn-beta-fast", 32.0, 1e6},
    [TSL_EVAL_SHAPE_YARN_BETA_SLOW] = {"yarn-beta-slow", 1.0, 1e6},
    [TSL_EVAL_SHAPE_GLU_OFFSET] = {"glu-linear-offset", 0.0, 1e6},
    [TSL_EVAL_SHAPE_GLU_CLAMP] = {"activation-func-clamp-value", 0.0, 1e6},
};

/* The choices of --softmax-type, --moe-router-score-function and --rope-type
 * (TransformerConfig Literal types), in sh->softmax / sh->score / sh->rope_type order */
static const char *const softmax_type[] = {"vanilla", "off-by-one", "learnable"};
static const char *const score_fn[] = {"softmax", "sigmoid", "sqrtsoftplus"};
static const char *const rope_type[] = {"rope", "yarn"};

/* --position-embedding-type's choices (_add_network_size_args), in sh->pos order; then
 * Megatron-DeepSpeed's alibi (PositionEmbeddingType in megatron/enums.py at 8387ae1,
 * BLOOM's tr11 line), whose absolute and rotary are the first two under other names */
static const char *const pos_type[] = {"learned_absolute", "rope", "yarn", "mrope",
                                       "relative",         "none", "alibi"};
#define POS_ALIBI 7u /* 1 + alibi's index */
static const struct {
    const char *name;
    uint8_t pos;
} pos_alias[] = {{"absolute", 1}, {"rotary", 2}};

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
    for (size_t i = 0; val && i < sizeof pos_alias / sizeof *pos_alias; i++)
        if (strcmp(val, pos_alias[i].name) == 0) {
            sh->pos = pos_alias[i].pos;
            return 0;
        }
    return tsl_err_set(err,
                       "megatron: --position-embedding-type: '%s' is not learned_absolute, rope, "
                       "yarn, mrope, relative, none, or Megatron-DeepSpeed's absolute, rotary, "
                       "alibi",
                       val ? val : "");
}

/* A Megatron flag's word among n (args.h tsl_parse_choice, the flag named): 1 + its
 * index into *out (0 stays "not given"). --softmax-type, --moe-router-score-function,
 * --rope-type. */
static int read_choice(const char *key, const char *val, const char *const *choice, size_t n,
                       uint8_t *out, tsl_err_t *err)
{
    char field[80];
    size_t i;
    snprintf(field, sizeof field, "megatron: --%s", key);
    if (tsl_parse_choice(field, val, choice, n, &i, err) != 0)
        return -1;
    *out = (uint8_t)(i + 1);
    return 0;
}

/* --window-size as Megatron-LM's tuple_type reads it: "L,R" or "(L,R)", two ints. */
static int read_window(const char *val, tsl_eval_shape_t *sh, tsl_err_t *err)
{
    long l, r;
    char tail;
    const char *v = val ? val : "";
    if (sscanf(v, "(%ld,%ld%c", &l, &r, &tail) != 3 || tail != ')') {
        if (sscanf(v, "%ld,%ld%c", &l, &r, &tail) != 2)
            return tsl_err_set(err,
                               "megatron: --window-size: '%s' is not two integers LEFT,RIGHT "
                               "(a causal window of w keys is w-1,0)",
                               v);
    }
    if (l < 0 || r < 0 || l > (1l << 30) || r > (1l << 30))
        return tsl_err_set(err,
                           "megatron: --window-size %s: Tessel reads a window of LEFT + 1 keys "
                           "(LEFT, RIGHT >= 0; -1, Megatron's unbounded side, is full attention)",
                           v);
    sh->window_set = true;
    sh->window_left = (int32_t)l;
    sh->window_right = (int32_t)r;
    return 0;
}

int tsl_eval_shape_read(const char *key, const char *val, tsl_eval_shape_t *sh, tsl_err_t *err)
{
    if (strcmp(key, "window-size") == 0)
        return read_window(val, sh, err);
    if (strcmp(key, "yarn-correction-range-round-to-int") == 0 ||
        strcmp(key, "no-yarn-correction-range-round-to-int") == 0) {
        if (val)
            return tsl_err_set(err, "megatron: --%s takes no value ('%s')", key, val);
        sh->yarn_round_set = true;
        sh->yarn_round = key[0] != 'n';
        return 0;
    }
    for (size_t i = 0; i < sizeof shape_switch / sizeof *shape_switch; i++)
        if (strcmp(key, shape_switch[i].name) == 0)
            return read_switch(i, key, val, sh, err);
    if (strcmp(key, "normalization") == 0 || strcmp(key, "position-embedding-type") == 0)
        return read_named(key, val, sh, err);
    if (strcmp(key, "softmax-type") == 0)
        return read_choice(key, val, softmax_type, 3, &sh->softmax, err);
    if (strcmp(key, "moe-router-score-function") == 0)
        return read_choice(key, val, score_fn, 3, &sh->score, err);
    if (strcmp(key, "rope-type") == 0)
        return read_choice(key, val, rope_type, 2, &sh->rope_type, err);
    for (int i = 0; i < TSL_EVAL_SHAPE_REAL_COUNT; i++)
        if (strcmp(key, shape_real[i].name) == 0) {
            sh->r_set[i] = true;
            return tsl_parse_double(key, val ? val : "", 0.0, shape_real[i].max, &sh->r[i], err);
        }
    if (strcmp(key, "make-vocab-size-divisible-by") == 0)
        return tsl_parse_u32(key, val ? val : "", 1, 1u << 24, &sh->vocab_divisor, err);
    if (strcmp(key, "padded-vocab-size") == 0) /* checked in padded_vocab_check */
        return tsl_parse_u32(key, val ? val : "", 1, 1u << 30, &sh->padded_vocab, err);
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
    const tsl_model_t *m;
} shape_layers_t;

static shape_layers_t layers_of(const tsl_model_t *m)
{
    shape_layers_t r = {.m = m};
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
    case TSL_EVAL_SHAPE_ROTARY_BASE: v = 10000; break;
    case TSL_EVAL_SHAPE_ROUTER_GROUPS:
    case TSL_EVAL_SHAPE_ROUTER_GROUP_TOPK:
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
    case TSL_EVAL_SHAPE_ROTARY_BASE: /* where the model's source states it, for RoPE */
        *out = r->m->rope.base > 2e9 ? UINT32_MAX : (uint32_t)r->m->rope.base;
        return r->m->rope.base > 0.0 && r->m->layers[0].positions == 0;
    case TSL_EVAL_SHAPE_ROUTER_GROUPS:
        *out = e && e->router_groups > 1 ? e->router_groups : 0;
        return e != NULL;
    case TSL_EVAL_SHAPE_ROUTER_GROUP_TOPK:
        *out = e && e->router_groups > 1 ? e->router_topk_groups : 0;
        return e != NULL;
    case TSL_EVAL_SHAPE_MAMBA_STATE: *out = s ? s->ssm_state : 0; return true;
    case TSL_EVAL_SHAPE_MAMBA_HEAD: *out = s ? s->ssm_head_dim : 0; return true;
    case TSL_EVAL_SHAPE_MAMBA_GROUPS: *out = s ? s->ssm_groups : 0; return true;
    case TSL_EVAL_SHAPE_MAMBA_HEADS: *out = s ? s->ssm_heads : 0; return true;
    default: return false; /* MAX_POS, VOCAB: positions_check, vocab_check */
    }
}

static int real_check(const tsl_eval_shape_t *sh, tsl_eval_shape_real_t k, double want,
                      const tsl_model_t *m, const char *has, tsl_err_t *err);

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

/* --padded-vocab-size is the embedding's and the LM head's rows as Megatron-LM
 * builds them (argument_utils.py: the config's vocab_size, no padding added). Tessel
 * prices the model's vocabulary padded to a multiple of 128 x TP (cost.c
 * padded_vocab): another table would move the embedding's memory and the head's
 * GEMM without the plan saying so, so it is refused (exit 4) rather than priced. */
static int padded_vocab_check(const tsl_eval_shape_t *sh, const tsl_model_t *m, uint32_t tp,
                              tsl_err_t *err)
{
    uint32_t mv = m->layers[0].vocab;
    uint64_t priced = round_up(mv, 128ull * (tp ? tp : 1));
    if (!sh->padded_vocab || !mv || m->layers[0].patch_embed || sh->padded_vocab == priced)
        return 0;
    return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                        "megatron: --padded-vocab-size %u: Tessel prices the model %s's %u tokens "
                        "padded to %llu (a multiple of 128 x TP %u); drop the flag or give %llu",
                        sh->padded_vocab, m->name, mv, (unsigned long long)priced, tp ? tp : 1,
                        (unsigned long long)priced);
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
    bool gpt_oss = m->glu_limit > 0.0; /* model.h glu_limit: quick-GeGLU, +1, clamped */
    shape_form_t act = {f && f->gated_ffn,
                        gated,
                        sh->quick_geglu,
                        gpt_oss,
                        sh->quick_geglu ? "--quick-geglu" : "--swiglu",
                        gpt_oss ? "gpt-oss's clamped GLU, x*sigmoid(1.702x)*(y+1) "
                                  "(--quick-geglu)"
                                : "SwiGLU"};
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
    if (form_check(&ffn, sh, m, err) != 0 || form_check(&act, sh, m, err) != 0)
        return -1;
    if (f && f->gated_ffn &&
        (real_check(sh, TSL_EVAL_SHAPE_GLU_OFFSET, gpt_oss ? 1.0 : 0.0, m, "a GLU linear offset",
                    err) != 0 ||
         real_check(sh, TSL_EVAL_SHAPE_GLU_CLAMP, m->glu_limit, m, "a GLU clamp (0: none) of",
                    err) != 0))
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
    bool alibi = sh->pos == POS_ALIBI;
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
        /* ALiBi in every block (BLOOM), and its embedding's LayerNorm: Megatron-DeepSpeed's */
        {true, sh->pos || sh->rotary, alibi, l->alibi, pos_is,
         l->alibi ? "ALiBi in its attention" : "no ALiBi"},
        {e->kind == TSL_LAYER_EMBEDDING, sh->embed_ln, sh->embed_ln, e->embed_norm,
         sh->embed_ln ? "--embed-layernorm" : "--embed-layernorm not given",
         e->embed_norm ? "a LayerNorm on its embedding" : "no embedding LayerNorm"},
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

static bool same_real(double a, double b)
{
    double d = a - b;
    return (d < 0 ? -d : d) <= 1e-9 * (b < 0 ? -b : b);
}

/* A real-valued flag's value in Megatron-LM (the line's, else its default) against
 * the model's `want`; a default is checked on a line that states the model. */
static int real_check(const tsl_eval_shape_t *sh, tsl_eval_shape_real_t k, double want,
                      const tsl_model_t *m, const char *has, tsl_err_t *err)
{
    double got = sh->r_set[k] ? sh->r[k] : shape_real[k].dflt;
    if (same_real(got, want) || (!sh->r_set[k] && !tsl_eval_shape_states_model(sh)))
        return 0;
    return tsl_err_set(err, "megatron: --%s %g%s: the model %s has %s %g", shape_real[k].name, got,
                       sh->r_set[k] ? "" : " (Megatron's default, not in the line)", m->name, has,
                       want);
}

static int forms_check(const shape_form_t *f, size_t n, const tsl_eval_shape_t *sh,
                       const tsl_model_t *m, tsl_err_t *err)
{
    for (size_t i = 0; i < n; i++)
        if (form_check(&f[i], sh, m, err) != 0)
            return -1;
    return 0;
}

/* The model's first windowed block, or NULL. */
static const tsl_layer_t *first_window(const tsl_model_t *m)
{
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (tsl_model_is_block(m, i) && m->layers[i].attn_window)
            return &m->layers[i];
    return NULL;
}

/* A chunked window (Llama 4), which Megatron-LM's --window-size (it slides) does
 * not build: refused where the line gives a window or states the model. */
static int chunked_check(const tsl_eval_shape_t *sh, const tsl_model_t *m, const shape_layers_t *r,
                         tsl_err_t *err)
{
    const tsl_layer_t *w = first_window(m);
    (void)r;
    if (!w || !w->attn_chunked || (!sh->window_set && !tsl_eval_shape_states_model(sh)))
        return 0;
    return tsl_err_set(err,
                       "megatron: %s: the model %s attends within chunks of %u tokens (Llama 4's "
                       "chunked attention), which Megatron-LM's sliding --window-size does not "
                       "build",
                       sh->window_set ? "--window-size" : "--window-size not given", m->name,
                       w->attn_window);
}

/* --window-attn-skip-freq as the line gives it, for messages. */
static const char *skip_freq_is(const tsl_eval_shape_t *sh, char buf[64])
{
    if (sh->window_len)
        snprintf(buf, 64, " --window-attn-skip-freq (a list)");
    else if (sh->window_every)
        snprintf(buf, 64, " --window-attn-skip-freq %u", sh->window_every);
    else
        snprintf(buf, 64, " (--window-attn-skip-freq not given: every layer)");
    return buf;
}

/* Whether Megatron-LM windows the block of 1-based number n
 * (transformer/utils.py is_layer_window_attention at d98e8a6). */
static bool line_windowed(const tsl_eval_shape_t *sh, uint32_t n)
{
    if (!sh->window_set)
        return false;
    if (sh->window_len)
        return n <= sh->window_len && sh->window_pattern[n - 1];
    return sh->window_every ? n % sh->window_every != 0 : true;
}

/* The sliding window, block by block: where Megatron-LM windows (the line's, or
 * none: its default) against the model's windowed blocks, and the window's keys
 * (--window-size LEFT,0 is LEFT + 1 keys: the query and LEFT before it). */
static int window_check(const tsl_eval_shape_t *sh, const tsl_model_t *m, tsl_err_t *err)
{
    const tsl_layer_t *w = first_window(m);
    if ((w && w->attn_chunked) || (!sh->window_set && !tsl_eval_shape_states_model(sh)))
        return 0;
    uint32_t nb = 0, windowed = 0;
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (tsl_model_is_block(m, i)) {
            nb++;
            windowed += m->layers[i].attn_window != 0;
        }
    char sk[64];
    if (sh->window_set && sh->window_right != 0)
        return tsl_err_set(err,
                           "megatron: --window-size %d,%d: a window %d keys ahead; the model %s's "
                           "attention is causal",
                           sh->window_left, sh->window_right, sh->window_right, m->name);
    if (sh->window_set && sh->window_len && sh->window_len != nb)
        return tsl_err_set(err,
                           "megatron: --window-attn-skip-freq: a list of %u layers; the model %s "
                           "has %u",
                           sh->window_len, m->name, nb);
    if (!sh->window_set && windowed)
        return tsl_err_set(err,
                           "megatron: --window-size not given (Megatron's default, not in the "
                           "line): full attention in every layer; the model %s has a %u-key "
                           "sliding window on %u of its %u layers",
                           m->name, w->attn_window, windowed, nb);
    for (uint32_t i = 0, n = 0; i < m->n_layers; i++) {
        if (!tsl_model_is_block(m, i))
            continue;
        const tsl_layer_t *l = &m->layers[i];
        n++;
        bool on = line_windowed(sh, n);
        if (on && !l->attn_window)
            return tsl_err_set(err,
                               "megatron: --window-size %d,0%s: layer %u (1-based) has a window "
                               "in Megatron-LM; the model %s attends to the whole sequence there",
                               sh->window_left, skip_freq_is(sh, sk), n, m->name);
        if (!on && l->attn_window)
            return tsl_err_set(err,
                               "megatron: --window-size %d,0%s: layer %u (1-based) attends to the "
                               "whole sequence in Megatron-LM; the model %s has a %u-key window "
                               "there",
                               sh->window_left, skip_freq_is(sh, sk), n, m->name, l->attn_window);
        if (on && (uint32_t)sh->window_left + 1 != l->attn_window)
            return tsl_err_set(err,
                               "megatron: --window-size %d,0: a window of %d keys; the model %s "
                               "has %u (--window-size %u,0)",
                               sh->window_left, sh->window_left + 1, m->name, l->attn_window,
                               l->attn_window - 1);
    }
    return 0;
}

/* What Megatron-LM cannot build at all, whatever the line says: a QK-norm over the
 * whole projection, attention and FFN in parallel, a fixed +1 in the softmax, RoPE
 * scaled other than Llama 3's. */
static int unbuildable_check(const tsl_eval_shape_t *sh, const tsl_model_t *m,
                             const shape_layers_t *r, tsl_err_t *err)
{
    bool states = tsl_eval_shape_states_model(sh);
    if (r->attn && m->qk_norm == TSL_QK_NORM_FULL && (sh->qk_ln || states))
        return tsl_err_set(err,
                           "megatron: %s: the model %s normalises Q and K over the whole "
                           "projection (OLMo 2), which Megatron-LM's --qk-layernorm (one norm "
                           "per head) does not build",
                           sh->qk_ln ? "--qk-layernorm" : "--qk-layernorm not given", m->name);
    if (r->block->parallel_block && states)
        return tsl_err_set(err,
                           "megatron: the model %s runs attention and FFN in parallel on one "
                           "input (GPT-NeoX, Falcon, Phi), which Megatron-LM's TransformerLayer "
                           "(one after the other) does not build",
                           m->name);
    if (sh->softmax == 2)
        return tsl_err_set(err,
                           "megatron: --softmax-type off-by-one: the model %s has no fixed sink "
                           "logit in its softmax",
                           m->name);
    if (m->layers[0].positions == 0 && m->rope.scaling == TSL_ROPE_SCALING_OTHER &&
        (sh->rope_scaling || states))
        return tsl_err_set(err,
                           "megatron: %s: the model %s scales RoPE by rope_type '%s', which "
                           "--use-rope-scaling (Llama 3's) and YaRN do not build",
                           sh->rope_scaling ? "--use-rope-scaling" : "--use-rope-scaling not given",
                           m->name, m->rope.scaling_type);
    return chunked_check(sh, m, r, err);
}

/* YaRN as GPTModel builds it (--position-embedding-type yarn; argument_utils.py
 * _apply_yarn_config_from_args at d98e8a6 and its defaults): the line's against the
 * model's, or a YaRN line against a model without it. */
static int gpt_yarn_check(const tsl_eval_shape_t *sh, const tsl_model_t *m, tsl_err_t *err)
{
    const tsl_model_rope_t *y = &m->rope;
    bool yarn = y->scaling == TSL_ROPE_SCALING_YARN, line = sh->pos == 3;
    bool states = tsl_eval_shape_states_model(sh);
    if (sh->rope_type == 2) /* argument_utils.py asserts rope_type rope without MLA */
        return tsl_err_set(err,
                           "megatron: --rope-type yarn: Megatron-LM takes it under "
                           "--multi-latent-attention only (the model %s has none); GPTModel's "
                           "YaRN is --position-embedding-type yarn",
                           m->name);
    if (line && !yarn)
        return tsl_err_set(
            err, "megatron: --position-embedding-type yarn: the model %s has %s", m->name,
            y->scaling == TSL_ROPE_SCALING_LLAMA3 ? "Llama 3's RoPE scaling" : "RoPE without YaRN");
    if (!yarn || (!line && !sh->pos && !states))
        return 0;
    if (!line)
        return tsl_err_set(err,
                           "megatron: --position-embedding-type %s%s: the model %s scales RoPE "
                           "by YaRN (factor %g)",
                           sh->pos ? pos_type[sh->pos - 1] : "learned_absolute",
                           sh->pos ? "" : " (Megatron's default, not in the line)", m->name,
                           y->scaling_factor);
    uint32_t orig = sh->v[TSL_EVAL_SHAPE_YARN_ORIG] ? sh->v[TSL_EVAL_SHAPE_YARN_ORIG] : 4096;
    if (orig != y->original_max_positions)
        return tsl_err_set(
            err,
            "megatron: --yarn-original-max-position-embeddings %u%s: the model %s "
            "has YaRN original_max_position_embeddings %u",
            orig, sh->v[TSL_EVAL_SHAPE_YARN_ORIG] ? "" : " (Megatron's default, not in the line)",
            m->name, y->original_max_positions);
    if (real_check(sh, TSL_EVAL_SHAPE_ROTARY_SCALING, y->scaling_factor, m, "YaRN factor", err) !=
            0 ||
        real_check(sh, TSL_EVAL_SHAPE_YARN_BETA_FAST, y->beta_fast, m, "YaRN beta_fast", err) !=
            0 ||
        real_check(sh, TSL_EVAL_SHAPE_YARN_BETA_SLOW, y->beta_slow, m, "YaRN beta_slow", err) !=
            0 ||
        real_check(sh, TSL_EVAL_SHAPE_MSCALE, y->mscale, m, "YaRN mscale", err) != 0 ||
        real_check(sh, TSL_EVAL_SHAPE_MSCALE_ALL_DIM, y->mscale_all_dim, m, "YaRN mscale_all_dim",
                   err) != 0)
        return -1;
    bool round = sh->yarn_round_set ? sh->yarn_round : true;
    shape_form_t f = {true,
                      sh->yarn_round_set,
                      round,
                      !y->yarn_no_truncate,
                      round ? "--yarn-correction-range-round-to-int"
                            : "--no-yarn-correction-range-round-to-int",
                      y->yarn_no_truncate ? "YaRN's correction range unrounded (truncate false)"
                                          : "YaRN's correction range rounded"};
    return form_check(&f, sh, m, err);
}

/* Multi-latent attention's RoPE (MLATransformerConfig: rope_type yarn unless
 * --rope-type rope; argument_utils.py pops a rope_type not given): YaRN's factor
 * (1: unscaled) and mscales against the model's YaRN, or against none. */
static int mla_yarn_check(const tsl_eval_shape_t *sh, const tsl_model_t *m, tsl_err_t *err)
{
    const tsl_model_rope_t *y = &m->rope;
    bool yarn = y->scaling == TSL_ROPE_SCALING_YARN, line = sh->rope_type != 1;
    if (yarn && !line)
        return tsl_err_set(err, "megatron: --rope-type rope: the model %s scales RoPE by YaRN",
                           m->name);
    if (!line)
        return 0;
    if (real_check(sh, TSL_EVAL_SHAPE_ROTARY_SCALING, yarn ? y->scaling_factor : 1.0, m,
                   "YaRN factor", err) != 0 ||
        real_check(sh, TSL_EVAL_SHAPE_MSCALE, yarn ? y->mscale : 1.0, m, "YaRN mscale", err) != 0)
        return -1;
    return real_check(sh, TSL_EVAL_SHAPE_MSCALE_ALL_DIM, yarn ? y->mscale_all_dim : 0.0, m,
                      "YaRN mscale_all_dim", err);
}

/* QK-norm, attention sinks, the FFN's activation, dropout, the norm's epsilon and
 * RoPE's scaling (--rotary-base is among the numbers). */
static int attn_form_check(const tsl_eval_shape_t *sh, const tsl_model_t *m,
                           const shape_layers_t *r, tsl_err_t *err)
{
    const tsl_layer_t *a = r->attn, *f = r->dense ? r->dense : r->moe;
    /* under MLA --qk-layernorm builds the latent norms (gpt_layer_specs.py), which
     * Tessel's MLA always has */
    bool mla = a && a->kv_lora_rank;
    bool ln = m->qk_norm == TSL_QK_NORM_PER_HEAD || mla, l2 = m->qk_norm == TSL_QK_NORM_L2;
    bool drop = !r->block->no_dropout && !sh->no_dropout;
    bool ad =
        (sh->r_set[TSL_EVAL_SHAPE_ATTN_DROPOUT] ? sh->r[TSL_EVAL_SHAPE_ATTN_DROPOUT] : 0.1) > 0;
    bool hd =
        (sh->r_set[TSL_EVAL_SHAPE_HIDDEN_DROPOUT] ? sh->r[TSL_EVAL_SHAPE_HIDDEN_DROPOUT] : 0.1) > 0;
    bool rope = m->layers[0].positions == 0 && (m->rope.base > 0.0 || m->rope.scaling);
    bool l3 = m->rope.scaling == TSL_ROPE_SCALING_LLAMA3;
    const char *has_drop = drop ? "dropout" : "no dropout";
    shape_form_t fm[] = {
        {a && m->qk_norm != TSL_QK_NORM_FULL, sh->qk_ln, sh->qk_ln, ln,
         sh->qk_ln ? "--qk-layernorm" : "--qk-layernorm not given, no QK-norm",
         mla  ? "multi-latent attention with its latent norms"
         : ln ? "a norm of each head's queries and keys (qk_norm)"
              : "no per-head QK-norm"},
        {a != NULL, sh->qk_l2, sh->qk_l2, l2,
         sh->qk_l2 ? "--qk-l2-norm" : "--qk-l2-norm not given, no L2 QK-norm",
         l2 ? "an L2 norm of queries and keys" : "no L2 QK-norm"},
        {a != NULL, sh->softmax != 0, sh->softmax == 3, m->attn_sinks,
         sh->softmax == 3 ? "--softmax-type learnable" : "--softmax-type vanilla",
         m->attn_sinks ? "a learned sink logit per head" : "no attention sinks"},
        {f && !f->gated_ffn, sh->relu2, sh->relu2, m->relu2,
         sh->relu2 ? "--squared-relu" : "--squared-relu not given, a GeLU FFN",
         m->relu2 ? "a squared-ReLU FFN" : "a GeLU FFN"},
        {true, sh->r_set[TSL_EVAL_SHAPE_ATTN_DROPOUT], ad, drop,
         ad ? "--attention-dropout above 0" : "--attention-dropout 0", has_drop},
        {true, sh->r_set[TSL_EVAL_SHAPE_HIDDEN_DROPOUT], hd, drop,
         hd ? "--hidden-dropout above 0" : "--hidden-dropout 0", has_drop},
        {rope, sh->rope_scaling, sh->rope_scaling, l3,
         sh->rope_scaling ? "--use-rope-scaling" : "--use-rope-scaling not given, RoPE unscaled",
         l3 ? "Llama 3's RoPE scaling" : "RoPE unscaled"},
    };
    if (forms_check(fm, sizeof fm / sizeof *fm, sh, m, err) != 0)
        return -1;
    if (m->norm_eps > 0.0 &&
        real_check(sh, TSL_EVAL_SHAPE_NORM_EPS, m->norm_eps, m, "norm epsilon", err) != 0)
        return -1;
    if (rope && l3 && sh->rope_scaling &&
        real_check(sh, TSL_EVAL_SHAPE_ROPE_FACTOR, m->rope.scaling_factor, m, "RoPE scaling factor",
                   err) != 0)
        return -1;
    if (rope && a && a->kv_lora_rank)
        return mla_yarn_check(sh, m, err);
    return a && m->layers[0].positions == 0 ? gpt_yarn_check(sh, m, err) : 0;
}

/* The router: score function, renormalisation, correction bias, scale (the groups
 * are among the numbers) and the shared experts' gate. */
static int router_check(const tsl_eval_shape_t *sh, const tsl_model_t *m, const shape_layers_t *r,
                        tsl_err_t *err)
{
    const tsl_layer_t *e = r->moe;
    if (e == NULL)
        return 0;
    bool states = tsl_eval_shape_states_model(sh), sig = e->router_score == TSL_ROUTER_SIGMOID;
    uint8_t got = sh->score ? sh->score : 1, want = sig ? 2 : 1;
    if (got != want && (sh->score || states))
        return tsl_err_set(err, "megatron: --moe-router-score-function %s%s: the model %s has %s",
                           score_fn[got - 1],
                           sh->score ? "" : " (Megatron's default, not in the line)", m->name,
                           sig ? "sigmoid scores" : "softmax scores");
    if (sig && e->router_norm != (e->experts_per_tok > 1) && states)
        return tsl_err_set(err,
                           "megatron: the model %s weighs its top-%u sigmoid scores %s; "
                           "Megatron-LM renormalises them exactly when top-k > 1",
                           m->name, e->experts_per_tok,
                           e->router_norm ? "renormalised" : "as they are");
    bool choice = e->router_bias == TSL_ROUTER_BIAS_CHOICE;
    shape_form_t fm[] = {
        {!sig, sh->pre_softmax, sh->pre_softmax, !e->router_norm,
         sh->pre_softmax ? "--moe-router-pre-softmax (the top k not renormalised)"
                         : "--moe-router-pre-softmax not given, the top k renormalised",
         e->router_norm ? "its top-k weights renormalised" : "its top-k weights not renormalised"},
        {true, sh->expert_bias, sh->expert_bias, choice,
         sh->expert_bias ? "--moe-router-enable-expert-bias"
                         : "--moe-router-enable-expert-bias not given, no correction bias",
         choice ? "a score-correction bias on the choice" : "no score-correction bias"},
        {e->shared_experts > 0, sh->shared_gate, sh->shared_gate, e->shared_expert_gate,
         sh->shared_gate ? "--moe-shared-expert-gate"
                         : "--moe-shared-expert-gate not given, an ungated shared expert",
         e->shared_expert_gate ? "a gate on the shared experts" : "ungated shared experts"},
    };
    if (forms_check(fm, sizeof fm / sizeof *fm, sh, m, err) != 0)
        return -1;
    return real_check(sh, TSL_EVAL_SHAPE_TOPK_SCALE, e->router_scale > 0.0 ? e->router_scale : 1.0,
                      m, "routing weights scaled by", err);
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
        unbuildable_check(sh, m, &r, err) != 0 || window_check(sh, m, err) != 0 ||
        numbers_check(sh, m, &r, err) != 0 || positions_check(sh, m, &r, err) != 0 ||
        vocab_check(sh, m, tp, err) != 0 || padded_vocab_check(sh, m, tp, err) != 0 ||
        ffn_head_check(sh, m, &r, err) != 0 || norm_pos_bias_check(sh, m, &r, err) != 0 ||
        attn_form_check(sh, m, &r, err) != 0)
        return -1;
    return router_check(sh, m, &r, err);
}
