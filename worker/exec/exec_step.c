/*
 * exec_step.c — one training iteration of a rank: the 1F1B schedule over the plan's
 * micro-batches (Megatron-LM's non-interleaved order, so neighbouring stages pair
 * their sends and receives the same way NCCL needs, or its interleaved order over the
 * rank's model chunks, exec_sched.c), the data-parallel gradient sync, the optimizer
 * step; and tsl_exec_run with its report.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((x))                                                                                   \
            return -1;                                                                             \
    } while (0)

/* Streams of the synthetic data (devops fill_*); weights use the model layer index,
 * far below these. */
#define STREAM_INPUT  (1ull << 40)
#define STREAM_TARGET (2ull << 40)
#define STREAM_IDS    (3ull << 40)

static void *cstream(tsl_exec_t *e)
{
    return e->dev->stream(e->dev, TSL_STREAM_COMPUTE);
}

/* The slot of micro-batch mb in chunk c (exec_engine.c slot_map). */
static tsl_exec_slot_t *slot(tsl_exec_t *e, uint32_t c, uint32_t mb)
{
    return &e->slots[e->slot_of[c * e->r.n_micro + mb]];
}

/* Layer i's input in slot s, in the layer's layout (slots are sized for the largest
 * chunk at each position). */
static tsl_buf_t act_in(const tsl_exec_t *e, const tsl_exec_slot_t *s, uint32_t i)
{
    return tsl_buf_view(&s->act[e->L[i].pos], 0, e->L[i].T * e->hidden);
}

/* Chunk c's output in slot s, in its last layer's layout. */
static tsl_buf_t act_out(const tsl_exec_t *e, const tsl_exec_slot_t *s, uint32_t c)
{
    const tsl_exec_xl_t *L = &e->L[e->r.chunk_first[c + 1] - 1];
    return tsl_buf_view(&s->act[L->pos + 1], 0, L->T * e->hidden);
}

/* Chunk c's neighbours: the same chunk on the next or previous stage, or across the
 * wrap (interleaved) chunk c + 1 on stage 0 or chunk c − 1 on the last stage; -1 at
 * the model's ends. */
static int next_of(const tsl_exec_t *e, uint32_t c)
{
    if (e->r.next_rank >= 0)
        return e->r.next_rank;
    return c + 1 < e->r.n_chunks ? e->r.wrap_rank : -1;
}

static int prev_of(const tsl_exec_t *e, uint32_t c)
{
    if (e->r.prev_rank >= 0)
        return e->r.prev_rank;
    return c > 0 ? e->r.wrap_rank : -1;
}

/* First global sample of this rank's share of micro-batch mb in layer l's layout. */
static uint64_t first_sample(const tsl_exec_t *e, const tsl_exec_layer_t *l, uint32_t mb)
{
    return (uint64_t)mb * e->r.micro_batch + (uint64_t)l->dw_index * l->b;
}

static tsl_exec_xl_t *last_layer(tsl_exec_t *e)
{
    return &e->L[e->r.n_layers - 1];
}

/* Micro-batch mb's input to the model (chunk 0 of stage 0). */
static int make_input(tsl_exec_t *e, uint32_t mb, tsl_err_t *err)
{
    tsl_exec_slot_t *s = slot(e, 0, mb);
    tsl_buf_t x = act_in(e, s, 0);
    uint64_t it = e->o.same_batch ? 0 : e->step, row = first_sample(e, e->L[0].d, mb) * e->seq;
    TRY(tsl_exec_ph(e, PH_FWD, err));
    if (s->ids.ptr)
        return e->dev->fill_ids(e->dev, &s->ids, e->o.seed, STREAM_IDS + it, row,
                                e->r.layers[0].vocab, err);
    return e->dev->fill_uniform(e->dev, &x, e->o.seed, STREAM_INPUT + it, row * e->hidden, 0.0f,
                                1.0f, err);
}

static int p2p(tsl_exec_t *e, const tsl_buf_t *send, int to, tsl_buf_t *recv, int from,
               tsl_err_t *err)
{
    if (to < 0 && from < 0)
        return 0;
    TRY(tsl_exec_ph(e, PH_P2P, err));
    return e->comm->sendrecv(e->comm, send, to, recv, from, cstream(e), err);
}

/* p2p, receiving micro-batch mb's input to chunk c from the previous (virtual) stage:
 * in the sender's layout, moved into the chunk's first layer's (a collective of the
 * stage: every rank of it receives at the same point of the schedule). */
