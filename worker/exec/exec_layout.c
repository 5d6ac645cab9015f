/*
 * exec_layout.c — each layer's layout on each device of a stage, the groups the
 * layouts need, and how an activation moves between two layouts (Galvatron-BMW's
 * transformation R(L, S_i, S_j) between consecutive layers' strategies and its
 * Slice-Gather step, galvatron-bmw.txt).
 *
 * A layout at local position p of a stage: TP index (p / tp stride) mod t, data index
 * tsl_relayout_data_index (the data level's digit: the executor runs no DP × SDP mix);
 * the rank holds samples [index·b, (index + 1)·b) of each micro-batch, b =
 * micro_batch / w, replicated over its TP group. How an activation moves between two
 * layouts — none, a slice, a gather by need or of the whole micro-batch, who gathers
 * with whom in which order, where the wanted samples start — is planner/relayout.h's
 * rule, the one the search prices; this file turns it into group splits.
 *
 * Groups are made in rounds of group_split, every rank of the world in each round:
 * a stage lists its splits (one colour and key per position; duplicates merged) in
 * the order of its layers — the layer's TP split, its data split, its input's forward
 * and backward moves, a MoE layer's EP and expert-DP splits — and ranks of stages with fewer splits make groups of
 * themselves alone in the rounds after theirs (exec_engine.c make_groups).
 */
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"
#include "relayout.h"

/* A strategy at local position p. */
typedef struct place {
    uint32_t t, ti, w, wi;
    int32_t tcol, wcol; /* local position of the TP and data group's first member */
} place_t;

static void place_of(const tsl_strategy_t *s, uint32_t p, place_t *o)
{
    tsl_dim_t d = tsl_strategy_degree(s, TSL_DIM_SDP) > 1 ? TSL_DIM_SDP : TSL_DIM_DP;
    uint32_t ts = tsl_strategy_stride(s, TSL_DIM_TP), ds = tsl_strategy_stride(s, d);
    o->t = tsl_strategy_degree(s, TSL_DIM_TP);
    o->ti = (p / ts) % o->t;
    o->tcol = (int32_t)(p - o->ti * ts);
    o->w = tsl_strategy_degree(s, d);
    o->wi = tsl_relayout_data_index(s, p);
    o->wcol = (int32_t)(p - o->wi * ds);
}

/* The stage's splits: n of them, each G colours (local) and keys. */
typedef struct splits {
    uint32_t G, n, cap;
    int32_t *color, *key;
    int32_t *tc, *tk; /* scratch: one split being built */
    uint32_t *u;      /* scratch: 4·G for planner/relayout.h */
} splits_t;

static int split_add(splits_t *S, int32_t *idx, tsl_err_t *err)
{
    size_t G = S->G;
    for (uint32_t i = 0; i < S->n; i++)
        if (!memcmp(S->color + i * G, S->tc, G * sizeof(int32_t)) &&
            !memcmp(S->key + i * G, S->tk, G * sizeof(int32_t))) {
            *idx = (int32_t)i;
            return 0;
        }
    if (S->n == S->cap) {
        uint32_t cap = S->cap ? 2 * S->cap : 8;
        int32_t *c = realloc(S->color, cap * G * sizeof(int32_t));
        if (c)
            S->color = c;
        int32_t *k = c ? realloc(S->key, cap * G * sizeof(int32_t)) : NULL;
        if (!c || !k)
            return tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory");
        S->key = k;
        S->cap = cap;
    }
    memcpy(S->color + S->n * G, S->tc, G * sizeof(int32_t));
    memcpy(S->key + S->n * G, S->tk, G * sizeof(int32_t));
    *idx = (int32_t)S->n++;
    return 0;
}

/* One direction of a layer input's move at local position `at`, as the planner's
 * move m from layout `held` to `need` rules it; a gather adds its split to S. */
static int plan_move(splits_t *S, const tsl_strategy_t *held, const tsl_strategy_t *need,
                     const tsl_relayout_move_t *m, uint32_t mb, uint32_t at, tsl_exec_move_t *x,
                     tsl_err_t *err)
{
    *x = (tsl_exec_move_t){TSL_EXEC_MOVE_NONE, -1, mb / tsl_strategy_data_width(held),
                           mb / tsl_strategy_data_width(need),
                           tsl_relayout_offset(held, need, m, at, mb)};
    if (m->kind == TSL_RELAYOUT_NONE)
        return 0;
    if (m->kind == TSL_RELAYOUT_SLICE) {
        x->kind = TSL_EXEC_MOVE_SLICE;
        return 0;
    }
    x->kind = TSL_EXEC_MOVE_GATHER; /* by need or whole: the offset tells them apart */
    uint32_t *grp = S->u + 2 * S->G, *key = S->u + 3 * S->G;
    tsl_relayout_groups(held, need, m, S->u, grp, key);
    for (uint32_t q = 0; q < S->G; q++) {
        S->tc[q] = (int32_t)grp[q];
        S->tk[q] = (int32_t)key[q];
    }
    return split_add(S, &x->group, err);
}

