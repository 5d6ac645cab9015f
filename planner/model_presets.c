/*
 * model_presets.c — architecture families (tsl_model_build) and the named
 * presets from the papers. docs/models.md lists every preset with its computed
 * and published parameter counts and says where each shape comes from.
 */
#include "model.h"
#include "mtp.h"
#include "nearest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const char *const arch_names[TSL_ARCH_COUNT] = {
    [TSL_ARCH_GPT] = "gpt", [TSL_ARCH_BERT] = "bert",   [TSL_ARCH_T5] = "t5",
    [TSL_ARCH_VIT] = "vit", [TSL_ARCH_LLAMA] = "llama", [TSL_ARCH_NEOX] = "neox",
};

const char *tsl_arch_name(tsl_arch_t arch)
{
    if ((unsigned)arch >= TSL_ARCH_COUNT)
        return "unknown";
    return arch_names[arch];
}

/* ---- families ---- */

static int spec_field_zero(const tsl_arch_spec_t *sp, tsl_err_t *err)
{
    const char *an = tsl_arch_name(sp->arch);
    const struct {
        const char *name;
        uint32_t v;
        bool needed;
    } f[] = {
        {"layers", sp->layers, true},
        {"hidden", sp->hidden, true},
        /* a hybrid needs it only for its MLP blocks (hybrid_check) */
        {"ffn_hidden", sp->ffn_hidden, !sp->hybrid[0]},
        {"heads", sp->heads, true},
        {"seq_len", sp->seq_len, true},
        {"vocab", sp->vocab, sp->arch != TSL_ARCH_VIT},
        {"dec_layers", sp->dec_layers, sp->arch == TSL_ARCH_T5},
        {"channels", sp->channels, sp->arch == TSL_ARCH_VIT},
        {"patch", sp->patch, sp->arch == TSL_ARCH_VIT},
        {"classes", sp->classes, sp->arch == TSL_ARCH_VIT},
    };
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        if (f[i].needed && f[i].v == 0)
            return tsl_err_set(err, "%s spec: %s: 0 is not valid; it must be positive", an,
                               f[i].name);
    }
    return 0;
}

/* Whether a layer bitmap (bit i of word i/64) has any layer set. */
static bool any_bit(const uint64_t bits[TSL_MODEL_MAX_LAYERS / 64])
{
    for (size_t j = 0; j < TSL_MODEL_MAX_LAYERS / 64; j++) {
        if (bits[j] != 0)
            return true;
    }
    return false;
}

static bool bit_at(const uint64_t bits[TSL_MODEL_MAX_LAYERS / 64], uint32_t i)
{
    return i < TSL_MODEL_MAX_LAYERS && (bits[i / 64] >> (i % 64) & 1u) != 0;
}

/* A hybrid pattern (model.h): the LLAMA family, M * - E only, as long as layers,
 * Mamba widths where there is an M, experts where there is an E. */
static int hybrid_check(const tsl_arch_spec_t *sp, const char *an, tsl_err_t *err)
{
    const char *end = memchr(sp->hybrid, 0, sizeof sp->hybrid);
    size_t n = end ? (size_t)(end - sp->hybrid) : sizeof sp->hybrid;
    if (sp->arch != TSL_ARCH_LLAMA)
        return tsl_err_set(err, "%s spec: hybrid: a hybrid pattern belongs to the llama family",
                           an);
    if (n != sp->layers)
        return tsl_err_set(err, "%s spec: hybrid: the pattern has %zu layers, layers says %u", an,
                           n, sp->layers);
    size_t bad = strspn(sp->hybrid, "M*-E");
    if (bad < n)
        return tsl_err_set(err,
                           "%s spec: hybrid: '%c' at layer %zu is not M (Mamba-2), * (attention), "
                           "- (MLP) or E (MoE)",
                           an, sp->hybrid[bad], bad);
    if (strchr(sp->hybrid, 'E') && sp->experts == 0)
        return tsl_err_set(err, "%s spec: hybrid: E layers need experts", an);
    if (strchr(sp->hybrid, '-') && sp->ffn_hidden == 0)
        return tsl_err_set(err, "%s spec: hybrid: - layers need ffn_hidden", an);
    if (sp->kv_lora_rank || any_bit(sp->moe_layers))
        return tsl_err_set(err,
                           "%s spec: hybrid: latent attention and moe_layers are not "
                           "modelled with a hybrid pattern (E marks the MoE layers)",
                           an);
    return 0;
}

/* MTP depths (mtp.h): the llama family; a hybrid names its depth's blocks. */
static int mtp_check(const tsl_arch_spec_t *sp, const char *an, tsl_err_t *err)
{
    const char *end = memchr(sp->mtp_hybrid, 0, sizeof sp->mtp_hybrid);
    if (end == NULL)
        return tsl_err_set(err, "%s spec: mtp_hybrid: not terminated within %zu characters", an,
                           sizeof sp->mtp_hybrid - 1);
    if (sp->mtp_layers == 0)
        return 0;
    if (sp->arch != TSL_ARCH_LLAMA)
        return tsl_err_set(err,
                           "%s spec: mtp_layers: multi-token prediction belongs to the "
                           "llama family",
                           an);
    if (sp->mtp_layers > TSL_MTP_MAX_DEPTHS)
        return tsl_err_set(err, "%s spec: mtp_layers: %u exceeds %u depths", an, sp->mtp_layers,
                           TSL_MTP_MAX_DEPTHS);
    if (sp->hybrid[0] && sp->mtp_hybrid[0] == '\0')
        return tsl_err_set(err,
                           "%s spec: mtp_hybrid: a hybrid's MTP depth needs its blocks "
                           "(mtp_hybrid_override_pattern, e.g. \"*E\")",
                           an);
    size_t bad = strspn(sp->mtp_hybrid, "M*-E");
    if (sp->mtp_hybrid[bad] != '\0')
        return tsl_err_set(err, "%s spec: mtp_hybrid: '%c' at %zu is not M, *, - or E", an,
                           sp->mtp_hybrid[bad], bad);
    return 0;
}