static int p2p_in(tsl_exec_t *e, const tsl_buf_t *send, int to, uint32_t c, uint32_t mb,
                  tsl_err_t *err)
{
    uint32_t i = e->r.chunk_first[c];
    tsl_exec_xl_t *F = &e->L[i];
    tsl_buf_t act0 = act_in(e, slot(e, c, mb), i);
    if (F->d->in_fwd.kind == TSL_EXEC_MOVE_NONE)
        return p2p(e, send, to, &act0, prev_of(e, c), err);
    tsl_buf_t xin = tsl_buf_view(&e->xin, 0, (size_t)F->d->in_fwd.from_b * e->seq * e->hidden);
    TRY(p2p(e, send, to, &xin, prev_of(e, c), err));
    TRY(tsl_exec_ph(e, PH_FWD, err));
    return tsl_exec_relayout(e, &F->d->in_fwd, F->fwd_g, &xin, &act0, err);
}

/* A MoE layer's routed experts for its context: its own, or under SDP gathered over
 * the expert-DP group into their workspace (ZeRO-3 over that group, before each use). */
static int expert_ctx(tsl_exec_t *e, tsl_exec_xl_t *L, tsl_exec_lctx_t *c, tsl_err_t *err)
{
    c->xp = L->ex.param;
    c->xg = L->ex.grad;
    if (!L->ex.n_local || !L->d->sdp)
        return 0;
    tsl_buf_t full = tsl_buf_view(&e->sdp_eparam, 0, L->ex.n_held * L->d->edp);
    int back = e->ph_cur;
    TRY(tsl_exec_ph(e, PH_COMM, err));
    TRY(e->comm->all_gather(e->comm, L->edp_g, &L->ex.param, &full, cstream(e), err));
    c->xp = tsl_buf_view(&e->sdp_eparam, 0, L->ex.n_local);
    c->xg = tsl_buf_view(&e->sdp_egrad, 0, L->ex.n_local);
    return tsl_exec_ph(e, back, err);
}

/* SDP: gather the layer's parameters into the workspace (ZeRO-3, before each use).
 * A head tied in the stage computes with its embedding's (L->own's) parameters. */
static int layer_ctx(tsl_exec_t *e, uint32_t i, tsl_exec_slot_t *s, bool rc, tsl_exec_lctx_t *c,
                     tsl_err_t *err)
{
    tsl_exec_xl_t *L = &e->L[i], *W = L->own;
    bool last = i + 1 == e->r.n_layers;
    *c = (tsl_exec_lctx_t){.e = e,
                           .L = L,
                           .p = W->param,
                           .g = W->grad,
                           .st = rc ? e->rc : s->stash[L->pos],
                           .st32 = rc ? e->rc32 : s->stash32[L->pos],
                           .loss = &e->loss,
                           .ids = s->ids};
    if (L->d->kind == TSL_LAYER_HEAD && last)
        c->ids = e->target;
    TRY(expert_ctx(e, L, c, err));
    if (!W->d->sdp)
        return 0;
    int back = e->ph_cur;
    tsl_buf_t full = tsl_buf_view(&e->sdp_param, 0, W->n_held * W->d->dw);
    TRY(tsl_exec_ph(e, PH_COMM, err));
    TRY(e->comm->all_gather(e->comm, W->dw_g, &W->param, &full, cstream(e), err));
    c->p = tsl_buf_view(&e->sdp_param, 0, W->n_local);
    c->g = tsl_buf_view(&e->sdp_grad, 0, W->n_local);
    return tsl_exec_ph(e, back, err);
}

static int make_target(tsl_exec_t *e, uint32_t mb, tsl_err_t *err)
{
    uint64_t it = e->o.same_batch ? 0 : e->step;
    uint64_t row = first_sample(e, last_layer(e)->d, mb) * e->seq;
    if (e->target.dt == TSL_DT_I32)
        return e->dev->fill_ids(e->dev, &e->target, e->o.seed, STREAM_TARGET + it, row,
                                e->r.layers[e->r.n_layers - 1].vocab, err);
    return e->dev->fill_uniform(e->dev, &e->target, e->o.seed, STREAM_TARGET + it, row * e->hidden,
                                0.0f, 1.0f, err);
}

/* Whether layer i's output moves to another layout before layer i + 1 (of its chunk:
 * the next chunk's first layer receives). */
static bool moves_after(const tsl_exec_t *e, uint32_t i)
{
    return i + 1 < e->r.n_layers && e->L[i + 1].pos > 0 &&
           e->L[i + 1].d->in_fwd.kind != TSL_EXEC_MOVE_NONE;
}

