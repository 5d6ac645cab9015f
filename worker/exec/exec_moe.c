/*
 * exec_moe.c — the routed experts of a mixture-of-experts FFN block, as the planner
 * prices them (docs/cost-model.md "Mixture of experts": Megatron-LM's MoE layer with
 * the all-to-all dispatcher, expert TP 1, dropless). Per micro-batch on one rank:
 *
 *   route     this TP rank's Tl = T/tp tokens (rows [tp_index·Tl, …) of the norm
 *             output): logits = y·Wr (Tl × E), probabilities = softmax in F32, top-k
 *             experts per token (moe_topk), the Tl·k copies sorted by expert, stably
 *             (moe_sort), and the copies per expert counted — under a capacity factor
 *             (tsl_exec_opts_t.moe_capacity) only an expert's first ⌈c·Tl·k/E⌉ copies,
 *             the others dropped (a zero output, a zero weight gradient);
 *   counts    all-gathered over the EP group and read on the host (one sync: the
 *             all-to-all sizes must be known there, as in Megatron's dispatcher);
 *   dispatch  the copies gathered in expert order and sent to the rank holding their
 *             expert (all_to_allv over the EP group), then put expert-major there;
 *   experts   for each local expert its rows: y·W1 (+b1), SwiGLU or GeLU, ·W2 (+b2);
 *   combine   the outputs back the way they came (all_to_allv), and each token's k
 *             outputs summed, weighted by their probabilities, into its output row.
 *
 * Backward reverses it: the weights' gradient dw = dout·(expert output) goes through
 * the softmax of the selected probabilities into the router (moe_topk_bwd), the
 * weighted copies of dout go to the experts (the combine's all-to-all reversed), the
 * experts' weight gradients accumulate, their input gradients come back (the
 * dispatch's all-to-all reversed) and are summed per token. The router's gradient of
 * this rank's tokens is summed over the TP group here (each TP rank routes other
 * tokens; Megatron sums it once a step), the experts' over the expert-DP group with
 * the step's gradient sync (exec_step.c). With ep 1 the dispatch order is already
 * expert-major: no all-to-all, no reordering.
 *
 * Determinism: every order is fixed (the sort is stable, a token's copies are summed
 * in top-k order, a source's rows keep their order), so an expert sees its rows in
 * the order of the tokens over the EP group: one rank and an EP split compute the
 * same sums (docs/executor.md "Tests").
 */
#include <string.h>

#include "exec_internal.h"

#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((x))                                                                                   \
            return -1;                                                                             \
    } while (0)

/* One MoE block's routing state for one micro-batch on this rank. */
typedef struct moe {
    tsl_exec_t *e;
    tsl_exec_lctx_t *c;
    const tsl_exec_layer_t *d;
    tsl_exec_moe_ws_t *ws;
    tsl_exec_moe_dims_t m;
    tsl_exec_eoffs_t eo;
    size_t h, row0; /* hidden; the first token row this TP rank routes */
    size_t n_sent;  /* copies this rank dispatches (all n, less those dropped) */
    size_t n_recv;  /* rows this rank's experts got */
    tsl_buf_t probs, w, cnt, idx, order, pos; /* the F32 stash (idx, order, pos: I32) */
    tsl_buf_t ys, xe, ef1, eg;                /* the stash */
} moe_t;

static tsl_buf_t i32(tsl_buf_t b)
{
    b.dt = TSL_DT_I32;
    return b;
}

static tsl_buf_t part(const tsl_buf_t *b, size_t off, size_t n)
{
    return tsl_buf_view(b, off, n);
}

