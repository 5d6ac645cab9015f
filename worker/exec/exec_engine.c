/*
 * exec_engine.c — one rank of a plan: setup (groups, model states, the stash slots
 * the schedule holds — plain or interleaved 1F1B —, scratch; every buffer allocated
 * here, none during steps). The schedule, the gradient sync and the optimizer step
 * run in exec_step.c.
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
    e->groups = calloc(e->r.n_groups ? e->r.n_groups : 1, sizeof(*e->groups));
    TRY(!e->groups && tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory"));
    /* the stage's groups in its order (exec_layout.c), then groups of this rank alone
     * for as many rounds as other stages still make */
    for (uint32_t k = 0; k < e->r.n_splits; k++) {
        const tsl_exec_group_t *g = k < e->r.n_groups ? &e->r.groups[k] : NULL;
        tsl_group_t *alone = NULL;
        TRY(c->group_split(c, g ? g->color : (int)e->r.rank, g ? g->key : 0,
                           g ? &e->groups[k] : &alone, err));
        c->group_free(c, alone);
        if (g && c->group_size(e->groups[k]) != (int)g->size)
            return tsl_err_setc(err, TSL_E_INTERNAL,
                                "exec: rank %u: group %u (colour %d) of %d ranks, expected %u",
                                e->r.rank, k, g->color, c->group_size(e->groups[k]), g->size);
    }
    if (e->r.tie_color >= 0) /* the first stage's rank first: both sum in the same order */
        TRY(c->group_split(c, e->r.tie_color, (int)e->r.stage, &e->tie_g, err));
    return 0;
}

static tsl_group_t *group_at(tsl_exec_t *e, int32_t k)
{
    return k >= 0 && (uint32_t)k < e->r.n_groups ? e->groups[k] : NULL;
}

/* The layer's weights from (seed, model index), cut for this TP part and SDP shard. A
 * tied head's copy is seeded as the embedding it copies (model layer 0). */
static int init_weights(tsl_exec_t *e, tsl_exec_xl_t *L, tsl_err_t *err)
{
    tsl_buf_t tmp;
    size_t off = L->d->sdp ? L->d->dw_index * L->n_held : 0;
    uint64_t stream = L->d->tie == TSL_EXEC_TIE_COPY ? 0 : L->d->index;
    if (!L->n_local)
        return 0;
    TRY(dalloc(e, &tmp, L->d->sdp ? L->n_held * L->d->dw : L->n_local, TSL_DT_F32, err));
    tsl_exec_fill_t f = {e, &tmp, stream, err, e->dev->zero(e->dev, &tmp, err)};
    tsl_exec_spans(L->d, L->d->tp, L->d->tp_index, tsl_exec_fill_span, &f);
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
    L->T = (size_t)d->b * d->seq;
    L->tp_g = group_at(e, d->tp_group);
    L->dw_g = group_at(e, d->dw_group);
    L->fwd_g = group_at(e, d->in_fwd.group);
    L->bwd_g = group_at(e, d->in_bwd.group);
    L->ep_g = group_at(e, d->ep_group);
    L->edp_g = group_at(e, d->edp_group);
    tsl_exec_offsets(d, d->tp, &L->o);
    tsl_exec_stash_layout_cap(d, d->tp, d->b, e->o.moe_capacity, &L->st);
    L->chunk = tsl_exec_attn_chunk(d, d->tp, d->b, e->o.attn_chunk);
    L->n_local = L->o.n;
    L->n_held = d->sdp ? (L->n_local + d->dw - 1) / d->dw : L->n_local;
    L->own = L;
    L->vw = d->kind == TSL_LAYER_HEAD ? L->o.whead : L->o.table;
    bool adam = e->o.optim == TSL_EXEC_ADAM;
    TRY(dalloc(e, &L->param, L->n_held, adt, err));
    TRY(dalloc(e, &L->grad, L->n_held, adt, err));
    TRY(dalloc(e, &L->master, adt == TSL_DT_F32 ? 0 : L->n_held, TSL_DT_F32, err));
    TRY(dalloc(e, &L->m, adam ? L->n_held : 0, TSL_DT_F32, err));
    TRY(dalloc(e, &L->v, adam ? L->n_held : 0, TSL_DT_F32, err));
    TRY(init_weights(e, L, err));
    return tsl_exec_moe_alloc_layer(e, L, err);
}

