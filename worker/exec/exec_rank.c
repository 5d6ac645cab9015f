/*
 * exec_rank.c — from a plan to one rank's work (tsl_exec_rank_t), a uniform plan from
 * flags, and a layer's flat parameter layout and its TP cut (blocks by Megatron's
 * column/row split, the embedding table and the head weight by vocabulary rows).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"
#include "sublayer.h"

static bool has_attn(tsl_layer_kind_t k)
{
    return k == TSL_LAYER_ENCODER || k == TSL_LAYER_ATTENTION;
}

static bool has_ffn(tsl_layer_kind_t k)
{
    return k == TSL_LAYER_ENCODER || k == TSL_LAYER_FFN;
}

/* Appends a tensor of n elements at *at, or marks it absent. */
static size_t put(size_t *at, size_t n, bool present)
{
    if (!present)
        return TSL_NONE;
    size_t o = *at;
    *at += n;
    return o;
}

size_t tsl_exec_kv_width(const tsl_exec_layer_t *l)
{
    if (!l->heads)
        return 0;
    return (size_t)l->hidden / l->heads * (l->kv_heads ? l->kv_heads : l->heads);
}

uint32_t tsl_exec_vocab_local(uint32_t vocab, uint32_t tp)
{
    uint64_t q = (uint64_t)TSL_EXEC_VOCAB_PAD * tp;
    return (uint32_t)(((uint64_t)vocab + q - 1) / q * q / tp);
}

void tsl_exec_offsets(const tsl_exec_layer_t *l, uint32_t tp, tsl_exec_offs_t *o)
{
    size_t h = l->hidden, fl = l->ffn / tp, at = 0;
    size_t g = l->gated_ffn ? 2 : 1;
    size_t vl = l->vocab ? tsl_exec_vocab_local(l->vocab, tp) : 0;
    tsl_exec_aw_t w;
    tsl_exec_attn_widths(l, tp, &w);
    bool emb = l->kind == TSL_LAYER_EMBEDDING;
    bool a = has_attn(l->kind), f = has_ffn(l->kind), b = l->bias, ln = !l->rms_norm;
    bool sf = f && fl > 0; /* the FFN proper: a MoE layer's shared experts, if any */
    bool mla = a && l->kv_lora, ql = mla && l->q_lora;
    size_t qin = ql ? l->q_lora : h, c = l->kv_lora, r = l->qk_rope;
    o->ln1g = put(&at, h, a);
    o->ln1b = put(&at, h, a && ln);
    o->wqkv = put(&at, h * w.qw, a && !mla);
    o->bqkv = put(&at, w.qw, a && !mla && b);
    o->wdq = put(&at, h * l->q_lora, ql);
    o->lnq = put(&at, l->q_lora, ql);
    o->wuq = put(&at, qin * w.al * w.hk, mla);
    o->wdkv = put(&at, h * (c + r), mla);
    o->lnkv = put(&at, c, mla);
    o->wukv = put(&at, c * w.al * ((size_t)l->qk_nope + l->v_head), mla);
    o->wo = put(&at, w.ow * h, a);
    o->bo = put(&at, h, a && b);
    o->ln2g = put(&at, h, f && !l->shared_norm); /* a shared norm is ln1 */
    o->ln2b = put(&at, h, f && ln && !l->shared_norm);
    o->w1 = put(&at, h * g * fl, sf);
    o->b1 = put(&at, g * fl, sf && b);
    o->w2 = put(&at, fl * h, sf);
    o->b2 = put(&at, h, sf && b);
    o->wr = put(&at, h * l->experts, f && l->experts);
    o->wg = put(&at, h, f && l->experts && sf && l->shared_gate);
    o->br = put(&at, l->experts, f && l->experts && l->router_choice_bias);
    o->table = put(&at, vl * h, emb);
    o->pos = put(&at, (size_t)l->positions * h, emb && l->positions);
    o->whead = put(&at, vl * h, l->kind == TSL_LAYER_HEAD && l->tie != TSL_EXEC_TIE_SHARED);
    o->n = at;
}

size_t tsl_exec_layer_params(const tsl_exec_layer_t *l, uint32_t tp)
{
    tsl_exec_offs_t o;
    tsl_exec_offsets(l, tp, &o);
    return o.n;
}

/* One replicated tensor, or a whole block of rows [j·rows, (j+1)·rows) of cols. */
static void span1(tsl_exec_span_fn fn, void *ud, size_t part, size_t full, size_t len, float center,
                  float amp)
{
    if (part != TSL_NONE)
        fn(ud, part, full, len, center, amp);
}