/* Where layer i writes its output: the next layer's input, or xo before a move. */
static tsl_buf_t layer_out(tsl_exec_t *e, tsl_exec_slot_t *s, uint32_t i)
{
    return tsl_buf_view(moves_after(e, i) ? &e->xo : &s->act[e->L[i].pos + 1], 0,
                        e->L[i].T * e->hidden);
}

/* Whether chunk c ends the model (computes the loss): the last stage's last chunk. */
static bool ends_model(const tsl_exec_t *e, uint32_t c)
{
    return e->r.next_rank < 0 && c + 1 == e->r.n_chunks;
}

/* Micro-batch mb through chunk c; where it ends the model with the squared error, the
 * loss's gradient goes into gbuf (where its backward, next, starts). */
static int forward(tsl_exec_t *e, uint32_t c, uint32_t mb, tsl_buf_t *gbuf, tsl_err_t *err)
{
    tsl_exec_slot_t *s = slot(e, c, mb);
    uint32_t lo = e->r.chunk_first[c], hi = e->r.chunk_first[c + 1];
    bool last = ends_model(e, c);
    TRY(tsl_exec_ph(e, PH_FWD, err));
    if (last)
        TRY(make_target(e, mb, err));
    for (uint32_t i = lo; i < hi; i++) {
        tsl_exec_lctx_t lc;
        tsl_buf_t out = layer_out(e, s, i), x = act_in(e, s, i);
        TRY(layer_ctx(e, i, s, e->r.layers[i].ckpt, &lc, err));
        TRY(tsl_exec_layer_fwd(&lc, &x, &out, err));
        if (moves_after(e, i)) {
            tsl_buf_t y = act_in(e, s, i + 1);
            TRY(tsl_exec_relayout(e, &e->L[i + 1].d->in_fwd, e->L[i + 1].fwd_g, &out, &y, err));
        }
    }
    if (!last || e->target.dt == TSL_DT_I32)
        return 0;
    float scale = 1.0f / ((float)e->r.micro_batch * e->r.n_micro * e->seq * e->hidden);
    tsl_buf_t out = act_out(e, s, c);
    tsl_buf_t dout = tsl_buf_view(gbuf, 0, out.n);
    return e->dev->mse(e->dev, &out, &e->target, &dout, scale, &e->loss, err);
}

/* A gradient all-reduced over group g on the communication stream while backward goes
 * on (or on the compute stream without overlap). */
static int sync_grad(tsl_exec_t *e, tsl_group_t *g, tsl_buf_t *grad, tsl_err_t *err)
{
    TRY(tsl_exec_ph(e, PH_COMM, err));
    if (e->o.no_overlap) {
        TRY(e->comm->allreduce(e->comm, g, grad, cstream(e), err));
    } else {
        TRY(e->dev->event_record(e->dev, e->ev_sync, TSL_STREAM_COMPUTE, err));
        TRY(e->dev->stream_wait(e->dev, TSL_STREAM_COMM, e->ev_sync, err));
        TRY(e->comm->allreduce(e->comm, g, grad, e->dev->stream(e->dev, TSL_STREAM_COMM), err));
        e->dp_pending = true;
    }
    return tsl_exec_ph(e, PH_BWD, err);
}

/* DP: the layer's gradient is final once its last micro-batch is through backward;
 * all-reduce it over the data group, and a MoE layer's routed experts' over the
 * expert-DP group (the ranks that hold the same experts). */
static int grad_ready(tsl_exec_t *e, tsl_exec_xl_t *L, tsl_err_t *err)
{
    if (++L->bwd_done < e->r.n_micro || L->d->sdp)
        return 0;
    if (L->d->dw > 1 && L->n_held)
        TRY(sync_grad(e, L->dw_g, &L->grad, err));
    if (L->ex.n_local && L->d->edp > 1)
        TRY(sync_grad(e, L->edp_g, &L->ex.grad, err));
    return 0;
}

/* SDP: reduce-scatter this micro-batch's full gradient (ws, n_held × w over group g)
 * and add this rank's shard (into grad, through the shard workspace). */
static int scatter_add(tsl_exec_t *e, tsl_group_t *g, const tsl_buf_t *ws, const tsl_buf_t *sh,
                       size_t n_held, uint32_t w, tsl_buf_t *grad, tsl_err_t *err)
{
    tsl_buf_t full = tsl_buf_view(ws, 0, n_held * w), shard = tsl_buf_view(sh, 0, n_held);
    TRY(tsl_exec_ph(e, PH_COMM, err));
    TRY(e->comm->reduce_scatter(e->comm, g, &full, &shard, cstream(e), err));
    TRY(tsl_exec_ph(e, PH_BWD, err));
    return e->dev->axpy(e->dev, 1.0f, &shard, grad, err);
}