static void moe_init(moe_t *x, tsl_exec_lctx_t *c)
{
    const tsl_exec_stash_t *s = &c->L->st;
    memset(x, 0, sizeof(*x));
    x->e = c->e;
    x->c = c;
    x->d = c->L->d;
    x->ws = &c->e->moe;
    x->h = x->d->hidden;
    tsl_exec_moe_dims(x->d, x->d->tp, x->d->b, x->e->o.moe_capacity, &x->m);
    tsl_exec_expert_offsets(x->d, &x->eo);
    x->row0 = x->d->tp_index * x->m.Tl;
    size_t n = x->m.n, R = x->m.R, h = x->h;
    x->probs = part(&c->st32, s->probs, x->m.Tl * x->m.E);
    x->w = part(&c->st32, s->w, n);
    x->cnt = part(&c->st32, s->cnt, x->m.ep * x->m.E);
    x->idx = i32(part(&c->st32, s->idx, n));
    x->order = i32(part(&c->st32, s->order, n));
    x->pos = i32(part(&c->st32, s->pos, n));
    x->ys = part(&c->st, s->ys, n * h);
    x->xe = part(&c->st, s->xe, R * h);
    x->ef1 = part(&c->st, s->ef1, R * x->m.g * x->m.f);
    x->eg = part(&c->st, s->eg, R * x->m.f);
}

static int gemm(tsl_exec_t *e, bool ta, bool tb, size_t m, size_t n, size_t k, float beta,
                tsl_buf_t a, tsl_buf_t b, tsl_buf_t c, tsl_err_t *err)
{
    tsl_gemm_t g = {.ta = ta,
                    .tb = tb,
                    .m = (int)m,
                    .n = (int)n,
                    .k = (int)k,
                    .alpha = 1.0f,
                    .beta = beta,
                    .a = a,
                    .b = b,
                    .c = c,
                    .lda = ta ? (int)m : (int)k,
                    .ldb = tb ? (int)k : (int)n,
                    .ldc = (int)n,
                    .batch = 1};
    return m && n && k ? e->dev->gemm(e->dev, &g, err) : 0;
}

/* ---- the host's side: counts → all-to-all sizes, rows per expert, reordering ---- */

/* Rows of chunk (source i, local expert j) in the gathered counts. */
static size_t chunk_rows(const moe_t *x, size_t i, size_t j)
{
    return (size_t)x->ws->hcnt[i * x->m.E + x->d->ep_index * x->m.El + j];
}

/* From the gathered counts on the host: what goes to and comes from each EP member
 * (elements), each local expert's rows, and (ep > 1) the index that puts the received
 * rows (source-major) expert-major and its inverse, copied to the device. */
static int route_plan(moe_t *x, tsl_err_t *err)
{
    tsl_exec_moe_ws_t *ws = x->ws;
    size_t ep = x->m.ep, El = x->m.El, E = x->m.E, me = x->d->ep_index;
    x->n_recv = x->n_sent = 0;
    for (size_t j = 0; j < El; j++)
        ws->rows[j] = 0;
    for (size_t e = 0; e < E; e++)
        x->n_sent += (size_t)ws->hcnt[me * E + e];
    for (size_t i = 0; i < ep; i++) {
        size_t to = 0, from = 0;
        for (size_t j = 0; j < El; j++) {
            to += (size_t)ws->hcnt[me * E + i * El + j];
            from += chunk_rows(x, i, j);
            ws->rows[j] += chunk_rows(x, i, j);
        }
        ws->send[i] = to * x->h;
        ws->recv[i] = from * x->h;
        x->n_recv += from;
    }
    if (x->n_recv > x->m.R || x->n_sent > x->m.n)
        return tsl_err_setc(err, TSL_E_INTERNAL,
                            "exec: layer %u: %zu routed rows past %zu, or %zu copies past %zu",
                            x->d->index, x->n_recv, x->m.R, x->n_sent, x->m.n);
    if (ep == 1)
        return 0;
    int32_t *fwd = ws->hidx, *back = ws->hidx + x->m.R;
    size_t q = 0;
    for (size_t j = 0; j < El; j++)
        for (size_t i = 0, src = 0; i < ep; i++) {
            for (size_t j2 = 0; j2 < j; j2++) /* chunk (i, j) starts after (i, < j) */
                src += chunk_rows(x, i, j2);
            for (size_t r = 0; r < chunk_rows(x, i, j); r++, q++) {
                fwd[q] = (int32_t)(src + r);
                back[src + r] = (int32_t)q;
            }
            for (size_t j2 = j; j2 < El; j2++)
                src += chunk_rows(x, i, j2);
        }
    tsl_devops_t *dev = x->e->dev;
    size_t bytes = x->n_recv * sizeof(int32_t);
    TRY(dev->copy_bytes(dev, TSL_COPY_H2D, ws->ridx.ptr, fwd, bytes, TSL_STREAM_COMPUTE, err));
    return dev->copy_bytes(dev, TSL_COPY_H2D, (int32_t *)ws->ridx.ptr + x->m.R, back, bytes,
                           TSL_STREAM_COMPUTE, err);
}

