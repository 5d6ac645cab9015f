/*
 * layerdp.h — Galvatron-BMW Algorithm 3: choose one strategy per layer of a stage
 * to minimise the stage time under a device memory budget.
 *
 * The caller fills, for L layers and S strategies, the per-layer figures from
 * cost.h (already multiplied by the number of micro-batches a stage keeps in
 * flight for activations). The solver runs the forward-memory DP of Eq. 4
 *
 *   C(l, e, j) = c(l, j) + min_i [ C(l−1, e − w(l, j), i) + R(l, i, j) ]
 *   w(l, j)    = ⌈(O_f(l, j) + O_ms(l, j)) / bucket⌉
 *
 * (the state keeps the previous layer's strategy j so that R is exact), then walks
 * the forward budgets E_fwd upward from E − b_up, where b_up = max O_b, checking
 * the real peak of Eq. 2,
 *
 *   E_all = max_i { Σ_{k≤i} O_f(k) + O_b(i) } + Σ_k O_ms(k),
 *
 * on the backtracked assignment, and keeps the largest E_fwd whose assignment
 * fits (the first failure stops the walk, as Algorithm 3 does). The returned plan
 * never exceeds the budget: E_all is computed in exact bytes; buckets only round
 * the DP's forward sizes up.
 * The layout form leaves out the cells no answer reads (those below the walk's
 * start, carried back through the layers: layerdp.c needed_cells); the answer is
 * the full evaluation's, bit for bit.
 *
 * R comes in one of two forms: by layouts — each strategy j has a layout λ(j) and
 * R(l, i, j) = trans_pair_s[(l·Λ + λ(i))·Λ + λ(j)], a Λ × Λ matrix per layer
 * (the cost of moving the activation between the two layouts, relayout.h) —
 * in O(L·E·(S + Λ²)) — layers that share one matrix (a model's blocks) may name it
 * by trans_at rather than repeat it; or as a full L·S·S matrix (O(L·E·S²)), for callers with
 * arbitrary transformation costs. R of layer 0 (its input comes from the previous
 * stage) is never used. Likewise c, O_f, O_b and O_ms: layers whose figures are the
 * same may name one row of them by row_at rather than repeat it.
 *
 * No allocation happens in tsl_layerdp_solve: all memory lives in a workspace
 * sized once for the largest problem.
 */
#ifndef TSL_LAYERDP_H
#define TSL_LAYERDP_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

/* Default bucket: an 80 GiB budget is 2048 buckets. */
#define TSL_LAYERDP_DEFAULT_BUCKET_BYTES (40ull << 20)

typedef struct tsl_layerdp_problem {
    uint32_t n_layers;     /* L ≥ 1 */
    uint32_t n_strategies; /* S ≥ 1 */
    /* [r·S + j], r = row_at[l] (or l); time_s = +INFINITY marks (l, j) infeasible */
    const double *time_s;      /* c(l, j) */
    const uint64_t *fwd_bytes; /* O_f(l, j) */
    const uint64_t *bwd_bytes; /* O_b(l, j) */
    const uint64_t *ms_bytes;  /* O_ms(l, j) */
    const uint32_t *row_at;    /* optional, [l]: layer l's figures are row row_at[l] (< n_rows)
                                  of the four arrays above, not their l-th — layers that
                                  price alike (a model's blocks) share one row instead of
                                  a copy each; NULL: the l-th */
    uint32_t n_rows;           /* the rows of the four arrays when row_at is given */
    /* transformation cost, one of: */
    uint32_t n_layouts;         /* Λ ≥ 1 */
    const uint32_t *layout;     /* [j]: the layout of strategy j, < Λ */
    const double *trans_pair_s; /* [(l·Λ + a)·Λ + b]: R of layer l's input moving from
                                   layout a (layer l−1's) to b (l's); ≥ 0, +INF forbids */
    const uint32_t *trans_at;   /* optional, [l]: layer l's R is trans_pair_s's matrix
                                   trans_at[l] (< n_trans), not its l-th; NULL: the l-th */
    uint32_t n_trans;           /* the matrices in trans_pair_s when trans_at is given */
    const double *trans_full_s; /* [(l·S + i)·S + j]: R(l, i, j), i = previous layer's */
    uint64_t budget_bytes;      /* E */
    uint64_t bucket_bytes;      /* memory granularity, 0 = default */
} tsl_layerdp_problem_t;

typedef struct tsl_layerdp_result {
    double time_s;           /* Σ c(l, j_l) + Σ R; +INFINITY when nothing fits */
    uint64_t peak_bytes;     /* E_all of the assignment */
    uint64_t fwd_bytes;      /* E_f of the assignment */
    uint64_t states_visited; /* DP cells evaluated (for statistics) */
} tsl_layerdp_result_t;

typedef struct tsl_layerdp_ws tsl_layerdp_ws_t;

/* Workspace for problems up to max_layers × max_strategies × max_buckets. */
tsl_layerdp_ws_t *tsl_layerdp_ws_new(uint32_t max_layers, uint32_t max_strategies,
                                     uint32_t max_buckets);
void tsl_layerdp_ws_free(tsl_layerdp_ws_t *ws);

/* Whether ws takes problems of up to max_layers × max_strategies × max_buckets. */
bool tsl_layerdp_ws_holds(const tsl_layerdp_ws_t *ws, uint32_t max_layers, uint32_t max_strategies,
                          uint32_t max_buckets);

/* On x86-64 the inner loops use AVX2 when the CPU has it, and the two busiest
 * AVX-512F where it has that (chosen at run time); on = 1 forces the plain scalar
 * loops, on = 2 the AVX2 ones. All give bit-identical results — the test compares
 * them. Returns 1 when this build has the vector kernels, else 0. */
int tsl_layerdp_ws_set_portable(tsl_layerdp_ws_t *ws, int on);

/* Number of buckets a problem needs: ⌊budget / bucket⌋. */
uint32_t tsl_layerdp_buckets(uint64_t budget_bytes, uint64_t bucket_bytes);

/*
 * Solves p. On success returns 0 and writes the chosen strategy index of each
 * layer into choice[0..L) (when a plan fits) and the figures into res;
 * res->time_s is +INFINITY and choice untouched when no assignment fits the
 * budget. Returns -1 with err for malformed input (sizes beyond the workspace,
 * missing arrays).
 */
int tsl_layerdp_solve(const tsl_layerdp_problem_t *p, tsl_layerdp_ws_t *ws, uint32_t *choice,
                      tsl_layerdp_result_t *res, tsl_err_t *err);

/* E_all (Eq. 2) of a given assignment, in exact bytes. */
uint64_t tsl_layerdp_peak_bytes(const tsl_layerdp_problem_t *p, const uint32_t *choice);

/* Total time Σ c + Σ R of a given assignment. */
double tsl_layerdp_time_s(const tsl_layerdp_problem_t *p, const uint32_t *choice);

#endif