/* Layout checks of layer i of a stage of G devices (every rank checks every stage's). */
static int check_strategy(const tsl_plan_t *p, uint32_t i, uint32_t G, tsl_err_t *err)
{
    const tsl_strategy_t *L = &p->layer[i];
    uint32_t w = tsl_strategy_data_width(L);
    if (tsl_strategy_group_size(L) != G)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "layer %u: strategy spans %u devices, its "
                            "stage %u",
                            i, tsl_strategy_group_size(L), G);
    if (tsl_strategy_degree(L, TSL_DIM_DP) > 1 && tsl_strategy_degree(L, TSL_DIM_SDP) > 1)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED, "layer %u: DP mixed with SDP", i);
    if (p->micro_batch % w)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "layer %u: micro-batch %u does not split over data width %u", i,
                            p->micro_batch, w);
    return 0;
}

/* The TP and data splits of strategy s (colours and keys by position). */
static int layer_splits(splits_t *S, const tsl_strategy_t *s, int32_t *tg, int32_t *dg,
                        tsl_err_t *err)
{
    place_t pl;
    for (uint32_t q = 0; q < S->G; q++) {
        place_of(s, q, &pl);
        S->tc[q] = pl.tcol;
        S->tk[q] = (int32_t)pl.ti;
    }
    if (split_add(S, tg, err))
        return -1;
    for (uint32_t q = 0; q < S->G; q++) {
        place_of(s, q, &pl);
        S->tc[q] = pl.wcol;
        S->tk[q] = (int32_t)pl.wi;
    }
    return split_add(S, dg, err);
}

/* The moves of a layer's input from layout `from` to its own, s, at position `at`. */
static int layer_moves(splits_t *S, const tsl_plan_t *p, const tsl_strategy_t *from,
                       const tsl_strategy_t *s, uint32_t at, tsl_exec_layer_t *out, tsl_err_t *err)
{
    tsl_relayout_t r;
    if (tsl_relayout_plan(from, s, NULL, 0, S->u, &r, err))
        return -1;
    return plan_move(S, from, s, &r.fwd, p->micro_batch, at, &out->in_fwd, err) ||
           plan_move(S, s, from, &r.bwd, p->micro_batch, at, &out->in_bwd, err);
}

/* A MoE layer's EP group (the ep consecutive positions of the stage, in order: the
 * innermost, Megatron's folding with expert TP 1, docs/cost-model.md) and its
 * expert-DP group (the positions at stride ep holding the same experts). */
static int moe_splits(splits_t *S, const tsl_plan_t *p, const tsl_layer_t *L, uint32_t i,
                      uint32_t at, tsl_exec_layer_t *out, tsl_err_t *err)
{
    uint32_t ep = p->ep > 1 ? p->ep : 1, G = S->G,
             t = tsl_strategy_degree(&p->layer[i], TSL_DIM_TP);
    uint64_t tokens = (uint64_t)out->b * L->seq_len;
    if (L->experts % ep || G % ep)
        return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                            "layer %u: EP %u must divide its %u experts and its stage's %u "
                            "devices (the executor splits the experts evenly over the stage)",
                            i, ep, L->experts, G);
    if (tokens % t)
        return tsl_err_setc(
            err, TSL_E_UNSUPPORTED,
            "layer %u: %llu tokens of a micro-batch's share do not split over TP %u "
            "for routing (each TP rank routes its own 1/%u of them)",
            i, (unsigned long long)tokens, t, t);
    for (uint32_t q = 0; q < G; q++) {
        S->tc[q] = (int32_t)(q - q % ep);
        S->tk[q] = (int32_t)(q % ep);
    }
    if (split_add(S, &out->ep_group, err))
        return -1;
    for (uint32_t q = 0; q < G; q++) {
        S->tc[q] = (int32_t)(q % ep);
        S->tk[q] = (int32_t)(q / ep);
    }
    if (split_add(S, &out->edp_group, err))
        return -1;
    out->ep = ep;
    out->ep_index = at % ep;
    out->edp = G / ep;
    out->edp_index = at / ep;
    return 0;
}