/* The stash's gathered counts to the host, then the plan. */
static int read_counts(moe_t *x, tsl_err_t *err)
{
    TRY(x->e->dev->download(x->e->dev, &x->cnt, x->ws->hcnt, err));
    return route_plan(x, err);
}

/* ---- forward ---- */

/* The layer's routing (exec.h; devops.h tsl_moe_route_t); bias: a view of the
 * score-correction bias, when the layer has one. */
static tsl_moe_route_t route_of(const moe_t *x, tsl_buf_t *bias)
{
    const tsl_exec_layer_t *d = x->d;
    size_t br = x->c->L->o.br;
    if (br != TSL_NONE)
        *bias = part(&x->c->p, br, x->m.E);
    return (tsl_moe_route_t){.sigmoid = d->router_sigmoid,
                             .bias = br != TSL_NONE ? bias : NULL,
                             .groups = (int)d->router_groups,
                             .topk_groups = (int)d->router_topk_groups,
                             .norm = d->router_norm,
                             .scale = d->router_scale};
}

/* Router, top-k, sort, counts (gathered over the EP group when ep > 1). */
static int route(moe_t *x, const tsl_buf_t *ysl, tsl_err_t *err)
{
    tsl_devops_t *dev = x->e->dev;
    size_t Tl = x->m.Tl, E = x->m.E, k = x->m.k;
    tsl_buf_t lg = part(&x->ws->lg, 0, Tl * E), bias;
    tsl_buf_t wr = part(&x->c->p, x->c->L->o.wr, x->h * E);
    tsl_moe_route_t rt = route_of(x, &bias);
    TRY(gemm(x->e, false, false, Tl, E, x->h, 0, *ysl, wr, lg, err));
    TRY(dev->moe_topk(dev, &lg, &rt, &x->probs, &x->idx, &x->w, (int)Tl, (int)E, (int)k, err));
    int n = (int)x->m.n, cap = (int)x->m.cap;
    if (x->m.ep == 1)
        return dev->moe_sort(dev, &x->idx, &x->order, &x->pos, &x->cnt, n, (int)E, cap, err);
    tsl_buf_t mine = part(&x->ws->cnt, 0, E);
    int back = x->e->ph_cur; /* forward, or recomputation inside backward */
    TRY(dev->moe_sort(dev, &x->idx, &x->order, &x->pos, &mine, n, (int)E, cap, err));
    TRY(tsl_exec_ph(x->e, PH_COMM, err));
    TRY(x->e->comm->all_gather(x->e->comm, x->c->L->ep_g, &mine, &x->cnt,
                               dev->stream(dev, TSL_STREAM_COMPUTE), err));
    return tsl_exec_ph(x->e, back, err);
}

/* dst ← src over the EP group with the plan's counts (reversed: the way back). */
static int a2a(moe_t *x, const tsl_buf_t *src, tsl_buf_t *dst, bool reversed, tsl_err_t *err)
{
    tsl_commops_t *c = x->e->comm;
    const size_t *sc = reversed ? x->ws->recv : x->ws->send;
    const size_t *rc = reversed ? x->ws->send : x->ws->recv;
    int back = x->e->ph_cur;
    TRY(tsl_exec_ph(x->e, PH_COMM, err));
    TRY(c->all_to_allv(c, x->c->L->ep_g, src, sc, dst, rc,
                       x->e->dev->stream(x->e->dev, TSL_STREAM_COMPUTE), err));
    return tsl_exec_ph(x->e, back, err);
}

