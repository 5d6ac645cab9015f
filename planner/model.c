/*
 * model.c — layer shapes to parameters, FLOPs and activation bytes (model.h),
 * and the model builder.
 *
 * Every figure is computed in double and converted at the end: a double holds
 * every integer below 2^53 exactly, so the counts are exact for any sane shape,
 * and a shape whose counts would pass 2^53 is refused instead of wrapping a
 * uint64 silently.
 */
#include "model.h"
#include "mamba.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_MAX 9007199254740992.0 /* 2^53 */

static const char *const kind_names[TSL_LAYER_KIND_COUNT] = {
    [TSL_LAYER_EMBEDDING] = "embedding",
    [TSL_LAYER_ENCODER] = "encoder",
    [TSL_LAYER_DECODER] = "decoder",
    [TSL_LAYER_ATTENTION] = "attention",
    [TSL_LAYER_FFN] = "ffn",
    [TSL_LAYER_HEAD] = "head",
    [TSL_LAYER_MAMBA] = "mamba",
    [TSL_LAYER_MTP] = "mtp",
};

const char *tsl_layer_kind_name(tsl_layer_kind_t kind)
{
    if ((unsigned)kind >= TSL_LAYER_KIND_COUNT)
        return "unknown";
    return kind_names[kind];
}

/* The shape as doubles, with the defaults (d = h, e = d, w = s) resolved. */
typedef struct dims {
    double s, h, f, a, d, e, t, w, V, P, g, n;
    double r; /* a routed expert's width in and out: ℓ under latent MoE, else h */
    double u; /* an activation element's bytes over 2: 1 (16-bit), 2 (fp32_acts) */
} dims_t;

typedef struct figures {
    double params, flops, repl, shard, bnd, score, core_flops;
    double idle_params; /* parameters of the experts a token is not routed to */
    uint32_t allreduces;
} figures_t;

bool tsl_layer_has_attention(const tsl_layer_t *l)
{
    return l->kind == TSL_LAYER_ENCODER || l->kind == TSL_LAYER_DECODER ||
           l->kind == TSL_LAYER_ATTENTION;
}

bool tsl_layer_has_ffn(const tsl_layer_t *l)
{
    return l->kind == TSL_LAYER_ENCODER || l->kind == TSL_LAYER_DECODER || l->kind == TSL_LAYER_FFN;
}

bool tsl_layer_is_body(const tsl_layer_t *l)
{
    return l->kind != TSL_LAYER_EMBEDDING && l->kind != TSL_LAYER_HEAD && l->kind != TSL_LAYER_MTP;
}

/* ---- shape checks: each names the field and says what would be valid ---- */

static int check_attention(const tsl_layer_t *l, const char *kn, tsl_err_t *err)
{
    uint32_t d = l->attn_dim ? l->attn_dim : l->hidden;
    if (l->heads == 0)
        return tsl_err_set(err,
                           "%s layer: heads: 0 is not valid for a layer with attention; "
                           "give the number of attention heads, e.g. hidden/64",
                           kn);
    if (d % l->heads != 0)
        return tsl_err_set(err,
                           "%s layer: attn_dim: %u is not a multiple of heads (%u); "
                           "the attention width must be heads x head_dim",
                           kn, d, l->heads);
    if (l->kv_heads > l->heads || (l->kv_heads && l->heads % l->kv_heads != 0))
        return tsl_err_set(err,
                           "%s layer: kv_heads: %u must divide heads (%u); use 0 for "
                           "plain multi-head attention",
                           kn, l->kv_heads, l->heads);
    if (l->kv_lora_rank && (l->qk_nope_dim + (uint64_t)l->qk_rope_dim == 0 || l->v_head_dim == 0))
        return tsl_err_set(err,
                           "%s layer: latent attention (kv_lora_rank %u) needs qk_nope_dim + "
                           "qk_rope_dim > 0 and v_head_dim > 0",
                           kn, l->kv_lora_rank);
    if (l->kv_lora_rank && (!l->no_bias || l->kind == TSL_LAYER_DECODER))
        return tsl_err_set(err,
                           "%s layer: latent attention (kv_lora_rank %u) is modelled without "
                           "biases and without cross-attention: set no_bias",
                           kn, l->kv_lora_rank);
    if (!l->kv_lora_rank && (l->q_lora_rank || l->qk_nope_dim || l->qk_rope_dim || l->v_head_dim))
        return tsl_err_set(err,
                           "%s layer: q_lora_rank, qk_nope_dim, qk_rope_dim and v_head_dim "
                           "belong to latent attention: give kv_lora_rank too",
                           kn);
    if (l->attn_chunked && l->attn_window == 0)
        return tsl_err_set(err,
                           "%s layer: attn_chunked: set without attn_window, the chunk size; "
                           "give attn_window (Llama 4: 8192) or clear attn_chunked",
                           kn);
    if (l->kind == TSL_LAYER_DECODER && l->cross_seq_len == 0)
        return tsl_err_set(err,
                           "%s layer: cross_seq_len: 0 is not valid for a decoder layer; "
                           "give the encoder length it attends to, e.g. 512",
                           kn);
    return 0;
}