static int spec_check(const tsl_arch_spec_t *sp, tsl_err_t *err)
{
    if ((unsigned)sp->arch >= TSL_ARCH_COUNT)
        return tsl_err_set(err, "spec: arch: %u is not an architecture family", (unsigned)sp->arch);
    if (spec_field_zero(sp, err) != 0)
        return -1;
    const char *an = tsl_arch_name(sp->arch);
    uint64_t total = 2ull + sp->layers + (sp->arch == TSL_ARCH_T5 ? sp->dec_layers : 0);
    if (total > TSL_MODEL_MAX_LAYERS)
        return tsl_err_set(err,
                           "%s spec: layers: %llu layers with embedding and head exceed "
                           "the limit of %u (TSL_MODEL_MAX_LAYERS)",
                           an, (unsigned long long)total, TSL_MODEL_MAX_LAYERS);
    if ((uint64_t)sp->heads * sp->head_dim > UINT32_MAX)
        return tsl_err_set(err, "%s spec: head_dim: %u x %u heads is too wide", an, sp->head_dim,
                           sp->heads);
    if (sp->head_dim == 0 && sp->hidden % sp->heads != 0)
        return tsl_err_set(err,
                           "%s spec: heads: hidden %u is not a multiple of %u heads; "
                           "give head_dim",
                           an, sp->hidden, sp->heads);
    if (sp->kv_heads > sp->heads || (sp->kv_heads && sp->heads % sp->kv_heads != 0))
        return tsl_err_set(err, "%s spec: kv_heads: %u must divide heads (%u)", an, sp->kv_heads,
                           sp->heads);
    if (sp->qk_norm > TSL_QK_NORM_L2)
        return tsl_err_set(err,
                           "%s spec: qk_norm: %u is not 0 (none), 1 (per head), 2 (full) or "
                           "3 (L2, no weights)",
                           an, sp->qk_norm);
    if (sp->arch != TSL_ARCH_LLAMA && (sp->qk_norm || sp->sandwich_norm || sp->embed_scale ||
                                       sp->attn_softcap || sp->logit_softcap))
        return tsl_err_set(err,
                           "%s spec: qk_norm, sandwich_norm, embed_scale and soft-capping "
                           "belong to the llama family",
                           an);
    if (sp->arch != TSL_ARCH_LLAMA && (sp->attn_chunked || sp->linear_bias || sp->attn_sinks ||
                                       sp->glu_clamp || sp->relu2 || any_bit(sp->nope_layers)))
        return tsl_err_set(err,
                           "%s spec: attn_chunked, linear_bias, attn_sinks, glu_clamp, relu2 "
                           "and nope_layers belong to the llama family",
                           an);
    if (sp->glu_clamp && (sp->experts == 0 || !sp->gated_ffn))
        return tsl_err_set(err,
                           "%s spec: glu_clamp clamps the routed experts' gated activation: it "
                           "needs experts and gated_ffn",
                           an);
    if (sp->qkv_bias && sp->linear_bias)
        return tsl_err_set(err,
                           "%s spec: qkv_bias: linear_bias already gives Q, K and V their "
                           "biases; set one of the two",
                           an);
    if (sp->attn_chunked && sp->attn_window == 0)
        return tsl_err_set(err,
                           "%s spec: attn_chunked: set without attn_window, the chunk size "
                           "(Llama 4: 8192)",
                           an);
    if (sp->arch != TSL_ARCH_LLAMA && (sp->experts || sp->kv_lora_rank))
        return tsl_err_set(err, "%s spec: experts and latent attention belong to the llama family",
                           an);
    if (sp->experts &&
        (sp->moe_ffn_hidden == 0 || sp->experts_per_tok == 0 || sp->experts_per_tok > sp->experts))
        return tsl_err_set(err,
                           "%s spec: experts: %u needs moe_ffn_hidden > 0 and experts_per_tok "
                           "between 1 and experts (got %u, %u)",
                           an, sp->experts, sp->moe_ffn_hidden, sp->experts_per_tok);
    if (sp->hybrid[0] && hybrid_check(sp, an, err) != 0)
        return -1;
    if (sp->moe_latent && (sp->experts == 0 || sp->moe_latent >= sp->hidden))
        return tsl_err_set(err,
                           "%s spec: moe_latent: %u needs experts and must be below hidden (%u)",
                           an, sp->moe_latent, sp->hidden);
    if (mtp_check(sp, an, err) != 0)
        return -1;
    if (sp->arch != TSL_ARCH_GPT && (sp->alibi || sp->embed_norm))
        return tsl_err_set(err, "%s spec: alibi and embed_norm belong to the gpt family (BLOOM)",
                           an);
    if (sp->arch != TSL_ARCH_GPT && sp->hf_gpt2_eager)
        return tsl_err_set(err,
                           "%s spec: hf_gpt2_eager: transformers' GPT2Block belongs to the gpt "
                           "family",
                           an);
    if (sp->layer_scale && !sp->hf_gpt2_eager)
        return tsl_err_set(err,
                           "%s spec: layer_scale: the division by the layer's index is "
                           "priced in transformers' GPT2Block alone; set hf_gpt2_eager",
                           an);
    if (sp->alibi && sp->positions)
        return tsl_err_set(err,
                           "%s spec: alibi: ALiBi replaces the position table; positions must "
                           "be 0 (got %u)",
                           an, sp->positions);
    if (sp->causal > TSL_CAUSAL_OFF)
        return tsl_err_set(err, "%s spec: causal: %u is not 0 (the family's), 1 (on) or 2 (off)",
                           an, sp->causal);
    if (sp->arch == TSL_ARCH_VIT && (uint64_t)sp->channels * sp->patch * sp->patch > UINT32_MAX)
        return tsl_err_set(err, "vit spec: patch: %u is too large", sp->patch);
    return 0;
}

/* One transformer layer of the family, before per-position extras. */
static tsl_layer_t block_of(const tsl_arch_spec_t *sp)
{
    tsl_layer_t l = {0};
    l.kind = TSL_LAYER_ENCODER;
    l.seq_len = sp->seq_len;
    l.hidden = sp->hidden;
    l.ffn_hidden = sp->ffn_hidden;
    l.heads = sp->heads;
    l.kv_heads = sp->kv_heads;
    l.attn_dim = sp->head_dim ? sp->heads * sp->head_dim : 0;
    l.attn_window = sp->attn_window;
    l.gated_ffn = sp->gated_ffn;
    l.alibi = sp->alibi;
    l.hf_gpt2_eager = sp->hf_gpt2_eager;
    l.layer_scale = sp->layer_scale;
    /* decoder-only LMs mask future tokens; T5's encoder is bidirectional (its
     * decoder layers set it in build_t5); BERT and ViT see every token */
    l.causal =
        sp->causal == TSL_CAUSAL_ARCH
            ? sp->arch == TSL_ARCH_GPT || sp->arch == TSL_ARCH_LLAMA || sp->arch == TSL_ARCH_NEOX
            : sp->causal == TSL_CAUSAL_ON;
    if (sp->arch == TSL_ARCH_T5 || sp->arch == TSL_ARCH_LLAMA) {
        l.no_bias = !(sp->arch == TSL_ARCH_LLAMA && sp->linear_bias); /* gpt-oss has them */
        l.rms_norm = true;
    }
    /* HF T5 (transformers 4.16.2 modeling_t5.py, as Galvatron df32daa runs it):
     * T5LayerNorm in eager ATen kernels, and T5DenseReluDense's dropout between
     * the activation and wo (model.h) */
    l.eager_norm = l.ffn_dropout = sp->arch == TSL_ARCH_T5;
    /* Llama-family training runs without dropout (attention_dropout 0, no hidden
     * dropout in the configs); so do the NeoX-family configs we read */
    l.no_dropout = sp->arch == TSL_ARCH_LLAMA || sp->arch == TSL_ARCH_NEOX;
    if (sp->arch == TSL_ARCH_NEOX) {
        l.no_bias = sp->no_bias;
        l.parallel_block = sp->parallel_block;
        l.shared_norm = sp->parallel_block && sp->shared_norm;
    }
    if (sp->arch == TSL_ARCH_LLAMA && sp->qkv_bias) {
        uint64_t d = l.attn_dim ? l.attn_dim : l.hidden;
        uint64_t e = sp->kv_heads ? d / sp->heads * sp->kv_heads : d;
        l.extra_params = d + 2 * e; /* Qwen2: biases on Q, K, V only */
    }
    return l;
}

/* What the last layer of a stack carries on top of the others: a final norm,
 * Swin's patch merging, TransGAN's upsampling position tables. */
typedef struct tail {
    uint64_t params;
    double flops;
    uint64_t act_bytes;
} tail_t;

static const tail_t no_tail = {0, 0.0, 0};

/* Appends count copies of l: the first carries first_params more parameters
 * (relative-position tables), the last the tail. */
static int add_stack(tsl_model_t *m, tsl_layer_t l, uint32_t count, uint64_t first_params,
                     tail_t tail, tsl_err_t *err)
{
    const tsl_layer_t base = l;
    for (uint32_t i = 0; i < count;) {
        bool first = i == 0, last = i == count - 1;
        uint32_t run = (first || last) ? 1 : count - 1 - i; /* the identical middle */
        l.extra_params = base.extra_params + (first ? first_params : 0) + (last ? tail.params : 0);
        l.extra_fwd_flops = base.extra_fwd_flops + (last ? tail.flops : 0.0);
        l.extra_act_bytes = base.extra_act_bytes + (last ? tail.act_bytes : 0);
        if (tsl_model_add_n(m, &l, run, err) != 0)
            return -1;
        i += run;
    }
    return 0;
}

static tsl_layer_t token_embedding(const tsl_arch_spec_t *sp)
{
    tsl_layer_t e = {0};
    e.kind = TSL_LAYER_EMBEDDING;
    e.seq_len = sp->seq_len;
    e.hidden = sp->hidden;
    e.vocab = sp->vocab;
    e.positions = sp->positions;
    e.embed_norm = sp->embed_norm;
    return e;
}

