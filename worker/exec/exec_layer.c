/*
 * exec_layer.c — forward and backward of the executor's blocks on the device ops:
 * pre-norm self-attention and FFN blocks (Megatron TP split); the token embedding and
 * the LM head are exec_vocab.c's. Row-major throughout: activations are T × h with
 * T = local samples × seq; a linear layer is Y = X·W with W stored in × out.
 * Llama-family variants, as the planner's model prices them (planner/model.h): RMSNorm
 * for LayerNorm (rms_norm), SwiGLU for GeLU (gated_ffn: the up projection makes gate |
 * up, 2·fl columns on a TP rank, SiLU(gate) ⊙ up goes down), no biases (bias false),
 * grouped-query attention and a sliding window (exec_attn.c). A mixture-of-experts
 * FFN block runs its shared experts as the dense FFN here and its routed experts in
 * exec_moe.c.
 */
#include <math.h>

#include "exec_internal.h"

#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((x))                                                                                   \
            return -1;                                                                             \
    } while (0)

static size_t take(size_t *at, size_t n, bool present)
{
    if (!present)
        return TSL_NONE;
    size_t o = *at;
    *at += n;
    return o;
}

void tsl_exec_stash_layout(const tsl_exec_layer_t *l, uint32_t tp, uint32_t b, tsl_exec_stash_t *s)
{
    tsl_exec_stash_layout_cap(l, tp, b, 0, s);
}

void tsl_exec_stash_layout_cap(const tsl_exec_layer_t *l, uint32_t tp, uint32_t b, float cap,
                               tsl_exec_stash_t *s)
{
    size_t T = (size_t)b * l->seq, h = l->hidden, fl = l->ffn / tp;
    size_t at = 0, at32 = 0, g = l->gated_ffn ? 2 : 1;
    tsl_exec_aw_t w;
    tsl_exec_attn_widths(l, tp, &w);
    bool a = l->kind == TSL_LAYER_ENCODER || l->kind == TSL_LAYER_ATTENTION;
    bool f = l->kind == TSL_LAYER_ENCODER || l->kind == TSL_LAYER_FFN, ln = !l->rms_norm;
    bool mla = a && l->kv_lora, ql = mla && l->q_lora;
    s->y1 = take(&at, T * h, a);
    /* latent attention: the latents, their norms and the rope key (what the planner
     * counts replicated: 4·s·q + 4·s·c + 2·s·r bytes a sample) */
    s->cq = take(&at, T * l->q_lora, ql);
    s->cqn = take(&at, T * l->q_lora, ql);
    s->ckv = take(&at, T * l->kv_lora, mla);
    s->ckvn = take(&at, T * l->kv_lora, mla);
    s->kr = take(&at, T * l->qk_rope, mla);
    s->qkv = take(&at, T * w.qw, a);
    s->p = take(&at, (size_t)b * w.al * l->seq * l->seq, a && l->unfused_attn);
    s->ctx = take(&at, T * w.ow, a);
    /* parallel: the FFN's norm reads x (the layer input); shared: y2 is y1 */
    s->x2 = take(&at, T * h, a && f && !l->parallel);
    s->y2 = take(&at, T * h, f && !l->shared_norm);
    s->f1 = take(&at, T * g * fl, f && fl);
    s->g = take(&at, T * fl, f && fl);
    tsl_exec_moe_dims_t m;
    bool moe = f && l->experts, gate = moe && fl && l->shared_gate;
    s->sh = take(&at, T * h, gate);
    tsl_exec_moe_dims(l, tp, b, cap, &m);
    s->ys = take(&at, m.n * h, moe);
    s->xe = take(&at, m.R * h, moe);
    s->ef1 = take(&at, m.R * m.g * m.f, moe);
    s->eg = take(&at, m.R * m.f, moe);
    s->n = at;
    s->mean1 = take(&at32, T, a && ln);
    s->rstd1 = take(&at32, T, a);
    s->rstdq = take(&at32, T, ql);
    s->rstdkv = take(&at32, T, mla);
    s->mean2 = take(&at32, T, f && ln && !l->shared_norm);
    s->rstd2 = take(&at32, T, f && !l->shared_norm);
    /* the head's dlogits in fp32, kept from the loss to backward (exec_vocab.c) */
    s->logits = take(&at32, T * (l->vocab ? tsl_exec_vocab_local(l->vocab, tp) : 0),
                     l->kind == TSL_LAYER_HEAD);
    s->probs = take(&at32, m.Tl * m.E, moe);
    s->w = take(&at32, m.n, moe);
    s->cnt = take(&at32, m.ep * m.E, moe);
    s->idx = take(&at32, m.n, moe); /* I32 in the F32 part: both 4 bytes */
    s->order = take(&at32, m.n, moe);
    s->pos = take(&at32, m.n, moe);
    s->gate = take(&at32, T, gate);
    s->n32 = at32;
}

