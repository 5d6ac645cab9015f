/*
 * exec_mla.c — multi-head latent attention (DeepSeek-V2 paper, Sec. 2.1; DeepSeek-V3's
 * inference/model.py MLA, its "naive" path), what the planner prices
 * (docs/cost-model.md "Multi-head latent attention"). On a TP rank of a heads, al =
 * a/t of them, with widths n (no RoPE), r (RoPE), v (value), latents q (0: none) and
 * c, from the block's norm output y1 (T × h):
 *
 *   query   q > 0: cq = y1·Wdq (T × q), cqn = RMSNorm(cq), Q = cqn·Wuq; else Q =
 *           y1·Wuq — per head n | r, its r part rotated (RoPE);
 *   KV      [ckv | kr] = y1·Wdkv (T × (c + r): the latent and one rope key for every
 *           head), ckvn = RMSNorm(ckv), ckvn·Wukv (c × al·(n + v)) gives each head's
 *           no-rope key and value; the key's r part is kr rotated, the same for all
 *           heads;
 *   core    heads of n + r for Q and K, v for V (exec_attn.c), scale 1/√(n + r);
 *   out     ctx (T × al·v), then the block's output projection (exec_layer.c).
 *
 * Under TP the down projections (Wdq, Wdkv) and the latents' norms are replicated, as
 * Megatron-LM builds them and the planner prices them; Wuq, Wukv and the heads split
 * by t, the output projection by rows. Every TP rank computes the same latents; in
 * backward each has its heads' part of the latents' gradients (and of the rope key's),
 * so those are summed over the TP group in one all-reduce — [d(cqn) or y1's part
 * from Q | d(ckvn) | d(kr)], T × (q or h) + T × c + T × r — after which every rank
 * computes the same replicated gradients and the whole dy: the block needs no TP sum
 * of its own in backward (one all-reduce each way, as the planner's tp_allreduces).
 *
 * Layout: the stash's Q | K | V (T × qw, exec_internal.h tsl_exec_aw_t) holds Q, K
 * with the rope key copied into every head (as the planner counts K: a·(n + r) a
 * token) and V, so the core is exec_attn.c's unchanged but for V's head width.
 * Backward gathers d(k_nope | v) per head (copy2d) to run Wukv's two gradients as one
 * GEMM each. RoPE pairs element i with i + r/2 (devops.h rope; DeepSeek's code pairs
 * neighbours — the same function up to a fixed order of Wuq's and Wdkv's rope
 * columns), positions t mod s, base the model's rope_theta; YaRN's scaling (DeepSeek-V3's
 * rope_scaling and its softmax mscale) is not run.
 */
#include "exec_internal.h"

#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((x))                                                                                   \
            return -1;                                                                             \
    } while (0)

/* The layer's shapes on this rank. */
typedef struct mla {
    tsl_exec_t *e;
    tsl_exec_lctx_t *c;
    const tsl_exec_layer_t *l;
    const tsl_exec_offs_t *o;
    const tsl_exec_stash_t *s;
    size_t T, h, q, qin, kc, r, n, v, nv, al, hk, qw;
} mla_t;

static void mla_init(mla_t *m, tsl_exec_lctx_t *c)
{
    const tsl_exec_layer_t *l = c->L->d;
    tsl_exec_aw_t w;
    tsl_exec_attn_widths(l, l->tp, &w);
    *m = (mla_t){.e = c->e,
                 .c = c,
                 .l = l,
                 .o = &c->L->o,
                 .s = &c->L->st,
                 .T = (size_t)l->b * l->seq,
                 .h = l->hidden,
                 .q = l->q_lora,
                 .qin = l->q_lora ? l->q_lora : l->hidden,
                 .kc = l->kv_lora,
                 .r = l->qk_rope,
                 .n = l->qk_nope,
                 .v = l->v_head,
                 .nv = (size_t)l->qk_nope + l->v_head,
                 .al = w.al,
                 .hk = w.hk,
                 .qw = w.qw};
}

/* b from element off to its end. */
static tsl_buf_t at(const tsl_buf_t *b, size_t off)
{
    return tsl_buf_view(b, off, b->n - off);
}

static tsl_buf_t len(const tsl_buf_t *b, size_t off, size_t n)
{
    return tsl_buf_view(b, off, n);
}

/* C (ldc) = op(A)·op(B) + beta·C, batch matrices at the strides (sa 0: one A). */
typedef struct g {
    bool ta, tb;
    size_t m, n, k;
    float beta;
} g_t;