/* SDP: the layer's shard over its data group; a MoE layer's routed experts' over
 * their expert-DP group. */
static int sdp_scatter(tsl_exec_t *e, tsl_exec_xl_t *L, tsl_err_t *err)
{
    TRY(scatter_add(e, L->dw_g, &e->sdp_grad, &e->sdp_shard, L->n_held, L->d->dw, &L->grad, err));
    if (!L->ex.n_local)
        return 0;
    return scatter_add(e, L->edp_g, &e->sdp_egrad, &e->sdp_eshard, L->ex.n_held, L->d->edp,
                       &L->ex.grad, err);
}

/* Layer k's backward from dout (in its output's layout) into dx (its input's). */
static int layer_back(tsl_exec_t *e, uint32_t k, tsl_exec_slot_t *s, const tsl_buf_t *dout,
                      tsl_buf_t *dx, tsl_err_t *err)
{
    tsl_exec_xl_t *L = &e->L[k], *W = L->own;
    tsl_exec_lctx_t c;
    tsl_buf_t x = act_in(e, s, k);
    TRY(layer_ctx(e, k, s, L->d->ckpt, &c, err));
    if (W->d->sdp) {
        tsl_buf_t full = tsl_buf_view(&e->sdp_grad, 0, W->n_held * W->d->dw);
        TRY(e->dev->zero(e->dev, &full, err));
        full = tsl_buf_view(&e->sdp_egrad, 0, L->ex.n_held * L->d->edp);
        if (L->ex.n_local)
            TRY(e->dev->zero(e->dev, &full, err));
    }
    if (L->d->ckpt) { /* recompute: the output is no longer needed, overwrite it */
        tsl_buf_t out = layer_out(e, s, k);
        c.loss = &e->loss_dummy;
        TRY(tsl_exec_layer_fwd(&c, &x, &out, err));
    }
    TRY(tsl_exec_layer_bwd(&c, &x, dout, dx, err));
    if (W->d->sdp)
        TRY(sdp_scatter(e, W, err));
    return grad_ready(e, L, err);
}

/* Backward of micro-batch mb through chunk c from the gradient in gbuf (g_a or g_b);
 * *dx gets the chunk's input gradient, in the sending stage's layout, in g_a or g_b.
 * Where a layer's input came through a move, its input gradient goes back through
 * the reverse one, into the buffer its output gradient was in (no longer needed). */
static int backward(tsl_exec_t *e, uint32_t c, uint32_t mb, tsl_buf_t *gbuf, tsl_buf_t *dx,
                    tsl_err_t *err)
{
    tsl_buf_t *cur = gbuf, *other = gbuf == &e->g_a ? &e->g_b : &e->g_a;
    tsl_exec_slot_t *s = slot(e, c, mb);
    size_t h = e->hidden;
    TRY(tsl_exec_ph(e, PH_BWD, err));
    for (uint32_t k = e->r.chunk_first[c + 1]; k-- > e->r.chunk_first[c];) {
        tsl_exec_xl_t *L = &e->L[k];
        const tsl_exec_move_t *m = &L->d->in_bwd;
        tsl_buf_t dout = tsl_buf_view(cur, 0, L->T * h), din = tsl_buf_view(other, 0, L->T * h);
        TRY(layer_back(e, k, s, &dout, &din, err));
        if (m->kind == TSL_EXEC_MOVE_NONE) {
            tsl_buf_t *t = cur;
            cur = other;
            other = t;
            *dx = din;
            continue;
        }
        *dx = tsl_buf_view(cur, 0, (size_t)m->to_b * e->seq * h);
        TRY(tsl_exec_relayout(e, m, L->bwd_g, &din, dx, err));
    }
    return 0;
}

/* Plain 1F1B (Megatron-LM's non-interleaved order): warm-up forwards, one forward
 * and one backward, cool-down backwards; the receive of the next input rides with the
 * send of the last gradient. */