void tsl_exec_ws_need(const tsl_exec_layer_t *d, size_t T, uint32_t chunk, tsl_exec_ws_need_t *w)
{
    size_t dl = d->hidden / d->tp, fl = d->ffn / d->tp, g = d->gated_ffn ? 2 : 1;
    size_t q = dl + 2 * tsl_exec_kv_width(d) / d->tp;
    tsl_exec_aw_t aw;
    tsl_exec_attn_widths(d, d->tp, &aw);
    bool mla = d->kv_lora && aw.al;
    if (mla)
        q = aw.qw, dl = aw.ow;
    /* a: dQKV or the FFN's up gradient (g·fl); b: dctx, or a gated FFN's dg */
    w->a = T * (q > g * fl ? q : g * fl);
    w->b = T * (d->gated_ffn && fl > dl ? fl : dl);
    w->c = tsl_exec_attn_ws(d, d->tp, chunk);
    w->l = 0;
    if (mla) { /* the latents' norm inputs' gradients; d(k_nope | v); the latents' */
        size_t lat = d->q_lora > d->kv_lora ? d->q_lora : d->kv_lora;
        size_t nv = aw.al * ((size_t)d->qk_nope + d->v_head);
        w->a = w->a > T * lat ? w->a : T * lat;
        w->b = w->b > T * nv ? w->b : T * nv;
        w->l = T * ((d->q_lora ? d->q_lora : d->hidden) + (size_t)d->kv_lora + d->qk_rope);
    }
}

/* Views: a tensor of the parameters/gradients/stash, from its offset to the end. */
static tsl_buf_t at(const tsl_buf_t *b, size_t off)
{
    return tsl_buf_view(b, off, b->n - off);
}

static tsl_buf_t len(const tsl_buf_t *b, size_t off, size_t n)
{
    return tsl_buf_view(b, off, n);
}

typedef struct mm {
    bool ta, tb;
    int m, n, k;
    float alpha, beta;
} mm_t;

/* C = alpha·op(A)·op(B) + beta·C, `batch` matrices at the given strides. */
static int bmm(tsl_exec_t *e, mm_t s, tsl_buf_t a, int lda, long long sa, tsl_buf_t b, int ldb,
               long long sb, tsl_buf_t c, int ldc, long long sc, int batch, tsl_err_t *err)
{
    tsl_gemm_t g = {s.ta, s.tb, s.m, s.n, s.k, s.alpha, s.beta, a,    b,
                    c,    lda,  ldb, ldc, sa,  sb,      sc,     batch};
    return e->dev->gemm(e->dev, &g, err);
}

static int mm(tsl_exec_t *e, mm_t s, tsl_buf_t a, int lda, tsl_buf_t b, int ldb, tsl_buf_t c,
              int ldc, tsl_err_t *err)
{
    return bmm(e, s, a, lda, 0, b, ldb, 0, c, ldc, 0, 1, err);
}

typedef struct dims {
    int T, h, dl, al, s, b, hd, fl;
    int kl, q3; /* local K/V heads; QKV width al·hd + kl·hd + kl·hv */
    int hv;     /* V head width (hd but under latent attention); dl = al·hv, the context */
} dims_t;