static int bgemm(mla_t *x, g_t s, tsl_buf_t a, size_t lda, long long sa, tsl_buf_t b, size_t ldb,
                 long long sb, tsl_buf_t c, size_t ldc, long long sc, size_t batch, tsl_err_t *err)
{
    tsl_gemm_t g = {.ta = s.ta,
                    .tb = s.tb,
                    .m = (int)s.m,
                    .n = (int)s.n,
                    .k = (int)s.k,
                    .alpha = 1.0f,
                    .beta = s.beta,
                    .a = a,
                    .b = b,
                    .c = c,
                    .lda = (int)lda,
                    .ldb = (int)ldb,
                    .ldc = (int)ldc,
                    .stride_a = sa,
                    .stride_b = sb,
                    .stride_c = sc,
                    .batch = (int)batch};
    return s.m && s.n && s.k ? x->e->dev->gemm(x->e->dev, &g, err) : 0;
}

static int gemm(mla_t *x, g_t s, tsl_buf_t a, size_t lda, tsl_buf_t b, size_t ldb, tsl_buf_t c,
                size_t ldc, tsl_err_t *err)
{
    return bgemm(x, s, a, lda, 0, b, ldb, 0, c, ldc, 0, 1, err);
}

static tsl_buf_t P_(const mla_t *x, size_t off)
{
    return at(&x->c->p, off);
}

static tsl_buf_t G_(const mla_t *x, size_t off)
{
    return at(&x->c->g, off);
}

static tsl_buf_t S_(const mla_t *x, size_t off, size_t n)
{
    return len(&x->c->st, off, n);
}

/* RoPE on the r-wide parts: the queries' (in place in Q) or the shared key into
 * every head of K (forward), and back: the queries' gradients in place, the key's
 * summed over the heads into dkr. */
static int rope_q(mla_t *x, const tsl_buf_t *qkv, bool inverse, tsl_err_t *err)
{
    tsl_buf_t qp = at(qkv, x->n);
    tsl_rope_t r = {(int)x->T,  (int)x->al, (int)x->r,  (int)x->l->seq,  (int)x->qw,
                    (int)x->hk, (int)x->qw, (int)x->hk, x->l->rope_base, inverse};
    return x->e->dev->rope(x->e->dev, &qp, &qp, &r, err);
}

static int rope_k(mla_t *x, const tsl_buf_t *kr, const tsl_buf_t *qkv, tsl_buf_t *dkr, bool bwd,
                  tsl_err_t *err)
{
    tsl_buf_t kp = at(qkv, x->al * x->hk + x->n);
    tsl_rope_t r = {(int)x->T, (int)x->al, (int)x->r, (int)x->l->seq,  0,
                    0,         0,          0,         x->l->rope_base, bwd};
    if (!bwd) { /* kr (T × r) into each head's slot */
        r.ldx = (int)x->r, r.xs = 0, r.ldy = (int)x->qw, r.ys = (int)x->hk;
        return x->e->dev->rope(x->e->dev, kr, &kp, &r, err);
    }
    r.ldx = (int)x->qw, r.xs = (int)x->hk, r.ldy = (int)x->r, r.ys = 0;
    return x->e->dev->rope(x->e->dev, &kp, dkr, &r, err);
}

static int rmsnorm(mla_t *x, size_t in, size_t gamma, size_t out, size_t rstd, size_t w,
                   tsl_err_t *err)
{
    tsl_buf_t xi = S_(x, in, x->T * w), y = S_(x, out, x->T * w);
    tsl_buf_t g = len(&x->c->p, gamma, w), rs = len(&x->c->st32, rstd, x->T);
    return x->e->dev->rmsnorm_fwd(x->e->dev, &xi, &g, &y, &rs, (int)x->T, (int)w, err);
}