static int schedule_1f1b(tsl_exec_t *e, tsl_err_t *err)
{
    const tsl_exec_rank_t *r = &e->r;
    uint32_t m = r->n_micro, nw = r->pp - r->stage - 1 < m ? r->pp - r->stage - 1 : m;
    uint32_t nr = m - nw, f = 0, b = 0;
    int prev = r->prev_rank, next = r->next_rank;
    tsl_buf_t dx, gout = tsl_buf_view(&e->g_a, 0, last_layer(e)->T * e->hidden);
    for (uint32_t i = 0; i < nw; i++, f++) {
        TRY(prev < 0 ? make_input(e, f, err) : p2p_in(e, NULL, -1, 0, f, err));
        tsl_buf_t y = act_out(e, slot(e, 0, f), 0);
        TRY(forward(e, 0, f, &e->g_a, err) || p2p(e, &y, next, NULL, -1, err));
    }
    if (nr)
        TRY(prev < 0 ? make_input(e, f, err) : p2p_in(e, NULL, -1, 0, f, err));
    for (uint32_t i = 0; i < nr; i++, b++) {
        tsl_buf_t y = act_out(e, slot(e, 0, f), 0);
        TRY(forward(e, 0, f, &e->g_a, err) || p2p(e, &y, next, &gout, next, err));
        f++;
        TRY(backward(e, 0, b, &e->g_a, &dx, err));
        if (i + 1 == nr)
            TRY(p2p(e, &dx, prev, NULL, -1, err));
        else if (prev < 0)
            TRY(make_input(e, f, err));
        else
            TRY(p2p_in(e, &dx, prev, 0, f, err));
    }
    for (uint32_t i = 0; i < nw; i++, b++) {
        TRY(p2p(e, NULL, -1, &gout, next, err) || backward(e, 0, b, &e->g_a, &dx, err));
        TRY(p2p(e, &dx, prev, NULL, -1, err));
    }
    return 0;
}

/* Interleaved 1F1B: call i's legs, then F(i) and B(i − W) (exec_sched.c has the order
 * and why every send meets its receive at the same tick).
 *
 * Why it cannot deadlock. Each call is two sendrecvs in the same order on every rank:
 * first the forward legs (output to the next virtual stage, input from the previous),
 * then the backward legs (input gradient to the previous, output gradient from the
 * next). A send of rank A at tick t is received by its neighbour at the same tick in
 * the same kind of sendrecv, so the sendrecvs of one tick and kind match among
 * themselves: on nccl each is one group of its send and its receive, so the ring of
 * stages (chunk c of the last stage feeds chunk c + 1 of stage 0) shifts as NCCL's
 * own rings do, every group waiting only on groups of the same tick, all of them
 * posted once the ticks before are done; tcp and loopback never block a send (their
 * receives wait for a send made at the same tick, before the sender's own receive).
 * Between two ranks the messages of a tick go forward legs first on both sides (with
 * pp 2, next and previous are the same rank), so they pair in the order sent. The
 * collectives inside a stage (TP, the layouts' moves, DP) run at the same point of
 * the same order on every rank of the stage. */
static int il_legs(tsl_exec_t *e, const tsl_exec_il_call_t *cl, uint32_t i, const tsl_buf_t *dx,
                   tsl_buf_t *gin, tsl_err_t *err)
{
    const tsl_exec_il_t *il = &e->il;
    tsl_buf_t y = {0};
    int to = -1;
    if (cl->send_f >= 0) {
        uint32_t k = (uint32_t)cl->send_f, c = tsl_exec_il_chunk(il, k, true);
        y = act_out(e, slot(e, c, tsl_exec_il_micro(il, k)), c);
        to = next_of(e, c);
    }
    const tsl_buf_t *out = to >= 0 ? &y : NULL;
    if (cl->recv_f >= 0)
        TRY(p2p_in(e, out, to, tsl_exec_il_chunk(il, i, true), tsl_exec_il_micro(il, i), err));
    else
        TRY(p2p(e, out, to, NULL, -1, err));
    tsl_buf_t g = {0};
    int from = -1;
    to = -1;
    if (cl->recv_b >= 0) {
        uint32_t c = tsl_exec_il_chunk(il, (uint32_t)cl->recv_b, false);
        g = tsl_buf_view(gin, 0, e->L[e->r.chunk_first[c + 1] - 1].T * e->hidden);
        from = next_of(e, c);
    }
    if (cl->send_b >= 0)
        to = prev_of(e, tsl_exec_il_chunk(il, (uint32_t)cl->send_b, false));
    return p2p(e, to >= 0 ? dx : NULL, to, from >= 0 ? &g : NULL, from, err);
}

static int schedule_il(tsl_exec_t *e, tsl_err_t *err)
{
    const tsl_exec_il_t *il = &e->il;
    tsl_buf_t dx = {0};
    for (uint32_t i = 0; i < il->n_calls; i++) {
        tsl_exec_il_call_t cl;
        tsl_exec_il_call(il, i, &cl);
        /* the gradient comes into the buffer the one going out (dx) is not in */
        tsl_buf_t *gin = cl.send_b >= 0 && dx.ptr == e->g_a.ptr ? &e->g_b : &e->g_a;
        TRY(il_legs(e, &cl, i, &dx, gin, err));
        if (i < il->total) {
            uint32_t c = tsl_exec_il_chunk(il, i, true), mb = tsl_exec_il_micro(il, i);
            if (c == 0 && e->r.prev_rank < 0)
                TRY(make_input(e, mb, err));
            TRY(forward(e, c, mb, gin, err));
        }
        if (i >= il->warm && i - il->warm < il->total) {
            uint32_t k = i - il->warm;
            TRY(backward(e, tsl_exec_il_chunk(il, k, false), tsl_exec_il_micro(il, k), gin, &dx,
                         err));
        }
    }
    return 0;
}