static int check_ends(const tsl_layer_t *l, const char *kn, tsl_err_t *err)
{
    if (l->kind == TSL_LAYER_HEAD && l->vocab == 0)
        return tsl_err_set(err,
                           "%s layer: vocab: 0 is not valid for a head; give the number "
                           "of outputs (vocabulary or classes)",
                           kn);
    if (l->kind == TSL_LAYER_HEAD && l->head_tokens > l->seq_len)
        return tsl_err_set(err, "%s layer: head_tokens: %u exceeds seq_len (%u)", kn,
                           l->head_tokens, l->seq_len);
    if (l->kind == TSL_LAYER_EMBEDDING && l->patch_embed && l->vocab == 0)
        return tsl_err_set(err,
                           "%s layer: vocab: 0 is not valid for a patch embedding; give "
                           "channels x patch^2, e.g. 3*16*16 = 768",
                           kn);
    if (l->embed_norm && l->kind != TSL_LAYER_EMBEDDING)
        return tsl_err_set(err, "%s layer: embed_norm: only an embedding layer has one", kn);
    if (l->alibi && !tsl_layer_has_attention(l))
        return tsl_err_set(err, "%s layer: alibi: the layer has no self-attention to bias", kn);
    if (l->qk_norm > TSL_QK_NORM_L2)
        return tsl_err_set(err,
                           "%s layer: qk_norm: %u is not 0 (none), 1 (per head), 2 (full) or "
                           "3 (L2)",
                           kn, l->qk_norm);
    /* a block without self-attention (a split layer's FFN) ignores it */
    if (l->qk_norm && l->kv_lora_rank)
        return tsl_err_set(err,
                           "%s layer: qk_norm: latent attention normalises its latents, not "
                           "query and key heads; set qk_norm 0",
                           kn);
    if (l->final_norm && l->kind != TSL_LAYER_HEAD)
        return tsl_err_set(err, "%s layer: final_norm: only a head layer has one", kn);
    if (l->eager_norm && !l->rms_norm)
        return tsl_err_set(err,
                           "%s layer: eager_norm: HF T5's eager norm is an RMSNorm; set "
                           "rms_norm too",
                           kn);
    if (l->layer_scale && !l->hf_gpt2_eager)
        return tsl_err_set(err,
                           "%s layer: layer_scale: the division by the layer's index is "
                           "priced in transformers' GPT2Block alone; set hf_gpt2_eager",
                           kn);
    if (l->ffn_dropout && l->ffn_hidden == 0)
        return tsl_err_set(err, "%s layer: ffn_dropout: the layer has no FFN to drop in", kn);
    if (l->kind == TSL_LAYER_EMBEDDING && l->vocab == 0 && l->positions == 0 &&
        l->extra_params == 0)
        return tsl_err_set(err,
                           "%s layer: vocab and positions are both 0: the embedding has "
                           "nothing to embed",
                           kn);
    return 0;
}

static int check_moe(const tsl_layer_t *l, const char *kn, tsl_err_t *err)
{
    if (l->experts == 0) {
        if (l->experts_per_tok || l->shared_experts || l->shared_ffn_hidden || l->moe_latent)
            return tsl_err_set(err,
                               "%s layer: experts_per_tok, shared_experts, shared_ffn_hidden and "
                               "moe_latent belong to a mixture-of-experts layer: give experts too",
                               kn);
        return 0;
    }
    if (l->moe_latent >= l->hidden)
        return tsl_err_set(err,
                           "%s layer: moe_latent: %u must be below hidden (%u): the latent "
                           "projection narrows the routed experts' rows (Nemotron 3 Super: 1024 "
                           "of 4096)",
                           kn, l->moe_latent, l->hidden);
    if (!tsl_layer_has_ffn(l) || l->kind == TSL_LAYER_DECODER)
        return tsl_err_set(err,
                           "%s layer: experts: %u; only an encoder-kind or FFN layer can "
                           "have routed experts",
                           kn, l->experts);
    if (l->experts_per_tok == 0 || l->experts_per_tok > l->experts)
        return tsl_err_set(err, "%s layer: experts_per_tok: %u must be between 1 and experts (%u)",
                           kn, l->experts_per_tok, l->experts);
    if (l->parallel_block)
        return tsl_err_set(err, "%s layer: experts with parallel_block are not modelled", kn);
    return 0;
}

static int check_shape(const tsl_layer_t *l, tsl_err_t *err)
{
    if ((unsigned)l->kind >= TSL_LAYER_KIND_COUNT)
        return tsl_err_set(err, "kind: %u is not a layer kind (0..%u)", (unsigned)l->kind,
                           (unsigned)TSL_LAYER_KIND_COUNT - 1);
    const char *kn = tsl_layer_kind_name(l->kind);
    if (l->hidden == 0)
        return tsl_err_set(err,
                           "%s layer: hidden: 0 is not a valid size; give the model width, "
                           "e.g. 1024",
                           kn);
    if (l->seq_len == 0)
        return tsl_err_set(err,
                           "%s layer: seq_len: 0 is not valid; give the tokens per sample "
                           "at this layer, e.g. 512",
                           kn);
    if (tsl_layer_has_ffn(l) && l->ffn_hidden == 0)
        return tsl_err_set(err,
                           "%s layer: ffn_hidden: 0 is not valid for a layer with an FFN; "
                           "give its inner size, e.g. 4 x hidden = %llu",
                           kn, 4ull * l->hidden);
    if (tsl_layer_has_attention(l) && check_attention(l, kn, err) != 0)
        return -1;
    if (l->kind == TSL_LAYER_MAMBA && tsl_mamba_check(l, kn, err) != 0)
        return -1;
    if (l->kind != TSL_LAYER_MAMBA && (l->ssm_heads || l->ssm_head_dim || l->ssm_state ||
                                       l->ssm_groups || l->ssm_conv || l->ssm_chunk))
        return tsl_err_set(err, "%s layer: the ssm_* widths belong to a Mamba layer", kn);
    if (check_moe(l, kn, err) != 0)
        return -1;
    if (l->kind == TSL_LAYER_MTP && l->mtp_depth == 0)
        return tsl_err_set(err, "%s layer: mtp_depth: 0; an MTP entry belongs to a depth (1..)",
                           kn);
    if (!(l->extra_fwd_flops >= 0.0) || !isfinite(l->extra_fwd_flops))
        return tsl_err_set(err, "%s layer: extra_fwd_flops: %g is not a valid FLOP count", kn,
                           l->extra_fwd_flops);
    return check_ends(l, kn, err);
}