int tsl_exec_mla_fwd(tsl_exec_lctx_t *c, tsl_err_t *err)
{
    mla_t x;
    mla_init(&x, c);
    const tsl_exec_offs_t *o = x.o;
    const tsl_exec_stash_t *s = x.s;
    size_t T = x.T, h = x.h, qh = x.al * x.hk, cr = x.kc + x.r;
    tsl_buf_t y1 = S_(&x, s->y1, T * h), qkv = S_(&x, s->qkv, T * x.qw);
    tsl_buf_t kr = S_(&x, s->kr, T * x.r), ckvn = S_(&x, s->ckvn, T * x.kc);
    /* the queries: the latent and its norm, or y1 itself, up into Q */
    tsl_buf_t qin = y1;
    if (x.q) {
        TRY(gemm(&x, (g_t){false, false, T, x.q, h, 0}, y1, h, P_(&x, o->wdq), x.q,
                 S_(&x, s->cq, T * x.q), x.q, err));
        TRY(rmsnorm(&x, s->cq, o->lnq, s->cqn, s->rstdq, x.q, err));
        qin = S_(&x, s->cqn, T * x.q);
    }
    TRY(gemm(&x, (g_t){false, false, T, qh, x.qin, 0}, qin, x.qin, P_(&x, o->wuq), qh, qkv, x.qw,
             err));
    /* the KV latent and the rope key from one weight (its first c columns, its last r) */
    TRY(gemm(&x, (g_t){false, false, T, x.kc, h, 0}, y1, h, P_(&x, o->wdkv), cr,
             S_(&x, s->ckv, T * x.kc), x.kc, err));
    TRY(gemm(&x, (g_t){false, false, T, x.r, h, 0}, y1, h, P_(&x, o->wdkv + x.kc), cr, kr, x.r,
             err));
    TRY(rmsnorm(&x, s->ckv, o->lnkv, s->ckvn, s->rstdkv, x.kc, err));
    /* each head's no-rope key and value from the normed latent (one A for all heads) */
    size_t unv = x.al * x.nv;
    TRY(bgemm(&x, (g_t){false, false, T, x.n, x.kc, 0}, ckvn, x.kc, 0, P_(&x, o->wukv), unv,
              (long long)x.nv, at(&qkv, qh), x.qw, (long long)x.hk, x.al, err));
    TRY(bgemm(&x, (g_t){false, false, T, x.v, x.kc, 0}, ckvn, x.kc, 0, P_(&x, o->wukv + x.n), unv,
              (long long)x.nv, at(&qkv, 2 * qh), x.qw, (long long)x.v, x.al, err));
    TRY(rope_q(&x, &qkv, false, err) || rope_k(&x, &kr, &qkv, NULL, false, err));
    tsl_exec_attn_t a = tsl_exec_attn_of(c);
    tsl_buf_t P = s->p == TSL_NONE ? (tsl_buf_t){NULL, 0, c->st.dt} : at(&c->st, s->p);
    tsl_buf_t ctx = S_(&x, s->ctx, T * x.al * x.v);
    return tsl_exec_attn_fwd(&a, &qkv, &P, &x.e->ws_c, &ctx, err);
}

/* The latents' norms and the down projections backward, from the TP-summed latent
 * gradients in ws_l: their weights' gradients and dy (written). */
static int down_bwd(mla_t *x, const tsl_buf_t *gq, const tsl_buf_t *gkv, const tsl_buf_t *gkr,
                    tsl_buf_t *dy, tsl_err_t *err)
{
    tsl_devops_t *dev = x->e->dev;
    const tsl_exec_offs_t *o = x->o;
    const tsl_exec_stash_t *s = x->s;
    size_t T = x->T, h = x->h, cr = x->kc + x->r;
    tsl_buf_t y1 = S_(x, s->y1, T * h);
    if (x->q) {
        tsl_buf_t cq = S_(x, s->cq, T * x->q), dcq = len(&x->e->ws_a, 0, T * x->q);
        tsl_buf_t g = len(&x->c->p, o->lnq, x->q), dg = len(&x->c->g, o->lnq, x->q);
        tsl_buf_t rs = len(&x->c->st32, s->rstdq, T);
        TRY(dev->rmsnorm_bwd(dev, gq, &cq, &g, &rs, &dcq, &dg, (int)T, (int)x->q, err));
        TRY(gemm(x, (g_t){true, false, h, x->q, T, 1}, y1, h, dcq, x->q, G_(x, o->wdq), x->q, err));
        TRY(gemm(x, (g_t){false, true, T, h, x->q, 0}, dcq, x->q, P_(x, o->wdq), x->q, *dy, h,
                 err));
    } else { /* the queries' part of dy, summed over the TP group with the latents */
        TRY(dev->copy(dev, dy, gq, err));
    }
    tsl_buf_t ckv = S_(x, s->ckv, T * x->kc), dckv = len(&x->e->ws_a, 0, T * x->kc);
    tsl_buf_t g = len(&x->c->p, o->lnkv, x->kc), dg = len(&x->c->g, o->lnkv, x->kc);
    tsl_buf_t rs = len(&x->c->st32, s->rstdkv, T);
    TRY(dev->rmsnorm_bwd(dev, gkv, &ckv, &g, &rs, &dckv, &dg, (int)T, (int)x->kc, err));
    TRY(gemm(x, (g_t){true, false, h, x->kc, T, 1}, y1, h, dckv, x->kc, G_(x, o->wdkv), cr, err));
    TRY(gemm(x, (g_t){true, false, h, x->r, T, 1}, y1, h, *gkr, x->r, G_(x, o->wdkv + x->kc), cr,
             err));
    TRY(gemm(x, (g_t){false, true, T, h, x->kc, 1}, dckv, x->kc, P_(x, o->wdkv), cr, *dy, h, err));
    return gemm(x, (g_t){false, true, T, h, x->r, 1}, *gkr, x->r, P_(x, o->wdkv + x->kc), cr, *dy,
                h, err);
}