/* The iteration's schedule, then the compute stream waits for the DP sync. */
static int schedule(tsl_exec_t *e, tsl_err_t *err)
{
    TRY(e->r.n_chunks > 1 ? schedule_il(e, err) : schedule_1f1b(e, err));
    if (!e->dp_pending)
        return 0;
    TRY(tsl_exec_ph(e, PH_COMM, err));
    TRY(e->dev->event_record(e->dev, e->ev_sync, TSL_STREAM_COMM, err));
    return e->dev->stream_wait(e->dev, TSL_STREAM_COMPUTE, e->ev_sync, err);
}

/* A tied head in another stage than its embedding (Megatron): the first and last
 * stages sum the table's gradient (DP-reduced already), so both copies take the same
 * step. Under SDP the two layers' shards do not line up (the embedding's vector also
 * holds the positions): each side gathers its whole gradient over the data group,
 * sums the table, and keeps its shard again. */
static int tie_sync(tsl_exec_t *e, tsl_err_t *err)
{
    if (!e->tie_g || e->comm->group_size(e->tie_g) < 2)
        return 0;
    tsl_exec_xl_t *L = e->r.stage == 0 ? &e->L[0] : &e->L[e->r.n_layers - 1];
    size_t n = (size_t)tsl_exec_vocab_local(L->d->vocab, L->d->tp) * L->d->hidden;
    tsl_buf_t whole = L->grad;
    TRY(tsl_exec_ph(e, PH_COMM, err));
    if (L->d->sdp) {
        whole = tsl_buf_view(&e->sdp_grad, 0, L->n_held * L->d->dw);
        TRY(e->comm->all_gather(e->comm, L->dw_g, &L->grad, &whole, cstream(e), err));
    }
    tsl_buf_t t = tsl_buf_view(&whole, L->vw, n);
    TRY(e->comm->allreduce(e->comm, e->tie_g, &t, cstream(e), err));
    if (!L->d->sdp)
        return 0;
    tsl_buf_t mine = tsl_buf_view(&whole, L->d->dw_index * L->n_held, L->n_held);
    return e->dev->copy(e->dev, &L->grad, &mine, err);
}

/* One optimizer step of a parameter vector (none: nothing). */
static int step_one(tsl_exec_t *e, tsl_buf_t *p, tsl_buf_t *g, tsl_buf_t *master, tsl_buf_t *m,
                    tsl_buf_t *v, tsl_err_t *err)
{
    if (!p->n)
        return 0;
    if (e->o.optim == TSL_EXEC_SGD)
        return e->dev->sgd(e->dev, p, g, master, e->o.lr, err);
    return e->dev->adam(e->dev, p, g, master, m, v, e->o.lr, 0.9f, 0.999f, 1e-8f, (int)e->step + 1,
                        err);
}

/* Every layer's parameters (a head tied in the stage has none: its embedding steps),
 * and a MoE layer's routed experts. */
static int optimize(tsl_exec_t *e, tsl_err_t *err)
{
    TRY(tie_sync(e, err));
    TRY(tsl_exec_ph(e, PH_OPT, err));
    for (uint32_t i = 0; i < e->r.n_layers; i++) {
        tsl_exec_xl_t *L = &e->L[i];
        TRY(step_one(e, &L->param, &L->grad, &L->master, &L->m, &L->v, err));
        TRY(step_one(e, &L->ex.param, &L->ex.grad, &L->ex.master, &L->ex.m, &L->ex.v, err));
    }
    return 0;
}

static int start_step(tsl_exec_t *e, tsl_err_t *err)
{
    e->ev_n = 0;
    e->ph_cur = -1;
    e->dp_pending = false;
    TRY(tsl_exec_ph(e, PH_IDLE, err));
    for (uint32_t i = 0; i < e->r.n_layers; i++) {
        e->L[i].bwd_done = 0;
        if (e->L[i].n_held)
            TRY(e->dev->zero(e->dev, &e->L[i].grad, err));
        if (e->L[i].ex.n_held)
            TRY(e->dev->zero(e->dev, &e->L[i].ex.grad, err));
    }
    return e->dev->zero(e->dev, &e->loss, err);
}