/* ---- formulas (model.h) ---- */

static dims_t dims_of(const tsl_layer_t *l)
{
    dims_t x;
    x.s = l->seq_len;
    x.h = l->hidden;
    x.f = l->ffn_hidden;
    x.a = l->heads;
    x.d = l->attn_dim ? l->attn_dim : l->hidden;
    x.e = (l->kv_heads && l->heads) ? x.d / l->heads * l->kv_heads : x.d;
    x.t = l->cross_seq_len;
    x.w = (l->attn_window && l->attn_window < l->seq_len) ? l->attn_window : l->seq_len;
    x.V = l->vocab;
    x.P = l->positions;
    x.g = l->gated_ffn ? 2.0 : 1.0;
    x.n = l->head_tokens ? l->head_tokens : l->seq_len;
    x.r = l->moe_latent ? l->moe_latent : l->hidden;
    x.u = l->fp32_acts ? 2.0 : 1.0;
    return x;
}

static double norm_params(const tsl_layer_t *l, const dims_t *x)
{
    return l->rms_norm ? x->h : 2.0 * x->h;
}

/* Self- or cross-attention: Q and O are d wide, K and V are e wide. */
static double attn_params(const tsl_layer_t *l, const dims_t *x)
{
    double p = 2.0 * x->h * x->d + 2.0 * x->h * x->e;
    if (!l->no_bias)
        p += x->d + 2.0 * x->e + x->h;
    return p;
}

/* One FFN of width f on rows h wide in and out (a routed expert: r wide). */
static double ffn_params_wide(const tsl_layer_t *l, const dims_t *x, double f, double h)
{
    double p = (x->g + 1.0) * h * f;
    if (!l->no_bias)
        p += x->g * f + h;
    return p;
}

/* One FFN (or one shared expert) of width f. */
static double ffn_params_at(const tsl_layer_t *l, const dims_t *x, double f)
{
    return ffn_params_wide(l, x, f, x->h);
}

/* One routed expert: on the latent width under latent MoE (model.h). */
static double expert_params(const tsl_layer_t *l, const dims_t *x)
{
    return ffn_params_wide(l, x, x->f, x->r);
}

static double ffn_params(const tsl_layer_t *l, const dims_t *x)
{
    return ffn_params_at(l, x, x->f);
}

/* Bytes per score an unfused attention keeps: the softmax output (2), plus the
 * dropout mask (1) and dropped copy (2) when there is dropout; fp32 (u = 2): 4, 9.
 * Fused: none. */
static double score_bytes(const tsl_layer_t *l, const dims_t *x)
{
    if (!l->unfused_attn)
        return 0.0;
    return l->no_dropout ? 2.0 * x->u : 4.0 * x->u + 1.0;
}

/* Replicated stash of a block: its norm input and the GEMM input (2 + 2 bytes
 * per element; fp32 4 + 4), and the dropout mask on its output (1) unless there is
 * none. */
static double block_repl(const tsl_layer_t *l, const dims_t *x)
{
    return (4.0 * x->u + (l->no_dropout ? 0.0 : 1.0)) * x->s * x->h;
}

/* One attention over `keys` keys per query whose K/V come from `kv_tokens` tokens;
 * an unfused one keeps `score_keys` scores per query (the s × s it computes). */
static void add_attention(const tsl_layer_t *l, const dims_t *x, double keys, double score_keys,
                          double kv_tokens, figures_t *fg)
{
    double core = 4.0 * x->s * keys * x->d; /* QKᵀ and AV */
    fg->params += attn_params(l, x) + norm_params(l, x);
    fg->flops += 4.0 * x->s * x->h * x->d + 4.0 * kv_tokens * x->h * x->e + core;
    fg->core_flops += core;
    /* LN in, QKV in, dropout mask on h | Q, K, V, proj in, scores */
    fg->repl += block_repl(l, x);
    fg->shard += (4.0 * x->s * x->d + 4.0 * kv_tokens * x->e) * x->u;
    fg->score += score_bytes(l, x) * x->a * x->s * score_keys;
    fg->allreduces += 1;
}

/* An unfused sliding window (causal) computes all s × s scores and masks those
 * outside the window (HF eager, exec_attn.c), so it keeps s of them per query; a
 * non-causal window is s/w blocks of w² scores (Swin), computed as such. */
/* Multi-head latent attention (model.h): the weights are dense GEMMs over s
 * tokens; scores over q·k of n + r wide heads and values v wide. */