int tsl_exec_mla_bwd(tsl_exec_lctx_t *c, const tsl_buf_t *dctx, tsl_buf_t *dy, tsl_err_t *err)
{
    mla_t x;
    mla_init(&x, c);
    tsl_exec_t *e = x.e;
    tsl_devops_t *dev = e->dev;
    const tsl_exec_offs_t *o = x.o;
    const tsl_exec_stash_t *s = x.s;
    size_t T = x.T, h = x.h, qh = x.al * x.hk, unv = x.al * x.nv;
    tsl_buf_t qkv = S_(&x, s->qkv, T * x.qw), dqkv = len(&e->ws_a, 0, T * x.qw);
    tsl_buf_t P = s->p == TSL_NONE ? (tsl_buf_t){NULL, 0, c->st.dt} : at(&c->st, s->p);
    tsl_exec_attn_t a = tsl_exec_attn_of(c);
    TRY(tsl_exec_attn_bwd(&a, &qkv, &P, &e->ws_c, dctx, &dqkv, err));
    /* the latents' gradients, side by side for one TP sum: gq | gkv | gkr */
    tsl_buf_t gl = len(&e->ws_l, 0, T * (x.qin + x.kc + x.r));
    tsl_buf_t gq = len(&gl, 0, T * x.qin), gkv = len(&gl, T * x.qin, T * x.kc);
    tsl_buf_t gkr = len(&gl, T * (x.qin + x.kc), T * x.r);
    TRY(rope_q(&x, &dqkv, true, err) || rope_k(&x, NULL, &dqkv, &gkr, true, err));
    /* d(k_nope | v) per head, as Wukv's columns lie, then its two GEMMs */
    tsl_buf_t du = len(&e->ws_b, 0, T * unv), ckvn = S_(&x, s->ckvn, T * x.kc);
    tsl_buf_t dun = at(&du, 0), duv = at(&du, x.n), dkn = at(&dqkv, qh), dv = at(&dqkv, 2 * qh);
    TRY(dev->copy2d(dev, &dkn, (int)x.qw, (int)x.hk, &dun, (int)unv, (int)x.nv, (int)T, (int)x.al,
                    (int)x.n, err));
    TRY(dev->copy2d(dev, &dv, (int)x.qw, (int)x.v, &duv, (int)unv, (int)x.nv, (int)T, (int)x.al,
                    (int)x.v, err));
    TRY(gemm(&x, (g_t){true, false, x.kc, unv, T, 1}, ckvn, x.kc, du, unv, G_(&x, o->wukv), unv,
             err));
    TRY(gemm(&x, (g_t){false, true, T, x.kc, unv, 0}, du, unv, P_(&x, o->wukv), unv, gkv, x.kc,
             err));
    /* the queries: Wuq's gradient and its input's (cqn's, or y1's part) */
    tsl_buf_t qin = x.q ? S_(&x, s->cqn, T * x.q) : S_(&x, s->y1, T * h);
    TRY(gemm(&x, (g_t){true, false, x.qin, qh, T, 1}, qin, x.qin, dqkv, x.qw, G_(&x, o->wuq), qh,
             err));
    TRY(gemm(&x, (g_t){false, true, T, x.qin, qh, 0}, dqkv, x.qw, P_(&x, o->wuq), qh, gq, x.qin,
             err));
    TRY(tsl_exec_tp_sum(e, c->L, &gl, err));
    return down_bwd(&x, &gq, &gkv, &gkr, dy, err);
}
