/*
 * relayout.h — how a layer's input activation moves when the layer before it in
 * the stage lays its samples out differently (Galvatron-BMW's Slice-Gather for the
 * transformation R(L, S_i, S_j) of Eq. 4). The one definition of the rule: the
 * search prices these moves (cost.h tsl_cost_transition) and the stage executor
 * runs them (worker/exec/exec_layout.c takes each rank's kind, group, key and
 * offset from here); tests/test_relayout.c checks the two on every pair of layouts.
 *
 * Layout of a strategy at local position p of a stage of G devices: the data index
 * d(p) ∈ [0, w) (w = data width = DP × SDP) is the mixed-radix number of p's digits
 * on the data levels, the innermost data level least significant (adjacent DP and
 * SDP levels thus act as one level of their product, as tsl_strategy_same_layout
 * sees them; the executor runs no DP × SDP mix); the rank holds samples
 * [d·B/w, (d + 1)·B/w) of a micro-batch of B, replicated over its TP group.
 *
 * Between a held layout H and a needed one N (forward: H = the earlier layer's;
 * backward the other way round), the same for every position, in this order:
 *   NONE    every position needs exactly what it holds;
 *   SLICE   every position's needed samples lie inside its held ones: a local copy;
 *   GATHER  by need: k = w_H / w_N, every position's held piece lies inside its
 *           needed range, and among the positions needing one range each of its k
 *           pieces is held equally often: groups of k (the r-th holder of each
 *           piece) all-gather exactly the needed range, B / w_N samples;
 *   WHOLE   otherwise: groups of k = w_H (the r-th holder of each data index of H)
 *           all-gather the whole micro-batch, then each position copies its part.
 * Forward SLICE pairs with backward GATHER and the reverse; WHOLE with WHOLE.
 * Gradients need no sum across replicas: a sample's activation gradient is computed
 * by exactly one TP group of the later layer (its data index is unique) and, after
 * that layer's TP all-reduce of the input gradient, every member holds it whole and
 * bitwise equal — so any holder's copy is the gradient, and backward moves are plain
 * slices and gathers too.
 */
#ifndef TSL_RELAYOUT_H
#define TSL_RELAYOUT_H

#include <stdint.h>

#include "cluster.h"
#include "err.h"
#include "kept.h"
#include "strategy.h"

typedef enum tsl_relayout_kind {
    TSL_RELAYOUT_NONE = 0,
    TSL_RELAYOUT_SLICE,
    TSL_RELAYOUT_GATHER, /* by need */
    TSL_RELAYOUT_WHOLE,  /* the whole micro-batch, then a slice */
} tsl_relayout_kind_t;

/* One direction of a move. The all-gather's full buffer is X / width, X the
 * micro-batch's boundary activation bytes; 1 − 1/k of it arrives at each rank. */
typedef struct tsl_relayout_move {
    tsl_relayout_kind_t kind;
    uint32_t k;     /* ranks per gather group; 1 for NONE and SLICE */
    uint32_t width; /* GATHER: w_N; WHOLE: 1; NONE and SLICE: 0 (nothing moves) */
    double bw;      /* slowest ring link of the slowest group (bytes/s); +INF without
                       a gather or without a cluster */
} tsl_relayout_move_t;

typedef struct tsl_relayout {
    tsl_relayout_move_t fwd; /* the activation, earlier layer → later */
    tsl_relayout_move_t bwd; /* its gradient, later layer → earlier */
} tsl_relayout_t;

/*
 * The moves from layout `from` (the earlier layer's) to `to` on the stage block
 * of G = the strategies' group size devices starting at device block_first of c.
 * c may be NULL: the kinds only (bw +INF). scratch: 3·G uint32_t of the caller's
 * (no allocation: the search calls this per stage). Bandwidth: each gather
 * group's members, in position order, form a ring; its slowest link
 * (tsl_cluster_link_bw: a node's intra bandwidth between two of its devices, the
 * inter-node figure between nodes) bounds the group, and the slowest group the
 * move — groups running at once are assumed not to share a link, as the DP and TP
 * groups of the cost model are. Returns -1 with err when the two strategies'
 * group sizes differ, are 0, or the block leaves the cluster.
 */
int tsl_relayout_plan(const tsl_strategy_t *from, const tsl_strategy_t *to, const tsl_cluster_t *c,
                      uint32_t block_first, uint32_t *scratch, tsl_relayout_t *out, tsl_err_t *err);