/* Seconds of each phase and of the whole step, from the recorded events. */
static int account(tsl_exec_t *e, tsl_exec_report_t *rep, tsl_err_t *err)
{
    double ph[PH_COUNT] = {0}, dt;
    for (uint32_t k = 0; k + 1 < e->ev_n; k++) {
        TRY(e->dev->event_elapsed_s(e->dev, e->ev[k], e->ev[k + 1], &dt, err));
        ph[e->ev_ph[k]] += dt;
    }
    TRY(e->dev->event_elapsed_s(e->dev, e->ev[0], e->ev[e->ev_n - 1], &dt, err));
    rep->iter_median_s = dt; /* this step's; tsl_exec_run takes the median */
    rep->fwd_s += ph[PH_FWD];
    rep->bwd_s += ph[PH_BWD];
    rep->comm_s += ph[PH_COMM];
    rep->bubble_s += ph[PH_P2P];
    rep->opt_s += ph[PH_OPT];
    return 0;
}

int tsl_exec_step(tsl_exec_t *e, tsl_exec_report_t *rep, tsl_err_t *err)
{
    bool last_stage = e->r.next_rank < 0;
    TRY(start_step(e, err) || schedule(e, err) || optimize(e, err));
    if (last_stage)
        TRY(e->comm->allreduce(e->comm, last_layer(e)->dw_g, &e->loss, cstream(e), err));
    TRY(tsl_exec_ph(e, PH_END, err) || e->dev->sync(e->dev, err));
    if (last_stage) {
        float v;
        TRY(e->dev->download(e->dev, &e->loss, &v, err));
        e->last_loss = v;
    }
    e->step++;
    return rep ? account(e, rep, err) : 0;
}

static int fetch(tsl_exec_t *e, const tsl_buf_t *b, float *host, size_t cap, size_t *n,
                 tsl_err_t *err)
{
    *n = b->n;
    if (b->n > cap)
        return tsl_err_set(err, "exec: %zu values do not fit %zu", b->n, cap);
    if (!b->n) /* a head tied in the stage has no parameters of its own */
        return 0;
    TRY(e->dev->sync(e->dev, err));
    return e->dev->download(e->dev, b, host, err);
}

int tsl_exec_layer_grad(tsl_exec_t *e, uint32_t i, float *host, size_t cap, size_t *n,
                        tsl_err_t *err)
{
    if (i >= e->r.n_layers)
        return tsl_err_set(err, "exec: no layer %u in a stage of %u", i, e->r.n_layers);
    return fetch(e, &e->L[i].grad, host, cap, n, err);
}

int tsl_exec_layer_param(tsl_exec_t *e, uint32_t i, float *host, size_t cap, size_t *n,
                         tsl_err_t *err)
{
    if (i >= e->r.n_layers)
        return tsl_err_set(err, "exec: no layer %u in a stage of %u", i, e->r.n_layers);
    return fetch(e, &e->L[i].param, host, cap, n, err);
}

int tsl_exec_layer_set_param(tsl_exec_t *e, uint32_t i, const float *host, size_t n, tsl_err_t *err)
{
    if (i >= e->r.n_layers || n != e->L[i].param.n)
        return tsl_err_set(err, "exec: layer %u: %zu values for %zu parameters", i, n,
                           i < e->r.n_layers ? e->L[i].param.n : 0);
    TRY(e->dev->upload(e->dev, &e->L[i].param, host, err));
    return e->L[i].master.ptr ? e->dev->upload(e->dev, &e->L[i].master, host, err) : 0;
}

int tsl_exec_expert_grad(tsl_exec_t *e, uint32_t i, float *host, size_t cap, size_t *n,
                         tsl_err_t *err)
{
    if (i >= e->r.n_layers)
        return tsl_err_set(err, "exec: no layer %u in a stage of %u", i, e->r.n_layers);
    return fetch(e, &e->L[i].ex.grad, host, cap, n, err);
}

int tsl_exec_expert_param(tsl_exec_t *e, uint32_t i, float *host, size_t cap, size_t *n,
                          tsl_err_t *err)
{
    if (i >= e->r.n_layers)
        return tsl_err_set(err, "exec: no layer %u in a stage of %u", i, e->r.n_layers);
    return fetch(e, &e->L[i].ex.param, host, cap, n, err);
}