static dims_t dims_of(const tsl_exec_lctx_t *c)
{
    const tsl_exec_layer_t *l = c->L->d;
    tsl_exec_aw_t w;
    tsl_exec_attn_widths(l, l->tp, &w);
    dims_t d = {(int)(l->b * l->seq),
                (int)l->hidden,
                (int)w.ow,
                (int)w.al,
                (int)l->seq,
                (int)l->b,
                (int)w.hk,
                (int)l->ffn / (int)l->tp,
                (int)w.kl,
                (int)w.qw,
                (int)w.hv};
    return d;
}

/* out = x + biases + TP-sum(out): the end of a block after its row-parallel GEMM(s)
 * (biases TSL_NONE when absent; a parallel block adds the attention's and the FFN's). */
static int row_end(tsl_exec_lctx_t *c, dims_t d, size_t bias, size_t bias2, const tsl_buf_t *x,
                   tsl_buf_t *out, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    TRY(tsl_exec_tp_sum(e, c->L, out, err));
    size_t bs[2] = {bias, bias2};
    for (int i = 0; i < 2; i++) {
        if (bs[i] == TSL_NONE)
            continue;
        tsl_buf_t bb = len(&c->p, bs[i], d.h);
        TRY(e->dev->add_bias(e->dev, out, &bb, d.T, d.h, err));
    }
    return e->dev->axpy(e->dev, 1.0f, x, out, err);
}

/* out (beta 0: =, 1: +=) act · W: a row-parallel projection's local part. */
static int row_mm(tsl_exec_lctx_t *c, dims_t d, tsl_buf_t act, int k, size_t w, float beta,
                  tsl_buf_t *out, tsl_err_t *err)
{
    return mm(c->e, (mm_t){false, false, d.T, d.h, k, 1, beta}, act, k, at(&c->p, w), d.h, *out,
              d.h, err);
}

/* The block's norm: LayerNorm (gamma g, beta b), or RMSNorm (b and mean TSL_NONE). */
static int layernorm(tsl_exec_lctx_t *c, dims_t d, const tsl_buf_t *x, size_t g, size_t b, size_t y,
                     size_t mean, size_t rstd, tsl_err_t *err)
{
    tsl_devops_t *dev = c->e->dev;
    tsl_buf_t gg = len(&c->p, g, d.h), yy = len(&c->st, y, d.T * d.h);
    tsl_buf_t rs = len(&c->st32, rstd, d.T);
    if (b == TSL_NONE)
        return dev->rmsnorm_fwd(dev, x, &gg, &yy, &rs, d.T, d.h, err);
    tsl_buf_t bb = len(&c->p, b, d.h), mu = len(&c->st32, mean, d.T);
    return dev->layernorm_fwd(dev, x, &gg, &bb, &yy, &mu, &rs, d.T, d.h, err);
}

static tsl_exec_attn_t attn_of(const tsl_exec_lctx_t *c, dims_t d)
{
    (void)d;
    return tsl_exec_attn_of(c); /* exec_attn.c */
}

/* The stash's softmax output (unfused), or an empty view. */
static tsl_buf_t stashed_p(const tsl_exec_lctx_t *c)
{
    size_t p = c->L->st.p;
    return p == TSL_NONE ? (tsl_buf_t){NULL, 0, c->st.dt} : at(&c->st, p);
}

/* LN, QKV and the attention core: the stash's ctx, before the output projection. */
static int attn_core(tsl_exec_lctx_t *c, dims_t d, const tsl_buf_t *x, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    const tsl_exec_offs_t *o = &c->L->o;
    const tsl_exec_stash_t *s = &c->L->st;
    int q3 = d.q3;
    tsl_buf_t qkv = len(&c->st, s->qkv, (size_t)d.T * q3), P = stashed_p(c);
    tsl_buf_t ctx = len(&c->st, s->ctx, (size_t)d.T * d.dl);
    TRY(layernorm(c, d, x, o->ln1g, o->ln1b, s->y1, s->mean1, s->rstd1, err));
    if (c->L->d->kv_lora) /* latent attention from the norm's output (exec_mla.c) */
        return tsl_exec_mla_fwd(c, err);
    TRY(mm(e, (mm_t){false, false, d.T, q3, d.h, 1, 0}, at(&c->st, s->y1), d.h, at(&c->p, o->wqkv),
           q3, qkv, q3, err));
    if (o->bqkv != TSL_NONE) {
        tsl_buf_t bb = len(&c->p, o->bqkv, q3);
        TRY(e->dev->add_bias(e->dev, &qkv, &bb, d.T, q3, err));
    }
    tsl_exec_attn_t a = attn_of(c, d);
    return tsl_exec_attn_fwd(&a, &qkv, &P, &e->ws_c, &ctx, err);
}

