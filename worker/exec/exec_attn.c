/*
 * exec_attn.c — the attention core of the executor's attention blocks: from the
 * stashed QKV projection (T × (dl + 2·el), per row Q | K | V, query head j at column
 * j·hd of Q, K/V head k at k·hd of K and of V) to the context O (T × dl), and back,
 * (latent attention: V and O heads of hv, not hd — T × (dl + kl·hd + kl·hv) in, T ×
 * al·hv out),
 * batched over the local heads with the devops' strided-batched gemm. Written on the
 * device ops only, so that the cpu ops the tests run are the code the cuda ops run.
 *
 * Fused (the default, what the planner's cost model assumes unless the model says
 * unfused_attn): by query chunks of `chunk` rows, as FlashAttention. A chunk
 * [q0, q0 + c) needs keys [k0, q0 + c) only, k0 = 0, or with a window w (query q sees
 * keys (q − w, q], Mistral's sliding window) k0 = max(0, q0 − w + 1): the rest are
 * masked for every row of the chunk — skipped, not computed, as a fused kernel skips
 * whole masked tiles (tsl_attn_keys counts the keys it must visit); inside the range
 * the chunked softmax masks both ends. Its scores and softmax live in a workspace of
 * al × c × (q0 + c − k0), and backward recomputes them from QKV — a chunk holds whole
 * rows, so no log-sum-exp is kept. Nothing of size s² survives a layer: the stash
 * keeps QKV and O.
 *
 * Grouped-query attention (kl < al K/V heads, r = al / kl query heads each): query
 * head j reads K/V head j / r, so the query heads of one K/V head are adjacent. Each
 * gemm runs as r calls batched over the kl K/V heads, call g taking query heads
 * {k·r + g}: the query-side operands (Q, O, scores) advance r heads a batch, K and V
 * one, so every stride is constant; within a call the K/V gradients written are
 * distinct heads, and the r calls accumulate (β = 1) the sum over a K/V head's query
 * heads in order. r = 1 is one call over all heads.
 *
 * Not causal (the model's layer says causal false: BERT, ViT): every chunk reads all
 * s keys and nothing is masked, the full s × s a fused kernel computes then.
 *
 * Unfused (the layer's unfused_attn): one chunk of the whole sequence per sample, its
 * softmax output P (b × al × s × s, masked entries zero, also under a window) kept in
 * the stash until backward, as a framework without a fused kernel does. Both modes
 * compute the same function.
 */
#include <math.h>
#include <string.h>

#include "exec_internal.h"

#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((x))                                                                                   \
            return -1;                                                                             \
    } while (0)

void tsl_exec_attn_widths(const tsl_exec_layer_t *l, uint32_t tp, tsl_exec_aw_t *w)
{
    memset(w, 0, sizeof(*w));
    if (!l->heads || (l->kind != TSL_LAYER_ENCODER && l->kind != TSL_LAYER_ATTENTION))
        return;
    w->al = l->heads / tp;
    if (l->kv_lora) {
        w->kl = w->al;
        w->hk = (size_t)l->qk_nope + l->qk_rope;
        w->hv = l->v_head;
    } else {
        w->kl = (l->kv_heads ? l->kv_heads : l->heads) / tp;
        w->hk = w->hv = l->hidden / l->heads;
    }
    w->qw = w->al * w->hk + w->kl * w->hk + w->kl * w->hv;
    w->ow = w->al * w->hv;
}

tsl_exec_attn_t tsl_exec_attn_of(const tsl_exec_lctx_t *c)
{
    const tsl_exec_layer_t *l = c->L->d;
    tsl_exec_aw_t w;
    tsl_exec_attn_widths(l, l->tp, &w);
    return (tsl_exec_attn_t){
        c->e->dev, (int)l->b,          (int)l->seq,      (int)w.al,
        (int)w.hk, (int)(w.al * w.hk), (int)c->L->chunk, w.hk ? 1.0f / sqrtf((float)w.hk) : 0.0f,
        (int)w.kl, (int)l->window,     l->causal,        (int)w.hv};
}

/* Query rows per chunk, sized so that the two al × c × s buffers (P and dP) take
 * about one T × h activation of the layer: c = b·h / (2·al), rounded down to a
 * multiple of 64, at most s — but at least 256 rows: below that each chunk's gemms
 * are a few µs of work and a GPU spends the attention on launches (h 4096, 32 heads,
 * b 1, s 4096: 64-row chunks are ~200 launches a layer forward; 256 rows cost a
 * workspace of 4 activations instead of 1, still small beside the layer's stash). */
