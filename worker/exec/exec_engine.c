/*
 * exec_engine.c — one rank of a plan: setup (groups, model states, stashes, scratch;
 * every buffer allocated here, none during steps), the 1F1B schedule, data-parallel
 * gradient sync, the optimizer step, and the phase timings.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((x))                                                                                   \
            return -1;                                                                             \
    } while (0)

void tsl_exec_opts_default(tsl_exec_opts_t *o)
{
    *o = (tsl_exec_opts_t){.warmup = 2, .iters = 5, .seed = 1, .optim = TSL_EXEC_ADAM, .lr = 1e-4f};
}

static int dalloc(tsl_exec_t *e, tsl_buf_t *b, size_t n, tsl_dtype_t dt, tsl_err_t *err)
{
    memset(b, 0, sizeof(*b));
    return n ? e->dev->alloc(e->dev, b, n, dt, err) : 0;
}

/* ---- setup ---- */

static int make_groups(tsl_exec_t *e, tsl_err_t *err)
{
    tsl_commops_t *c = e->comm;
    if ((int)e->r.world != c->size || (int)e->r.rank != c->rank)
        return tsl_err_set(err, "exec: rank %u of %u, but the comm ops are rank %d of %d",
                           e->r.rank, e->r.world, c->rank, c->size);
    /* loopback and tcp move host memory; device buffers need nccl. */
    if (c->size > 1 && strcmp(e->dev->name, "cpu") && strcmp(c->name, "nccl"))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "exec: %s comm ops cannot move %s device buffers; use nccl", c->name,
                            e->dev->name);
    TRY(c->group_split(c, 0, (int)e->r.rank, &e->world_g, err));
    TRY(c->group_split(c, e->r.tp_color, (int)e->r.tp_index, &e->tp_g, err));
    TRY(c->group_split(c, e->r.dp_color, (int)e->r.dp_index, &e->dp_g, err));
    if (e->r.tie_color >= 0) /* the first stage's rank first: both sum in the same order */
        TRY(c->group_split(c, e->r.tie_color, (int)e->r.stage, &e->tie_g, err));
    if (c->group_size(e->tp_g) != (int)e->r.tp || c->group_size(e->dp_g) != (int)e->r.dp)
        return tsl_err_setc(err, TSL_E_INTERNAL,
                            "exec: rank %u: groups of %d and %d, expected "
                            "tp %u and data %u",
                            e->r.rank, c->group_size(e->tp_g), c->group_size(e->dp_g), e->r.tp,
                            e->r.dp);
    return 0;
}

typedef struct fill_ud {
    tsl_exec_t *e;
    tsl_buf_t *dst;
    uint64_t stream;
    tsl_err_t *err;
    int rc;
} fill_ud_t;

static void fill_span(void *ud, size_t part, size_t full, size_t len, float center, float amp)
{
    fill_ud_t *f = ud;
    tsl_buf_t v = tsl_buf_view(f->dst, part, len);
    if (!f->rc)
        f->rc = f->e->dev->fill_uniform(f->e->dev, &v, f->e->o.seed, f->stream, full, center, amp,
                                        f->err);
}

/* The layer's weights from (seed, model index), cut for this TP part and SDP shard. A
 * tied head's copy is seeded as the embedding it copies (model layer 0). */
static int init_weights(tsl_exec_t *e, tsl_exec_xl_t *L, tsl_err_t *err)
{
    tsl_buf_t tmp;
    size_t off = L->d->sdp ? e->r.dp_index * L->n_held : 0;
    uint64_t stream = L->d->tie == TSL_EXEC_TIE_COPY ? 0 : L->d->index;
    if (!L->n_local)
        return 0;
    TRY(dalloc(e, &tmp, L->d->sdp ? L->n_held * e->r.dp : L->n_local, TSL_DT_F32, err));
    fill_ud_t f = {e, &tmp, stream, err, e->dev->zero(e->dev, &tmp, err)};
    tsl_exec_spans(L->d, e->r.tp, e->r.tp_index, fill_span, &f);
    tsl_buf_t held = tsl_buf_view(&tmp, off, L->n_held);
    if (!f.rc)
        f.rc = e->dev->copy(e->dev, &L->param, &held, err);
    if (!f.rc && L->master.ptr)
        f.rc = e->dev->copy(e->dev, &L->master, &held, err);
    e->dev->free(e->dev, &tmp);
    return f.rc;
}