int tsl_exec_expert_set_param(tsl_exec_t *e, uint32_t i, const float *host, size_t n,
                              tsl_err_t *err)
{
    if (i >= e->r.n_layers || n != e->L[i].ex.param.n || !n)
        return tsl_err_set(err, "exec: layer %u: %zu values for %zu routed experts' parameters", i,
                           n, i < e->r.n_layers ? e->L[i].ex.param.n : 0);
    tsl_exec_xl_t *L = &e->L[i];
    TRY(e->dev->upload(e->dev, &L->ex.param, host, err));
    return L->ex.master.ptr ? e->dev->upload(e->dev, &L->ex.master, host, err) : 0;
}

double tsl_exec_loss(const tsl_exec_t *e)
{
    return e->last_loss;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static uint64_t state_bytes(const tsl_exec_t *e)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < e->r.n_layers; i++) {
        const tsl_exec_xl_t *L = &e->L[i];
        const tsl_buf_t *b[] = {&L->param,    &L->grad,    &L->master,    &L->m,    &L->v,
                                &L->ex.param, &L->ex.grad, &L->ex.master, &L->ex.m, &L->ex.v};
        for (size_t k = 0; k < sizeof(b) / sizeof(b[0]); k++)
            n += (uint64_t)b[k]->n * tsl_dtype_bytes(b[k]->dt);
    }
    return n;
}

static int run_steps(tsl_exec_t *e, const tsl_exec_opts_t *o, tsl_exec_report_t *rep, double *times,
                     tsl_err_t *err)
{
    for (uint32_t i = 0; i < o->warmup; i++)
        TRY(tsl_exec_step(e, NULL, err));
    for (uint32_t i = 0; i < o->iters; i++) {
        TRY(tsl_exec_step(e, rep, err));
        times[i] = rep->iter_median_s;
    }
    return 0;
}

int tsl_exec_run(const tsl_exec_rank_t *r, const tsl_exec_opts_t *o, tsl_devops_t *dev,
                 tsl_commops_t *comm, tsl_exec_report_t *rep, tsl_err_t *err)
{
    memset(rep, 0, sizeof(*rep));
    *rep = (tsl_exec_report_t){.rank = r->rank, .stage = r->stage, .loss = NAN};
    if (!o->iters)
        return tsl_err_set(err, "exec: iters 0; measure at least 1 iteration");
    tsl_exec_t *e = NULL;
    if (tsl_exec_create(r, o, dev, comm, &e, err)) {
        rep->oom = tsl_err_code(err) == TSL_E_NOMEM;
        rep->peak_bytes = dev->peak_bytes(dev);
        return rep->oom ? 0 : -1;
    }
    double *times = calloc(o->iters, sizeof(double));
    int rc = times ? run_steps(e, o, rep, times, err)
                   : tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory");
    if (!rc) {
        qsort(times, o->iters, sizeof(double), cmp_double);
        rep->iters = o->iters;
        rep->iter_median_s = o->iters % 2 ? times[o->iters / 2]
                                          : 0.5 * (times[o->iters / 2 - 1] + times[o->iters / 2]);
        rep->iter_min_s = times[0];
        rep->iter_max_s = times[o->iters - 1];
        double *ph[] = {&rep->fwd_s, &rep->bwd_s, &rep->comm_s, &rep->bubble_s, &rep->opt_s};
        for (size_t k = 0; k < 5; k++)
            *ph[k] /= o->iters;
        rep->peak_bytes = dev->peak_bytes(dev);
        rep->param_bytes = state_bytes(e);
        rep->loss = tsl_exec_loss(e);
    }
    free(times);
    tsl_exec_destroy(e);
    return rc;
}

int tsl_exec_report_json(const tsl_exec_report_t *r, char *buf, size_t cap)
{
    char loss[32];
    if (isnan(r->loss))
        snprintf(loss, sizeof(loss), "null");
    else
        snprintf(loss, sizeof(loss), "%.9g", r->loss);
    return snprintf(buf, cap,
                    "{\"rank\":%u,\"stage\":%u,\"iters\":%u,\"iter_median_s\":%.6g,"
                    "\"iter_min_s\":%.6g,\"iter_max_s\":%.6g,\"fwd_s\":%.6g,\"bwd_s\":%.6g,"
                    "\"comm_s\":%.6g,\"bubble_s\":%.6g,\"opt_s\":%.6g,\"peak_bytes\":%llu,"
                    "\"state_bytes\":%llu,\"oom\":%s,\"loss\":%s}",
                    r->rank, r->stage, r->iters, r->iter_median_s, r->iter_min_s, r->iter_max_s,
                    r->fwd_s, r->bwd_s, r->comm_s, r->bubble_s, r->opt_s,
                    (unsigned long long)r->peak_bytes, (unsigned long long)r->param_bytes,
                    r->oom ? "true" : "false", loss);
}