/* Column cut: `rows` rows of `groups` column groups each `w` wide in the full layout,
 * this part's `wl` columns at j·wl inside each group. */
static void cols(tsl_exec_span_fn fn, void *ud, size_t part, size_t full, size_t rows,
                 size_t groups, size_t w, size_t wl, uint32_t j, float amp)
{
    if (part == TSL_NONE)
        return;
    for (size_t r = 0; r < rows; r++)
        for (size_t g = 0; g < groups; g++)
            fn(ud, part + (r * groups + g) * wl, full + r * groups * w + g * w + j * wl, wl, 0,
               amp);
}

/* The QKV projection's column cut: `rows` rows of Q (d) | K (e) | V (e) in the full
 * layout; part j holds its d/tp query columns and e/tp of K and of V (its K/V heads). */
static void qkv_cols(tsl_exec_span_fn fn, void *ud, size_t part, size_t full, size_t rows, size_t d,
                     size_t e, uint32_t tp, uint32_t j, float amp)
{
    size_t dl = d / tp, el = e / tp, ql = dl + 2 * el;
    if (part == TSL_NONE)
        return;
    for (size_t r = 0; r < rows; r++) {
        size_t p = part + r * ql, f = full + r * (d + 2 * e);
        fn(ud, p, f + j * dl, dl, 0, amp);
        fn(ud, p + dl, f + d + j * el, el, 0, amp);
        fn(ud, p + dl + el, f + d + e + j * el, el, 0, amp);
    }
}

/* Vocabulary rows of h: part j's vl rows at j·vl of the full table, its padding
 * (rows at or past V) in no span. */
static void vrows(tsl_exec_span_fn fn, void *ud, size_t part, size_t full, size_t h, size_t V,
                  size_t vl, uint32_t j, float amp)
{
    size_t lo = j * vl, hi = (j + 1) * vl < V ? (j + 1) * vl : V;
    if (part != TSL_NONE && hi > lo)
        fn(ud, part, full + lo * h, (hi - lo) * h, 0, amp);
}

void tsl_exec_spans(const tsl_exec_layer_t *l, uint32_t tp, uint32_t j, tsl_exec_span_fn fn,
                    void *ud)
{
    tsl_exec_offs_t o, f;
    tsl_exec_offsets(l, tp, &o);
    tsl_exec_offsets(l, 1, &f);
    size_t h = l->hidden, d = h, ff = l->ffn, fl = ff / tp;
    size_t e = tsl_exec_kv_width(l), g = l->gated_ffn ? 2 : 1;
    tsl_exec_aw_t w, wf;
    tsl_exec_attn_widths(l, tp, &w);
    tsl_exec_attn_widths(l, 1, &wf);
    float bias_amp = 0.1f;
    span1(fn, ud, o.ln1g, f.ln1g, h, 1.0f, 0.1f);
    span1(fn, ud, o.ln1b, f.ln1b, h, 0.0f, 0.1f);
    qkv_cols(fn, ud, o.wqkv, f.wqkv, h, d, e, tp, j, 1.0f / sqrtf((float)h));
    qkv_cols(fn, ud, o.bqkv, f.bqkv, 1, d, e, tp, j, bias_amp);
    /* latent attention: down projections and latent norms replicated, the up
     * projections cut by heads (part j: its al heads' columns) */
    size_t qin = l->q_lora ? l->q_lora : h, c = l->kv_lora, nv = (size_t)l->qk_nope + l->v_head;
    span1(fn, ud, o.wdq, f.wdq, h * l->q_lora, 0.0f, 1.0f / sqrtf((float)h));
    span1(fn, ud, o.lnq, f.lnq, l->q_lora, 1.0f, 0.1f);
    cols(fn, ud, o.wuq, f.wuq, qin, 1, wf.al * wf.hk, w.al * w.hk, j, 1.0f / sqrtf((float)qin));
    span1(fn, ud, o.wdkv, f.wdkv, h * (c + l->qk_rope), 0.0f, 1.0f / sqrtf((float)h));
    span1(fn, ud, o.lnkv, f.lnkv, c, 1.0f, 0.1f);
    cols(fn, ud, o.wukv, f.wukv, c, 1, wf.al * nv, w.al * nv, j, c ? 1.0f / sqrtf((float)c) : 0);
    span1(fn, ud, o.wo, f.wo + j * w.ow * h, w.ow * h, 0.0f,
          wf.ow ? 1.0f / sqrtf((float)wf.ow) : 0.0f);
    span1(fn, ud, o.bo, f.bo, h, 0.0f, bias_amp);
    span1(fn, ud, o.ln2g, f.ln2g, h, 1.0f, 0.1f);
    span1(fn, ud, o.ln2b, f.ln2b, h, 0.0f, 0.1f);
    /* gated: gate | up, each column-split (part j: its fl of gate, then of up) */
    cols(fn, ud, o.w1, f.w1, h, g, ff, fl, j, 1.0f / sqrtf((float)h));
    cols(fn, ud, o.b1, f.b1, 1, g, ff, fl, j, bias_amp);
    span1(fn, ud, o.w2, f.w2 + j * fl * h, fl * h, 0.0f, ff ? 1.0f / sqrtf((float)ff) : 0.0f);
    span1(fn, ud, o.b2, f.b2, h, 0.0f, bias_amp);
    span1(fn, ud, o.wr, f.wr, h * l->experts, 0.0f, 1.0f / sqrtf((float)h));
    span1(fn, ud, o.wg, f.wg, h, 0.0f, 1.0f / sqrtf((float)h));
    span1(fn, ud, o.br, f.br, l->experts, 0.0f, 0.1f);
    size_t vl = l->vocab ? tsl_exec_vocab_local(l->vocab, tp) : 0;
    /* a tied head's copy starts as the table (the engine seeds it as model layer 0) */
    float head_amp = l->tie == TSL_EXEC_TIE_COPY ? 1.0f : 1.0f / sqrtf((float)h);
    vrows(fn, ud, o.table, f.table, h, l->vocab, vl, j, 1.0f);
    span1(fn, ud, o.pos, f.pos, (size_t)l->positions * h, 0.0f, 0.1f);
    vrows(fn, ud, o.whead, f.whead, h, l->vocab, vl, j, head_amp);
}