/* The FFN's GEMM input in the stash: its norm's output, or under a shared norm the
 * attention's (y1). */
static size_t ffn_in(const tsl_exec_lctx_t *c)
{
    return c->L->st.y2 != TSL_NONE ? c->L->st.y2 : c->L->st.y1;
}

/* LN' (unless shared), the up projection and the activation: the stash's g (a MoE
 * layer without shared experts: the norm alone). */
static int ffn_core(tsl_exec_lctx_t *c, dims_t d, const tsl_buf_t *x, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    const tsl_exec_offs_t *o = &c->L->o;
    const tsl_exec_stash_t *s = &c->L->st;
    bool gated = c->L->d->gated_ffn;
    int up = gated ? 2 * d.fl : d.fl; /* gated: gate | up */
    if (s->y2 != TSL_NONE)
        TRY(layernorm(c, d, x, o->ln2g, o->ln2b, s->y2, s->mean2, s->rstd2, err));
    if (!d.fl)
        return 0;
    tsl_buf_t f1 = len(&c->st, s->f1, (size_t)d.T * up), g = len(&c->st, s->g, (size_t)d.T * d.fl);
    TRY(mm(e, (mm_t){false, false, d.T, up, d.h, 1, 0}, at(&c->st, ffn_in(c)), d.h,
           at(&c->p, o->w1), up, f1, up, err));
    if (o->b1 != TSL_NONE) {
        tsl_buf_t bb = len(&c->p, o->b1, up);
        TRY(e->dev->add_bias(e->dev, &f1, &bb, d.T, up, err));
    }
    if (gated)
        return e->dev->swiglu_fwd(e->dev, &f1, &g, d.T, d.fl, err);
    return e->dev->gelu_fwd(e->dev, &f1, &g, err);
}

static int attn_fwd(tsl_exec_lctx_t *c, const tsl_buf_t *x, tsl_buf_t *out, tsl_err_t *err)
{
    dims_t d = dims_of(c);
    const tsl_exec_offs_t *o = &c->L->o;
    TRY(attn_core(c, d, x, err));
    TRY(row_mm(c, d, at(&c->st, c->L->st.ctx), d.dl, o->wo, 0, out, err));
    return row_end(c, d, o->bo, TSL_NONE, x, out, err);
}

/* Qwen2-MoE's shared experts: their output (row-parallel, before the TP sum) into the
 * stash's sh, the gate's logits y·w_g (w_g replicated) into the MoE scratch, out =
 * σ(logit) · sh — under TP each rank gates its part, the sum is the gated whole. */
static int gated_shared_fwd(tsl_exec_lctx_t *c, dims_t d, tsl_buf_t *out, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    const tsl_exec_offs_t *o = &c->L->o;
    const tsl_exec_stash_t *s = &c->L->st;
    tsl_buf_t sh = len(&c->st, s->sh, (size_t)d.T * d.h), gl = len(&e->moe.gl, 0, (size_t)d.T);
    tsl_buf_t gate = len(&c->st32, s->gate, (size_t)d.T);
    TRY(row_mm(c, d, at(&c->st, s->g), d.fl, o->w2, 0, &sh, err));
    TRY(mm(e, (mm_t){false, false, d.T, 1, d.h, 1, 0}, at(&c->st, ffn_in(c)), d.h, at(&c->p, o->wg),
           1, gl, 1, err));
    return e->dev->gate_fwd(e->dev, &sh, &gl, &gate, out, d.T, d.h, err);
}