uint32_t tsl_exec_attn_chunk(const tsl_exec_layer_t *l, uint32_t tp, uint32_t b, uint32_t forced)
{
    uint64_t al = l->heads / tp, c = forced;
    if (!al || l->unfused_attn)
        return 0;
    if (!c) {
        c = (uint64_t)b * l->hidden / (2 * al) / 64 * 64;
        c = c < 256 ? 256 : c;
    }
    return (uint32_t)(c < l->seq ? c : l->seq);
}

size_t tsl_exec_attn_ws(const tsl_exec_layer_t *l, uint32_t tp, uint32_t chunk)
{
    size_t al = l->heads ? l->heads / tp : 0, s = l->seq;
    return chunk ? 2 * al * chunk * s : al * s * s;
}

static tsl_buf_t from(const tsl_buf_t *b, size_t off)
{
    return tsl_buf_view(b, off, b->n - off);
}

/* One operand of a head-batched gemm: from element `off` of buf, rows `ld` apart,
 * heads `stride` apart; kv: a K/V operand (one head per K/V head), else a query-side
 * one (one head per query head). */
typedef struct hop {
    const tsl_buf_t *buf;
    size_t off;
    int ld;
    long long stride;
    bool kv;
} hop_t;

typedef struct hmm {
    bool ta, tb;
    int m, n, k;
    float alpha, beta;
} hmm_t;

/* Query heads {k·r + g} of K/V head k, for the kl K/V heads. */
static void group_op(const tsl_exec_attn_t *a, hop_t o, int g, tsl_buf_t *b, int *ld,
                     long long *stride)
{
    int r = a->al / a->kl;
    size_t off = o.kv ? o.off : o.off + (size_t)g * o.stride;
    *b = from(o.buf, off), *ld = o.ld, *stride = o.kv ? o.stride : o.stride * r;
}

static int heads_mm(const tsl_exec_attn_t *a, hmm_t s, hop_t A, hop_t B, hop_t C, tsl_err_t *err)
{
    for (int g = 0; g < a->al / a->kl; g++) {
        tsl_gemm_t m = {.ta = s.ta,
                        .tb = s.tb,
                        .m = s.m,
                        .n = s.n,
                        .k = s.k,
                        .alpha = s.alpha,
                        .beta = s.beta,
                        .batch = a->kl};
        group_op(a, A, g, &m.a, &m.lda, &m.stride_a);
        group_op(a, B, g, &m.b, &m.ldb, &m.stride_b);
        group_op(a, C, g, &m.c, &m.ldc, &m.stride_c);
        TRY(a->dev->gemm(a->dev, &m, err));
    }
    return 0;
}

/* One query chunk of one sample: rows [q0, q0 + c) of the sequence, keys [k0, kend). */
typedef struct chunk {
    int i, q0, c, k0, kend;
} chunk_t;

/* V and O's head width. */
static int hv_of(const tsl_exec_attn_t *a)
{
    return a->hv ? a->hv : a->hd;
}

static int qkv_w(const tsl_exec_attn_t *a)
{
    return a->dl + a->kl * a->hd + a->kl * hv_of(a);
}

static hop_t q_of(const tsl_exec_attn_t *a, const tsl_buf_t *qkv, chunk_t k)
{
    int q3 = qkv_w(a);
    return (hop_t){qkv, ((size_t)k.i * a->s + k.q0) * q3, q3, a->hd, false};
}

/* K (which 1) or V (which 2) from key k0 on. */
static hop_t kv_of(const tsl_exec_attn_t *a, const tsl_buf_t *qkv, chunk_t k, int which)
{
    int q3 = qkv_w(a);
    size_t col = (size_t)a->dl + (size_t)(which - 1) * a->kl * a->hd;
    int w = which == 1 ? a->hd : hv_of(a);
    return (hop_t){qkv, ((size_t)k.i * a->s + k.k0) * q3 + col, q3, w, true};
}

static hop_t o_of(const tsl_exec_attn_t *a, const tsl_buf_t *o, chunk_t k)
{
    int ow = a->al * hv_of(a);
    return (hop_t){o, ((size_t)k.i * a->s + k.q0) * ow, ow, hv_of(a), false};
}

static hop_t sc_of(const tsl_buf_t *w, size_t off, chunk_t k)
{
    int nk = k.kend - k.k0;
    return (hop_t){w, off, nk, (long long)k.c * nk, false};
}