/* ---- a MoE layer's routed experts ---- */

void tsl_exec_expert_offsets(const tsl_exec_layer_t *l, tsl_exec_eoffs_t *o)
{
    size_t h = l->hidden, f = l->expert_ffn, g = l->gated_ffn ? 2 : 1, at = 0;
    bool e = l->experts > 0;
    o->w1 = put(&at, h * g * f, e);
    o->b1 = put(&at, g * f, e && l->bias);
    o->w2 = put(&at, f * h, e);
    o->b2 = put(&at, h, e && l->bias);
    o->n = at;
}

size_t tsl_exec_expert_params(const tsl_exec_layer_t *l)
{
    tsl_exec_eoffs_t o;
    tsl_exec_expert_offsets(l, &o);
    return o.n;
}

void tsl_exec_expert_spans(const tsl_exec_layer_t *l, uint32_t first, uint32_t count,
                           tsl_exec_span_fn fn, void *ud)
{
    tsl_exec_eoffs_t o;
    tsl_exec_expert_offsets(l, &o);
    size_t base = tsl_exec_layer_params(l, 1), h = l->hidden, f = l->expert_ffn;
    size_t g = l->gated_ffn ? 2 : 1;
    for (uint32_t k = 0; k < count; k++) {
        size_t p = (size_t)k * o.n, full = base + (size_t)(first + k) * o.n;
        span1(fn, ud, o.w1 + p, o.w1 + full, h * g * f, 0.0f, 1.0f / sqrtf((float)h));
        if (o.b1 != TSL_NONE)
            span1(fn, ud, o.b1 + p, o.b1 + full, g * f, 0.0f, 0.1f);
        span1(fn, ud, o.w2 + p, o.w2 + full, f * h, 0.0f, 1.0f / sqrtf((float)f));
        if (o.b2 != TSL_NONE)
            span1(fn, ud, o.b2 + p, o.b2 + full, h, 0.0f, 0.1f);
    }
}

void tsl_exec_moe_dims(const tsl_exec_layer_t *l, uint32_t tp, uint32_t b, float c,
                       tsl_exec_moe_dims_t *m)
{
    size_t ep = l->ep ? l->ep : 1, E = l->experts, k = l->top_k;
    m->Tl = tp ? (size_t)b * l->seq / tp : 0;
    m->n = m->Tl * k;
    m->E = E;
    m->El = E / ep;
    m->k = k;
    m->R = ep * m->Tl * (k < m->El ? k : m->El);
    m->cap = 0;
    if (c > 0 && E) {
        double want = ceil((double)c * (double)m->n / (double)E);
        m->cap = want < (double)m->Tl ? (size_t)want : m->Tl;
        m->cap = m->cap ? m->cap : 1;
        m->R = E * m->cap < m->R ? E * m->cap : m->R;
    }
    m->f = l->expert_ffn;
    m->g = l->gated_ffn ? 2 : 1;
    m->ep = ep;
}