static void add_latent_attention(const tsl_layer_t *l, const dims_t *x, double keys,
                                 double score_keys, figures_t *fg)
{
    double a = l->heads, n = l->qk_nope_dim, r = l->qk_rope_dim, v = l->v_head_dim;
    double q = l->q_lora_rank, c = l->kv_lora_rank;
    double wq = q ? x->h * q + q * a * (n + r) : x->h * a * (n + r);
    double wkv = x->h * (c + r) + c * a * (n + v);
    double wo = a * v * x->h;
    double core = 2.0 * x->s * keys * a * (n + r) + 2.0 * x->s * keys * a * v;
    double latent_norms = q + c; /* RMSNorm scales */
    fg->params += wq + wkv + wo + latent_norms + norm_params(l, x);
    fg->flops += 2.0 * x->s * (wq + wkv + wo) + core;
    fg->core_flops += core;
    fg->repl += block_repl(l, x) + (4.0 * x->s * q + 4.0 * x->s * c + 2.0 * x->s * r) * x->u;
    fg->shard += (4.0 * x->s * a * (n + r) + 4.0 * x->s * a * v) * x->u;
    fg->score += score_bytes(l, x) * a * x->s * score_keys;
    fg->allreduces += 1;
}

static void add_self_attention(const tsl_layer_t *l, const dims_t *x, figures_t *fg)
{
    if (l->kv_lora_rank) {
        add_latent_attention(l, x, x->w, l->causal ? x->s : x->w, fg);
        return;
    }
    add_attention(l, x, x->w, l->causal ? x->s : x->w, x->s, fg);
    if (l->qk_norm != TSL_QK_NORM_NONE) { /* the norms' FLOPs and inputs (model.h) */
        fg->flops += TSL_NORM_FLOPS_PER_ELEM * x->s * (x->d + x->e);
        fg->shard += 2.0 * x->s * (x->d + x->e) * x->u;
    }
}

static void add_cross_attention(const tsl_layer_t *l, const dims_t *x, figures_t *fg)
{
    add_attention(l, x, x->t, x->t, x->t, fg);
}

/* Routed experts at EP 1 (model.h "Mixture of experts"), on ℓ-wide rows under
 * latent MoE with its two projections ("Latent MoE"). */
static void add_moe_ffn(const tsl_layer_t *l, const dims_t *x, figures_t *fg)
{
    double E = l->experts, k = l->experts_per_tok, S = l->shared_experts;
    double fs = l->shared_ffn_hidden ? l->shared_ffn_hidden : x->f;
    double pe = expert_params(l, x), ps = ffn_params_at(l, x, fs);
    double per_tok = 2.0 * (x->g + 1.0) * x->s; /* FLOPs per unit of FFN width and row width */
    fg->params += E * pe + S * ps + x->h * E + norm_params(l, x);
    fg->idle_params += (E - k) * pe;
    fg->flops += k * per_tok * x->r * x->f + S * per_tok * x->h * fs + 2.0 * x->s * x->h * E;
    /* LN in, router/shared input, dropout mask; k dispatched copies; fp32 probs */
    fg->repl += block_repl(l, x) + k * 2.0 * x->s * x->r * x->u + 4.0 * x->s * E;
    if (l->moe_latent) { /* fc1_latent and fc2_latent; fc2_latent's input kept */
        fg->params += 2.0 * x->h * x->r + (l->no_bias ? 0.0 : x->r + x->h);
        fg->flops += 4.0 * x->s * x->h * x->r;
        fg->repl += 2.0 * x->s * x->r * x->u;
    }
    fg->shard += (k * (2.0 * x->g * x->s * x->f + 2.0 * x->s * x->f) +
                  S * (2.0 * x->g * x->s * fs + 2.0 * x->s * fs)) *
                 x->u;
    fg->allreduces += 1;
}

static void add_ffn(const tsl_layer_t *l, const dims_t *x, figures_t *fg)
{
    if (l->experts) {
        add_moe_ffn(l, x, fg);
        return;
    }
    fg->params += ffn_params(l, x) + norm_params(l, x);
    fg->flops += 2.0 * (x->g + 1.0) * x->s * x->h * x->f;
    /* LN in, fc1 in, dropout mask | fc1 out (g of them), activation out */
    fg->repl += block_repl(l, x);
    fg->shard += (2.0 * x->g * x->s * x->f + 2.0 * x->s * x->f) * x->u;
    if (l->ffn_dropout && !l->no_dropout) /* HF T5: the mask and the dropped copy wo reads */
        fg->shard += (2.0 * x->u + 1.0) * x->s * x->f;
    fg->allreduces += 1;
}

static void add_embedding(const tsl_layer_t *l, const dims_t *x, figures_t *fg)
{
    fg->params += x->V * x->h + x->P * x->h;
    fg->repl += l->no_dropout ? 0.0 : x->s * x->h; /* dropout mask on the output */
    if (l->patch_embed) {
        /* a GEMM over the pixels, which it keeps for the weight gradient */
        fg->params += l->no_bias ? 0.0 : x->h;
        fg->flops += 2.0 * x->s * x->V * x->h;
        fg->repl += 2.0 * x->s * x->V * x->u;
        fg->bnd = 2.0 * x->s * x->V * x->u;
    } else {
        fg->bnd = 8.0 * x->s; /* int64 token ids */
        fg->allreduces = 1;   /* vocab-parallel lookup; see model.h */
    }
    if (l->embed_norm) { /* BLOOM's LayerNorm on the looked-up rows keeps its input */
        fg->params += norm_params(l, x);
        fg->repl += 2.0 * x->s * x->h * x->u;
    }
}