static tsl_layer_t lm_head(const tsl_arch_spec_t *sp, uint32_t seq, uint64_t norm_params)
{
    tsl_layer_t hd = {0};
    hd.kind = TSL_LAYER_HEAD;
    hd.seq_len = seq;
    hd.hidden = sp->hidden;
    hd.vocab = sp->vocab;
    hd.tied_head = sp->tied_head;
    hd.extra_params = norm_params;                /* the final norm */
    hd.extra_act_bytes = 2ull * seq * sp->hidden; /* its input */
    hd.final_norm = true;
    /* of the blocks' kind: RMSNorm in T5 and the Llama family, HF T5's eager chain */
    hd.rms_norm = sp->arch == TSL_ARCH_T5 || sp->arch == TSL_ARCH_LLAMA;
    hd.eager_norm = sp->arch == TSL_ARCH_T5;
    return hd;
}

static int build_gpt(const tsl_arch_spec_t *sp, tsl_model_t *m, tsl_err_t *err)
{
    tsl_layer_t e = token_embedding(sp), hd = lm_head(sp, sp->seq_len, 2ull * sp->hidden);
    if (tsl_model_add(m, &e, err) != 0 || add_stack(m, block_of(sp), sp->layers, 0, no_tail, err))
        return -1;
    return tsl_model_add(m, &hd, err);
}

static int build_bert(const tsl_arch_spec_t *sp, tsl_model_t *m, tsl_err_t *err)
{
    uint64_t s = sp->seq_len, h = sp->hidden;
    tsl_layer_t e = token_embedding(sp);
    e.extra_params = (uint64_t)sp->type_vocab * h + 2 * h; /* token types + LN */
    e.extra_act_bytes = 2 * s * h;                         /* the LN's input */
    /* MLM head: dense h×h + GELU + LN, then the tied decoder and its bias */
    tsl_layer_t hd = lm_head(sp, sp->seq_len, h * h + h + 2 * h + sp->vocab);
    hd.extra_fwd_flops = 2.0 * (double)s * (double)h * (double)h;
    hd.extra_act_bytes = 6 * s * h;
    if (tsl_model_add(m, &e, err) != 0 || add_stack(m, block_of(sp), sp->layers, 0, no_tail, err))
        return -1;
    return tsl_model_add(m, &hd, err);
}

static int build_t5(const tsl_arch_spec_t *sp, tsl_model_t *m, tsl_err_t *err)
{
    uint64_t h = sp->hidden, rel = (uint64_t)sp->rel_buckets * sp->heads;
    uint32_t ds = sp->dec_seq_len ? sp->dec_seq_len : sp->seq_len;
    tsl_layer_t e = token_embedding(sp);
    e.positions = 0; /* relative positions: a bucket table in the first layers */
    tsl_layer_t enc = block_of(sp), dec = block_of(sp);
    dec.kind = TSL_LAYER_DECODER;
    dec.seq_len = ds;
    dec.cross_seq_len = sp->seq_len;
    dec.causal = sp->causal != TSL_CAUSAL_OFF; /* self-attention only; cross is never */
    tsl_layer_t hd = lm_head(sp, ds, h);
    tail_t enc_norm = {h, 0.0, 2ull * sp->seq_len * h}; /* the encoder's final norm */
    if (tsl_model_add(m, &e, err) != 0 || add_stack(m, enc, sp->layers, rel, enc_norm, err) != 0 ||
        add_stack(m, dec, sp->dec_layers, rel, no_tail, err) != 0)
        return -1;
    return tsl_model_add(m, &hd, err);
}

static int build_vit(const tsl_arch_spec_t *sp, tsl_model_t *m, tsl_err_t *err)
{
    uint64_t s = sp->seq_len, h = sp->hidden;
    tsl_layer_t e = {0};
    e.kind = TSL_LAYER_EMBEDDING;
    e.patch_embed = true;
    e.seq_len = sp->seq_len;
    e.hidden = sp->hidden;
    e.vocab = sp->channels * sp->patch * sp->patch;
    e.positions = sp->positions ? sp->positions : sp->seq_len;
    e.extra_params = h; /* the class token */
    tsl_layer_t hd = {0};
    hd.kind = TSL_LAYER_HEAD;
    hd.seq_len = sp->seq_len;
    hd.hidden = sp->hidden;
    hd.vocab = sp->classes;
    hd.head_tokens = 1;
    hd.extra_params = 2 * h + sp->classes; /* final LN + classifier bias */
    hd.extra_act_bytes = 2 * s * h;
    hd.final_norm = true;
    if (tsl_model_add(m, &e, err) != 0 || add_stack(m, block_of(sp), sp->layers, 0, no_tail, err))
        return -1;
    return tsl_model_add(m, &hd, err);
}

/* Elementwise work the LLAMA-family variants add (model.h): an RMSNorm's
 * TSL_NORM_FLOPS_PER_ELEM; a soft-cap c·tanh(x/c) a divide, a tanh and a multiply. */
#define SOFTCAP_FLOPS_PER_ELEM 3.0

/* The window of layer i: none on the layers that attend to everything. */
static uint32_t window_of(const tsl_arch_spec_t *sp, uint32_t i)
{
    return bit_at(sp->full_attn_layers, i) ? 0 : sp->attn_window;
}

/* QK-norm parameters: one norm of head_dim shared by the heads, on Q and on K;
 * one over the whole projections; none for a weightless L2 norm (Llama 4). */
static uint64_t qk_norm_params(uint8_t kind, uint64_t hd, uint64_t d, uint64_t e)
{
    switch (kind) {
    case TSL_QK_NORM_PER_HEAD: return 2 * hd;
    case TSL_QK_NORM_FULL: return d + e;
    default: return 0;
    }
}

/* QK-norm (not on a NoPE layer), the sandwich norms, the attention sinks and
 * soft-cap of one layer with the given window (the soft-cap runs on every score
 * it computes: s·w per head). */
static void llama_extras(const tsl_arch_spec_t *sp, tsl_layer_t *l, uint32_t window, bool nope)
{
    double s = sp->seq_len, h = sp->hidden;
    uint64_t hd = sp->head_dim ? sp->head_dim : sp->hidden / sp->heads;
    uint64_t d = hd * sp->heads, e = hd * (sp->kv_heads ? sp->kv_heads : sp->heads);
    double w = (window && window < sp->seq_len) ? window : s;
    l->attn_window = window;
    l->attn_chunked = sp->attn_chunked && window != 0;
    if (sp->qk_norm != TSL_QK_NORM_NONE && !nope) {
        /* its FLOPs, stash and kernels: tsl_layer_t.qk_norm (none on latent attention) */
        l->qk_norm = sp->kv_lora_rank ? TSL_QK_NORM_NONE : sp->qk_norm;
        l->extra_params += qk_norm_params(sp->qk_norm, hd, d, e);
    }
    /* gpt-oss's sink logits: their exp joins each query's softmax denominator
     * inside the fused kernel, a·s operations: left out as the soft-cap is not */
    if (sp->attn_sinks)
        l->extra_params += sp->heads;
    if (sp->sandwich_norm) {
        l->extra_params += 2ull * sp->hidden;
        l->extra_fwd_flops += 2.0 * TSL_NORM_FLOPS_PER_ELEM * s * h;
        l->extra_act_bytes += 4ull * sp->seq_len * sp->hidden;
    }
    if (sp->attn_softcap)
        l->extra_fwd_flops += SOFTCAP_FLOPS_PER_ELEM * sp->heads * s * w;
}

static bool moe_at(const tsl_arch_spec_t *sp, uint32_t i)
{
    if (sp->experts == 0)
        return false;
    return !any_bit(sp->moe_layers) || bit_at(sp->moe_layers, i);
}

