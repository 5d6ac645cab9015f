/*
 * exec_moe_setup.c — what a rank's mixture-of-experts layers hold besides a dense
 * layer's: each MoE layer's routed experts (its E/ep of them, whole, or under SDP its
 * shard over the expert-DP group; exec.h), seeded so that an expert's values do not
 * depend on which rank holds it; and the stage's MoE scratch (exec_internal.h
 * tsl_exec_moe_ws_t), sized for the largest MoE layer. Allocated at setup with the
 * rest (nothing during steps; the host arrays too); an OOM fails as any other.
 */
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((x))                                                                                   \
            return -1;                                                                             \
    } while (0)

static int dalloc(tsl_exec_t *e, tsl_buf_t *b, size_t n, tsl_dtype_t dt, tsl_err_t *err)
{
    memset(b, 0, sizeof(*b));
    return n ? e->dev->alloc(e->dev, b, n, dt, err) : 0;
}

static size_t zmax(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* The rank's experts from (seed, model index): all of them made, its shard kept. */
static int init_experts(tsl_exec_t *e, tsl_exec_xl_t *L, tsl_err_t *err)
{
    const tsl_exec_layer_t *d = L->d;
    uint32_t El = d->experts / d->ep;
    tsl_buf_t tmp;
    TRY(dalloc(e, &tmp, d->sdp ? L->ex.n_held * d->edp : L->ex.n_local, TSL_DT_F32, err));
    tsl_exec_fill_t f = {e, &tmp, d->index, err, e->dev->zero(e->dev, &tmp, err)};
    tsl_exec_expert_spans(d, d->ep_index * El, El, tsl_exec_fill_span, &f);
    tsl_buf_t held = tsl_buf_view(&tmp, d->sdp ? d->edp_index * L->ex.n_held : 0, L->ex.n_held);
    if (!f.rc)
        f.rc = e->dev->copy(e->dev, &L->ex.param, &held, err);
    if (!f.rc && L->ex.master.ptr)
        f.rc = e->dev->copy(e->dev, &L->ex.master, &held, err);
    e->dev->free(e->dev, &tmp);
    return f.rc;
}

int tsl_exec_moe_alloc_layer(tsl_exec_t *e, tsl_exec_xl_t *L, tsl_err_t *err)
{
    const tsl_exec_layer_t *d = L->d;
    tsl_dtype_t adt = e->dev->act_dtype;
    bool adam = e->o.optim == TSL_EXEC_ADAM;
    if (!d->experts)
        return 0;
    L->ex.n_local = (size_t)(d->experts / d->ep) * tsl_exec_expert_params(d);
    L->ex.n_held = d->sdp ? (L->ex.n_local + d->edp - 1) / d->edp : L->ex.n_local;
    size_t n = L->ex.n_held;
    TRY(dalloc(e, &L->ex.param, n, adt, err) || dalloc(e, &L->ex.grad, n, adt, err));
    TRY(dalloc(e, &L->ex.master, adt == TSL_DT_F32 ? 0 : n, TSL_DT_F32, err));
    TRY(dalloc(e, &L->ex.m, adam ? n : 0, TSL_DT_F32, err));
    TRY(dalloc(e, &L->ex.v, adam ? n : 0, TSL_DT_F32, err));
    return init_experts(e, L, err);
}

void tsl_exec_moe_free_layer(tsl_exec_t *e, tsl_exec_xl_t *L)
{
    tsl_buf_t *b[] = {&L->ex.param, &L->ex.grad, &L->ex.master, &L->ex.m, &L->ex.v};
    for (size_t k = 0; k < sizeof(b) / sizeof(b[0]); k++)
        e->dev->free(e->dev, b[k]);
}

/* The most any MoE layer of the stage needs of each scratch buffer. */
typedef struct moe_need {
    size_t lg, sa, r, dg, df, n, E, dwr, ep_E, El, ep, sdp, shard, gl, gs;
} moe_need_t;

static void need_of(const tsl_exec_t *e, moe_need_t *w)
{
    memset(w, 0, sizeof(*w));
    for (uint32_t i = 0; i < e->r.n_layers; i++) {
        const tsl_exec_layer_t *d = &e->r.layers[i];
        const tsl_exec_xl_t *L = &e->L[i];
        if (!d->experts)
            continue;
        tsl_exec_moe_dims_t m;
        tsl_exec_moe_dims(d, d->tp, d->b, e->o.moe_capacity, &m);
        w->lg = zmax(w->lg, m.Tl * m.E);
        w->sa = zmax(w->sa, m.n * d->hidden);
        w->r = zmax(w->r, m.R);
        w->dg = zmax(w->dg, m.R * m.f);
        w->df = zmax(w->df, m.R * m.g * m.f);
        w->n = zmax(w->n, m.n);
        w->E = zmax(w->E, m.E);
        bool gate = L->o.wg != TSL_NONE; /* the shared experts' gate (exec_layer.c) */
        w->dwr = zmax(w->dwr, d->tp > 1 ? (size_t)d->hidden * (m.E + gate) : 0);
        w->gl = zmax(w->gl, gate ? L->T : 0);
        w->gs = zmax(w->gs, gate ? L->T * d->hidden : 0);
        w->ep_E = zmax(w->ep_E, m.ep * m.E);
        w->El = zmax(w->El, m.El);
        w->ep = zmax(w->ep, m.ep);
        w->sdp = zmax(w->sdp, d->sdp ? L->ex.n_held * d->edp : 0);
        w->shard = zmax(w->shard, d->sdp ? L->ex.n_held : 0);
    }
}

int tsl_exec_moe_alloc(tsl_exec_t *e, tsl_err_t *err)
{
    tsl_exec_moe_ws_t *w = &e->moe;
    tsl_dtype_t adt = e->dev->act_dtype;
    moe_need_t n;
    need_of(e, &n);
    size_t h = e->hidden;
    TRY(dalloc(e, &w->lg, n.lg, adt, err) || dalloc(e, &w->sa, n.sa, adt, err));
    TRY(dalloc(e, &w->ra, n.r * h, adt, err) || dalloc(e, &w->rb, n.r * h, adt, err));
    TRY(dalloc(e, &w->dg, n.dg, adt, err) || dalloc(e, &w->df, n.df, adt, err));
    TRY(dalloc(e, &w->dw, n.n, TSL_DT_F32, err) || dalloc(e, &w->cnt, n.E, TSL_DT_F32, err));
    TRY(dalloc(e, &w->ridx, 2 * n.r, TSL_DT_I32, err) || dalloc(e, &w->dwr, n.dwr, adt, err));
    TRY(dalloc(e, &w->gl, n.gl, adt, err) || dalloc(e, &w->gs, n.gs, adt, err));
    TRY(dalloc(e, &e->sdp_eparam, n.sdp, adt, err) || dalloc(e, &e->sdp_egrad, n.sdp, adt, err) ||
        dalloc(e, &e->sdp_eshard, n.shard, adt, err));
    if (!n.E)
        return 0;
    w->hcnt = calloc(n.ep_E, sizeof(float));
    w->hidx = calloc(2 * n.r + 1, sizeof(int32_t));
    w->send = calloc(n.ep, sizeof(size_t));
    w->recv = calloc(n.ep, sizeof(size_t));
    w->rows = calloc(n.El, sizeof(size_t));
    if (!w->hcnt || !w->hidx || !w->send || !w->recv || !w->rows)
        return tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory");
    return 0;
}

void tsl_exec_moe_free(tsl_exec_t *e)
{
    tsl_exec_moe_ws_t *w = &e->moe;
    tsl_buf_t *b[] = {&w->lg, &w->sa, &w->ra,         &w->rb,        &w->dg,
                      &w->df, &w->dw, &w->cnt,        &w->ridx,      &w->dwr,
                      &w->gl, &w->gs, &e->sdp_eparam, &e->sdp_egrad, &e->sdp_eshard};
    for (size_t k = 0; k < sizeof(b) / sizeof(b[0]); k++)
        e->dev->free(e->dev, b[k]);
    free(w->hcnt);
    free(w->hidx);
    free(w->send);
    free(w->recv);
    free(w->rows);
    memset(w, 0, sizeof(*w));
}