typedef struct slice_ud {
    const float *full;
    float *part;
} slice_ud_t;

static void slice_span(void *ud, size_t part, size_t full, size_t len, float c, float a)
{
    (void)c, (void)a;
    slice_ud_t *s = ud;
    memcpy(s->part + part, s->full + full, len * sizeof(float));
}

void tsl_exec_layer_slice(const tsl_exec_layer_t *l, uint32_t tp, uint32_t tp_index,
                          const float *full, float *part)
{
    slice_ud_t s = {full, part};
    tsl_exec_spans(l, tp, tp_index, slice_span, &s);
}

/* ---- plan → rank ---- */

/* Routed experts that run: a layer with an FFN and experts (a sub-layer plan's attention
 * block keeps its layer's MoE fields but has no FFN). */
static bool moe_of(const tsl_layer_t *L)
{
    return L->experts && has_ffn(L->kind);
}

/* A MoE layer's shared experts as one dense FFN: S·f_s columns (0: none). */
static uint32_t shared_width(const tsl_layer_t *L)
{
    return L->shared_experts * (L->shared_ffn_hidden ? L->shared_ffn_hidden : L->ffn_hidden);
}

static int check_layer(const tsl_layer_t *L, uint32_t i, uint32_t n, uint32_t tp, tsl_err_t *err)
{
    const char *why = NULL;
    if (L->kind == TSL_LAYER_DECODER || L->cross_seq_len)
        why = "decoder (cross-attention) layers";
    else if (L->kv_lora_rank && L->parallel_block)
        why = "latent attention in a parallel block";
    else if (L->kv_lora_rank && L->qk_rope_dim % 2)
        why = "latent attention with an odd RoPE width (its rotations take pairs)";
    else if (moe_of(L) && L->router_bias == TSL_ROUTER_BIAS_LOGIT)
        why = "a linear bias on the router's logits (gpt-oss)";
    else if (L->attn_dim && L->attn_dim != L->hidden && !L->kv_lora_rank)
        why = "an attention width other than the hidden size";
    else if (L->attn_window && L->attn_window < L->seq_len && !L->causal)
        why = "a window over non-causal attention";
    else if (L->attn_chunked)
        why = "chunked attention (Llama 4; its mask is not a sliding window's)";
    else if (L->kind == TSL_LAYER_EMBEDDING && (i != 0 || L->patch_embed))
        why = "an embedding that is not a token lookup first in the model";
    else if (L->kind == TSL_LAYER_HEAD && i + 1 != n)
        why = "a head that is not the last layer";
    if (why)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED, "layer %u: the executor does not run %s", i,
                            why);
    if (has_attn(L->kind) && (L->heads % tp || (!L->kv_lora_rank && L->hidden % L->heads)))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "layer %u: %u heads of hidden %u do not split %u ways", i, L->heads,
                            L->hidden, tp);
    uint32_t G = L->router_groups;
    if (moe_of(L) && G > 1 &&
        (G > TSL_MOE_MAX_GROUPS || L->experts % G || !L->router_topk_groups ||
         L->router_topk_groups > G ||
         L->experts_per_tok > (uint64_t)L->router_topk_groups * (L->experts / G)))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "layer %u: a router of %u groups, top %u, does not choose %u of %u "
                            "experts (at most %u groups)",
                            i, G, L->router_topk_groups, L->experts_per_tok, L->experts,
                            TSL_MOE_MAX_GROUPS);
    /* query head j reads K/V head j / (heads / kv_heads), and TP splits both by heads */
    if (has_attn(L->kind) && L->kv_heads && (L->heads % L->kv_heads || L->kv_heads % tp))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "layer %u: %u K/V heads do not group %u query heads and split %u ways",
                            i, L->kv_heads, L->heads, tp);
    if (has_ffn(L->kind) && !moe_of(L) && L->ffn_hidden % tp)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED, "layer %u: FFN size %u does not split %u ways",
                            i, L->ffn_hidden, tp);
    if (moe_of(L) && shared_width(L) % tp) /* the routed experts are not split (expert TP 1) */
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "layer %u: shared experts of %u columns do not split %u ways", i,
                            shared_width(L), tp);
    if (L->kind == TSL_LAYER_EMBEDDING && L->positions && L->positions < L->seq_len)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "layer %u: %u learned positions for a sequence of %u", i, L->positions,
                            L->seq_len);
    return 0;
}

/* A tied head shares model layer 0's table: that must be a token embedding of the
 * head's vocabulary and width. */