static void add_head(const tsl_layer_t *l, const dims_t *x, figures_t *fg)
{
    fg->params += l->tied_head ? 0.0 : x->V * x->h;
    fg->flops += 2.0 * x->n * x->h * x->V;
    fg->repl += 2.0 * x->s * x->h * x->u;
    fg->shard += 4.0 * x->n * x->V; /* fp32 logits kept for the loss */
}

/* An MTP depth's entry (mtp.h): enorm and hnorm, eh_proj (2h -> h, no bias), and
 * the depth's final_layernorm (its input is the MTP head's stash); it keeps the
 * two norm inputs (the shifted tokens' embedding, the previous depth's hidden)
 * and eh_proj's 2h-wide input. The embedding lookup reads the word embedding
 * (its copy on a later stage: cost.h). One TP collective per forward. */
static void add_mtp(const tsl_layer_t *l, const dims_t *x, figures_t *fg)
{
    fg->params += 2.0 * x->h * x->h + 3.0 * norm_params(l, x);
    fg->flops += 4.0 * x->s * x->h * x->h;
    fg->repl += 8.0 * x->s * x->h * x->u;
    fg->allreduces = 1;
}

/* A Mamba-2 mixer with its pre-norm (mamba.h): one all-reduce per forward
 * (out_proj, row-parallel). */
static void add_mamba(const tsl_layer_t *l, figures_t *fg)
{
    tsl_mamba_figures_t mf;
    tsl_mamba_figures(l, &mf);
    fg->params += mf.params;
    fg->flops += mf.fwd_flops;
    fg->repl += mf.repl_bytes * (l->fp32_acts ? 2.0 : 1.0); /* fp32: refused (search.c) */
    fg->shard += mf.shard_bytes * (l->fp32_acts ? 2.0 : 1.0);
    fg->allreduces += 1;
}

/* y = x + attn(LN(x)) + ffn(LN'(x)) (model.h): the FFN's norm reads the stashed
 * x, TP sums both outputs before one all-reduce; a shared norm also shares its
 * output (the FFN's GEMM input) and has no parameters of its own. */
static void parallel_block(const tsl_layer_t *l, const dims_t *x, figures_t *fg)
{
    if (!l->parallel_block)
        return;
    fg->repl -= 2.0 * x->s * x->h * x->u;
    fg->allreduces -= 1;
    if (l->shared_norm) {
        fg->repl -= 2.0 * x->s * x->h * x->u;
        fg->params -= norm_params(l, x);
    }
}

static void compute(const tsl_layer_t *l, figures_t *fg)
{
    dims_t x = dims_of(l);
    memset(fg, 0, sizeof(*fg));
    fg->bnd = 2.0 * x.s * x.h * x.u;
    switch (l->kind) {
    case TSL_LAYER_EMBEDDING: add_embedding(l, &x, fg); break;
    case TSL_LAYER_ENCODER:
        add_self_attention(l, &x, fg);
        add_ffn(l, &x, fg);
        parallel_block(l, &x, fg);
        break;
    case TSL_LAYER_DECODER:
        add_self_attention(l, &x, fg);
        add_cross_attention(l, &x, fg);
        add_ffn(l, &x, fg);
        break;
    case TSL_LAYER_ATTENTION: add_self_attention(l, &x, fg); break;
    case TSL_LAYER_FFN: add_ffn(l, &x, fg); break;
    case TSL_LAYER_HEAD: add_head(l, &x, fg); break;
    case TSL_LAYER_MAMBA: add_mamba(l, fg); break;
    case TSL_LAYER_MTP: add_mtp(l, &x, fg); break;
    default: break;
    }
    fg->shard += fg->score;
    fg->params += (double)l->extra_params;
    fg->flops += l->extra_fwd_flops;
    fg->repl += (double)l->extra_act_bytes * x.u; /* counted at 16 bits */
}

int tsl_layer_derive(tsl_layer_t *l, tsl_err_t *err)
{
    if (l == NULL)
        return tsl_err_set(err, "layer: NULL");
    if (check_shape(l, err) != 0)
        return -1;
    figures_t fg;
    compute(l, &fg);
    if (fg.params > EXACT_MAX || fg.repl > EXACT_MAX || fg.shard > EXACT_MAX || fg.bnd > EXACT_MAX)
        return tsl_err_set(err,
                           "%s layer: shape too large: %.3g parameters, %.3g activation "
                           "bytes per sample (limit 2^53)",
                           tsl_layer_kind_name(l->kind), fg.params, fg.repl + fg.shard);
    l->params = (uint64_t)fg.params;
    l->fwd_flops = fg.flops;
    l->bnd_act_bytes = (uint64_t)fg.bnd;
    l->act_repl_bytes = (uint64_t)fg.repl;
    l->act_shard_bytes = (uint64_t)fg.shard;
    l->tp_allreduces = fg.allreduces;
    l->act_score_bytes = (uint64_t)fg.score;
    l->core_fwd_flops = fg.core_flops;
    l->active_params = (uint64_t)(fg.params - fg.idle_params);
    return 0;
}

/* ---- the model ---- */

void tsl_model_init(tsl_model_t *m, const char *name)
{
    memset(m, 0, sizeof(*m));
    snprintf(m->name, sizeof(m->name), "%s", name ? name : "");
}