/* Latent attention and routed experts (model.h) on a LLAMA-family layer. */
static void llama_moe_mla(const tsl_arch_spec_t *sp, tsl_layer_t *l, bool moe)
{
    l->q_lora_rank = sp->q_lora_rank;
    l->kv_lora_rank = sp->kv_lora_rank;
    if (sp->kv_lora_rank) {
        l->qk_nope_dim = sp->qk_nope_dim;
        l->qk_rope_dim = sp->qk_rope_dim;
        l->v_head_dim = sp->v_head_dim;
        l->attn_dim = 0;
        l->kv_heads = 0;
    }
    if (!moe)
        return;
    l->experts = sp->experts;
    l->experts_per_tok = sp->experts_per_tok;
    l->ffn_hidden = sp->moe_ffn_hidden;
    l->shared_experts = sp->shared_experts;
    l->shared_ffn_hidden = sp->shared_experts ? sp->shared_ffn_hidden : 0;
    l->extra_params += (sp->shared_expert_gate && sp->shared_experts ? sp->hidden : 0) +
                       (sp->router_bias ? sp->experts : 0);
    l->shared_expert_gate = sp->shared_expert_gate && sp->shared_experts;
    l->glu_clamp = sp->glu_clamp;
    /* gpt-oss's router bias is its linear layers' (linear_bias), DeepSeek-V3's a
     * score correction */
    l->router_bias = !sp->router_bias  ? TSL_ROUTER_BIAS_NONE
                     : sp->linear_bias ? TSL_ROUTER_BIAS_LOGIT
                                       : TSL_ROUTER_BIAS_CHOICE;
    l->router_score = sp->router_score;
    l->router_norm = sp->router_norm;
    l->router_scale = sp->router_scale;
    l->router_groups = sp->router_groups;
    l->router_topk_groups = sp->router_topk_groups;
    l->moe_latent = sp->moe_latent;
}

/* Whether layers i and j are built alike: the same window, FFN and RoPE. */
static bool same_llama_layer(const tsl_arch_spec_t *sp, uint32_t i, uint32_t j)
{
    return window_of(sp, i) == window_of(sp, j) && moe_at(sp, i) == moe_at(sp, j) &&
           bit_at(sp->nope_layers, i) == bit_at(sp->nope_layers, j);
}

/* The layers in runs of equal windows (Gemma alternates local and global), of
 * equal FFNs (DeepSeek's first dense layers, Qwen's mlp_only_layers, Llama 4
 * Maverick's alternate ones) and of RoPE or not (Llama 4's NoPE layers). */
static int add_llama_layers(const tsl_arch_spec_t *sp, tsl_model_t *m, tsl_err_t *err)
{
    const tsl_layer_t base = block_of(sp);
    for (uint32_t i = 0; i < sp->layers;) {
        uint32_t run = 1;
        while (i + run < sp->layers && same_llama_layer(sp, i, i + run))
            run++;
        tsl_layer_t l = base;
        llama_extras(sp, &l, window_of(sp, i), bit_at(sp->nope_layers, i));
        llama_moe_mla(sp, &l, moe_at(sp, i));
        if (tsl_model_add_n(m, &l, run, err) != 0)
            return -1;
        i += run;
    }
    return 0;
}

/* A Mamba-2 mixer block of the hybrid (mamba.h). */
static tsl_layer_t mamba_of(const tsl_arch_spec_t *sp)
{
    tsl_layer_t l = {0};
    l.kind = TSL_LAYER_MAMBA;
    l.seq_len = sp->seq_len;
    l.hidden = sp->hidden;
    l.no_bias = true;
    l.rms_norm = true;
    l.no_dropout = true;
    l.ssm_heads = sp->ssm_heads;
    l.ssm_head_dim = sp->ssm_head_dim;
    l.ssm_state = sp->ssm_state;
    l.ssm_groups = sp->ssm_groups;
    l.ssm_conv = sp->ssm_conv;
    l.ssm_chunk = sp->ssm_chunk;
    return l;
}

/* Block i of a hybrid pattern (model.h): M, *, - or E. */
static tsl_layer_t hybrid_block(const tsl_arch_spec_t *sp, char c)
{
    if (c == 'M')
        return mamba_of(sp);
    tsl_layer_t l = block_of(sp);
    l.kind = c == '*' ? TSL_LAYER_ATTENTION : TSL_LAYER_FFN;
    if (c == '*')
        llama_extras(sp, &l, sp->attn_window, false);
    llama_moe_mla(sp, &l, c == 'E');
    if (c == '*') /* the attention block has no FFN */
        l.ffn_hidden = 0;
    return l;
}

/* The hybrid's blocks in runs of the same character. */
static int add_hybrid_layers(const tsl_arch_spec_t *sp, tsl_model_t *m, tsl_err_t *err)
{
    for (uint32_t i = 0; sp->hybrid[i];) {
        uint32_t run = 1;
        while (sp->hybrid[i + run] == sp->hybrid[i])
            run++;
        tsl_layer_t l = hybrid_block(sp, sp->hybrid[i]);
        if (tsl_model_add_n(m, &l, run, err) != 0)
            return -1;
        i += run;
    }
    return 0;
}

/* The spec's MTP depths (mtp.h) before the head: each a copy of the last layer, or
 * of the hybrid's MTP blocks, with weights of its own. */
static int add_mtp_depths(const tsl_arch_spec_t *sp, tsl_model_t *m, const tsl_layer_t *hd,
                          tsl_err_t *err)
{
    tsl_layer_t inner[sizeof sp->mtp_hybrid];
    uint32_t n = 0;
    if (sp->mtp_layers == 0)
        return 0;
    if (sp->hybrid[0])
        for (; sp->mtp_hybrid[n]; n++)
            inner[n] = hybrid_block(sp, sp->mtp_hybrid[n]);
    else
        inner[n++] = m->layers[m->n_layers - 1];
    for (uint32_t d = 1; d <= sp->mtp_layers; d++)
        if (tsl_mtp_add_depth(m, d, inner, n, hd, false, err) != 0)
            return -1;
    return 0;
}

static int build_llama(const tsl_arch_spec_t *sp, tsl_model_t *m, tsl_err_t *err)
{
    double s = sp->seq_len, h = sp->hidden;
    tsl_layer_t e = token_embedding(sp);
    e.positions = 0; /* RoPE */
    if (sp->embed_scale)
        e.extra_fwd_flops = s * h; /* × sqrt(h) */
    tsl_layer_t hd = lm_head(sp, sp->seq_len, sp->hidden);
    if (sp->logit_softcap)
        hd.extra_fwd_flops = SOFTCAP_FLOPS_PER_ELEM * s * sp->vocab;
    m->qkv_bias = sp->qkv_bias;
    m->qk_norm = sp->qk_norm;
    m->attn_sinks = sp->attn_sinks;
    m->relu2 = sp->relu2 && !sp->gated_ffn;
    m->glu_limit = !sp->glu_clamp ? 0.0 : sp->glu_limit > 0.0 ? sp->glu_limit : 7.0;
    m->sandwich_norm = sp->sandwich_norm;
    m->softcap = sp->attn_softcap || sp->logit_softcap;
    m->embed_scale = sp->embed_scale;
    m->hybrid = sp->hybrid[0] != '\0';
    if (tsl_model_add(m, &e, err) != 0)
        return -1;
    if ((sp->hybrid[0] ? add_hybrid_layers(sp, m, err) : add_llama_layers(sp, m, err)) != 0)
        return -1;
    if (add_mtp_depths(sp, m, &hd, err) != 0)
        return -1;
    return tsl_model_add(m, &hd, err);
}

static int build_neox(const tsl_arch_spec_t *sp, tsl_model_t *m, tsl_err_t *err)
{
    tsl_layer_t e = token_embedding(sp);
    e.positions = 0; /* rotary */
    tsl_layer_t hd = lm_head(sp, sp->seq_len, 2ull * sp->hidden + (sp->head_bias ? sp->vocab : 0));
    if (tsl_model_add(m, &e, err) != 0 || add_stack(m, block_of(sp), sp->layers, 0, no_tail, err))
        return -1;
    return tsl_model_add(m, &hd, err);
}

int tsl_model_build(const tsl_arch_spec_t *spec, const char *name, tsl_model_t *out, tsl_err_t *err)
{
    if (spec == NULL || out == NULL)
        return tsl_err_set(err, "model build: NULL spec or model");
    tsl_model_init(out, name);
    if (spec_check(spec, err) != 0)
        return tsl_err_prefix(err, "model %s", out->name);
    int rc;
    switch (spec->arch) {
    case TSL_ARCH_GPT: rc = build_gpt(spec, out, err); break;
    case TSL_ARCH_BERT: rc = build_bert(spec, out, err); break;
    case TSL_ARCH_T5: rc = build_t5(spec, out, err); break;
    case TSL_ARCH_VIT: rc = build_vit(spec, out, err); break;
    case TSL_ARCH_NEOX: rc = build_neox(spec, out, err); break;
    default: rc = build_llama(spec, out, err); break;
    }
    if (rc != 0)
        tsl_model_free(out);
    return rc;
}