/* The FFN block; a MoE block's routed experts add their rows before the TP sum, so the
 * block keeps the one all-reduce of a dense FFN (exec_moe.c). */
static int ffn_fwd(tsl_exec_lctx_t *c, const tsl_buf_t *x, tsl_buf_t *out, tsl_err_t *err)
{
    dims_t d = dims_of(c);
    const tsl_exec_offs_t *o = &c->L->o;
    TRY(ffn_core(c, d, x, err));
    if (o->wg != TSL_NONE) /* gated shared experts: out = σ(y·w_g) · (their output) */
        TRY(gated_shared_fwd(c, d, out, err));
    else if (d.fl)
        TRY(row_mm(c, d, at(&c->st, c->L->st.g), d.fl, o->w2, 0, out, err));
    else
        TRY(c->e->dev->zero(c->e->dev, out, err));
    if (c->L->d->experts) {
        tsl_buf_t y = len(&c->st, ffn_in(c), (size_t)d.T * d.h);
        TRY(tsl_exec_moe_fwd(c, &y, out, err));
    }
    return row_end(c, d, o->b2, TSL_NONE, x, out, err);
}

/* A parallel block: both branches read x, their row-parallel outputs are summed on the
 * rank and TP-summed once (Megatron/NeoX's parallel residual), biases after the sum. */
static int parallel_fwd(tsl_exec_lctx_t *c, const tsl_buf_t *x, tsl_buf_t *out, tsl_err_t *err)
{
    dims_t d = dims_of(c);
    const tsl_exec_offs_t *o = &c->L->o;
    TRY(attn_core(c, d, x, err));
    TRY(ffn_core(c, d, x, err));
    TRY(row_mm(c, d, at(&c->st, c->L->st.ctx), d.dl, o->wo, 0, out, err));
    TRY(row_mm(c, d, at(&c->st, c->L->st.g), d.fl, o->w2, 1, out, err));
    return row_end(c, d, o->bo, o->b2, x, out, err);
}

int tsl_exec_layer_fwd(tsl_exec_lctx_t *c, const tsl_buf_t *x, tsl_buf_t *out, tsl_err_t *err)
{
    dims_t d = dims_of(c);
    switch (c->L->d->kind) {
    case TSL_LAYER_ENCODER: {
        if (c->L->d->parallel)
            return parallel_fwd(c, x, out, err);
        tsl_buf_t x2 = len(&c->st, c->L->st.x2, (size_t)d.T * d.h);
        TRY(attn_fwd(c, x, &x2, err));
        return ffn_fwd(c, &x2, out, err);
    }
    case TSL_LAYER_ATTENTION: return attn_fwd(c, x, out, err);
    case TSL_LAYER_FFN: return ffn_fwd(c, x, out, err);
    case TSL_LAYER_EMBEDDING: return tsl_exec_embed_fwd(c, out, err);
    case TSL_LAYER_HEAD: return tsl_exec_head_fwd(c, x, err);
    default:
        return tsl_err_setc(err, TSL_E_UNSUPPORTED, "exec: layer kind %s",
                            tsl_layer_kind_name(c->L->d->kind));
    }
}

/* Backward of a row-parallel projection out = act·W (+ bias): dW, dbias, and
 * dact = dout·Wᵀ into dact. */
static int row_bwd(tsl_exec_lctx_t *c, dims_t d, tsl_buf_t act, int k, size_t w, size_t bias,
                   const tsl_buf_t *dout, tsl_buf_t dact, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    TRY(mm(e, (mm_t){false, true, d.T, k, d.h, 1, 0}, *dout, d.h, at(&c->p, w), d.h, dact, k, err));
    TRY(mm(e, (mm_t){true, false, k, d.h, d.T, 1, 1}, act, k, *dout, d.h, at(&c->g, w), d.h, err));
    if (bias == TSL_NONE)
        return 0;
    tsl_buf_t db = len(&c->g, bias, d.h);
    return e->dev->bias_grad(e->dev, dout, &db, d.T, d.h, err);
}