static int alloc_layer(tsl_exec_t *e, tsl_exec_xl_t *L, const tsl_exec_layer_t *d, tsl_err_t *err)
{
    tsl_dtype_t adt = e->dev->act_dtype;
    L->d = d;
    tsl_exec_offsets(d, e->r.tp, &L->o);
    tsl_exec_stash_layout(d, e->r.tp, e->b, &L->st);
    L->chunk = tsl_exec_attn_chunk(d, e->r.tp, e->b, e->o.attn_chunk);
    L->n_local = L->o.n;
    L->n_held = d->sdp ? (L->n_local + e->r.dp - 1) / e->r.dp : L->n_local;
    L->own = L;
    L->vw = d->kind == TSL_LAYER_HEAD ? L->o.whead : L->o.table;
    bool adam = e->o.optim == TSL_EXEC_ADAM;
    TRY(dalloc(e, &L->param, L->n_held, adt, err));
    TRY(dalloc(e, &L->grad, L->n_held, adt, err));
    TRY(dalloc(e, &L->master, adt == TSL_DT_F32 ? 0 : L->n_held, TSL_DT_F32, err));
    TRY(dalloc(e, &L->m, adam ? L->n_held : 0, TSL_DT_F32, err));
    TRY(dalloc(e, &L->v, adam ? L->n_held : 0, TSL_DT_F32, err));
    return init_weights(e, L, err);
}