/* ---- presets with their own structure ---- */

struct preset_def;
typedef int (*preset_build_fn)(const struct preset_def *p, tsl_model_t *m, tsl_err_t *err);

typedef struct preset_def {
    tsl_model_preset_t info;
    tsl_arch_spec_t spec;   /* families; unused when custom is set */
    preset_build_fn custom; /* Swin, TransGAN */
    uint32_t depth[4];      /* Swin: layers per stage */
} preset_def_t;

/*
 * Swin (Liu et al. 2021) at Galvatron's Swin-Huge widths: image 224, patch 4,
 * stages of 56², 28², 14², 7² tokens at C = 320·2^k, 8/16/32/64 heads (head dim 40,
 * Galvatron's swin/scripts/train_swin_huge_hp_layerwise.sh `--num_heads 8 16 32 64`,
 * PKU-DAIR/Hetu df32daa tools/Galvatron), FFN 4C. Attention
 * runs in 7×7 windows, so each query sees 49 keys (attn_window = 49). Each layer
 * carries its (2·7−1)²·heads relative-position table; between stages, patch
 * merging (LN over 4C + a bias-free 4C→2C linear) is charged to the last layer of
 * the stage it reads from, so that every layer's input is still 2·s·h.
 */
static int swin_stage(tsl_model_t *m, uint32_t k, uint32_t depth, tsl_err_t *err)
{
    const uint32_t c0 = 320, side0 = 224 / 4, window = 7 * 7;
    uint64_t c = (uint64_t)c0 << k, side = side0 >> k, s = side * side;
    tsl_layer_t l = {0};
    l.kind = TSL_LAYER_ENCODER;
    l.seq_len = (uint32_t)s;
    l.hidden = (uint32_t)c;
    l.ffn_hidden = (uint32_t)(4 * c);
    l.heads = (uint32_t)(c / 40);
    l.attn_window = window;
    l.extra_params = 13ull * 13ull * l.heads;
    tail_t merge = no_tail;
    if (k < 3) {
        merge.params = 8 * c * c + 8 * c;
        merge.flops = 4.0 * (double)s * (double)c * (double)c; /* s/4 tokens × 4C → 2C */
        merge.act_bytes = 4 * s * c;                           /* LN and GEMM inputs */
    }
    return add_stack(m, l, depth, 0, merge, err);
}

static int build_swin(const preset_def_t *p, tsl_model_t *m, tsl_err_t *err)
{
    tsl_layer_t e = {0};
    e.kind = TSL_LAYER_EMBEDDING;
    e.patch_embed = true;
    e.seq_len = 56 * 56;
    e.hidden = 320;
    e.vocab = 3 * 4 * 4;
    e.extra_params = 2 * 320; /* patch norm */
    e.extra_act_bytes = 2ull * e.seq_len * e.hidden;
    if (tsl_model_add(m, &e, err) != 0)
        return -1;
    for (uint32_t k = 0; k < 4; k++) {
        if (swin_stage(m, k, p->depth[k], err) != 0)
            return -1;
    }
    tsl_layer_t hd = {0};
    hd.kind = TSL_LAYER_HEAD;
    hd.seq_len = 49;
    hd.hidden = 2560;
    hd.vocab = 1000;
    hd.head_tokens = 1; /* average-pooled */
    hd.extra_params = 2 * 2560 + 1000;
    hd.extra_act_bytes = 2ull * 49 * 2560;
    hd.final_norm = true; /* the last stage's norm before the pooling */
    return tsl_model_add(m, &hd, err);
}

/*
 * AMP's heterogeneous model (Sec. 4.3, App. 6.5.3): a TransGAN generator with 12
 * layers at hidden 1024 (stage 1) and 12 at hidden 16 (stage 6), bottom width 9.
 * What the paper leaves out follows the TransGAN generator that AMP ran (its
 * released launch script: latent 512, 4 heads, MLP ratio 4, generator window 18):
 * stage 1 attends over all 9×9 = 81 tokens; five 2× upsamplings (three of them
 * pixel shuffles, 1024 → 16 channels) bring stage 6 to 288×288 = 82944 tokens,
 * attended in 18×18 windows (324 keys per query). The latent projection
 * (512 → 81·1024) is the embedding; the position tables of stages 2–6 are
 * charged to the last stage-1 layer, which feeds the upsampling; the head is the
 * 1×1 convolution to 3 channels. Norms are pixel norms (no parameters) in the
 * original; the standard LN count (4·h per layer) is kept for simplicity.
 */
static int build_transgan(const preset_def_t *p, tsl_model_t *m, tsl_err_t *err)
{
    (void)p;
    const uint64_t bw = 9, latent = 512, h1 = 1024;
    tsl_layer_t e = {0};
    e.kind = TSL_LAYER_EMBEDDING;
    e.seq_len = (uint32_t)(bw * bw);
    e.hidden = (uint32_t)h1;
    e.positions = (uint32_t)(bw * bw);
    e.extra_params = latent * bw * bw * h1 + bw * bw * h1;
    e.extra_fwd_flops = 2.0 * (double)(latent * bw * bw * h1);
    /* the fork's projection is a LayerSpec(nn.Linear), not Megatron's parallel
     * linear: every TP rank holds it whole (model.h tp_repl_extra) */
    e.tp_repl_extra = true;
    if (tsl_model_add(m, &e, err) != 0)
        return -1;

    tsl_layer_t l = {0};
    l.kind = TSL_LAYER_ENCODER;
    l.seq_len = (uint32_t)(bw * bw);
    l.hidden = (uint32_t)h1;
    l.ffn_hidden = (uint32_t)(4 * h1);
    l.heads = 4;
    l.extra_params = (2 * bw - 1) * (2 * bw - 1) * 4; /* relative-position table */
    l.transgan_eager = true; /* the block as AMP's fork writes it (roofline.h) */
    l.tp_repl_extra = true;  /* its relative-position table and the stages' position
                                tables: nn.Parameters, whole on every TP rank */
    tail_t pos_2_to_6 = no_tail;
    pos_2_to_6.params = (18 * 18 + 36 * 36) * h1 + 72 * 72 * (h1 / 4) + 144 * 144 * (h1 / 16) +
                        288 * 288 * (h1 / 64);
    if (add_stack(m, l, 12, 0, pos_2_to_6, err) != 0)
        return -1;

    l.seq_len = 288 * 288;
    l.hidden = (uint32_t)(h1 / 64);
    l.ffn_hidden = (uint32_t)(4 * h1 / 64);
    l.attn_window = 18 * 18;
    l.extra_params = 35 * 35 * 4;
    if (add_stack(m, l, 12, 0, no_tail, err) != 0)
        return -1;

    tsl_layer_t hd = {0};
    hd.kind = TSL_LAYER_HEAD;
    hd.seq_len = 288 * 288;
    hd.hidden = (uint32_t)(h1 / 64);
    hd.vocab = 3;
    hd.extra_params = 3; /* conv bias */
    return tsl_model_add(m, &hd, err);
}

/* ---- the table ---- */

#define GALVATRON "Galvatron-BMW (Wang et al.), Table I: Statistics of Models"
#define AUTOPIPE  "AutoPipe (Liu et al.), Table I: benchmark models"
#define H3T       "H3T (Wang et al.), Table 2: different sizes of BERT (seq 512, App. C.3)"

#define BERT(L, H, F, A)                                                                           \
    {                                                                                              \
        .arch = TSL_ARCH_BERT, .layers = L, .hidden = H, .ffn_hidden = F, .heads = A,              \
        .seq_len = 512, .vocab = 30522, .positions = 512, .type_vocab = 2, .tied_head = true       \
    }
#define GPT(L, H, A, S)                                                                            \
    {                                                                                              \
        .arch = TSL_ARCH_GPT, .layers = L, .hidden = H, .ffn_hidden = 4 * (H), .heads = A,         \
        .seq_len = S, .vocab = 50257, .positions = S, .tied_head = true                            \
    }