/* P = masked softmax(scale · Q_chunk · K[k0:kend]ᵀ) into w at off. */
static int scores(const tsl_exec_attn_t *a, const tsl_buf_t *qkv, chunk_t k, const tsl_buf_t *w,
                  size_t off, tsl_err_t *err)
{
    int nk = k.kend - k.k0;
    TRY(heads_mm(a, (hmm_t){false, true, k.c, nk, a->hd, a->scale, 0}, q_of(a, qkv, k),
                 kv_of(a, qkv, k, 1), sc_of(w, off, k), err));
    tsl_buf_t p = tsl_buf_view(w, off, (size_t)a->al * k.c * nk);
    /* not causal: every row a query past the last key, so none is masked */
    int q0 = a->causal ? k.q0 - k.k0 : nk;
    return a->dev->softmax_chunk_fwd(a->dev, &p, &p, a->al * k.c, nk, k.c, q0, a->window, err);
}

/* The chunks in order; unfused: one of the whole sequence. */
static bool next_chunk(const tsl_exec_attn_t *a, chunk_t *k)
{
    int c = a->chunk ? a->chunk : a->s;
    if (k->c)
        k->q0 += k->c;
    if (k->q0 >= a->s) {
        if (++k->i >= a->b)
            return false;
        k->q0 = 0;
    }
    k->c = a->s - k->q0 < c ? a->s - k->q0 : c;
    k->kend = a->causal ? k->q0 + k->c : a->s;
    k->k0 = a->chunk && a->window && k->q0 - a->window + 1 > 0 ? k->q0 - a->window + 1 : 0;
    return true;
}

/* Where a chunk's P lives: the stash (unfused, sample i's al·s²) or the workspace. */
static size_t p_off(const tsl_exec_attn_t *a, chunk_t k)
{
    return a->chunk ? 0 : (size_t)k.i * a->al * a->s * a->s;
}

int tsl_exec_attn_fwd(const tsl_exec_attn_t *a, const tsl_buf_t *qkv, const tsl_buf_t *P,
                      const tsl_buf_t *ws, const tsl_buf_t *ctx, tsl_err_t *err)
{
    const tsl_buf_t *pb = a->chunk ? ws : P;
    for (chunk_t k = {0, 0, 0, 0, 0}; next_chunk(a, &k);) {
        TRY(scores(a, qkv, k, pb, p_off(a, k), err));
        TRY(heads_mm(a, (hmm_t){false, false, k.c, hv_of(a), k.kend - k.k0, 1, 0},
                     sc_of(pb, p_off(a, k), k), kv_of(a, qkv, k, 2), o_of(a, ctx, k), err));
    }
    return 0;
}

/* dP = dO·Vᵀ; dV += Pᵀ·dO; dS = softmax_bwd(P, dP); dQ = scale·dS·K; dK += scale·dSᵀ·Q. */
int tsl_exec_attn_bwd(const tsl_exec_attn_t *a, const tsl_buf_t *qkv, const tsl_buf_t *P,
                      const tsl_buf_t *ws, const tsl_buf_t *dctx, tsl_buf_t *dqkv, tsl_err_t *err)
{
    const tsl_buf_t *pb = a->chunk ? ws : P;
    size_t dp_off = a->chunk ? (size_t)a->al * a->chunk * a->s : 0;
    TRY(a->dev->zero(a->dev, dqkv, err));
    for (chunk_t k = {0, 0, 0, 0, 0}; next_chunk(a, &k);) {
        int nk = k.kend - k.k0;
        size_t po = p_off(a, k), n = (size_t)a->al * k.c * nk;
        if (a->chunk)
            TRY(scores(a, qkv, k, pb, po, err));
        hop_t p = sc_of(pb, po, k), dp = sc_of(ws, dp_off, k), dout = o_of(a, dctx, k);
        TRY(heads_mm(a, (hmm_t){false, true, k.c, nk, hv_of(a), 1, 0}, dout, kv_of(a, qkv, k, 2),
                     dp, err));
        TRY(heads_mm(a, (hmm_t){true, false, nk, hv_of(a), k.c, 1, 1}, p, dout,
                     kv_of(a, dqkv, k, 2), err));
        tsl_buf_t pv = tsl_buf_view(pb, po, n), dpv = tsl_buf_view(ws, dp_off, n);
        TRY(a->dev->softmax_bwd(a->dev, &pv, &dpv, &dpv, a->al * k.c, nk, err));
        TRY(heads_mm(a, (hmm_t){false, false, k.c, a->hd, nk, a->scale, 0}, dp, kv_of(a, qkv, k, 1),
                     q_of(a, dqkv, k), err));
        TRY(heads_mm(a, (hmm_t){true, false, nk, a->hd, k.c, a->scale, 1}, dp, q_of(a, qkv, k),
                     kv_of(a, dqkv, k, 1), err));
    }
    return 0;
}