/* Rows src (n_recv of them) reordered by the plan's index: expert-major from
 * source-major (fwd), or back. */
static int reorder(moe_t *x, const tsl_buf_t *src, tsl_buf_t *dst, bool fwd, tsl_err_t *err)
{
    tsl_buf_t ix = i32(part(&x->ws->ridx, fwd ? 0 : x->m.R, x->n_recv));
    tsl_buf_t to = part(dst, 0, x->n_recv * x->h);
    return x->e->dev->gather_rows(x->e->dev, src, &ix, 1, NULL, &to, (int)x->n_recv, (int)x->h,
                                  err);
}

/* The copies in expert order to the experts' ranks: xe (expert-major). */
static int dispatch(moe_t *x, const tsl_buf_t *ysl, tsl_err_t *err)
{
    tsl_devops_t *dev = x->e->dev;
    int n = (int)x->n_sent, k = (int)x->m.k, h = (int)x->h;
    if (x->m.ep == 1)
        return dev->gather_rows(dev, ysl, &x->order, k, NULL, &x->xe, n, h, err);
    tsl_buf_t sa = part(&x->ws->sa, 0, x->m.n * x->h);
    TRY(dev->gather_rows(dev, ysl, &x->order, k, NULL, &sa, n, h, err));
    TRY(a2a(x, &sa, &x->ws->ra, false, err));
    return reorder(x, &x->ws->ra, &x->xe, true, err);
}

/* Local expert j's weight at offset `off` (of `n` elements) in the experts' vector. */
static tsl_buf_t ew(const moe_t *x, const tsl_buf_t *v, size_t j, size_t off, size_t n)
{
    return part(v, j * x->eo.n + off, n);
}

/* Each local expert on its rows of xe: out (expert-major, n_recv × h). */
static int experts_fwd(moe_t *x, tsl_buf_t *out, tsl_err_t *err)
{
    tsl_devops_t *dev = x->e->dev;
    size_t h = x->h, f = x->m.f, gf = x->m.g * f, at = 0;
    const tsl_buf_t *P = &x->c->xp;
    for (size_t j = 0; j < x->m.El; at += x->ws->rows[j], j++) {
        size_t r = x->ws->rows[j];
        tsl_buf_t f1 = part(&x->ef1, at * gf, r * gf);
        TRY(gemm(x->e, false, false, r, gf, h, 0, part(&x->xe, at * h, r * h),
                 ew(x, P, j, x->eo.w1, h * gf), f1, err));
        if (r && x->eo.b1 != TSL_NONE) {
            tsl_buf_t b = ew(x, P, j, x->eo.b1, gf);
            TRY(dev->add_bias(dev, &f1, &b, (int)r, (int)gf, err));
        }
    }
    tsl_buf_t f1 = part(&x->ef1, 0, x->n_recv * gf), g = part(&x->eg, 0, x->n_recv * f);
    if (x->m.g == 2)
        TRY(dev->swiglu_fwd(dev, &f1, &g, (int)x->n_recv, (int)f, err));
    else
        TRY(dev->gelu_fwd(dev, &f1, &g, err));
    at = 0;
    for (size_t j = 0; j < x->m.El; at += x->ws->rows[j], j++) {
        size_t r = x->ws->rows[j];
        tsl_buf_t o = part(out, at * h, r * h);
        TRY(gemm(x->e, false, false, r, h, f, 0, part(&x->eg, at * f, r * f),
                 ew(x, P, j, x->eo.w2, f * h), o, err));
        if (r && x->eo.b2 != TSL_NONE) {
            tsl_buf_t b = ew(x, P, j, x->eo.b2, h);
            TRY(dev->add_bias(dev, &o, &b, (int)r, (int)h, err));
        }
    }
    return 0;
}

