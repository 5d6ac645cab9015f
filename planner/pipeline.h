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
 * (P − i − 1)·2 + (v − 1)·N warmup chunk forwards on stage i (N micro-batches per
 * group, P by default), its chunks' activations counted one by one
 * (tsl_pipeline_inflight_chunks below). Megatron requires m to be a multiple of P
 * for N = P (tsl_pipeline_vp_check).
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
 * Tied LM head in the last stage (cost.h, tsl_cost_tied_allreduce_elem_s): stage 0 and
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
 * ZB-H1 and ZBV (pipesim.h): min(P, m) on every stage — 1F1B's stage 0 (a ZBV
 * rank's total with chunks of equal stash; the pricing takes each chunk's own,
 * tsl_pipeline_v_held, since cost model 118). A
 * micro-batch waiting for its W keeps about all its activations (Qi et al. 2024,
 * Table 1: M_W = 32·b·s·h of M_B's 34·b·s·h + 5·a·s²·b), so each counts whole. */
uint32_t tsl_pipeline_inflight_zb(uint32_t n_stages, uint32_t m);

/* DualPipeV (pipesim.h): each stage holds at most 2P + 1 chunk micro-batches, half
 * a stage's activations each (DeepSeek-V3 Table 2's PP + 1 with PP = 2P chunks):
 * P + 1/2 micro-batches of the stage, counted as min(P + 1, m) (the pricing takes
 * each chunk's own, tsl_pipeline_v_held, since cost model 118; this where m < 2P). */
uint32_t tsl_pipeline_inflight_dualpipev(uint32_t n_stages, uint32_t m);

/*
 * A V's two chunks at rank `stage`'s peak (ZBV, DualPipeV; cost model 118): the
 * micro-batches each chunk holds begun and not through their weight gradient at
 * the first moment Σ_c held[c]·chunk_w[c] is largest, walking the rank's op order
 * as pipesim.h runs it (torch.distributed.pipelining's ScheduleZBVZeroBubble;
 * DeepSeek's dualpipev.py steps 1-5, after which no forward comes). A forward adds
 * a micro-batch to its chunk; ZBV's W and DualPipeV's W or whole backward (its W
 * inside) take one off; an overlapped F&B step holds the forward's before the
 * backward's go. Ties go to the larger count. Each chunk's figure, m large:
 *
 *   ZBV        (2P − s, s) after a steady F0, (2P − s − 1, s + 1) after an F1:
 *              2P chunk micro-batches either way, the peak by the heavier chunk
 *   DualPipeV  (2P − s, s + 1) at every overlapped step: 2P + 1
 *
 * (rank 0: its first chunk, the embedding's, 2P − 1 or 2P; its second, the
 * head's, at most 1). Fewer micro-batches (ZBV's order is computed for max(m,
 * 2P − 1) and the ones past m dropped) hold fewer. chunk_w: the two chunks' stash
 * of one micro-batch, >= 0. DualPipeV with m < 2P (not a schedule it runs):
 * min(P + 1, m) each. Returns held[0] + held[1]. O(m).
 */
uint32_t tsl_pipeline_v_held(bool dualpipev, uint32_t stage, uint32_t n_stages, uint32_t m,
                             const double *chunk_w, uint32_t *held);

/*
 * A V's model parts (ZBV, DualPipeV; torch.distributed.pipelining's style="v",
 * torchtitan's module_fqns_per_model_part of 2P parts): the model, cut in order,
 * goes into 2P contiguous parts, part q on rank q for q < P and on rank 2P − 1 − q
 * otherwise (virtual stage q). Rank s runs as many layers as its stage's count
 * n_s: its first chunk, part s, the first ceil(n_s / 2) of them, its second, part
 * 2P − 1 − s, the other floor(n_s / 2). So rank 0 holds the model's first layers
 * (the embedding) and its last (the head with its loss), rank P − 1 the middle.
 * Writes part_first[0 .. 2P] (part q is layers [part_first[q], part_first[q + 1])),
 * part_first[2P] the sum of the counts. The one layout the planner prices a V by
 * (search_eval.c stage_rows) and the torchtitan export writes. O(P).
 */
void tsl_pipeline_v_parts(uint32_t n_stages, const uint32_t *stage_count, uint32_t *part_first);

/* Under a V: the rank that holds virtual stage (part) q of 2P: q for q < P, else
 * 2P − 1 − q (rank s's second part is 2P − 1 − s). The one statement of the layout
 * tsl_pipeline_v_parts describes, for pipeline.c and search_eval.c alike. */
static inline uint32_t tsl_pipeline_v_rank(uint32_t q, uint32_t n_stages)
{
    return q < n_stages ? q : 2 * n_stages - 1 - q;
}

/* Receive buffers per micro-batch that stage `stage` of n_stages keeps under
 * torch.distributed.pipelining (cost.h tsl_cost_pp_recv_bytes): each of its model
 * chunks (virtual stages) but the pipeline's first allocates one activation buffer
 * per micro-batch, and each but the last one gradient buffer per micro-batch, once,
 * kept across steps (stage.py _prepare_forward_infra / _prepare_backward_infra).
 * Looped chunks (v >= 1; 1F1B at v 1): chunk c of stage s is virtual stage c·P + s,
 * so 2v less the first and the last. A V (vshape: ZBV, DualPipeV, two chunks):
 * stage s holds virtual stages s and 2P − 1 − s, the first and the last both on
 * stage 0, so 4 there less 2. 0 with one stage. */
uint32_t tsl_pipeline_recv_buffers(uint32_t stage, uint32_t n_stages, uint32_t v, bool vshape);

/* T_v and the in-flight micro-batches under interleaved 1F1B with v chunks per
 * stage; v <= 1 gives tsl_pipeline_time_s / tsl_pipeline_inflight exactly. The
 * count is the closed form for equal chunks and N = P, ⌈(w_s + 1)/v⌉; the planner
 * prices memory chunk by chunk (tsl_pipeline_inflight_chunks). */
double tsl_pipeline_time_interleaved_s(uint32_t n_stages, const double *stage_nosync_s,
                                       const double *stage_sync_s, uint32_t m, uint32_t v);
uint32_t tsl_pipeline_inflight_interleaved(uint32_t stage, uint32_t n_stages, uint32_t m,
                                           uint32_t v);

/*
 * Megatron-LM's interleaved schedule with N micro-batches per group
 * (megatron/core/pipeline_parallel/schedules.py at d98e8a6: get_schedule_table,
 * get_pp_rank_microbatches; --microbatch-group-size-per-virtual-pipeline-stage,
 * default N = P, the depth-first schedule; Llama 3, Sec. 3.3.2, makes N tunable).
 *
 * Every stage runs the same table of m·v forwards: groups of N consecutive
 * micro-batches, each group through chunk 0, then chunk 1, ... chunk v − 1; the
 * last group (the one that reaches m) holds the m − ⌊(m − 1)/N⌋·N left. Backward k
 * runs table entry k's micro-batch on chunk v − 1 − (its chunk). Stage s runs
 *   w_s = min((P − s − 1)·2 + (v − 1)·N, m·v)
 * warm-up forwards, then forward w_s + k, backward k pairs, then the cool-down
 * backwards. For N = P the table is forward k = chunk (k mod P·v)/P of micro-batch
 * (k / P·v)·P + k mod P. N > P holds more in flight (the warm-up grows by v − 1
 * per micro-batch of N) for fewer exposed p2p waits (Llama 3's "more micro-batches
 * to hide point-to-point communication"); Megatron takes N in [P, m] (below).
 *
 * tsl_pipeline_vp_table: forward k's micro-batch and chunk (0 ≤ k < m·v; N 0 or
 * above m: one group of m). tsl_pipeline_vp_warmup: w_s. tsl_pipeline_vp_group:
 * N with 0 read as P.
 */
#define TSL_PIPELINE_MAX_CHUNKS 64u
void tsl_pipeline_vp_table(uint32_t k, uint32_t m, uint32_t v, uint32_t N, uint32_t *micro,
                           uint32_t *chunk);
uint32_t tsl_pipeline_vp_warmup(uint32_t stage, uint32_t n_stages, uint32_t m, uint32_t v,
                                uint32_t N);
uint32_t tsl_pipeline_vp_group(uint32_t n_stages, uint32_t N);

/* The table's entries k = 0, 1, 2, … in order, as the interleaved walks read them
 * (tsl_pipeline_peak_chunks, the event simulator's stages): each the micro-batch and
 * chunk tsl_pipeline_vp_table gives for k, without its divides — a walk steps within a
 * group's chunk, then to its next chunk, then to the next group (the last one of
 * m − last). tsl_pipeline_vp_walk_init as vp_table reads N (0 or above m: m);
 * m ≥ 1, and no more than m·v entries read. */
typedef struct tsl_pipeline_vp_walk {
    uint32_t m, v, N, last; /* last: the last group's first micro-batch */
    uint32_t first, size;   /* the group's first micro-batch and its size */
    uint32_t chunk, i;      /* the next entry's chunk, and its place in the chunk */
} tsl_pipeline_vp_walk_t;

void tsl_pipeline_vp_walk_init(tsl_pipeline_vp_walk_t *w, uint32_t m, uint32_t v, uint32_t N);

static inline void tsl_pipeline_vp_walk_next(tsl_pipeline_vp_walk_t *w, uint32_t *micro,
                                             uint32_t *chunk)
{
    *micro = w->first + w->i;
    *chunk = w->chunk;
    if (++w->i < w->size)
        return;
    w->i = 0;
    if (++w->chunk < w->v)
        return;
    w->chunk = 0;
    w->first += w->N;
    w->size = w->first == w->last ? w->m - w->last : w->N;
}

/*
 * Megatron-LM's EP all-to-all overlap (docs/cost-model.md "EP all-to-all overlap"):
 * what stage s saves per micro-batch when each merged step of a forward and another
 * micro-batch's backward saves save_s (a whole micro-batch's; a chunk's is save_s / v).
 * Of its v·m chunk steps each way the w_s warm-up forwards run alone (interleaved:
 * tsl_pipeline_vp_warmup with group N; one stage: the first forward): save_s ·
 * (v·m − w_s) / (v·m). 0 where Megatron-LM does not run it (P > 1 without
 * interleaving, v 0 or 1) or m < 2.
 */
double tsl_pipeline_ep_overlap_s(uint32_t stage, uint32_t n_stages, uint32_t m, uint32_t v,
                                 uint32_t N, double save_s);

/*
 * Whether Megatron-LM runs N (0: P) for P stages and m micro-batches: 0, or -1
 * where schedules.py (forward_backward_pipelining_with_interleaving) raises —
 * N outside [P, m] ("The number of contiguous micro-batches in a virtual
 * pipeline stage should range in [PP, M]"), or m mod N neither 0 nor at least P
 * (a last group smaller than P: "dependency bubbles"). For N = P: m divisible by
 * P. Below P the order can deadlock: chunk c + 1 of a micro-batch cannot start
 * on stage 0 before chunk c crossed the P stages, and a stage past its warm-up
 * waits for a backward that needs a forward it has not yet run (the dependencies
 * alone, tests/test_pipeline.c: P 4, v 2, m 8 with N 1, 2 or 3). Llama 3's own
 * schedule (Sec. 3.3.2) runs N < P, "fewer micro-batches than the number of
 * stages"; its order is not published, and Tessel does not price it.
 */
int tsl_pipeline_vp_check(uint32_t n_stages, uint32_t m, uint32_t N);

/*
 * The group torch.distributed.pipelining's ScheduleInterleaved1F1B runs for P
 * stages and m micro-batches (torchtitan's Interleaved1F1B; schedules.py at torch
 * 2.6 and since: number_of_rounds = max(1, m // P), microbatches_per_round =
 * m / rounds, the warm-up (v − 1)·N + 2·(P − 1 − rank) as Megatron-LM's with
 * N = microbatches_per_round, forward k on chunk (k / N) mod v): N in the sense
 * above, with 0 where torch raises ("requires the number of microbatches to be a
 * multiple of the number of rounds": m mod rounds not 0). m a multiple of P gives
 * N = P, Megatron-LM's default; m below P gives N = m, which torch runs and
 * tsl_pipeline_vp_check refuses (Tessel does not price it).
 */
uint32_t tsl_pipeline_torch_vp_group(uint32_t n_stages, uint32_t m);

/*
 * The activations interleaved 1F1B holds, chunk by chunk: walks a stage's
 * forwards and backwards in the order above (N micro-batches per group, warmup
 * its warm-up forwards: tsl_pipeline_vp_warmup), adding chunk c's weight
 * chunk_w[c] (its activation bytes per micro-batch; NULL: 1 each) at each of its
 * forwards and taking it off at its backward, and fills held[c] (v entries) with
 * the micro-batches of chunk c live at the first moment the sum peaks. Returns
 * Σ held (chunk micro-batches); 0 for v outside 1..TSL_PIPELINE_MAX_CHUNKS, m or
 * N 0. The peak is a forward's end: a backward only frees. With equal chunks it
 * is the end of the warm-up, w_s + 1 chunk micro-batches (at most m·v): P 4, v 2,
 * N 4, m 8 holds 11, 9, 7, 5 (as 7 + 4, 5 + 4, 4 + 3, 4 + 1 of chunks 0 and 1).
 * Chunks of unequal size shift it: the first stage of Llama 3 405B (P 16, v 8,
 * m 32; chunk 0 the embedding alone, chunks 1–7 a layer each) holds 31
 * micro-batches of chunk 0 and 16 of each layer chunk — 112 layer-micro-batches,
 * where the closed form's ⌈143/8⌉ = 18 stages' worth is 144. O(m·v), no
 * allocation.
 */
uint32_t tsl_pipeline_inflight_chunks(uint32_t m, uint32_t v, uint32_t N, uint32_t warmup,
                                      const double *chunk_w, uint32_t *held);

/*
 * The same walk with the gradients' lifetime (tsl_cost_knobs_t.lazy_grads): chunk
 * c's gradients, grad_w[c] bytes, come at its first backward and stay to the step,
 * so a backward's start (its stash still held, its chunk's gradients new) may be
 * the peak too. Fills held[c] and live[c] (1: chunk c's gradients exist then) at
 * the first moment stash + gradients peak; grad_w NULL: the gradients counted from
 * the start, held as tsl_pipeline_inflight_chunks and every live[c] 1. Llama 3
 * 405B's second stage at m 16 (P 16, v 8, N 16, a layer a chunk; 532.68 MB of stash
 * and 1.594 GB of fp32 gradients per chunk): all 128 forwards precede its first
 * backward, which adds chunk 7's gradients: held 16 of each, live only chunk 7. At
 * m 32 its 113th backward, chunk 0's first, comes with 141 held: every chunk live.
 * Returns Σ held; 0 as tsl_pipeline_inflight_chunks.
 */
uint32_t tsl_pipeline_peak_chunks(uint32_t m, uint32_t v, uint32_t N, uint32_t warmup,
                                  const double *chunk_w, const double *grad_w, uint32_t *held,
                                  uint8_t *live);

/*
 * The layers of each of a stage's v chunks, first to last (count[0 .. v)), as
 * Megatron-LM cuts them: the stage's Transformer layers (those of its n_layers
 * but the model's embedding, emb, and head, head) evenly over the chunks, the
 * embedding joining the first and the head the last
 * (--num-layers-per-virtual-pipeline-stage); where they do not divide, the
 * embedding and the head each count as a layer of their own
 * (--account-for-embedding/loss-in-pipeline-split: Llama 3's first chunk, only the
 * embedding), earlier chunks one more where that is uneven still. mtp: MTP layers
 * among the n_layers, just before the head (mtp.h), which all join the last chunk
 * outside that split (Megatron-LM's --num-layers leaves them out and
 * MultiTokenPredictionBlock asserts the last virtual stage). v ≤ 1: count[0] =
 * n_layers.
 */
void tsl_pipeline_chunk_layers(uint32_t n_layers, bool emb, bool head, uint32_t mtp, uint32_t v,
                               uint32_t *count);

/* Whether tsl_pipeline_chunk_layers cuts the stage into v chunks of one size: its
 * Transformer layers divide by v (the embedding and the head riding along), or,
 * with ends true, they do with the embedding and the head counted as a layer each
 * (Megatron-LM's --account-for-embedding/loss-in-pipeline-split). The MTP layers,
 * outside the split, do not count. The chunks then take turns as the equal virtual
 * stages that T_v's bubble / v assumes (Llama 3's embedding-only first chunk aside,
 * a sliver). v ≤ 1: true. */
bool tsl_pipeline_chunks_even(uint32_t n_layers, bool emb, bool head, uint32_t mtp, uint32_t v,
                              bool ends);

/* Megatron-LM's block recompute (--recompute-method block, --recompute-num-layers
 * N; transformer_block.py _checkpointed_forward): the first N Transformer layers
 * of every model chunk, all of a shorter one. Of a stage cut as
 * tsl_pipeline_chunk_layers cuts it: Σ_c min(N, the Transformer layers of chunk c)
 * — the embedding, the head and the MTP layers are none. A stage of Qwen3-235B at
 * PP 32 with the embedding counted (3 chunks: the embedding, a layer, a layer)
 * recomputes 2 at N 1; a middle stage 3. */
uint32_t tsl_pipeline_chunk_ckpt(uint32_t n_layers, bool emb, bool head, uint32_t mtp, uint32_t v,
                                 uint32_t N);

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
 * STACK (Megatron-LM's schedules.py): K_i = C_nosync(i) − p2p_i/2 + p2p_{i−1}/2 for
 * plain 1F1B, whose batched isend/irecv block the stage (overlap_p2p_comm is refused
 * there), each exchange both directions of one boundary at once: one hop of each of
 * the stage's boundaries (cost model 161; before it p2p_i, both hops of its own, so
 * a stage beside a slower boundary, or the last stage, differed from the event
 * simulator's blocking sends; p2p_{−1} = 0); under
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
    bool p2p_blocking; /* interleaved STACK: every hop blocks its stage, none hidden in the
                          steady state (tsl_cost_vp_blocking: Megatron-LM before core,
                          knobs.legacy_p2p; torch.distributed.pipelining); K_i
                          holds one hop of each boundary as plain 1F1B's, stage 0's
                          incoming one the wrap (p2p_{P−1}) */
    bool p2p_both;     /* plain 1F1B STACK: each boundary's exchange held by both of its
                          stages, the receiver's stage time too (DeepSpeed's engine:
                          blocking one-way transfers in instruction order,
                          tsl_cost_p2p_rendezvous: knobs.ds_pipe_engine, ds_pipe_p2p):
                          K_i = C_nosync(i) + p2p_{i−1} in the steady state, the fill
                          and drain Σ_i C_nosync(i): T0 = (m − 1) · max_i K_i +
                          Σ_i C_nosync(i) */
} tsl_pipeline_in_t;

typedef struct tsl_pipeline_out {
    double flush_s;    /* the pipeline's end, every stage's gradient sync included */
    double opt_tail_s; /* what the steps (and a tied head's all-reduce) add after it */
} tsl_pipeline_out_t;

/* Fills out; zeros for no stages or no micro-batches. O(P), no allocation. */
void tsl_pipeline_iter(const tsl_pipeline_in_t *in, tsl_pipeline_out_t *out);

/*
 * Megatron-core's per-chunk gradient reduce under interleaving (docs/cost-model.md
 * "Where the iteration ends"): what of stage `stage`'s DP reduce, rs_s seconds as one
 * collective (plan.h tsl_plan_stage_t.dp_rs_s), follows the stage's last backward.
 * With overlap_grad_reduce and align_grad_reduce (Megatron-LM's default) every
 * backward runs under no_sync; the schedule calls chunk c's start_grad_sync, which
 * launches the chunk's whole reduce (1/v of the stage's), p − stage virtual
 * micro-batches after that chunk's last backward (schedules.py
 * backward_step_helper_postprocess), and the chunks still unlaunched after the
 * stage's last backward ("Launch any remaining grad reductions"). Under Megatron's
 * group N = p, chunk c's last backward is the stage's (c·p + 1)-th from its end, so
 * chunk c launches c·p − stage backwards before the end (c ≥ 1; chunk 0 at it) and the
 * reduces queue on the DP communicator, one after another:
 *   exposed = max_{0 ≤ c < v} ((c + 1)·rs/v − (c·p − stage)⁺ · chunk_bwd_s)
 * chunk_bwd_s: one chunk's backward of one micro-batch (the stage's over v). The
 * drain's waits between those backwards only lengthen the window (so this is at most
 * what runs); the reduce's contention with the backwards it runs beside is
 * tsl_pipeline_chunk_rs_cost_s's. rs_s/v at least; 0 for rs_s ≤ 0, v ≤ 1 is the whole
 * rs_s.
 */
double tsl_pipeline_chunk_rs_s(double rs_s, double chunk_bwd_s, uint32_t stage, uint32_t n_stages,
                               uint32_t v);

/*
 * What the per-chunk reduce above adds to stage `stage`'s time, its contention with
 * the backwards it runs beside included (cost model 157): the part that follows the
 * stage's last backward (tsl_pipeline_chunk_rs_s, E) and, for the rest, rs_s − E,
 * which ran on the DP communicator's stream while the drain's chunk backwards ran on
 * the compute stream, the overlap slowdown k ≥ 1 every overlapped collective pays
 * (cost.c tsl_cost_overlap_s: max(c, m) + (k − 1)·min(c, m), the backwards c ≥ the
 * reduce m beside them by the construction of E):
 *   cost = E + (k − 1) · (rs_s − E)
 * The bucketed reduce under the last backward that this replaces paid it there
 * (tsl_layer_cost_t dp_rs_sync_s); plain 1F1B (v ≤ 1) runs it all after the
 * backward, beside nothing: rs_s. k < 1 counts as 1. 0 for rs_s ≤ 0.
 */
double tsl_pipeline_chunk_rs_cost_s(double rs_s, double chunk_bwd_s, uint32_t stage,
                                    uint32_t n_stages, uint32_t v, double k);

/* Eq. 6 over n values (time or memory); 0 for n ≤ 1 or a zero sum. */
double tsl_pipeline_balance(uint32_t n, const double *values);

#endif
