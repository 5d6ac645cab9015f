/*
 * pipeline.h — time and memory of a 1F1B-flush pipeline of P stages with m
 * micro-batches (Galvatron-BMW Eq. 5, 6 and 9).
 *
 *   T = (m − 1) · max_i C_nosync(i) + Σ_i C_sync(i)                         (Eq. 9)
 *
 * — the PAPER cost mode's formula. The stacks' (STACK, the default) lets each
 * stage synchronise after its own last backward, concurrently with the others:
 * tsl_pipeline_iter below, which prices both modes.
 *
 * where C_sync(i) is stage i's time for one micro-batch including its gradient
 * synchronisation (the last micro-batch) and C_nosync(i) the same without it. A
 * stage's time includes sending its output boundary to the next stage (and the
 * gradient back), so p2p costs enter both terms.
 *
 * Memory under 1F1B: stage i (0-based) keeps the activations of
 * min(P − i, m) micro-batches in flight; shallower stages hold more.
 *
 * Interleaved 1F1B (Narayanan et al. 2021, "Efficient Large-Scale Language Model
 * Training on GPU Clusters Using Megatron-LM", Sec. 2.2): each stage holds v model
 * chunks, so a micro-batch crosses P·v virtual stages of 1/v the time each. The
 * pipeline bubble, Σ_i C_nosync(i) − max_i C_nosync(i) in Eq. 9, shrinks by v;
 * the gradient synchronisation does not:
 *
 *   T_v = m · max_i C_nosync(i) + (Σ_i C_nosync(i) − max_i C_nosync(i)) / v
 *         + Σ_i (C_sync(i) − C_nosync(i))
 *
 * (v = 1 is Eq. 9). The price: v times the point-to-point traffic (the caller's
 * stage times carry it), and more activations in flight: Megatron's schedule runs
 * (P − i − 1)·2 + (v − 1)·P warmup chunk forwards on stage i, so it holds
 * ⌈(that + 1) / v⌉ micro-batches' worth (at most m). Megatron requires m to be a
 * multiple of P.
 *
 * Balance degrees (Eq. 6): α = 1 − max_i x_i / Σ_i x_i, in [0, 1 − 1/P].
 *
 * Optimizer step (cost.h, opt_s): each stage steps once per iteration, after its
 * own last backward and gradient synchronisation. In Eq. 9 the last micro-batch's
 * backward runs from stage P − 1 down to stage 0, so stage i's last backward ends
 * tail_i before the pipeline's end T, where
 *
 *   tail_i = Σ_{j<i} [ (C_nosync(j) − f_j − p2p_j/2) / v + (C_sync(j) − C_nosync(j)) ]
 *
 * (f_j the stage's forward, p2p_j both directions of its boundary: the backward
 * and the gradient hop back of every stage below i, 1/v of them per chunk under
 * interleaving, and their whole gradient sync). The iteration ends when the
 * last step does:
 *
 *   T_opt = T + max_i (opt_i − tail_i)        (≥ T + opt_0 − 0 ≥ T)
 *
 * so stage 0 — whose backward ends last — pays its step in full, and a later
 * stage's step only where it outlasts the drain below it. (A trainer that
 * clips the gradient norm across stages first, Megatron-LM's default, starts
 * every step at T: T + max_i opt_i. Tessel's executor does not clip.)
 *
 * Tied LM head in the last stage (cost.h, tsl_cost_tied_allreduce_s): stage 0 and
 * stage P − 1 all-reduce the word embedding's gradient before either steps. It
 * starts when both have finished their backward, i.e. at T (stage 0 ends last),
 * and takes tie; both steps wait for it:
 *
 *   T_opt = T + max(tie + opt_0, tie + opt_{P−1}, max_{0<i<P−1} (opt_i − tail_i))
 *
 * (tie = 0, or P = 1: the formula above).
 */
#ifndef TSL_PIPELINE_H
#define TSL_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

/* Eq. 9. n_stages ≥ 1, m ≥ 1. */
double tsl_pipeline_time_s(uint32_t n_stages, const double *stage_nosync_s,
                           const double *stage_sync_s, uint32_t m);

/* Micro-batches whose activations stage `stage` (0-based) holds under 1F1B. */
uint32_t tsl_pipeline_inflight(uint32_t stage, uint32_t n_stages, uint32_t m);

/* Micro-batches a stage holds begun and not through their weight gradient under
 * ZB-H1 and ZBV (pipesim.h): min(P, m) on every stage — 1F1B's stage 0. A
 * micro-batch waiting for its W keeps about all its activations (Qi et al. 2024,
 * Table 1: M_W = 32·b·s·h of M_B's 34·b·s·h + 5·a·s²·b), so each counts whole. */