/* Backward of a column-parallel projection dact = y·W (+ bias): dW, dbias, and
 * dy (beta 0: =, 1: +=) dact·Wᵀ, this rank's part before the TP sum. */
static int col_bwd(tsl_exec_lctx_t *c, dims_t d, size_t y, int k, size_t w, size_t bias,
                   tsl_buf_t dact, float beta, tsl_buf_t *dy, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    TRY(mm(e, (mm_t){true, false, d.h, k, d.T, 1, 1}, at(&c->st, y), d.h, dact, k, at(&c->g, w), k,
           err));
    if (bias != TSL_NONE) {
        tsl_buf_t db = len(&c->g, bias, k);
        TRY(e->dev->bias_grad(e->dev, &dact, &db, d.T, k, err));
    }
    return mm(e, (mm_t){false, true, d.T, d.h, k, 1, beta}, dact, k, at(&c->p, w), k, *dy, d.h,
              err);
}

/* The norm's backward: dx (written) from the TP-summed dy; dgamma, dbeta accumulate. */
static int norm_bwd(tsl_exec_lctx_t *c, dims_t d, const tsl_buf_t *dy, const tsl_buf_t *x,
                    size_t lg, size_t lb, size_t mean, size_t rstd, tsl_buf_t *dx, tsl_err_t *err)
{
    tsl_devops_t *dev = c->e->dev;
    tsl_buf_t gg = len(&c->p, lg, d.h), dg = len(&c->g, lg, d.h), rs = len(&c->st32, rstd, d.T);
    if (lb == TSL_NONE)
        return dev->rmsnorm_bwd(dev, dy, x, &gg, &rs, dx, &dg, d.T, d.h, err);
    tsl_buf_t db = len(&c->g, lb, d.h), mu = len(&c->st32, mean, d.T);
    return dev->layernorm_bwd(dev, dy, x, &gg, &mu, &rs, dx, &dg, &db, d.T, d.h, err);
}

/* The attention branch from dout back to its norm's output: dy (beta: += ) of this
 * rank, before the TP sum. Uses ws_a (dQKV) and ws_b (dctx). */
static int attn_branch_bwd(tsl_exec_lctx_t *c, dims_t d, const tsl_buf_t *dout, float beta,
                           tsl_buf_t *dy, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    const tsl_exec_offs_t *o = &c->L->o;
    const tsl_exec_stash_t *s = &c->L->st;
    int q3 = d.q3;
    tsl_buf_t qkv = len(&c->st, s->qkv, (size_t)d.T * q3), P = stashed_p(c);
    tsl_buf_t dqkv = len(&e->ws_a, 0, (size_t)d.T * q3),
              dctx = len(&e->ws_b, 0, (size_t)d.T * d.dl);
    TRY(row_bwd(c, d, at(&c->st, s->ctx), d.dl, o->wo, o->bo, dout, dctx, err));
    if (c->L->d->kv_lora) /* dy whole, its latents' gradients TP-summed (exec_mla.c) */
        return tsl_exec_mla_bwd(c, &dctx, dy, err);
    tsl_exec_attn_t a = attn_of(c, d);
    TRY(tsl_exec_attn_bwd(&a, &qkv, &P, &e->ws_c, &dctx, &dqkv, err));
    return col_bwd(c, d, s->y1, q3, o->wqkv, o->bqkv, dqkv, beta, dy, err);
}