int tsl_exec_moe_fwd(tsl_exec_lctx_t *c, const tsl_buf_t *y, tsl_buf_t *out, tsl_err_t *err)
{
    moe_t x;
    moe_init(&x, c);
    tsl_devops_t *dev = x.e->dev;
    tsl_buf_t ysl = part(y, x.row0 * x.h, x.m.Tl * x.h);
    tsl_buf_t osl = part(out, x.row0 * x.h, x.m.Tl * x.h);
    TRY(route(&x, &ysl, err) || read_counts(&x, err) || dispatch(&x, &ysl, err));
    if (x.m.ep == 1) /* expert-major is the dispatch order: straight into ys */
        TRY(experts_fwd(&x, &x.ys, err));
    else {
        TRY(experts_fwd(&x, &x.ws->rb, err));
        TRY(reorder(&x, &x.ws->rb, &x.ws->ra, false, err));
        TRY(a2a(&x, &x.ws->ra, &x.ys, true, err));
    }
    return dev->scatter_add_rows(dev, &x.ys, &x.pos, &x.w, &osl, (int)x.m.Tl, (int)x.m.k, (int)x.h,
                                 err);
}

/* ---- backward ---- */

/* The router's backward from dw (ws->dw): its weight's gradient (summed over the TP
 * group when tp > 1: each TP rank routed other tokens — with the shared experts'
 * gate's, which exec_layer.c put after it in ws->dwr) and dysl += dlogits·Wrᵀ. The
 * score-correction bias only chooses: it has no gradient. */
static int router_bwd(moe_t *x, const tsl_buf_t *ysl, tsl_buf_t *dysl, tsl_err_t *err)
{
    tsl_exec_t *e = x->e;
    size_t Tl = x->m.Tl, E = x->m.E, h = x->h, wr = x->c->L->o.wr;
    size_t gate = x->c->L->o.wg != TSL_NONE ? h : 0; /* right after wr (exec_rank.c) */
    tsl_buf_t lg = part(&x->ws->lg, 0, Tl * E), dw = part(&x->ws->dw, 0, x->m.n), bias;
    tsl_moe_route_t rt = route_of(x, &bias);
    TRY(e->dev->moe_topk_bwd(e->dev, &x->probs, &x->idx, &dw, &rt, &lg, (int)Tl, (int)E,
                             (int)x->m.k, err));
    tsl_buf_t gwr = part(&x->c->g, wr, h * E + gate);
    if (x->d->tp > 1) {
        tsl_buf_t t = part(&x->ws->dwr, 0, h * E + gate);
        TRY(gemm(e, true, false, h, E, Tl, 0, *ysl, lg, t, err));
        TRY(tsl_exec_tp_sum(e, x->c->L, &t, err));
        TRY(e->dev->axpy(e->dev, 1.0f, &t, &gwr, err));
    } else {
        TRY(gemm(e, true, false, h, E, Tl, 1, *ysl, lg, gwr, err));
    }
    return gemm(e, false, true, Tl, h, E, 1, lg, part(&x->c->p, wr, h * E), *dysl, err);
}

/* Each local expert's backward from d_out (expert-major): weight gradients (+=) and
 * the input gradient dxe (expert-major). */