uint32_t tsl_pipeline_inflight_zb(uint32_t n_stages, uint32_t m);

/* DualPipeV (pipesim.h): each stage holds at most 2P + 1 chunk micro-batches, half
 * a stage's activations each (DeepSeek-V3 Table 2's PP + 1 with PP = 2P chunks):
 * P + 1/2 micro-batches of the stage, counted as min(P + 1, m). */
uint32_t tsl_pipeline_inflight_dualpipev(uint32_t n_stages, uint32_t m);

/* T_v and the in-flight micro-batches under interleaved 1F1B with v chunks per
 * stage; v <= 1 gives tsl_pipeline_time_s / tsl_pipeline_inflight exactly. */
double tsl_pipeline_time_interleaved_s(uint32_t n_stages, const double *stage_nosync_s,
                                       const double *stage_sync_s, uint32_t m, uint32_t v);
uint32_t tsl_pipeline_inflight_interleaved(uint32_t stage, uint32_t n_stages, uint32_t m,
                                           uint32_t v);

/* T_opt − T above: what the optimizer steps (and a tied head's all-reduce, tie_s;
 * 0 for none, ignored for one stage) add to the pipeline's T (or T_v); fwd_s,
 * p2p_s are the stages' forward and boundary times (plan.h's stage fields), v ≤ 1
 * plain 1F1B. 0 for no stages. */
double tsl_pipeline_opt_tail_s(uint32_t n_stages, const double *stage_fwd_s,
                               const double *stage_nosync_s, const double *stage_sync_s,
                               const double *stage_p2p_s, const double *stage_opt_s, double tie_s,
                               uint32_t v);

/*
 * The iteration as the stacks run it and as the papers price it, in one place
 * (docs/cost-model.md "Pipeline", "Interleaved 1F1B", "Optimizer step").
 *
 * PAPER: flush = Eq. 9 (T_v for v > 1), opt_tail = tsl_pipeline_opt_tail_s —
 * every stage's gradient synchronisation summed into the last micro-batch's pass.
 *
 * STACK (Megatron-LM's schedules.py): K_i = C_nosync(i) for plain 1F1B, whose
 * batched isend/irecv block the stage (overlap_p2p_comm is refused there); under
 * interleaving Megatron overlaps the steady state's p2p with the next chunk
 * (--overlap-p2p-communication, on by default), so K_i = C_nosync(i) − p2p_i and
 * its hops stay only in the fill and the drain, (v − 1)/v of them exposed (fitted
 * to the event simulator, pipesim.h: within 5 % for stages within 10 % of each
 * other; tests/test_pipesim.c):
 *   T0 = (m − 1) · max_i K_i + Σ_i K_i                                    (v = 1)
 *      = m · max_i K_i + (Σ_i K_i − max_i K_i) / v + Σ_i p2p_i · (v − 1) / v (v > 1)
 * Stage i's gradient sync y_i = C_sync(i) − C_nosync(i) starts after its own last
 * backward, which ends tail_i before T0 (tail_i as in tsl_pipeline_opt_tail_s
 * without the sync terms), while the other stages go on:
 *   end_i = T0 − tail_i + y_i,   flush = max_i end_i,
 *   iteration = max_i (end_i + opt_i) — stages 0 and P − 1 of a tied head first
 *   all-reduce from max(end_0, end_{P−1}) for tie_s, then step.
 */
typedef struct tsl_pipeline_in {
    uint32_t n_stages, n_micro, interleave; /* P ≥ 1, m ≥ 1, v (≤ 1: plain 1F1B) */
    bool paper;                             /* the papers' formulas (TSL_COST_PAPER) */
    const double *fwd_s, *nosync_s, *sync_s, *p2p_s, *opt_s; /* [P], as plan.h's stages */
    double tie_s;                                            /* 0: no tied head */
} tsl_pipeline_in_t;

typedef struct tsl_pipeline_out {
    double flush_s;    /* the pipeline's end, every stage's gradient sync included */
    double opt_tail_s; /* what the steps (and a tied head's all-reduce) add after it */
} tsl_pipeline_out_t;

/* Fills out; zeros for no stages or no micro-batches. O(P), no allocation. */
void tsl_pipeline_iter(const tsl_pipeline_in_t *in, tsl_pipeline_out_t *out);

/* Eq. 6 over n values (time or memory); 0 for n ≤ 1 or a zero sum. */
double tsl_pipeline_balance(uint32_t n, const double *values);

#endif