/* ViT at Galvatron's image and patch: 224 / 16 = 14² = 196 patches + the class token
 * (vit/scripts/train_vit_huge_hp_layerwise.sh, PKU-DAIR/Hetu df32daa tools/Galvatron:
 * --image_size 224 --patch_size 16 --seq_length 196; Table I's 646.5 MB per sample
 * for ViT-Huge-32 is 197 tokens' fp32 activations, not 257's) */
#define VIT(L, H, A)                                                                               \
    {                                                                                              \
        .arch = TSL_ARCH_VIT, .layers = L, .hidden = H, .ffn_hidden = 4 * (H), .heads = A,         \
        .seq_len = 197, .channels = 3, .patch = 16, .classes = 1000                                \
    }
#define T5(L, DS)                                                                                  \
    {                                                                                              \
        .arch = TSL_ARCH_T5, .layers = L, .dec_layers = L, .hidden = 1024, .ffn_hidden = 4096,     \
        .heads = 16, .seq_len = 512, .dec_seq_len = DS, .vocab = 32128, .rel_buckets = 32,         \
        .tied_head = true                                                                          \
    }

/* BLOOM (BigScience, arXiv:2211.05100 Table 3; transformers' BloomConfig as
 * common/hf_config.c read_bloom reads it): the GPT family with ALiBi in place of a
 * position table and a LayerNorm on the embedding, FFN 4h, biases, tied head, the
 * tokenizer's 250680 rows padded to 250880 (the configs' vocab_size), seq 2048
 * (tr11-176B-ml.slurm SEQ_LEN, Sec. 3.5). */
#define BLOOM(L, H, A)                                                                             \
    {                                                                                              \
        .arch = TSL_ARCH_GPT, .layers = L, .hidden = H, .ffn_hidden = 4 * (H), .heads = A,         \
        .seq_len = 2048, .vocab = 250880, .tied_head = true, .alibi = true, .embed_norm = true     \
    }

#define LLAMA3 "Llama 3 (Dubey et al. 2024), Table 3; seq 8192"
#define LLAMA3_SPEC(L, H, F, A)                                                                    \
    {                                                                                              \
        .arch = TSL_ARCH_LLAMA, .layers = L, .hidden = H, .ffn_hidden = F, .heads = A,             \
        .kv_heads = 8, .seq_len = 8192, .vocab = 128256, .gated_ffn = true, .tied_head = false     \
    }

#define GPT_OSS_SPEC(L, E)                                                                         \
    {                                                                                              \
        .arch = TSL_ARCH_LLAMA, .layers = L, .hidden = 2880, .ffn_hidden = 2880, .heads = 64,      \
        .kv_heads = 8, .head_dim = 64, .seq_len = 4096, .vocab = 201088, .gated_ffn = true,        \
        .attn_window = 128, .full_attn_layers = {0xAAAAAAAAAAAAAAAAull}, .linear_bias = true,      \
        .attn_sinks = true, .experts = E, .experts_per_tok = 4, .moe_ffn_hidden = 2880,            \
        .router_bias = true, .router_norm = true, .glu_clamp = true, .glu_limit = 7.0              \
    }
/* E experts; MOE the MoE layers (0: all); QK the QK-norm */
#define LLAMA4_SPEC(E, MOE, QK)                                                                    \
    {                                                                                              \
        .arch = TSL_ARCH_LLAMA, .layers = 48, .hidden = 5120, .ffn_hidden = 16384, .heads = 40,    \
        .kv_heads = 8, .head_dim = 128, .seq_len = 8192, .vocab = 202048, .gated_ffn = true,       \
        .attn_window = 8192, .attn_chunked = true, .full_attn_layers = {0x8888888888888888ull},    \
        .nope_layers = {0x8888888888888888ull}, .qk_norm = QK, .experts = E, .experts_per_tok = 1, \
        .moe_ffn_hidden = 8192, .shared_experts = 1, .shared_ffn_hidden = 8192, .moe_layers = {    \
            MOE                                                                                    \
        }                                                                                          \
    }