void tsl_model_free(tsl_model_t *m)
{
    if (m == NULL)
        return;
    free(m->layers);
    m->layers = NULL;
    m->n_layers = 0;
    m->tokens_per_sample = 0;
    m->max_context = 0;
    m->train_context = 0;
    memset(&m->rope, 0, sizeof(m->rope));
    m->norm_eps = 0.0;
    m->qkv_bias = false;
    m->qk_norm = 0;
    m->attn_sinks = m->relu2 = false;
    m->glu_limit = 0.0;
    m->sandwich_norm = m->softcap = m->embed_scale = false;
    m->hybrid = false;
}

bool tsl_model_is_block(const tsl_model_t *m, uint32_t i)
{
    tsl_layer_kind_t k = m->layers[i].kind;
    if (m->layers[i].mtp_depth) /* Megatron's --num-layers leaves the MTP out (mtp.h) */
        return false;
    if (k == TSL_LAYER_ENCODER || k == TSL_LAYER_DECODER || k == TSL_LAYER_MAMBA)
        return true;
    return m->hybrid && (k == TSL_LAYER_ATTENTION || k == TSL_LAYER_FFN);
}

char tsl_layer_hybrid_char(const tsl_layer_t *l)
{
    return l->kind == TSL_LAYER_MAMBA       ? 'M'
           : l->kind == TSL_LAYER_ATTENTION ? '*'
           : l->kind != TSL_LAYER_FFN       ? '?'
           : l->experts                     ? 'E'
                                            : '-';
}

int tsl_model_add_n(tsl_model_t *m, const tsl_layer_t *l, uint32_t count, tsl_err_t *err)
{
    if (m == NULL || l == NULL)
        return tsl_err_set(err, "model: NULL model or layer");
    if (count == 0)
        return 0;
    if (count > TSL_MODEL_MAX_LAYERS || m->n_layers > TSL_MODEL_MAX_LAYERS - count)
        return tsl_err_set(err,
                           "model %s: %u + %u layers exceed the limit of %u "
                           "(TSL_MODEL_MAX_LAYERS)",
                           m->name, m->n_layers, count, TSL_MODEL_MAX_LAYERS);
    tsl_layer_t d = *l;
    if (tsl_layer_derive(&d, err) != 0)
        return tsl_err_prefix(err, "model %s: layer %u", m->name, m->n_layers);
    /* exact-size growth: models are built once and are at most 1024 layers */
    tsl_layer_t *grown = realloc(m->layers, (size_t)(m->n_layers + count) * sizeof(*grown));
    if (grown == NULL)
        return tsl_err_set(err, "model %s: out of memory for %u layers", m->name,
                           m->n_layers + count);
    for (uint32_t i = 0; i < count; i++)
        grown[m->n_layers + i] = d;
    m->layers = grown;
    m->n_layers += count;
    if (d.seq_len > m->tokens_per_sample)
        m->tokens_per_sample = d.seq_len;
    return 0;
}

int tsl_model_add(tsl_model_t *m, const tsl_layer_t *l, tsl_err_t *err)
{
    return tsl_model_add_n(m, l, 1, err);
}

int tsl_model_copy(tsl_model_t *dst, const tsl_model_t *src, tsl_err_t *err)
{
    if (dst == NULL || src == NULL)
        return tsl_err_set(err, "model copy: NULL model");
    tsl_model_t tmp = *src;
    tmp.layers = NULL;
    if (src->n_layers > 0) {
        if (src->layers == NULL)
            return tsl_err_set(err, "model %s: %u layers but no layer array", src->name,
                               src->n_layers);
        tmp.layers = malloc((size_t)src->n_layers * sizeof(*tmp.layers));
        if (tmp.layers == NULL) {
            tsl_model_init(dst, src->name);
            return tsl_err_set(err, "model %s: out of memory copying %u layers", src->name,
                               src->n_layers);
        }
        memcpy(tmp.layers, src->layers, (size_t)src->n_layers * sizeof(*tmp.layers));
    }
    *dst = tmp;
    return 0;
}

uint64_t tsl_model_params(const tsl_model_t *m)
{
    uint64_t sum = 0; /* weights a layer shares with another are counted there (mtp.h) */
    for (uint32_t i = 0; m && i < m->n_layers; i++)
        sum += m->layers[i].shared_weights ? 0 : m->layers[i].params;
    return sum;
}

double tsl_model_fwd_flops(const tsl_model_t *m)
{
    double sum = 0.0;
    for (uint32_t i = 0; m && i < m->n_layers; i++)
        sum += m->layers[i].fwd_flops;
    return sum;
}

uint64_t tsl_model_act_bytes(const tsl_model_t *m)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; m && i < m->n_layers; i++)
        sum += m->layers[i].act_repl_bytes + m->layers[i].act_shard_bytes;
    return sum;
}

uint64_t tsl_model_active_params(const tsl_model_t *m)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; m && i < m->n_layers; i++)
        sum += m->layers[i].shared_weights ? 0 : m->layers[i].active_params;
    return sum;
}

double tsl_layer_expert_params(const tsl_layer_t *l)
{
    if (l == NULL || l->experts == 0)
        return 0.0;
    dims_t x = dims_of(l);
    return (double)l->experts * expert_params(l, &x);
}

uint32_t tsl_layer_expert_width(const tsl_layer_t *l)
{
    return l->moe_latent ? l->moe_latent : l->hidden;
}

uint32_t tsl_model_moe_layers(const tsl_model_t *m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; m && i < m->n_layers; i++)
        n += m->layers[i].experts > 0;
    return n;
}