static int head_tie(const tsl_model_t *m, uint32_t i, uint32_t stage, tsl_exec_tie_t *tie,
                    tsl_err_t *err)
{
    const tsl_layer_t *L = &m->layers[i], *E = &m->layers[0];
    *tie = TSL_EXEC_TIE_NONE;
    if (L->kind != TSL_LAYER_HEAD || !L->tied_head)
        return 0;
    if (E->kind != TSL_LAYER_EMBEDDING || E->vocab != L->vocab || E->hidden != L->hidden)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "layer %u: a tied head needs a token embedding of vocabulary %u and "
                            "hidden %u as layer 0",
                            i, L->vocab, L->hidden);
    *tie = stage == 0 ? TSL_EXEC_TIE_SHARED : TSL_EXEC_TIE_COPY;
    return 0;
}

/* A tied head in another stage than the embedding sums the table's gradient with the
 * embedding's at the same position: both must hold the same vocabulary rows there. A
 * tied head in the embedding's stage computes with the table itself: same layout. */
static int tie_layouts(const tsl_plan_t *p, const tsl_model_t *m, tsl_err_t *err)
{
    uint32_t h = m->n_layers - 1, G = p->stages[0].n_devices;
    const tsl_strategy_t *E = &p->layer[0], *H = &p->layer[h];
    if (p->pp == 1 && !tsl_strategy_same_layout(E, H))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "layer %u: a tied head in the embedding's stage needs the "
                            "embedding's layout",
                            h);
    if (p->pp == 1 || p->stages[p->pp - 1].n_devices != G)
        return 0; /* (different device counts are refused with the stages) */
    uint32_t ts = tsl_strategy_stride(E, TSL_DIM_TP), hs = tsl_strategy_stride(H, TSL_DIM_TP);
    uint32_t te = tsl_strategy_degree(E, TSL_DIM_TP), th = tsl_strategy_degree(H, TSL_DIM_TP);
    for (uint32_t q = 0; q < G; q++)
        if (te != th || (q / ts) % te != (q / hs) % th)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "layer %u: a tied head in another stage needs the embedding's "
                                "TP degree and index on every device (tp %u, embedding tp %u)",
                                h, th, te);
    return 0;
}

/* Every rank checks every stage, so that all refuse a plan or none does, and counts
 * the group splits the stages make: every rank calls group_split as often. */
static int check_stages(const tsl_plan_t *p, const tsl_model_t *m, uint32_t *n_splits,
                        tsl_err_t *err)
{
    *n_splits = 0;
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (check_layer(&m->layers[i], i, m->n_layers,
                        tsl_strategy_degree(&p->layer[i], TSL_DIM_TP), err))
            return -1;
    for (uint32_t s = 0; s < p->pp; s++) {
        uint32_t n = 0;
        if (tsl_exec_stage_layout_m(p, m, s, 0, NULL, NULL, NULL, &n, err))
            return -1;
        *n_splits = n > *n_splits ? n : *n_splits;
    }
    return 0;
}

/* Appends virtual stage q's layers (plan p's stage q; the rank's chunk) to r. */
static int fill_layers(const tsl_plan_t *p, const tsl_model_t *m, uint32_t q, tsl_exec_rank_t *r,
                       tsl_err_t *err)
{
    const tsl_plan_stage_t *st = &p->stages[q];
    for (uint32_t k = 0; k < st->n_layers; k++) {
        uint32_t i = st->first_layer + k;
        const tsl_layer_t *L = &m->layers[i];
        bool sdp = tsl_strategy_degree(&p->layer[i], TSL_DIM_SDP) > 1;
        tsl_exec_tie_t tie;
        bool moe = moe_of(L);
        if (head_tie(m, i, q, &tie, err))
            return -1;
        r->layers[r->n_layers++] = (tsl_exec_layer_t){
            .kind = L->kind,
            .index = i,
            .seq = L->seq_len,
            .hidden = L->hidden,
            .ffn = moe ? shared_width(L) : L->ffn_hidden,
            .heads = L->heads,
            .vocab = L->vocab,
            .bias = !L->no_bias,
            .ckpt = p->layer[i].ckpt,
            .sdp = sdp,
            .positions = L->kind == TSL_LAYER_EMBEDDING ? L->positions : 0,
            .tie = tie,
            .unfused_attn = L->unfused_attn,
            .rms_norm = L->rms_norm,
            .gated_ffn = L->gated_ffn,
            .kv_heads = L->kv_heads && has_attn(L->kind) ? L->kv_heads : L->heads,
            .window = L->attn_window < L->seq_len ? L->attn_window : 0,
            .causal = L->causal,
            .parallel = L->kind == TSL_LAYER_ENCODER && L->parallel_block,
            .shared_norm = L->kind == TSL_LAYER_ENCODER && L->parallel_block && L->shared_norm,
            .experts = moe ? L->experts : 0,
            .top_k = moe ? L->experts_per_tok : 0,
            .expert_ffn = moe ? L->ffn_hidden : 0,
            .router_sigmoid = moe && L->router_score == TSL_ROUTER_SIGMOID,
            .router_choice_bias = moe && L->router_bias == TSL_ROUTER_BIAS_CHOICE,
            .router_norm = moe && L->router_norm,
            .shared_gate = moe && L->shared_expert_gate && shared_width(L) > 0,
            .router_groups = moe && L->router_groups > 1 ? L->router_groups : 0,
            .router_topk_groups = moe && L->router_groups > 1 ? L->router_topk_groups : 0,
            .router_scale = moe && L->router_scale > 0 ? (float)L->router_scale : 1.0f,
        };
        tsl_exec_layer_t *x = &r->layers[r->n_layers - 1];
        if (L->kv_lora_rank && has_attn(L->kind)) {
            x->q_lora = L->q_lora_rank;
            x->kv_lora = L->kv_lora_rank;
            x->qk_nope = L->qk_nope_dim;
            x->qk_rope = L->qk_rope_dim;
            x->v_head = L->v_head_dim;
            x->rope_base = m->rope.base > 0 ? (float)m->rope.base : 10000.0f;
            x->kv_heads = L->heads;
        }
    }
    return 0;
}