static int dense_ffn_bwd(tsl_exec_lctx_t *c, dims_t d, const tsl_buf_t *dout, float beta,
                         tsl_buf_t *dy, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    const tsl_exec_offs_t *o = &c->L->o;
    const tsl_exec_stash_t *s = &c->L->st;
    if (c->L->d->gated_ffn) {
        /* dg (T × fl) in ws_b, then d(gate | up) (T × 2·fl) in ws_a */
        size_t n = (size_t)d.T * d.fl;
        tsl_buf_t dg = len(&e->ws_b, 0, n), df = len(&e->ws_a, 0, 2 * n);
        tsl_buf_t f1 = len(&c->st, s->f1, 2 * n);
        TRY(row_bwd(c, d, at(&c->st, s->g), d.fl, o->w2, o->b2, dout, dg, err));
        TRY(e->dev->swiglu_bwd(e->dev, &f1, &dg, &df, d.T, d.fl, err));
        return col_bwd(c, d, ffn_in(c), 2 * d.fl, o->w1, o->b1, df, beta, dy, err);
    }
    tsl_buf_t dg = len(&e->ws_a, 0, (size_t)d.T * d.fl), f1 = len(&c->st, s->f1, dg.n);
    TRY(row_bwd(c, d, at(&c->st, s->g), d.fl, o->w2, o->b2, dout, dg, err));
    TRY(e->dev->gelu_bwd(e->dev, &f1, &dg, &dg, err));
    return col_bwd(c, d, ffn_in(c), d.fl, o->w1, o->b1, dg, beta, dy, err);
}

/* The gate's backward: the shared experts' dout = σ·dout (MoE scratch gs), the
 * logits' gradient (gl, this rank's part under TP: linear in its part of sh), the
 * shared experts' backward, then dy += dlogit·w_gᵀ (TP-summed with dy) and w_g's
 * gradient — at tp > 1 into the router's TP-sum scratch after the router's h × E,
 * summed with it in exec_moe.c (each rank's is its part's). */
static int gated_shared_bwd(tsl_exec_lctx_t *c, dims_t d, const tsl_buf_t *dout, float beta,
                            tsl_buf_t *dy, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    const tsl_exec_offs_t *o = &c->L->o;
    const tsl_exec_stash_t *s = &c->L->st;
    size_t th = (size_t)d.T * d.h;
    tsl_buf_t sh = len(&c->st, s->sh, th), gate = len(&c->st32, s->gate, (size_t)d.T);
    tsl_buf_t gs = len(&e->moe.gs, 0, th), gl = len(&e->moe.gl, 0, (size_t)d.T);
    TRY(e->dev->gate_bwd(e->dev, &sh, &gate, dout, &gs, &gl, d.T, d.h, err));
    TRY(dense_ffn_bwd(c, d, &gs, beta, dy, err));
    bool tp = c->L->d->tp > 1;
    tsl_buf_t gw = tp ? len(&e->moe.dwr, (size_t)d.h * c->L->d->experts, (size_t)d.h)
                      : len(&c->g, o->wg, (size_t)d.h);
    TRY(mm(e, (mm_t){true, false, d.h, 1, d.T, 1, tp ? 0.0f : 1.0f}, at(&c->st, ffn_in(c)), d.h, gl,
           1, gw, 1, err));
    return mm(e, (mm_t){false, true, d.T, d.h, 1, 1, 1}, gl, 1, at(&c->p, o->wg), 1, *dy, d.h, err);
}

/* The FFN branch likewise (ws_a, ws_b as attn_branch_bwd): the dense FFN (a MoE
 * layer's shared experts, if any), then a MoE layer's routed experts add theirs. */
static int ffn_branch_bwd(tsl_exec_lctx_t *c, dims_t d, const tsl_buf_t *dout, float beta,
                          tsl_buf_t *dy, tsl_err_t *err)
{
    if (c->L->o.wg != TSL_NONE)
        TRY(gated_shared_bwd(c, d, dout, beta, dy, err));
    else if (d.fl)
        TRY(dense_ffn_bwd(c, d, dout, beta, dy, err));
    else if (beta == 0)
        TRY(c->e->dev->zero(c->e->dev, dy, err));
    if (!c->L->d->experts)
        return 0;
    tsl_buf_t y = len(&c->st, ffn_in(c), (size_t)d.T * d.h);
    return tsl_exec_moe_bwd(c, &y, dout, dy, err);
}

/* A sequential block's backward: its branch, the TP sum (Megatron's f), the norm, plus
 * dout (the residual). */