const tsl_layer_t *tsl_model_first_moe(const tsl_model_t *m)
{
    for (uint32_t i = 0; m && i < m->n_layers; i++)
        if (m->layers[i].experts)
            return &m->layers[i];
    return NULL;
}

uint32_t tsl_model_mamba_layers(const tsl_model_t *m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; m && i < m->n_layers; i++)
        n += m->layers[i].kind == TSL_LAYER_MAMBA;
    return n;
}

static double yarn_mscale(double factor, double mscale)
{
    return factor <= 1.0 ? 1.0 : 0.1 * mscale * log(factor) + 1.0;
}

double tsl_model_yarn_attention_factor(const tsl_model_rope_t *r)
{
    if (r == NULL || r->scaling != TSL_ROPE_SCALING_YARN)
        return 1.0;
    /* Megatron-LM 44151194 yarn_rotary_pos_embedding.py
     * _yarn_get_concentration_factor; transformers' defaults (1, 0) where the config
     * leaves them out give g(F, 1) / g(F, 0) = g(F, 1), as Megatron's None, None does */
    return yarn_mscale(r->scaling_factor, r->mscale) /
           yarn_mscale(r->scaling_factor, r->mscale_all_dim);
}

void tsl_model_set_rope(tsl_model_t *m, const tsl_model_rope_t *rope)
{
    m->rope = *rope;
    bool eager = fabs(tsl_model_yarn_attention_factor(rope) - 1.0) > 1e-9;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        tsl_layer_t *l = &m->layers[i];
        l->yarn_eager_rope = eager && tsl_layer_has_attention(l) && l->kv_lora_rank == 0;
    }
}

uint32_t tsl_model_mla_layers(const tsl_model_t *m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; m && i < m->n_layers; i++)
        n += m->layers[i].kv_lora_rank > 0;
    return n;
}

int tsl_model_check_priced(const tsl_model_t *m, tsl_err_t *err)
{
    if (m == NULL)
        return tsl_err_set(err, "model: NULL");
    /* Mixture-of-experts FFNs (searched EP and expert TP degrees) and latent
     * attention are priced (cost.h, roofline.h); every layer a model can hold is.
     * What is not priced is a plan's choice, refused where it is made: degrees
     * that do not fit, and the stacks Tessel exports no MoE plan to (search.c). */
    return 0;
}

/* Sets one bool of every layer (at `flag`, an offsetof into tsl_layer_t) and
 * re-derives the layer's figures from it. */
static int set_every_layer(tsl_model_t *m, size_t flag, bool on, tsl_err_t *err)
{
    if (m == NULL || (m->n_layers > 0 && m->layers == NULL))
        return tsl_err_set(err, "model: NULL model or layer array");
    for (uint32_t i = 0; i < m->n_layers; i++) {
        *(bool *)((char *)&m->layers[i] + flag) = on;
        if (tsl_layer_derive(&m->layers[i], err) != 0)
            return tsl_err_prefix(err, "model %s: layer %u", m->name, i);
    }
    return 0;
}

int tsl_model_set_unfused_attn(tsl_model_t *m, bool unfused, tsl_err_t *err)
{
    return set_every_layer(m, offsetof(tsl_layer_t, unfused_attn), unfused, err);
}

int tsl_model_set_no_dropout(tsl_model_t *m, tsl_err_t *err)
{
    return set_every_layer(m, offsetof(tsl_layer_t, no_dropout), true, err);
}

int tsl_model_set_fp32(tsl_model_t *m, tsl_err_t *err)
{
    return set_every_layer(m, offsetof(tsl_layer_t, fp32_acts), true, err);
}

static uint32_t count_blocks(const tsl_model_t *m)
{
    uint32_t blocks = 0;
    for (uint32_t i = 0; i < m->n_layers; i++)
        blocks += tsl_model_is_block(m, i);
    return blocks;
}

int tsl_model_bf16_layers_ok(const tsl_model_t *m, uint32_t start, uint32_t end, tsl_err_t *err)
{
    if (m == NULL || (m->n_layers > 0 && m->layers == NULL))
        return tsl_err_set(err, "model: NULL model or layer array");
    uint32_t blocks = count_blocks(m);
    if ((uint64_t)start + end > blocks)
        return tsl_err_set(err,
                           "bf16_layers_start: %u + bf16_layers_end %u exceed the %u blocks of "
                           "model %s",
                           start, end, blocks, m->name);
    return 0;
}

int tsl_model_set_bf16_layers(tsl_model_t *m, uint32_t start, uint32_t end, tsl_err_t *err)
{
    if (tsl_model_bf16_layers_ok(m, start, end, err) != 0)
        return -1;
    uint32_t blocks = count_blocks(m);
    for (uint32_t i = 0, b = 0; i < m->n_layers; i++) {
        if (!tsl_model_is_block(m, i))
            continue;
        m->layers[i].bf16 = b < start || b >= blocks - end;
        b++;
    }
    return 0;
}

int tsl_model_validate(const tsl_model_t *m, tsl_err_t *err)
{
    if (m == NULL)
        return tsl_err_set(err, "model: NULL");
    if (m->n_layers == 0)
        return tsl_err_set(err, "model %s: no layers", m->name);
    if (m->n_layers > TSL_MODEL_MAX_LAYERS)
        return tsl_err_set(err,
                           "model %s: %u layers exceed the limit of %u "
                           "(TSL_MODEL_MAX_LAYERS)",
                           m->name, m->n_layers, TSL_MODEL_MAX_LAYERS);
    if (m->layers == NULL)
        return tsl_err_set(err, "model %s: %u layers but no layer array", m->name, m->n_layers);
    for (uint32_t i = 0; i < m->n_layers; i++) {
        if (check_shape(&m->layers[i], err) != 0)
            return tsl_err_prefix(err, "model %s: layer %u", m->name, i);
    }
    return 0;
}