static const preset_def_t presets[] = {
    {{"BERT-Huge-32", GALVATRON, 672000000, false}, BERT(32, 1280, 5120, 16), NULL, {0}},
    {{"BERT-Huge-48", GALVATRON, 987000000, false}, BERT(48, 1280, 5120, 16), NULL, {0}},
    {{"BERT-xHuge", GALVATRON, 10200000000, false}, BERT(128, 2560, 10240, 40), NULL, {0}},
    {{"ViT-Huge-32", GALVATRON, 632000000, false}, VIT(32, 1280, 16), NULL, {0}},
    {{"ViT-Huge-48", GALVATRON, 947000000, false}, VIT(48, 1280, 16), NULL, {0}},
    {{"ViT-xHuge", GALVATRON, 10100000000, false}, VIT(128, 2560, 40), NULL, {0}},
    {{"T5-Large-32", GALVATRON, 502000000, false}, T5(16, 512), NULL, {0}},
    {{"T5-Large-48", GALVATRON, 737000000, false}, T5(24, 512), NULL, {0}},
    {{"T5-512/4-32", GALVATRON " (encoder seq 512, decoder seq 4, Sec. VII-A)", 502000000, false},
     T5(16, 4),
     NULL,
     {0}},
    {{"T5-512/4-48", GALVATRON " (encoder seq 512, decoder seq 4, Sec. VII-A)", 737000000, false},
     T5(24, 4),
     NULL,
     {0}},
    {{"Swin-Huge-32", GALVATRON, 701000000, false}, {0}, build_swin, {2, 2, 26, 2}},
    {{"Swin-Huge-48", GALVATRON, 1016000000, false}, {0}, build_swin, {2, 2, 42, 2}},
    {{"GPT3-15B", GALVATRON, 15400000000, false}, GPT(48, 5120, 40, 2048), NULL, {0}},
    {{"GPT3-39B", GALVATRON, 39100000000, false}, GPT(48, 8192, 64, 2048), NULL, {0}},
    {{"GPT3-65B", GALVATRON, 64900000000, false}, GPT(80, 8192, 64, 2048), NULL, {0}},
    {{"GPT3-175B", "GPT-3 (Brown et al. 2020), Table 2.1; the H3T issue setting (h3t.txt 3.3)",
      175000000000, false},
     GPT(96, 12288, 96, 2048),
     NULL,
     {0}},
    /* the counts the HuggingFace model cards state, to the parameter (bigscience/bloom:
     * 176,247,271,424; bigscience/bloom-7b1: 7,069,016,064); the shapes are their
     * config.json's (tests/data/hf/bloom_176b.json, bloom_7b1.json) */
    {{"BLOOM-176B",
      "BLOOM (BigScience 2022, arXiv:2211.05100 Table 3); HuggingFace bigscience/bloom model card",
      176247271424, false},
     BLOOM(70, 14336, 112),
     NULL,
     {0}},
    {{"BLOOM-7B1",
      "BLOOM (BigScience 2022, arXiv:2211.05100 Table 3); HuggingFace bigscience/bloom-7b1 model "
      "card",
      7069016064, false},
     BLOOM(30, 4096, 32),
     NULL,
     {0}},
    {{"GPT2-345M", AUTOPIPE, 345000000, false}, GPT(24, 1024, 16, 1024), NULL, {0}},
    {{"GPT2-762M", AUTOPIPE, 762000000, false}, GPT(36, 1280, 20, 1024), NULL, {0}},
    {{"GPT2-1.3B", AUTOPIPE, 1314000000, false}, GPT(24, 2048, 32, 1024), NULL, {0}},
    {{"BERT-Large", AUTOPIPE, 340000000, false}, BERT(24, 1024, 4096, 16), NULL, {0}},
    {{"TransGAN-Hetero",
      "AMP (Li et al., NeurIPS 2022), Sec. 4.3 and App. 6.5.3; the paper gives no "
      "parameter count: published_params is Tessel's own figure (docs/models.md)",
      199540179, true},
     {0},
     build_transgan,
     {0}},
    {{"BERT-1.8B", H3T, 1840000000, false}, BERT(48, 1024, 16384, 32), NULL, {0}},
    {{"BERT-6B", H3T, 6680000000, false}, BERT(48, 1024, 65536, 128), NULL, {0}},
    {{"BERT-13B", H3T, 13800000000, false}, BERT(48, 2048, 65536, 128), NULL, {0}},
    {{"BERT-100B", H3T, 102000000000, false}, BERT(56, 12288, 49152, 96), NULL, {0}},
    {{"Llama2-7B", "Llama 2 (Touvron et al. 2023), 7B: 6.74B parameters; seq 4096", 6740000000,
      false},
     {.arch = TSL_ARCH_LLAMA,
      .layers = 32,
      .hidden = 4096,
      .ffn_hidden = 11008,
      .heads = 32,
      .seq_len = 4096,
      .vocab = 32000,
      .gated_ffn = true,
      .tied_head = false},
     NULL,
     {0}},
    /* Llama 3 (Dubey et al. 2024, "The Llama 3 Herd of Models"), Table 3: GQA with 8
     * KV heads, SwiGLU, RoPE, vocabulary 128,256, untied head; pre-training at
     * sequence 8192 (Sec. 3.4.1) */
    {{"Llama3-8B", LLAMA3 ", 8B: 8.03B parameters", 8030000000, false},
     LLAMA3_SPEC(32, 4096, 14336, 32),
     NULL,
     {0}},
    {{"Llama3-70B", LLAMA3 ", 70B: 70.6B parameters", 70600000000, false},
     LLAMA3_SPEC(80, 8192, 28672, 64),
     NULL,
     {0}},
    {{"Llama3-405B", LLAMA3 ", 405B: 405B parameters", 405000000000, false},
     LLAMA3_SPEC(126, 16384, 53248, 128),
     NULL,
     {0}},
    /* Mixtral-8x7B (Mistral AI, "Mixtral of experts", 2023-12-11 announcement:
     * 46.7B total, 12.9B used per token; Jiang et al. 2024, Table 1): Mistral-7B's
     * block with 8 SwiGLU experts of 14336, top-2, in every layer; GQA 32/8 heads;
     * vocabulary 32000, untied head. No window (the Mixtral config has none). */
    {{"Mixtral-8x7B", "Mixtral of experts (Mistral AI 2023): 46.7B total, 12.9B active",
      46700000000, false},
     {.arch = TSL_ARCH_LLAMA,
      .layers = 32,
      .hidden = 4096,
      .ffn_hidden = 14336,
      .heads = 32,
      .kv_heads = 8,
      .seq_len = 4096,
      .vocab = 32000,
      .gated_ffn = true,
      .experts = 8,
      .experts_per_tok = 2,
      .moe_ffn_hidden = 14336,
      .router_norm = true}, /* softmax, top 2, renormalised */
     NULL,
     {0}},
    /* DeepSeek-V3 (DeepSeek-AI 2024, arXiv 2412.19437, Sec. 4.2; its config.json):
     * 61 layers, h 7168, MLA with 128 heads (q_lora 1536, kv_lora 512, nope 128,
     * rope 64, v 128); the first 3 layers dense (18432), then 256 routed experts of
     * 2048, top-8, and 1 shared expert; the router's score-correction bias; vocab
     * 129280, untied; pre-training at sequence 4096. 671B total / 37B active are the
     * main model's: the multi-token-prediction module (14B, one more layer sharing
     * embedding and head) is not built (docs/models.md). */
    {{"DeepSeek-V3", "DeepSeek-V3 technical report (2024): 671B total, 37B active (MTP excluded)",
      671000000000, false},
     {.arch = TSL_ARCH_LLAMA,
      .layers = 61,
      .hidden = 7168,
      .ffn_hidden = 18432,
      .heads = 128,
      .seq_len = 4096,
      .vocab = 129280,
      .gated_ffn = true,
      .experts = 256,
      .experts_per_tok = 8,
      .moe_ffn_hidden = 2048,
      .shared_experts = 1,
      .shared_ffn_hidden = 2048,
      .router_bias = true,
      .router_score = TSL_ROUTER_SIGMOID, /* noaux_tc: sigmoid, 8 groups, top 4, norm, 2.5 */
      .router_norm = true,
      .router_scale = 2.5,
      .router_groups = 8,
      .router_topk_groups = 4,
      .moe_layers = {~7ull}, /* layers 3..60 */
      .q_lora_rank = 1536,
      .kv_lora_rank = 512,
      .qk_nope_dim = 128,
      .qk_rope_dim = 64,
      .v_head_dim = 128},
     NULL,
     {0}},
    /* gpt-oss (OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card", arXiv 2508.10925,
     * and the config.json of each): h 2880, 64 heads of 64 (d = 4096 > h)
     * with 8 K/V heads, biases on Q/K/V/O, a learned sink per head; even layers a
     * 128-token sliding window, odd layers full; every layer MoE: experts of 2880
     * (gate/up and down with biases) behind a router with a bias, top-4; vocab
     * 201088, untied; pre-training context 4096 (initial_context_length). MXFP4
     * stores the experts, it changes no count. Published active counts leave the
     * input embedding out (docs/models.md). */
    {{"GPT-OSS-120B",
      "gpt-oss model card (OpenAI 2025, arXiv 2508.10925): 116.8B total, 5.1B active", 116800000000,
      false},
     GPT_OSS_SPEC(36, 128),
     NULL,
     {0}},
    {{"GPT-OSS-20B", "gpt-oss model card (OpenAI 2025, arXiv 2508.10925): 20.9B total, 3.6B active",
      20900000000, false},
     GPT_OSS_SPEC(24, 32),
     NULL,
     {0}},
    /* Llama 4 (Meta, Llama 4 model card, and the text_config of each config.json):
     * 48 layers, h 5120, 40 heads of 128 with 8 K/V heads; every 4th layer (3, 7,
     * ...) NoPE with full attention, the others RoPE with 8192-token chunked
     * attention; MoE layers of 1 shared + top-1 of E routed experts of 8192, dense
     * layers 16384; vocab 202048, untied; pre-training context 8192 (rope_scaling's
     * original_max_position_embeddings). Scout: 16 experts in every layer, L2
     * QK-norm on the RoPE layers; Maverick: 128 experts on the odd layers, no
     * QK-norm. The counts are the text model's: the published 109B / 400B include
     * the vision encoder (0.87B), which is not planned (docs/models.md). */
    {{"Llama4-Scout", "Llama 4 model card (Meta 2025): 109B total (vision included), 17B active",
      109000000000, false},
     LLAMA4_SPEC(16, 0, TSL_QK_NORM_L2),
     NULL,
     {0}},
    {{"Llama4-Maverick", "Llama 4 model card (Meta 2025): 400B total (vision included), 17B active",
      400000000000, false},
     LLAMA4_SPEC(128, 0xAAAAAAAAAAAAAAAAull, TSL_QK_NORM_NONE),
     NULL,
     {0}},
    /* Nemotron 3 Nano 30B-A3B (NVIDIA 2025; Megatron-Bridge recipes/nemotronh/
     * nemotron_3_nano.py at 21d102f5e and the HF config.json): a hybrid of 23 Mamba-2
     * mixers (64 heads of 64, state 128, 8 groups, conv 4, chunk 128), 6 GQA
     * attention blocks (32 heads of 128, 2 K/V heads) and 23 MoE blocks (128 squared-
     * ReLU experts of 1856, top 6, one shared expert of 3712, a sigmoid router with a
     * score-correction bias, scaled by 2.5); h 2688, vocab 131072, untied head;
     * pre-training at sequence 8192. The model card: 31.6B total, 3.2B active (3.6B
     * with the embeddings). */
    {{"Nemotron-3-Nano", "Nemotron 3 Nano model card (NVIDIA 2025): 31.6B total, 3.2B active",
      31600000000, false},
     {.arch = TSL_ARCH_LLAMA,
      .layers = 52,
      .hidden = 2688,
      .ffn_hidden = 1856,
      .heads = 32,
      .kv_heads = 2,
      .head_dim = 128,
      .seq_len = 8192,
      .vocab = 131072,
      .experts = 128,
      .experts_per_tok = 6,
      .moe_ffn_hidden = 1856,
      .shared_experts = 1,
      .shared_ffn_hidden = 3712,
      .router_bias = true,
      .router_score = TSL_ROUTER_SIGMOID,
      .router_norm = true,
      .router_scale = 2.5,
      .relu2 = true,
      .hybrid = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
      .ssm_heads = 64,
      .ssm_head_dim = 64,
      .ssm_state = 128,
      .ssm_groups = 8,
      .ssm_conv = 4,
      .ssm_chunk = 128},
     NULL,
     {0}},
};