static int experts_bwd(moe_t *x, const tsl_buf_t *dout, tsl_buf_t *dxe, tsl_err_t *err)
{
    tsl_devops_t *dev = x->e->dev;
    size_t h = x->h, f = x->m.f, gf = x->m.g * f, at = 0, nr = x->n_recv;
    const tsl_buf_t *P = &x->c->xp, *G = &x->c->xg;
    tsl_buf_t dg = part(&x->ws->dg, 0, nr * f), df = part(&x->ws->df, 0, nr * gf);
    for (size_t j = 0; j < x->m.El; at += x->ws->rows[j], j++) {
        size_t r = x->ws->rows[j];
        tsl_buf_t d = part(dout, at * h, r * h);
        TRY(gemm(x->e, false, true, r, f, h, 0, d, ew(x, P, j, x->eo.w2, f * h),
                 part(&dg, at * f, r * f), err));
        TRY(gemm(x->e, true, false, f, h, r, 1, part(&x->eg, at * f, r * f), d,
                 ew(x, G, j, x->eo.w2, f * h), err));
        tsl_buf_t db = x->eo.b2 != TSL_NONE ? ew(x, G, j, x->eo.b2, h) : (tsl_buf_t){0};
        if (r && db.ptr)
            TRY(dev->bias_grad(dev, &d, &db, (int)r, (int)h, err));
    }
    tsl_buf_t f1 = part(&x->ef1, 0, nr * gf);
    if (x->m.g == 2)
        TRY(dev->swiglu_bwd(dev, &f1, &dg, &df, (int)nr, (int)f, err));
    else
        TRY(dev->gelu_bwd(dev, &f1, &dg, &df, err));
    at = 0;
    for (size_t j = 0; j < x->m.El; at += x->ws->rows[j], j++) {
        size_t r = x->ws->rows[j];
        tsl_buf_t d = part(&df, at * gf, r * gf);
        TRY(gemm(x->e, true, false, h, gf, r, 1, part(&x->xe, at * h, r * h), d,
                 ew(x, G, j, x->eo.w1, h * gf), err));
        tsl_buf_t db = x->eo.b1 != TSL_NONE ? ew(x, G, j, x->eo.b1, gf) : (tsl_buf_t){0};
        if (r && db.ptr)
            TRY(dev->bias_grad(dev, &d, &db, (int)r, (int)gf, err));
        TRY(gemm(x->e, false, true, r, h, gf, 0, d, ew(x, P, j, x->eo.w1, h * gf),
                 part(dxe, at * h, r * h), err));
    }
    return 0;
}

/* The combine's backward: the copies' gradients w·dout in dispatch order (sa) and the
 * weights' gradient dw = dout·ys. */
static int combine_bwd(moe_t *x, const tsl_buf_t *dosl, tsl_err_t *err)
{
    tsl_devops_t *dev = x->e->dev;
    int n = (int)x->m.n, k = (int)x->m.k, h = (int)x->h;
    tsl_buf_t sa = part(&x->ws->sa, 0, x->m.n * x->h), dw = part(&x->ws->dw, 0, x->m.n);
    TRY(dev->gather_rows(dev, dosl, &x->order, k, &x->w, &sa, (int)x->n_sent, h, err));
    return dev->rows_dot(dev, dosl, &x->ys, &x->pos, &dw, n, k, h, err);
}

int tsl_exec_moe_bwd(tsl_exec_lctx_t *c, const tsl_buf_t *y, const tsl_buf_t *dout, tsl_buf_t *dy,
                     tsl_err_t *err)
{
    moe_t x;
    moe_init(&x, c);
    tsl_devops_t *dev = x.e->dev;
    tsl_exec_moe_ws_t *ws = x.ws;
    size_t sl = x.row0 * x.h, nl = x.m.Tl * x.h;
    tsl_buf_t ysl = part(y, sl, nl), dosl = part(dout, sl, nl), dysl = part(dy, sl, nl);
    tsl_buf_t sa = part(&ws->sa, 0, x.m.n * x.h), *dxs = &ws->ra;
    TRY(read_counts(&x, err) || combine_bwd(&x, &dosl, err) || router_bwd(&x, &ysl, &dysl, err));
    if (x.m.ep == 1) { /* dispatch order is expert-major */
        TRY(experts_bwd(&x, &sa, &ws->ra, err));
    } else {
        TRY(a2a(&x, &sa, &ws->ra, false, err) || reorder(&x, &ws->ra, &ws->rb, true, err));
        TRY(experts_bwd(&x, &ws->rb, &ws->ra, err));
        TRY(reorder(&x, &ws->ra, &ws->rb, false, err) || a2a(&x, &ws->rb, &sa, true, err));
        dxs = &sa;
    }
    return dev->scatter_add_rows(dev, dxs, &x.pos, NULL, &dysl, (int)x.m.Tl, (int)x.m.k, (int)x.h,
                                 err);
}