static size_t zmax(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* How many micro-batches' stashes the schedule holds at once, and whose slot is
 * whose: under plain 1F1B min(pp − stage, m), micro-batch j in slot j mod that; under
 * interleaving the slots the order takes (exec_sched.c). */
static int slot_map(tsl_exec_t *e, tsl_err_t *err)
{
    uint32_t m = e->r.n_micro, v = e->r.n_chunks;
    e->slot_of = calloc((size_t)m * v, sizeof(*e->slot_of));
    TRY(!e->slot_of && tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory"));
    if (v > 1) {
        e->n_slots = tsl_exec_il_slots(&e->il, e->slot_of);
        TRY(!e->n_slots && tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory"));
        return 0;
    }
    e->n_slots = e->r.pp - e->r.stage < m ? e->r.pp - e->r.stage : m;
    for (uint32_t j = 0; j < m; j++)
        e->slot_of[j] = j % e->n_slots;
    return 0;
}

/* What a slot holds at chunk position p: the most over the chunks that have a layer
 * there (act: its input, or at p = the chunk's length its output; stashes: of layers
 * not checkpointed). */
static void slot_sizes(const tsl_exec_t *e, uint32_t p, size_t *act, size_t *st, size_t *st32)
{
    *act = *st = *st32 = 0;
    for (uint32_t c = 0; c < e->r.n_chunks; c++) {
        uint32_t lo = e->r.chunk_first[c], n = e->r.chunk_first[c + 1] - lo;
        if (p > n)
            continue;
        const tsl_exec_xl_t *L = &e->L[lo + (p < n ? p : n - 1)];
        *act = zmax(*act, L->T * e->hidden);
        if (p < n && !L->d->ckpt)
            *st = zmax(*st, L->st.n), *st32 = zmax(*st32, L->st.n32);
    }
}

static int alloc_slots(tsl_exec_t *e, tsl_err_t *err)
{
    uint32_t n = e->slot_len;
    bool embed_first = e->r.layers[0].kind == TSL_LAYER_EMBEDDING;
    TRY(slot_map(e, err));
    e->slots = calloc(e->n_slots, sizeof(*e->slots));
    TRY(!e->slots && tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory"));
    for (uint32_t k = 0; k < e->n_slots; k++) {
        tsl_exec_slot_t *s = &e->slots[k];
        s->act = calloc(n + 1, sizeof(tsl_buf_t));
        s->stash = calloc(n + 1, sizeof(tsl_buf_t));
        s->stash32 = calloc(n + 1, sizeof(tsl_buf_t));
        TRY((!s->act || !s->stash || !s->stash32) &&
            tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory"));
        /* act[p]: the input of the chunk's layer p in its layout; act[n]: the output */
        for (uint32_t p = 0; p <= n; p++) {
            size_t a, st, st32;
            slot_sizes(e, p, &a, &st, &st32);
            TRY(dalloc(e, &s->act[p], a, e->dev->act_dtype, err));
            TRY(dalloc(e, &s->stash[p], st, e->dev->act_dtype, err));
            TRY(dalloc(e, &s->stash32[p], st32, TSL_DT_F32, err));
        }
        TRY(dalloc(e, &s->ids, embed_first ? e->L[0].T : 0, TSL_DT_I32, err));
    }
    return 0;
}

/* What a layer's input moves need: the gathered rows (mv), and (into xo) the output
 * of the layer before a move. */
static void move_sizes(const tsl_exec_t *e, uint32_t i, size_t *mv, size_t *xo)
{
    const tsl_exec_layer_t *d = &e->r.layers[i];
    const tsl_exec_move_t *m[] = {&d->in_fwd, &d->in_bwd};
    size_t row = (size_t)e->seq * e->hidden;
    for (int k = 0; k < 2; k++) {
        uint32_t n = m[k]->kind == TSL_EXEC_MOVE_GATHER ? e->r.groups[m[k]->group].size : 0;
        *mv = zmax(*mv, (size_t)n * m[k]->from_b * row);
    }
    if (e->L[i].pos > 0 && d->in_fwd.kind != TSL_EXEC_MOVE_NONE)
        *xo = zmax(*xo, e->L[i - 1].T * e->hidden);
}

/* The buffers of the layouts: the received activation (xin) in the sending stage's
 * layout (of each chunk's first layer), the largest activation Tmax. */
static void layout_sizes(tsl_exec_t *e, size_t *mv, size_t *xo, size_t *xin)
{
    *mv = *xo = *xin = 0;
    e->Tmax = 0;
    for (uint32_t i = 0; i < e->r.n_layers; i++) {
        const tsl_exec_move_t *in = &e->r.layers[i].in_fwd;
        move_sizes(e, i, mv, xo);
        e->Tmax = zmax(e->Tmax, e->L[i].T);
        if (e->L[i].pos > 0)
            continue;
        e->Tmax = zmax(e->Tmax, (size_t)in->from_b * e->seq);
        if (in->kind != TSL_EXEC_MOVE_NONE)
            *xin = zmax(*xin, (size_t)in->from_b * e->seq * e->hidden);
    }
}

/* Recompute stash, backward scratch, SDP workspaces, moves, loss target; each the
 * most any layer of the stage needs in its own layout. */
static int alloc_scratch(tsl_exec_t *e, tsl_err_t *err)
{
    tsl_dtype_t adt = e->dev->act_dtype;
    size_t rc = 0, rc32 = 0, a = 0, b = 0, c = 0, l = 0, sp = 0, sh = 0, mv, xo, xin;
    layout_sizes(e, &mv, &xo, &xin);
    for (uint32_t i = 0; i < e->r.n_layers; i++) {
        const tsl_exec_layer_t *d = &e->r.layers[i];
        tsl_exec_ws_need_t w;
        tsl_exec_ws_need(d, e->L[i].T, e->L[i].chunk, &w);
        if (d->ckpt)
            rc = zmax(rc, e->L[i].st.n), rc32 = zmax(rc32, e->L[i].st.n32);
        a = zmax(a, w.a), b = zmax(b, w.b), c = zmax(c, w.c), l = zmax(l, w.l);
        if (d->sdp)
            sp = zmax(sp, e->L[i].n_held * d->dw), sh = zmax(sh, e->L[i].n_held);
    }
    const tsl_exec_layer_t *last = &e->r.layers[e->r.n_layers - 1];
    bool head = last->kind == TSL_LAYER_HEAD, last_stage = e->r.next_rank < 0;
    size_t T = e->L[e->r.n_layers - 1].T, th = e->Tmax * e->hidden, dd = th;
    /* a parallel block with two norms TP-sums both branches' dy at once: 2·T·h */
    for (uint32_t i = 0; i < e->r.n_layers; i++)
        if (e->r.layers[i].parallel && !e->r.layers[i].shared_norm)
            dd = 2 * th;
    TRY(dalloc(e, &e->rc, rc, adt, err) || dalloc(e, &e->rc32, rc32, TSL_DT_F32, err));
    TRY(dalloc(e, &e->ws_a, a, adt, err) || dalloc(e, &e->ws_b, b, adt, err) ||
        dalloc(e, &e->ws_c, c, adt, err) || dalloc(e, &e->ws_d, dd, adt, err) ||
        dalloc(e, &e->ws_l, l, adt, err));
    TRY(dalloc(e, &e->g_a, th, adt, err) || dalloc(e, &e->g_b, th, adt, err) ||
        dalloc(e, &e->g_mid, th, adt, err));
    TRY(dalloc(e, &e->xo, xo, adt, err) || dalloc(e, &e->xin, xin, adt, err) ||
        dalloc(e, &e->mv, mv, adt, err));
    TRY(dalloc(e, &e->sdp_param, sp, adt, err) || dalloc(e, &e->sdp_grad, sp, adt, err) ||
        dalloc(e, &e->sdp_shard, sh, adt, err));
    TRY(dalloc(e, &e->target, last_stage ? (head ? T : T * e->hidden) : 0, head ? TSL_DT_I32 : adt,
               err));
    TRY(dalloc(e, &e->vloc, head ? T : 0, TSL_DT_F32, err) ||
        dalloc(e, &e->vmax, head && last->tp > 1 ? T * last->tp : 0, TSL_DT_F32, err) ||
        dalloc(e, &e->vsum, head ? 2 * T : 0, TSL_DT_F32, err));
    size_t vl = head ? tsl_exec_vocab_local(last->vocab, last->tp) : 0;
    TRY(dalloc(e, &e->vlog, adt == TSL_DT_F32 ? 0 : T * vl, adt, err));
    TRY(dalloc(e, &e->loss, 1, TSL_DT_F32, err) || dalloc(e, &e->loss_dummy, 1, TSL_DT_F32, err));
    return tsl_exec_moe_alloc(e, err);
}

static int alloc_events(tsl_exec_t *e, tsl_err_t *err)
{
    uint64_t want =
        16 + (uint64_t)e->r.n_micro * (8 * (uint64_t)e->r.n_chunks + 32 * (uint64_t)e->r.n_layers);
    e->ev_cap = want < 65536 ? (uint32_t)want : 65536;
    e->ev = calloc(e->ev_cap, sizeof(*e->ev));
    e->ev_ph = calloc(e->ev_cap, 1);
    TRY((!e->ev || !e->ev_ph) && tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory"));
    for (uint32_t i = 0; i < e->ev_cap; i++)
        TRY(e->dev->event_create(e->dev, &e->ev[i], err));
    return e->dev->event_create(e->dev, &e->ev_sync, err);
}

/* Chunks in order, none empty; interleaving as Megatron runs it. */
static int check_chunks(const tsl_exec_rank_t *r, tsl_err_t *err)
{
    uint32_t v = r->n_chunks;
    if (v > TSL_EXEC_MAX_CHUNKS)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED, "exec: %u model chunks; at most %u", v,
                            TSL_EXEC_MAX_CHUNKS);
    for (uint32_t c = 0; c < v; c++)
        if (r->chunk_first[c] >= r->chunk_first[c + 1])
            return tsl_err_set(err, "exec: rank %u: model chunk %u holds no layer", r->rank, c);
    if (r->chunk_first[0] != 0 || r->chunk_first[v] != r->n_layers)
        return tsl_err_set(err, "exec: rank %u: chunks cover layers %u..%u of %u", r->rank,
                           r->chunk_first[0], r->chunk_first[v], r->n_layers);
    if (v > 1 && (r->pp < 2 || r->n_micro % r->pp))
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "exec: %u model chunks per stage need pp ≥ 2 and micro-batches a "
                            "multiple of it (%u micro-batches, pp %u), as Megatron-LM's "
                            "interleaved schedule does",
                            v, r->n_micro, r->pp);
    if (v > 1 && (r->stage == 0 || r->stage + 1 == r->pp) && r->wrap_rank < 0)
        return tsl_err_set(err, "exec: rank %u: stage %u of %u chunks has no wrap_rank", r->rank,
                           r->stage, v);
    return 0;
}

static bool group_in(const tsl_exec_rank_t *r, int32_t g)
{
    return g >= 0 && (uint32_t)g < r->n_groups;
}

/* A MoE layer's routing: E/ep experts each, EP and expert-DP groups, its tokens split
 * over its TP degree (tsl_exec_rank_from_plan makes them so; a hand-made rank may not). */
static int check_moe(const tsl_exec_rank_t *r, const tsl_exec_layer_t *l, tsl_err_t *err)
{
    if (!l->experts)
        return 0;
    bool kind = (l->kind == TSL_LAYER_ENCODER || l->kind == TSL_LAYER_FFN) && !l->parallel;
    if (kind && l->ep && l->edp && l->experts % l->ep == 0 && l->ep_index < l->ep &&
        l->edp_index < l->edp && l->top_k >= 1 && l->top_k <= l->experts && l->expert_ffn &&
        group_in(r, l->ep_group) && group_in(r, l->edp_group) &&
        (uint64_t)l->b * l->seq % l->tp == 0)
        return 0;
    return tsl_err_set(err,
                       "exec: rank %u layer %u: no MoE layout (%u experts of %u columns, top %u, "
                       "ep %u index %u, expert DP %u index %u, %u samples of %u tokens over tp %u)",
                       r->rank, l->index, l->experts, l->expert_ffn, l->top_k, l->ep, l->ep_index,
                       l->edp, l->edp_index, l->b, l->seq, l->tp);
}

static int check_rank(const tsl_exec_rank_t *r, tsl_err_t *err)
{
    if (!r->n_layers || !r->n_micro)
        return tsl_err_set(err, "exec: rank %u has no layers or no micro-batches", r->rank);
    if (check_chunks(r, err))
        return -1;
    for (uint32_t i = 0; i < r->n_layers; i++) {
        const tsl_exec_layer_t *l = &r->layers[i];
        const tsl_exec_move_t *m[] = {&l->in_fwd, &l->in_bwd};
        bool groups_ok = l->tp_group >= 0 && (uint32_t)l->tp_group < r->n_groups &&
                         l->dw_group >= 0 && (uint32_t)l->dw_group < r->n_groups;
        for (int k = 0; k < 2; k++)
            groups_ok = groups_ok && (m[k]->kind != TSL_EXEC_MOVE_GATHER ||
                                      (m[k]->group >= 0 && (uint32_t)m[k]->group < r->n_groups));
        if (!l->tp || !l->dw || !l->b || l->b * l->dw != r->micro_batch || !groups_ok ||
            r->n_groups > r->n_splits)
            return tsl_err_set(err,
                               "exec: rank %u layer %u: no layout (tp %u, data width %u, %u "
                               "samples of a micro-batch of %u) or groups out of range",
                               r->rank, l->index, l->tp, l->dw, l->b, r->micro_batch);
        if (l->hidden != r->layers[0].hidden || l->seq != r->layers[0].seq)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "exec: layer %u: hidden and sequence must match the stage's",
                                l->index);
        if (check_moe(r, l, err))
            return -1;
    }
    return 0;
}

static int alloc_all(tsl_exec_t *e, tsl_err_t *err)
{
    e->L = calloc(e->r.n_layers, sizeof(*e->L));
    TRY(!e->L && tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory"));
    for (uint32_t c = 0; c < e->r.n_chunks; c++) {
        uint32_t lo = e->r.chunk_first[c], hi = e->r.chunk_first[c + 1];
        e->slot_len = hi - lo > e->slot_len ? hi - lo : e->slot_len;
        for (uint32_t i = lo; i < hi; i++) {
            e->L[i].pos = i - lo;
            TRY(alloc_layer(e, &e->L[i], &e->r.layers[i], err));
        }
    }
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
    tsl_exec_rank_t rr = *r;
    *out = NULL;
    if (!rr.n_chunks) /* a rank made without chunks: all its layers are one */
        rr.n_chunks = 1, rr.chunk_first[0] = 0, rr.chunk_first[1] = rr.n_layers;
    if (check_rank(&rr, err))
        return -1;
    tsl_exec_t *e = calloc(1, sizeof(*e));
    if (!e)
        return tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory");
    e->r = rr;
    if (rr.n_chunks > 1)
        tsl_exec_il_init(&e->il, rr.pp, rr.stage, rr.n_chunks, rr.n_micro);
    e->o = *o;
    e->dev = dev;
    e->comm = comm;
    e->seq = r->layers[0].seq;
    e->hidden = r->layers[0].hidden;
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
    for (uint32_t i = 0; i <= e->slot_len; i++) {
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
        tsl_exec_moe_free_layer(e, L);
    }
    tsl_exec_moe_free(e);
    for (uint32_t k = 0; e->slots && k < e->n_slots; k++)
        free_slot(e, &e->slots[k]);
    tsl_buf_t *ws[] = {&e->rc,        &e->rc32,     &e->ws_a,      &e->ws_b,  &e->ws_c,
                       &e->ws_d,      &e->g_a,      &e->g_b,       &e->g_mid, &e->target,
                       &e->sdp_param, &e->sdp_grad, &e->sdp_shard, &e->loss,  &e->loss_dummy,
                       &e->flag,      &e->vloc,     &e->vmax,      &e->vsum,  &e->vlog,
                       &e->xo,        &e->xin,      &e->mv,        &e->ws_l};
    for (size_t k = 0; k < sizeof(ws) / sizeof(ws[0]); k++)
        d->free(d, ws[k]);
    for (uint32_t i = 0; e->ev && i < e->ev_cap; i++)
        if (e->ev[i])
            d->event_destroy(d, e->ev[i]);
    if (e->ev_sync)
        d->event_destroy(d, e->ev_sync);
    e->comm->group_free(e->comm, e->world_g);
    for (uint32_t k = 0; e->groups && k < e->r.n_groups; k++)
        e->comm->group_free(e->comm, e->groups[k]);
    e->comm->group_free(e->comm, e->tie_g);
    free(e->groups);
    free(e->ev);
    free(e->ev_ph);
    free(e->slots);
    free(e->slot_of);
    free(e->L);
    free(e);
}