#define N_PRESETS (sizeof(presets) / sizeof(presets[0]))

/* ---- RoPE and norm epsilon ----
 *
 * What a stack needs to build a preset's positions and norms, which no cost reads
 * (model.h tsl_model_rope_t): rope_theta, rope_scaling and rms_norm_eps (Nemotron-H:
 * layer_norm_epsilon) of the model's config.json on the HuggingFace Hub, as
 * tests/data/hf holds them where it has the model (test_hf_config.c
 * test_preset_rope compares them). Without them the Megatron export would leave
 * --rotary-base out and Megatron-LM build RoPE at its 10000 where Llama 3 has
 * 500000. Presets not listed (learned or relative positions) give none. */

/* RoPE of base B without scaling */
#define ROPE(B)                                                                                    \
    {                                                                                              \
        .base = B                                                                                  \
    }
/* rope_type llama3 as Llama 3.1's configs give it: factor 8, low_freq_factor 1,
 * high_freq_factor 4, original_max_position_embeddings 8192 */
#define ROPE_LLAMA31                                                                               \
    {                                                                                              \
        .base = 500000, .scaling = TSL_ROPE_SCALING_LLAMA3, .scaling_type = "llama3",              \
        .scaling_factor = 8, .low_freq_factor = 1, .high_freq_factor = 4,                          \
        .original_max_positions = 8192                                                             \
    }
/* YaRN (rope_type yarn) of factor F over original_max_position_embeddings 4096,
 * beta_fast 32, beta_slow 1, mscale M, mscale_all_dim MA */
#define ROPE_YARN(B, F, M, MA)                                                                     \
    {                                                                                              \
        .base = B, .scaling = TSL_ROPE_SCALING_YARN, .scaling_type = "yarn", .scaling_factor = F,  \
        .original_max_positions = 4096, .beta_fast = 32, .beta_slow = 1, .mscale = M,              \
        .mscale_all_dim = MA                                                                       \
    }

/* YaRN as above with rope_scaling "truncate": false (gpt-oss) */
#define ROPE_YARN_UNTRUNCATED(B, F, M, MA)                                                         \
    {                                                                                              \
        .base = B, .scaling = TSL_ROPE_SCALING_YARN, .scaling_type = "yarn", .scaling_factor = F,  \
        .original_max_positions = 4096, .beta_fast = 32, .beta_slow = 1, .mscale = M,              \
        .mscale_all_dim = MA, .yarn_no_truncate = true                                             \
    }

typedef struct preset_rope {
    const char *name;
    tsl_model_rope_t rope;
    double norm_eps;
} preset_rope_t;

static const preset_rope_t preset_ropes[] = {
    /* Llama-2-7b-hf states no rope_theta: transformers' LlamaConfig default */
    {"Llama2-7B", ROPE(10000), 1e-5},
    {"Llama3-8B", ROPE(500000), 1e-5}, /* Meta-Llama-3-8B, -70B */
    {"Llama3-70B", ROPE(500000), 1e-5},
    {"Llama3-405B", ROPE_LLAMA31, 1e-5}, /* 405B exists as Llama 3.1 only */
    {"Mixtral-8x7B", ROPE(1000000), 1e-5},
    {"DeepSeek-V3", ROPE_YARN(10000, 40, 1, 1), 1e-6},
    /* mscale: transformers' defaults; "truncate": false in both config.json */
    {"GPT-OSS-120B", ROPE_YARN_UNTRUNCATED(150000, 32, 1, 0), 1e-5},
    {"GPT-OSS-20B", ROPE_YARN_UNTRUNCATED(150000, 32, 1, 0), 1e-5},
    {"Llama4-Scout", ROPE_LLAMA31, 1e-5},
    {"Llama4-Maverick", ROPE(500000), 1e-5},
    {"Nemotron-3-Nano", ROPE(10000), 1e-5},
};

/* m's RoPE and norm epsilon from preset_ropes (none where not listed). */
static void set_rope(const preset_def_t *d, tsl_model_t *m)
{
    for (size_t i = 0; i < sizeof preset_ropes / sizeof preset_ropes[0]; i++) {
        if (strcmp(preset_ropes[i].name, d->info.name) == 0) {
            tsl_model_set_rope(m, &preset_ropes[i].rope);
            m->norm_eps = preset_ropes[i].norm_eps;
        }
    }
}

size_t tsl_model_preset_count(void)
{
    return N_PRESETS;
}

const tsl_model_preset_t *tsl_model_preset_at(size_t i)
{
    return i < N_PRESETS ? &presets[i].info : NULL;
}

static bool same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    }
    return *a == *b;
}

static const preset_def_t *find_def(const char *name)
{
    for (size_t i = 0; name && i < N_PRESETS; i++) {
        if (same_name(presets[i].info.name, name))
            return &presets[i];
    }
    return NULL;
}

const tsl_model_preset_t *tsl_model_preset_find(const char *name)
{
    const preset_def_t *d = find_def(name);
    return d ? &d->info : NULL;
}

/* "unknown preset" names the input and the choices, cut to fit the buffer; the
 * input escaped (err.h tsl_err_shown): a name with a newline (a daemon client's
 * model_preset, --model "$(cat file)") printed the rest as a line of its own. */
static int unknown_preset(const char *name, tsl_err_t *err)
{
    char list[TSL_ERR_MAX], hint[160], shown[TSL_ERR_SHOWN_MAX(64)];
    size_t used = 0;
    tsl_nearest_t near;
    tsl_nearest_init(&near, name);
    list[0] = '\0';
    for (size_t i = 0; i < N_PRESETS; i++) {
        tsl_nearest_offer(&near, presets[i].info.name);
        if (used >= sizeof(list))
            continue;
        int n =
            snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", presets[i].info.name);
        if (n > 0)
            used += (size_t)n;
    }
    return tsl_err_set(err, "model: unknown preset \"%s\"%s; known presets: %s",
                       tsl_err_shown(name, 64, shown, sizeof shown),
                       tsl_nearest_hint(&near, hint, sizeof hint), list);
}

int tsl_model_preset_seq(const char *name, uint32_t seq_len, tsl_model_t *out, tsl_err_t *err)
{
    const preset_def_t *d = find_def(name);
    if (seq_len == 0 || d == NULL)
        return tsl_model_preset(name, out, err);
    tsl_model_init(out, d->info.name);
    const char *why = NULL;
    tsl_arch_spec_t sp = d->spec;
    if (d->custom != NULL || sp.arch == TSL_ARCH_VIT)
        why = "its sequence is set by the image and patch sizes";
    else if (sp.positions != 0 && seq_len > sp.positions)
        why = "it is longer than the preset's learned position table";
    if (why != NULL)
        return tsl_err_set(err, "seq_len: %u cannot be used with preset %s: %s", seq_len,
                           d->info.name, why);
    sp.seq_len = seq_len; /* T5: the encoder; its decoder keeps its own length */
    if (tsl_model_build(&sp, d->info.name, out, err) != 0)
        return -1;
    set_rope(d, out); /* a sequence of its own keeps the model's RoPE */
    return 0;
}

int tsl_model_preset(const char *name, tsl_model_t *out, tsl_err_t *err)
{
    if (out == NULL)
        return tsl_err_set(err, "model: NULL output model");
    if (name == NULL || name[0] == '\0') {
        tsl_model_init(out, "");
        return tsl_err_set(err, "model: no preset name given");
    }
    const preset_def_t *d = find_def(name);
    if (d == NULL) {
        tsl_model_init(out, "");
        return unknown_preset(name, err);
    }
    if (d->custom == NULL) {
        if (tsl_model_build(&d->spec, d->info.name, out, err) != 0)
            return -1;
    } else {
        tsl_model_init(out, d->info.name);
        if (d->custom(d, out, err) != 0) {
            tsl_model_free(out);
            return -1;
        }
    }
    set_rope(d, out);
    return 0;
}