/*
 * tsl_relayout_plan with the block's links floor given (tsl_relayout_links_floor of
 * c, block_first and the strategies' group size; negative: made here where a move
 * needs it). The same moves: the floor only ends a bandwidth walk early, where no
 * link can be slower. The search makes it once per stage block, for all the pairs
 * of layouts there, instead of once per pair (O(nodes of the block) each).
 */
int tsl_relayout_plan_floor(const tsl_strategy_t *from, const tsl_strategy_t *to,
                            const tsl_cluster_t *c, uint32_t block_first, double floor,
                            uint32_t *scratch, tsl_relayout_t *out, tsl_err_t *err);

/*
 * tsl_relayout_plan_floor the plain way, the reference its short-cuts are tested
 * against (tests/test_relayout.c): each direction decided on its own, the gather by
 * need tested in one walk of the block and its groups' ring links found in another,
 * each group numbered by counting the holders before it. tsl_relayout_plan_floor
 * does the test and the links in one walk, takes a group's number from the
 * position's digits, and derives the backward kind from the forward one (the
 * pairing above), walking only its links. The same moves, bit for bit.
 */
int tsl_relayout_plan_plain(const tsl_strategy_t *from, const tsl_strategy_t *to,
                            const tsl_cluster_t *c, uint32_t block_first, double floor,
                            uint32_t *scratch, tsl_relayout_t *out, tsl_err_t *err);

/*
 * tsl_relayout_plan_floor through a table of c's moves (kept: one
 * tsl_relayout_kept_init made, holding moves of c's blocks alone; NULL: made every
 * time): the moves of a block and a pair of layouts are made once and read back after,
 * the same moves bit for bit — a move reads nothing of the strategies but their levels
 * (dims and degrees), so strategies that differ in recompute, SP or ZeRO share it. A
 * failed plan is not kept. The search keeps one for every engine over its cluster
 * (cost.h tsl_cost_walks_t).
 */
void tsl_relayout_kept_init(tsl_kept_t *kept, uint32_t first, uint32_t most);
int tsl_relayout_plan_kept(tsl_kept_t *kept, const tsl_strategy_t *from, const tsl_strategy_t *to,
                           const tsl_cluster_t *c, uint32_t block_first, double floor,
                           uint32_t *scratch, tsl_relayout_t *out, tsl_err_t *err);

/* No link of the block of G devices at `first` of c is slower than this: the
 * slowest node's NVLink figure and the network's, where no pair matrix gives each
 * pair its own; 0 (no bound) with a matrix. O(nodes of the block). */
double tsl_relayout_links_floor(const tsl_cluster_t *c, uint32_t first, uint32_t G);

/* The data index of local position p under s: its data-level digits, the innermost
 * least significant (see above). The rank holds samples [d·B/w, (d + 1)·B/w). */
uint32_t tsl_relayout_data_index(const tsl_strategy_t *s, uint32_t p);

/*
 * Who gathers with whom in one direction m (tsl_relayout_plan's fwd from `held` to
 * `needed`, or its bwd with the two swapped), for every local position p < G:
 * group[p] = the position of its group's first member, key[p] = its rank in the
 * group — the all-gather lays the members' pieces out in key order. GATHER: the
 * r-th holder (by position) of each piece of one needed range, keyed by the piece;
 * WHOLE: the r-th holder of each data index of `held`, keyed by that index; every
 * group has m->k members. NONE and SLICE: every position alone (group[p] = p,
 * key 0). key may be NULL. scratch: 2·G uint32_t of the caller's.
 */
void tsl_relayout_groups(const tsl_strategy_t *held, const tsl_strategy_t *needed,
                         const tsl_relayout_move_t *m, uint32_t *scratch, uint32_t *group,
                         uint32_t *key);

/* Where position p's needed samples start, in samples of a micro-batch of mb (which
 * both data widths divide): in what it holds (SLICE), in what its group gathers
 * (GATHER: 0, the gather is the need; WHOLE: the start of its needed range); 0 for
 * NONE. */
uint32_t tsl_relayout_offset(const tsl_strategy_t *held, const tsl_strategy_t *needed,
                             const tsl_relayout_move_t *m, uint32_t p, uint32_t mb);

/* "none", "slice", "gather", "whole" */
const char *tsl_relayout_kind_name(tsl_relayout_kind_t k);

#endif