double tsl_attn_keys(uint32_t seq_len, uint32_t window, bool causal)
{
    double s = seq_len, w = (window && window < seq_len) ? window : seq_len;
    if (!causal || s <= 0)
        return w;
    return w - w * (w - 1.0) / (2.0 * s); /* (s·w − w(w − 1)/2) / s, see model.h */
}

double tsl_attn_chunk_keys(uint32_t seq_len, uint32_t chunk, bool causal)
{
    double s = seq_len, w = (chunk && chunk < seq_len) ? chunk : seq_len;
    if (s <= 0)
        return w;
    double full = floor(s / w), c = s - full * w; /* whole chunks, the last one's length */
    if (!causal)
        return (full * w * w + c * c) / s;
    return (full * w * (w + 1.0) / 2.0 + c * (c + 1.0) / 2.0) / s; /* see model.h */
}

uint32_t tsl_layer_key(const tsl_layer_t *l, uint64_t key[TSL_LAYER_KEY_LEN])
{
    const uint64_t k[TSL_LAYER_KEY_LEN] = {l->kind,          l->seq_len,         l->hidden,
                                           l->ffn_hidden,    l->heads,           l->attn_dim,
                                           l->cross_seq_len, l->vocab,           l->positions,
                                           l->gated_ffn,     l->tied_head,       l->params,
                                           l->bnd_act_bytes, l->act_repl_bytes,  l->act_shard_bytes,
                                           l->tp_allreduces, l->kv_heads,        l->attn_window,
                                           l->head_tokens,   l->patch_embed,     l->no_bias,
                                           l->rms_norm,      l->extra_params,    l->extra_act_bytes,
                                           l->no_dropout,    l->unfused_attn,    l->parallel_block,
                                           l->shared_norm,   l->act_score_bytes, l->causal};
    memset(key, 0, TSL_LAYER_KEY_LEN * sizeof(key[0]));
    memcpy(key, k, 30 * sizeof(k[0]));
    /* kernel-level flags of a few models (gpt-oss's clamped GLU and Megatron's eager
     * YaRN RoPE, AMP's TransGAN block and its TP-whole tables, transformers' GPT2Block):
     * keyed only where set, so every other layer keeps its key and fingerprint */
    bool flags = l->glu_clamp || l->transgan_eager || l->hf_gpt2_eager || l->yarn_eager_rope ||
                 l->tp_repl_extra,
         mamba = l->kind == TSL_LAYER_MAMBA;
    bool bloom = l->alibi || l->embed_norm, t5 = l->eager_norm || l->ffn_dropout;
    bool fin = l->final_norm;
    bool ext = l->moe_latent || l->mtp_depth || l->shared_weights || l->kind == TSL_LAYER_MTP ||
               l->bf16 || bloom || t5 || fin;
    flags = flags || mamba || ext;
    if (l->experts == 0 && l->kv_lora_rank == 0 && !l->attn_chunked && !flags)
        return 30; /* the dense key, as before MoE (plan fingerprints unchanged) */
    key[30] = l->experts;
    key[31] = l->experts_per_tok;
    key[32] = l->shared_experts;
    key[33] = l->shared_ffn_hidden;
    key[34] = l->q_lora_rank;
    key[35] = l->kv_lora_rank;
    key[36] = l->qk_nope_dim;
    key[37] = l->qk_rope_dim;
    key[38] = l->v_head_dim;
    if (!l->attn_chunked && !flags)
        return 39; /* the MoE/MLA key, as before chunked attention */
    key[39] = l->attn_chunked;
    if (!flags)
        return 40; /* as before the kernel-level flags */
    key[40] = l->glu_clamp;
    key[41] = (l->transgan_eager ? 1u : 0u) | (l->hf_gpt2_eager ? 2u : 0u) |
              (l->layer_scale ? 4u : 0u) | (l->yarn_eager_rope ? 8u : 0u) |
              (l->tp_repl_extra ? 16u : 0u);
    if (!mamba && !ext)
        return 42; /* as before Mamba layers */
    key[42] = l->ssm_heads;
    key[43] = l->ssm_head_dim;
    key[44] = l->ssm_state;
    key[45] = l->ssm_groups;
    key[46] = l->ssm_conv;
    key[47] = l->ssm_chunk;
    if (!ext)
        return 48; /* as before latent MoE and MTP */
    key[48] = l->moe_latent;
    key[49] = l->mtp_depth;
    key[50] = l->shared_weights;
    if (!l->bf16 && !bloom && !t5 && !fin)
        return 51; /* as before blocks kept bf16 */
    key[51] = l->bf16;
    if (!bloom && !t5 && !fin)
        return 52; /* as before ALiBi and the embedding LayerNorm */
    key[52] = (l->alibi ? 1u : 0u) | (l->embed_norm ? 2u : 0u);
    if (!t5 && !fin)
        return 53; /* as before HF T5's eager norms and FFN dropout */
    key[53] = (l->eager_norm ? 1u : 0u) | (l->ffn_dropout ? 2u : 0u);
    if (!fin)
        return 54; /* as before the head's final norm */
    key[54] = 1;
    return TSL_LAYER_KEY_LEN;
}