static int block_bwd(tsl_exec_lctx_t *c, bool attn, const tsl_buf_t *x, const tsl_buf_t *dout,
                     tsl_buf_t *dx, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    const tsl_exec_offs_t *o = &c->L->o;
    const tsl_exec_stash_t *s = &c->L->st;
    dims_t d = dims_of(c);
    tsl_buf_t dy = len(&e->ws_d, 0, (size_t)d.T * d.h);
    if (attn) {
        TRY(attn_branch_bwd(c, d, dout, 0, &dy, err));
        if (!c->L->d->kv_lora) /* latent attention summed its latents' gradients */
            TRY(tsl_exec_tp_sum(e, c->L, &dy, err));
        TRY(norm_bwd(c, d, &dy, x, o->ln1g, o->ln1b, s->mean1, s->rstd1, dx, err));
    } else {
        TRY(ffn_branch_bwd(c, d, dout, 0, &dy, err));
        TRY(tsl_exec_tp_sum(e, c->L, &dy, err));
        TRY(norm_bwd(c, d, &dy, x, o->ln2g, o->ln2b, s->mean2, s->rstd2, dx, err));
    }
    return e->dev->axpy(e->dev, 1.0f, dout, dx, err);
}

/* A parallel block's backward: dout into both branches; their norm-output gradients
 * TP-summed in one all-reduce (one T×h sum under a shared norm, else both side by side
 * in ws_d's 2·T×h), then each norm's backward into dx, plus dout. */
static int parallel_bwd(tsl_exec_lctx_t *c, const tsl_buf_t *x, const tsl_buf_t *dout,
                        tsl_buf_t *dx, tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    const tsl_exec_offs_t *o = &c->L->o;
    const tsl_exec_stash_t *s = &c->L->st;
    dims_t d = dims_of(c);
    bool shared = c->L->d->shared_norm;
    size_t th = (size_t)d.T * d.h;
    tsl_buf_t both = len(&e->ws_d, 0, shared ? th : 2 * th);
    tsl_buf_t dya = len(&e->ws_d, 0, th), dyf = shared ? dya : len(&e->ws_d, th, th);
    TRY(attn_branch_bwd(c, d, dout, 0, &dya, err));
    TRY(ffn_branch_bwd(c, d, dout, shared ? 1 : 0, &dyf, err));
    TRY(tsl_exec_tp_sum(e, c->L, &both, err));
    TRY(norm_bwd(c, d, &dya, x, o->ln1g, o->ln1b, s->mean1, s->rstd1, dx, err));
    if (!shared) {
        tsl_buf_t tmp = len(&e->g_mid, 0, th);
        TRY(norm_bwd(c, d, &dyf, x, o->ln2g, o->ln2b, s->mean2, s->rstd2, &tmp, err));
        TRY(e->dev->axpy(e->dev, 1.0f, &tmp, dx, err));
    }
    return e->dev->axpy(e->dev, 1.0f, dout, dx, err);
}

int tsl_exec_layer_bwd(tsl_exec_lctx_t *c, const tsl_buf_t *x, const tsl_buf_t *dout, tsl_buf_t *dx,
                       tsl_err_t *err)
{
    tsl_exec_t *e = c->e;
    dims_t d = dims_of(c);
    switch (c->L->d->kind) {
    case TSL_LAYER_ENCODER: {
        if (c->L->d->parallel)
            return parallel_bwd(c, x, dout, dx, err);
        tsl_buf_t x2 = len(&c->st, c->L->st.x2, (size_t)d.T * d.h);
        tsl_buf_t mid = len(&e->g_mid, 0, x2.n);
        TRY(block_bwd(c, false, &x2, dout, &mid, err));
        return block_bwd(c, true, x, &mid, dx, err);
    }
    case TSL_LAYER_ATTENTION: return block_bwd(c, true, x, dout, dx, err);
    case TSL_LAYER_FFN: return block_bwd(c, false, x, dout, dx, err);
    case TSL_LAYER_EMBEDDING: return tsl_exec_embed_bwd(c, dout, err);
    case TSL_LAYER_HEAD: return tsl_exec_head_bwd(c, x, dx, err);
    default:
        return tsl_err_setc(err, TSL_E_UNSUPPORTED, "exec: layer kind %s",
                            tsl_layer_kind_name(c->L->d->kind));
    }
}