static int alloc_slots(tsl_exec_t *e, tsl_err_t *err)
{
    uint32_t n = e->r.n_layers;
    size_t th = (size_t)e->T * e->hidden;
    bool embed_first = n && e->r.layers[0].kind == TSL_LAYER_EMBEDDING;
    e->n_slots = e->r.pp - e->r.stage < e->r.n_micro ? e->r.pp - e->r.stage : e->r.n_micro;
    e->slots = calloc(e->n_slots, sizeof(*e->slots));
    TRY(!e->slots && tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory"));
    for (uint32_t k = 0; k < e->n_slots; k++) {
        tsl_exec_slot_t *s = &e->slots[k];
        s->act = calloc(n + 1, sizeof(tsl_buf_t));
        s->stash = calloc(n + 1, sizeof(tsl_buf_t));
        s->stash32 = calloc(n + 1, sizeof(tsl_buf_t));
        TRY((!s->act || !s->stash || !s->stash32) &&
            tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory"));
        for (uint32_t i = 0; i <= n; i++)
            TRY(dalloc(e, &s->act[i], th, e->dev->act_dtype, err));
        for (uint32_t i = 0; i < n; i++) {
            if (e->r.layers[i].ckpt)
                continue;
            TRY(dalloc(e, &s->stash[i], e->L[i].st.n, e->dev->act_dtype, err));
            TRY(dalloc(e, &s->stash32[i], e->L[i].st.n32, TSL_DT_F32, err));
        }
        TRY(dalloc(e, &s->ids, embed_first ? e->T : 0, TSL_DT_I32, err));
    }
    return 0;
}

static size_t zmax(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* Recompute stash, backward scratch, SDP workspaces, loss target. */
static int alloc_scratch(tsl_exec_t *e, tsl_err_t *err)
{
    tsl_dtype_t adt = e->dev->act_dtype;
    size_t rc = 0, rc32 = 0, a = 0, b = 0, c = 0, sp = 0, sh = 0, T = e->T, th = T * e->hidden;
    for (uint32_t i = 0; i < e->r.n_layers; i++) {
        const tsl_exec_layer_t *d = &e->r.layers[i];
        size_t dl = d->hidden / e->r.tp, fl = d->ffn / e->r.tp;
        if (d->ckpt)
            rc = zmax(rc, e->L[i].st.n), rc32 = zmax(rc32, e->L[i].st.n32);
        a = zmax(a, T * zmax(3 * dl, fl));
        b = zmax(b, T * dl);
        c = zmax(c, tsl_exec_attn_ws(d, e->r.tp, e->L[i].chunk));
        if (d->sdp)
            sp = zmax(sp, e->L[i].n_held * e->r.dp), sh = zmax(sh, e->L[i].n_held);
    }
    const tsl_exec_layer_t *last = &e->r.layers[e->r.n_layers - 1];
    bool head = last->kind == TSL_LAYER_HEAD, last_stage = e->r.next_rank < 0;
    TRY(dalloc(e, &e->rc, rc, adt, err) || dalloc(e, &e->rc32, rc32, TSL_DT_F32, err));
    TRY(dalloc(e, &e->ws_a, a, adt, err) || dalloc(e, &e->ws_b, b, adt, err) ||
        dalloc(e, &e->ws_c, c, adt, err) || dalloc(e, &e->ws_d, th, adt, err));
    TRY(dalloc(e, &e->g_a, th, adt, err) || dalloc(e, &e->g_b, th, adt, err) ||
        dalloc(e, &e->g_mid, th, adt, err));
    TRY(dalloc(e, &e->sdp_param, sp, adt, err) || dalloc(e, &e->sdp_grad, sp, adt, err) ||
        dalloc(e, &e->sdp_shard, sh, adt, err));
    TRY(dalloc(e, &e->target, last_stage ? (head ? T : th) : 0, head ? TSL_DT_I32 : adt, err));
    TRY(dalloc(e, &e->vloc, head ? T : 0, TSL_DT_F32, err) ||
        dalloc(e, &e->vmax, head && e->r.tp > 1 ? T * e->r.tp : 0, TSL_DT_F32, err) ||
        dalloc(e, &e->vsum, head ? 2 * T : 0, TSL_DT_F32, err));
    size_t vl = head ? tsl_exec_vocab_local(last->vocab, e->r.tp) : 0;
    TRY(dalloc(e, &e->vlog, adt == TSL_DT_F32 ? 0 : T * vl, adt, err));
    TRY(dalloc(e, &e->loss, 1, TSL_DT_F32, err) || dalloc(e, &e->loss_dummy, 1, TSL_DT_F32, err));
    return 0;
}

static int alloc_events(tsl_exec_t *e, tsl_err_t *err)
{
    uint64_t want = 16 + (uint64_t)e->r.n_micro * (8 + 24 * (uint64_t)e->r.n_layers);
    e->ev_cap = want < 65536 ? (uint32_t)want : 65536;
    e->ev = calloc(e->ev_cap, sizeof(*e->ev));
    e->ev_ph = calloc(e->ev_cap, 1);
    TRY((!e->ev || !e->ev_ph) && tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory"));
    for (uint32_t i = 0; i < e->ev_cap; i++)
        TRY(e->dev->event_create(e->dev, &e->ev[i], err));
    return e->dev->event_create(e->dev, &e->ev_sync, err);
}

static int check_rank(const tsl_exec_rank_t *r, tsl_err_t *err)
{
    if (!r->n_layers || !r->tp || !r->dp || !r->n_micro || r->micro_batch % r->dp)
        return tsl_err_set(err,
                           "exec: rank %u has no layers, or a micro-batch of %u that data "
                           "width %u does not split",
                           r->rank, r->micro_batch, r->dp);
    for (uint32_t i = 1; i < r->n_layers; i++)
        if (r->layers[i].hidden != r->layers[0].hidden || r->layers[i].seq != r->layers[0].seq)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "exec: layer %u: hidden and sequence must match the stage's",
                                r->layers[i].index);
    return 0;
}

static int alloc_all(tsl_exec_t *e, tsl_err_t *err)
{
    e->L = calloc(e->r.n_layers, sizeof(*e->L));
    TRY(!e->L && tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory"));
    for (uint32_t i = 0; i < e->r.n_layers; i++)
        TRY(alloc_layer(e, &e->L[i], &e->r.layers[i], err));
    tsl_exec_xl_t *last = &e->L[e->r.n_layers - 1];
    if (last->d->tie == TSL_EXEC_TIE_SHARED) { /* computes with the embedding's table */
        if (e->L[0].d->kind != TSL_LAYER_EMBEDDING)
            return tsl_err_setc(err, TSL_E_INTERNAL, "exec: a tied head without its embedding");
        last->own = &e->L[0];
        last->vw = e->L[0].o.table;
    }
    TRY(alloc_slots(e, err) || alloc_scratch(e, err) || alloc_events(e, err));
    return e->dev->sync(e->dev, err);
}

/* Every rank learns whether any failed to set up, so none waits for a dead peer. */
static int agree(tsl_exec_t *e, int local_rc, tsl_err_t *err)
{
    tsl_err_t mine = {0};
    float v = local_rc ? (tsl_err_code(err) == TSL_E_NOMEM ? 1.0f : 1000.0f) : 0.0f;
    if (e->dev->upload(e->dev, &e->flag, &v, &mine) ||
        e->comm->allreduce(e->comm, e->world_g, &e->flag, e->dev->stream(e->dev, 0), &mine) ||
        e->dev->sync(e->dev, &mine) || e->dev->download(e->dev, &e->flag, &v, &mine)) {
        if (!local_rc && err)
            *err = mine;
        return -1;
    }
    if (local_rc)
        return -1;
    if (v >= 1000.0f)
        return tsl_err_setc(err, TSL_E_UNAVAILABLE, "exec: another rank failed to set up");
    if (v > 0.0f)
        return tsl_err_setc(err, TSL_E_NOMEM, "exec: another rank ran out of memory");
    return 0;
}

int tsl_exec_create(const tsl_exec_rank_t *r, const tsl_exec_opts_t *o, tsl_devops_t *dev,
                    tsl_commops_t *comm, tsl_exec_t **out, tsl_err_t *err)
{
    *out = NULL;
    if (check_rank(r, err))
        return -1;
    tsl_exec_t *e = calloc(1, sizeof(*e));
    if (!e)
        return tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory");
    e->r = *r;
    e->o = *o;
    e->dev = dev;
    e->comm = comm;
    e->b = r->micro_batch / r->dp;
    e->seq = r->layers[0].seq;
    e->hidden = r->layers[0].hidden;
    e->T = e->b * e->seq;
    e->last_loss = NAN;
    if (make_groups(e, err) || dalloc(e, &e->flag, 1, TSL_DT_F32, err)) {
        tsl_exec_destroy(e);
        return -1;
    }
    if (agree(e, alloc_all(e, err), err)) {
        tsl_exec_destroy(e);
        return -1;
    }
    dev->reset_peak(dev);
    *out = e;
    return 0;
}

static void free_slot(tsl_exec_t *e, tsl_exec_slot_t *s)
{
    for (uint32_t i = 0; i <= e->r.n_layers; i++) {
        if (s->act)
            e->dev->free(e->dev, &s->act[i]);
        if (s->stash)
            e->dev->free(e->dev, &s->stash[i]);
        if (s->stash32)
            e->dev->free(e->dev, &s->stash32[i]);
    }
    e->dev->free(e->dev, &s->ids);
    free(s->act);
    free(s->stash);
    free(s->stash32);
}

void tsl_exec_destroy(tsl_exec_t *e)
{
    if (!e)
        return;
    tsl_devops_t *d = e->dev;
    for (uint32_t i = 0; e->L && i < e->r.n_layers; i++) {
        tsl_exec_xl_t *L = &e->L[i];
        tsl_buf_t *bufs[] = {&L->param, &L->grad, &L->master, &L->m, &L->v};
        for (size_t k = 0; k < sizeof(bufs) / sizeof(bufs[0]); k++)
            d->free(d, bufs[k]);
    }
    for (uint32_t k = 0; e->slots && k < e->n_slots; k++)
        free_slot(e, &e->slots[k]);
    tsl_buf_t *ws[] = {&e->rc,        &e->rc32,     &e->ws_a,      &e->ws_b,  &e->ws_c,
                       &e->ws_d,      &e->g_a,      &e->g_b,       &e->g_mid, &e->target,
                       &e->sdp_param, &e->sdp_grad, &e->sdp_shard, &e->loss,  &e->loss_dummy,
                       &e->flag,      &e->vloc,     &e->vmax,      &e->vsum,  &e->vlog};
    for (size_t k = 0; k < sizeof(ws) / sizeof(ws[0]); k++)
        d->free(d, ws[k]);
    for (uint32_t i = 0; e->ev && i < e->ev_cap; i++)
        if (e->ev[i])
            d->event_destroy(d, e->ev[i]);
    if (e->ev_sync)
        d->event_destroy(d, e->ev_sync);
    e->comm->group_free(e->comm, e->world_g);
    e->comm->group_free(e->comm, e->tp_g);
    e->comm->group_free(e->comm, e->dp_g);
    e->comm->group_free(e->comm, e->tie_g);
    free(e->ev);
    free(e->ev_ph);
    free(e->slots);
    free(e->L);
    free(e);
}