/* Interleaved 1F1B: the plan's pp·v virtual stages as the stages of a plan vp
 * (virtual stage q = c·pp + s on stage s's devices), so that the layouts walk them as
 * they walk stages (exec_layout.c: the wrap from the last stage to stage 0 is a
 * neighbour like any other). The plan keeps a stage's layers as one range, as the
 * planner prices them (v chunks of 1/v the stage each); the executor cuts the chunks
 * as the Megatron exporter's --num-layers-per-virtual-pipeline-stage has Megatron-LM
 * cut them: a stage's blocks (its layers but the model's token embedding and head)
 * in v parts, the earlier one more where they do not divide, the virtual stages
 * taking the model's layers in order, the embedding in the first, the head in the
 * last. A uniform model's stage holds the same work either way; which layers it
 * holds differs (chunk c of stage s: the layers of virtual stage c·pp + s). */
static int chunk_plan(const tsl_plan_t *p, const tsl_model_t *m, tsl_plan_t *vp, tsl_err_t *err)
{
    uint32_t P = p->pp, v = p->interleave, at = 0;
    bool emb = m->layers[0].kind == TSL_LAYER_EMBEDDING;
    bool head = m->layers[m->n_layers - 1].kind == TSL_LAYER_HEAD;
    if (P < 2 || v > TSL_EXEC_MAX_CHUNKS || P * v > TSL_PLAN_MAX_STAGES)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "plan: interleave %u over pp %u: the executor runs 2..%u model "
                            "chunks on 2 or more stages, at most %u virtual stages",
                            v, P, TSL_EXEC_MAX_CHUNKS, TSL_PLAN_MAX_STAGES);
    if (p->n_micro % P)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "plan: interleave %u: n_micro %u is not a multiple of pp %u, as "
                            "Megatron-LM's interleaved schedule needs",
                            v, p->n_micro, P);
    if (p->vp_group && p->vp_group != P)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "plan: vp_group %u: the executor runs Megatron-LM's default "
                            "interleaved order, %u micro-batches per group (pp)",
                            p->vp_group, P);
    *vp = *p;
    vp->pp = P * v;
    vp->interleave = 1;
    for (uint32_t q = 0; q < P * v; q++) {
        uint32_t s = q % P, c = q / P;
        const tsl_plan_stage_t *st = &p->stages[s];
        int64_t nb = (int64_t)st->n_layers - (s == 0 && emb) - (s + 1 == P && head);
        int64_t n = nb < 0 ? 0 : nb / v + (c < nb % v);
        n += (q == 0 && emb) + (q + 1 == P * v && head);
        if (n == 0)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "plan: stage %u: its %u layers leave model chunk %u of %u "
                                "without a layer",
                                s, st->n_layers, c, v);
        vp->stages[q] = (tsl_plan_stage_t){.first_layer = at,
                                           .n_layers = (uint32_t)n,
                                           .first_device = st->first_device,
                                           .n_devices = st->n_devices};
        at += (uint32_t)n;
    }
    if (at != m->n_layers)
        return tsl_err_set(err, "plan: its stages hold %u layers, the model has %u", at,
                           m->n_layers);
    return 0;
}