static int stage_walk(const tsl_plan_t *p, const tsl_model_t *m, uint32_t s, uint32_t me,
                      tsl_exec_layer_t *layers, splits_t *S, tsl_err_t *err)
{
    const tsl_plan_stage_t *st = &p->stages[s];
    const tsl_strategy_t *prev = NULL;
    if (s > 0) {
        const tsl_plan_stage_t *ps = &p->stages[s - 1];
        if (ps->n_devices != st->n_devices)
            return tsl_err_setc(err, TSL_E_UNSUPPORTED,
                                "stages %u and %u differ in devices (%u and %u); the executor "
                                "sends activations between equal device counts only",
                                s - 1, s, ps->n_devices, st->n_devices);
        prev = &p->layer[ps->first_layer + ps->n_layers - 1];
    }
    for (uint32_t k = 0; k < st->n_layers; k++) {
        uint32_t i = st->first_layer + k;
        tsl_exec_layer_t tmp, *out = layers ? &layers[k] : &tmp;
        place_t pl;
        if (check_strategy(p, i, S->G, err))
            return -1;
        if (layer_splits(S, &p->layer[i], &out->tp_group, &out->dw_group, err))
            return -1;
        out->in_fwd = out->in_bwd = (tsl_exec_move_t){TSL_EXEC_MOVE_NONE, -1, 0, 0, 0};
        if (prev && layer_moves(S, p, prev, &p->layer[i], me < S->G ? me : 0, out, err))
            return -1;
        place_of(&p->layer[i], me < S->G ? me : 0, &pl);
        out->tp = pl.t;
        out->tp_index = pl.ti;
        out->dw = pl.w;
        out->dw_index = pl.wi;
        out->b = p->micro_batch / pl.w;
        if (!prev)
            out->in_fwd.from_b = out->in_fwd.to_b = out->in_bwd.from_b = out->in_bwd.to_b = out->b;
        out->ep = out->ep_index = out->edp = out->edp_index = 0;
        out->ep_group = out->edp_group = -1;
        tsl_layer_kind_t kd = m ? m->layers[i].kind : TSL_LAYER_EMBEDDING;
        /* routed experts run in a layer with an FFN (a sub-layer plan's attention block
         * keeps its layer's MoE fields) */
        if (m && m->layers[i].experts && (kd == TSL_LAYER_ENCODER || kd == TSL_LAYER_FFN) &&
            moe_splits(S, p, &m->layers[i], i, me < S->G ? me : 0, out, err))
            return -1;
        prev = &p->layer[i];
    }
    return 0;
}

/* The rank's groups: its colour (a world rank) and key in each split, and the size. */
static int rank_groups(const splits_t *S, uint32_t first_device, uint32_t me,
                       tsl_exec_group_t **out, tsl_err_t *err)
{
    *out = calloc(S->n ? S->n : 1, sizeof(**out));
    if (!*out)
        return tsl_err_setc(err, TSL_E_NOMEM, "exec: out of host memory");
    for (uint32_t i = 0; i < S->n; i++) {
        const int32_t *c = S->color + (size_t)i * S->G;
        uint32_t size = 0;
        for (uint32_t q = 0; q < S->G; q++)
            size += c[q] == c[me];
        (*out)[i] =
            (tsl_exec_group_t){(int32_t)first_device + c[me], S->key[(size_t)i * S->G + me], size};
    }
    return 0;
}

int tsl_exec_stage_layout(const tsl_plan_t *p, uint32_t s, uint32_t me, tsl_exec_layer_t *layers,
                          tsl_exec_group_t **groups, uint32_t *n_groups, uint32_t *n_splits,
                          tsl_err_t *err)
{
    return tsl_exec_stage_layout_m(p, NULL, s, me, layers, groups, n_groups, n_splits, err);
}

int tsl_exec_stage_layout_m(const tsl_plan_t *p, const tsl_model_t *m, uint32_t s, uint32_t me,
                            tsl_exec_layer_t *layers, tsl_exec_group_t **groups, uint32_t *n_groups,
                            uint32_t *n_splits, tsl_err_t *err)
{
    uint32_t G = p->stages[s].n_devices;
    splits_t S = {.G = G};
    S.tc = calloc(G, sizeof(int32_t));
    S.tk = calloc(G, sizeof(int32_t));
    S.u = calloc(4 * (size_t)G, sizeof(uint32_t));
    int rc = -1;
    if (!G || !S.tc || !S.tk || !S.u) {
        tsl_err_setc(err, G ? TSL_E_NOMEM : TSL_E_INVALID, "stage %u: %s", s,
                     G ? "out of host memory" : "no devices");
        goto out;
    }
    if (stage_walk(p, m, s, me, layers, &S, err))
        goto out;
    *n_splits = S.n;
    if (groups) {
        if (rank_groups(&S, p->stages[s].first_device, me, groups, err))
            goto out;
        *n_groups = S.n;
    }
    rc = 0;
out:
    free(S.tc);
    free(S.tk);
    free(S.u);
    free(S.color);
    free(S.key);
    return rc;
}