/* Chunk c's groups (virtual stage q's, n of them) into the rank's at c·S, S the most
 * any virtual stage makes; an earlier chunk's padded with groups of the rank alone, so
 * that round c·S + k of group_split is chunk c's k-th on every rank. Its layers' group
 * indices move with them. */
static void put_groups(tsl_exec_rank_t *r, uint32_t c, uint32_t S, const tsl_exec_group_t *g,
                       uint32_t n, bool last)
{
    uint32_t at = c * S;
    for (uint32_t k = 0; k < n; k++)
        r->groups[at + k] = g[k];
    for (uint32_t k = n; !last && k < S; k++)
        r->groups[at + k] = (tsl_exec_group_t){(int32_t)r->rank, 0, 1};
    r->n_groups = last ? at + n : at + S;
    for (uint32_t i = r->chunk_first[c]; i < r->n_layers; i++) {
        tsl_exec_layer_t *l = &r->layers[i];
        int32_t *gi[] = {&l->tp_group,     &l->dw_group, &l->in_fwd.group,
                         &l->in_bwd.group, &l->ep_group, &l->edp_group};
        for (size_t k = 0; k < 6; k++)
            if (*gi[k] >= 0)
                *gi[k] += (int32_t)at;
    }
}

/* The rank's chunks (one under plain 1F1B): layers and layouts of virtual stage
 * c·pp + stage of vp, with their groups. */
static int fill_chunks(const tsl_plan_t *vp, const tsl_model_t *m, uint32_t local, uint32_t S,
                       tsl_exec_rank_t *r, tsl_err_t *err)
{
    uint32_t v = r->n_chunks, n = 0;
    for (uint32_t c = 0; c < v; c++)
        n += vp->stages[c * r->pp + r->stage].n_layers;
    r->layers = calloc(n ? n : 1, sizeof(*r->layers));
    r->groups = calloc((size_t)S * v + 1, sizeof(*r->groups));
    if (!r->layers || !r->groups)
        return tsl_err_setc(err, TSL_E_NOMEM, "exec: out of memory");
    for (uint32_t c = 0; c < v; c++) {
        uint32_t q = c * r->pp + r->stage, ng = 0, ns = 0;
        tsl_exec_group_t *g = NULL;
        r->chunk_first[c] = r->n_layers;
        if (fill_layers(vp, m, q, r, err) ||
            tsl_exec_stage_layout_m(vp, m, q, local, r->layers + r->chunk_first[c], &g, &ng, &ns,
                                    err))
            return -1;
        put_groups(r, c, S, g, ng, c + 1 == v);
        free(g);
    }
    r->chunk_first[v] = r->n_layers;
    r->n_splits = S * v;
    return 0;
}

static int rank_of_stage(const tsl_plan_t *p, const tsl_plan_t *vp, const tsl_model_t *m,
                         uint32_t rank, tsl_exec_rank_t *r, tsl_err_t *err)
{
    uint32_t s = 0, n_splits, v = vp->pp / p->pp;
    while (s < p->pp && !(rank >= p->stages[s].first_device &&
                          rank < p->stages[s].first_device + p->stages[s].n_devices))
        s++;
    if (s == p->pp)
        return tsl_err_set(err, "rank %u: no stage of the plan has that device", rank);
    /* Every rank checks the head's tie, so that all refuse a plan or none does. */
    uint32_t h = m->n_layers - 1;
    tsl_exec_tie_t tie;
    if (check_stages(vp, m, &n_splits, err) || head_tie(m, h, vp->pp - 1, &tie, err) ||
        (tie != TSL_EXEC_TIE_NONE && tie_layouts(vp, m, err)))
        return -1;
    const tsl_plan_stage_t *st = &p->stages[s];
    uint32_t local = rank - st->first_device, P = p->pp;
    *r = (tsl_exec_rank_t){.rank = rank,
                           .world = p->n_devices,
                           .stage = s,
                           .pp = P,
                           .micro_batch = p->micro_batch,
                           .n_micro = p->n_micro,
                           .prev_rank = s ? (int32_t)(p->stages[s - 1].first_device + local) : -1,
                           .next_rank =
                               s + 1 < P ? (int32_t)(p->stages[s + 1].first_device + local) : -1,
                           .n_chunks = v,
                           .wrap_rank = -1};
    if (v > 1 && (s == 0 || s + 1 == P))
        r->wrap_rank = (int32_t)(p->stages[s ? 0 : P - 1].first_device + local);
    r->tie_color = -1;
    if (tie == TSL_EXEC_TIE_COPY)
        r->tie_color = (int32_t)(s + 1 == P ? p->stages[0].first_device + local : rank);
    if (fill_chunks(vp, m, local, n_splits, r, err))
        return -1;
    const tsl_exec_layer_t *f = &r->layers[0];
    r->tp = f->tp;
    r->tp_index = f->tp_index;
    r->tp_color = r->groups[f->tp_group].color;
    r->dp = f->dw;
    r->dp_index = f->dw_index;
    r->dp_color = r->groups[f->dw_group].color;
    return 0;
}

int tsl_exec_rank_from_plan(const tsl_plan_t *p, const tsl_model_t *m, uint32_t rank,
                            tsl_exec_rank_t *out, tsl_err_t *err)
{
    tsl_sublayer_model_t sm;
    tsl_plan_t *vp = NULL; /* interleaved: the virtual stages */
    memset(&sm, 0, sizeof(sm));
    memset(out, 0, sizeof(*out));
    int rc = -1;
    if (!p->valid || p->pp == 0 || p->n_micro == 0 || p->micro_batch == 0)
        return tsl_err_set(err, "plan: not a valid plan (no stages or no micro-batches)");
    if (tsl_plan_exec_scope(p, err) || tsl_model_exec_scope(m, err))
        return -1;
    if (p->sublayer) {
        if (tsl_sublayer_split(m, &sm, err))
            return -1;
        m = &sm.model;
    }
    if (m->n_layers != p->n_layers) {
        tsl_err_set(err, "plan: %u layers, the model has %u", p->n_layers, m->n_layers);
        goto out;
    }
    if (p->interleave > 1) {
        if (!(vp = malloc(sizeof(*vp)))) {
            tsl_err_setc(err, TSL_E_NOMEM, "exec: out of memory");
            goto out;
        }
        if (chunk_plan(p, m, vp, err))
            goto out;
    }
    rc = rank_of_stage(p, vp ? vp : p, m, rank, out, err);
out:
    free(vp);
    if (p->sublayer)
        tsl_sublayer_free(&sm);
    if (rc)
        tsl_exec_rank_free(out);
    return rc;
}

void tsl_exec_rank_free(tsl_exec_rank_t *r)
{
    free(r->layers);
    free(r->groups);
    r->layers = NULL;
    r->groups = NULL;
    r->n_layers = r->n_groups = 0;
}

static void uniform_strategy(const tsl_exec_plan_spec_t *s, tsl_strategy_t *st)
{
    memset(st, 0, sizeof(*st));
    if (s->tp > 1) {
        st->dim[st->n_levels] = TSL_DIM_TP;
        st->degree[st->n_levels++] = s->tp;
    }
    if (s->dp > 1) {
        st->dim[st->n_levels] = s->sdp ? TSL_DIM_SDP : TSL_DIM_DP;
        st->degree[st->n_levels++] = s->dp;
    }
    st->ckpt = s->ckpt;
}

int tsl_exec_uniform_plan(const tsl_model_t *m, const tsl_exec_plan_spec_t *s, tsl_plan_t *out,
                          tsl_err_t *err)
{
    if (!s->pp || !s->tp || !s->dp || !s->micro_batch || !s->n_micro)
        return tsl_err_set(err, "plan: pp, tp, dp, micro-batch and count must be ≥ 1");
    if (s->pp > TSL_PLAN_MAX_STAGES || s->pp > m->n_layers)
        return tsl_err_set(err, "plan: pp %u: give at most %u (stages) and at most the %u layers",
                           s->pp, TSL_PLAN_MAX_STAGES, m->n_layers);
    tsl_plan_init(out);
    out->valid = true;
    strcpy(out->label, "exec");
    out->pp = s->pp;
    out->n_devices = s->pp * s->tp * s->dp;
    out->n_layers = m->n_layers;
    out->micro_batch = s->micro_batch;
    out->n_micro = s->n_micro;
    out->global_batch = s->micro_batch * s->n_micro;
    uint32_t base = m->n_layers / s->pp, extra = m->n_layers % s->pp, at = 0;
    for (uint32_t k = 0; k < s->pp; k++) {
        tsl_plan_stage_t *st = &out->stages[k];
        st->first_layer = at;
        st->n_layers = base + (k < extra);
        st->first_device = k * s->tp * s->dp;
        st->n_devices = s->tp * s->dp;
        st->inflight = s->pp - k < s->n_micro ? s->pp - k : s->n_micro;
        at += st->n_layers;
    }
    for (uint32_t i = 0; i < m->n_layers; i++)
        uniform_strategy(s, &out->layer[i]);
    return 0;
}
