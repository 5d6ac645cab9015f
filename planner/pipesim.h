/*
 * pipesim.h — the 1F1B event simulator (AutoPipe III-B-1): iteration time, per-stage
 * busy time, startup overhead, the critical path and the master stage of a
 * synchronous 1F1B-flush pipeline of P stages running m micro-batches.
 *
 * Schedule. Stage s (0-based) runs w_s = min(P − 1 − s, m) warmup forwards, then
 * m − w_s steady pairs (forward of micro-batch w_s + i, backward of i), then w_s
 * cooldown backwards — Megatron-LM / PipeDream-flush 1F1B. The op order on each
 * stage is fixed; an op starts when the previous op on its stage has ended and its
 * cross-stage input has arrived:
 *
 *   F(s, j)  after  F(s − 1, j) + p2p(s − 1)            (activation from the left)
 *   B(s, j)  after  B(s + 1, j) + p2p(s)                (gradient from the right)
 *   B(P − 1, j) after F(P − 1, j)                        (same stage, by the order)
 *
 * Communication is a latency on the edge: it delays the receiver's op but keeps
 * neither stage busy (sends are asynchronous, buffers unbounded). The same p2p
 * time is used in both directions (AutoPipe: bidirectional ≈ unidirectional).
 * With zero p2p and equal stage times t the result is (m + P − 1)·t exactly.
 *
 * Sliced micro-batches (AutoPipe Slicer, Alg. 2): the forwards of the first
 * n_sliced micro-batches run as two halves, each taking slice_fwd_frac of the
 * forward time and sending slice_p2p_frac of the p2p time; half 2 follows half 1
 * on the same stage. The backward of a sliced micro-batch stays one op.
 *
 * Interleaved 1F1B (Narayanan et al. 2021, "Efficient Large-Scale Language Model
 * Training on GPU Clusters Using Megatron-LM", Sec. 2.2): with n_chunks = v > 1
 * each stage holds v model chunks (virtual stages q = chunk·P + s), a chunk's op
 * taking 1/v of the stage's time. Stage s runs Megatron's schedule with N =
 * vp_group micro-batches per group (0: N = P; pipeline.h tsl_pipeline_vp_table):
 * forward k (0 ≤ k < m·v) is the table's entry k — for N = P chunk (k mod P·v) / P
 * of micro-batch (k / P·v)·P + k mod P —, backward k the same micro-batch of chunk
 * v − 1 − (its chunk); min((P − s − 1)·2 + (v − 1)·N, m·v) warmup forwards, then
 * F/B pairs, then the cooldown backwards. N < P: chunk c + 1 of a micro-batch
 * waits for chunk c's pass over the P stages (the bubbles Megatron-LM refuses N
 * < P for; Llama 3 runs them). F(q, j) waits for F(q − 1, j), B(q, j) for B(q + 1, j)
 * (the last virtual stage: its own forward); the hop from the last stage back to
 * the first takes p2p_s[P − 2]. Each chunk's last backward carries 1/v of the
 * gradient synchronisation. Requires no slicing, and m divisible by P where N is
 * P by default (vp_group 0). The bubble is
 * divided by v; with zero p2p and equal stage times t the result is
 * m·t + (P − 1)·t / v.
 *
 * Zero-bubble schedules (Qi et al. 2024, "Zero Bubble Pipeline Parallelism", ICLR
 * 2024, Sec. 2 and 6): the backward splits into B (the input gradient, sent to the
 * previous stage) and W (the weight gradient, wgrad_s[s], no cross-stage output),
 * so a stage's B chain never waits for its W. W(j) follows B(j) on its stage.
 *
 *   ZB-H1: stage s runs w_s = min(P − 1 − s, m) warmup forwards, then F/B pairs;
 *   its W's run d_s = min(s, m) behind its B's (a W after each B once d_s are
 *   pending), the rest after the last B. Every stage holds at most P micro-batches
 *   begun and not yet through W — stage 0's 1F1B peak. Equal stages, no p2p:
 *   T = m·(F + B + W) + (P − 1)·(F + B − W), the paper's bubble (p − 1)(T_F + T_B −
 *   T_W) (DeepSeek-V3's table writes it (PP − 1)(F + B − 2W) with B the whole
 *   backward).
 *   ZBV: stage s holds chunk 0 (virtual stage s) and chunk 1 (virtual stage
 *   2P − 1 − s), each 1/2 of its times; the micro-batch runs down the chunk 0s and
 *   back up the chunk 1s (the turn at stage P − 1 and the loss at stage 0 are local).
 *   Uneven chunks (c1_fwd_s, c1_bwd_s, c1_wgrad_s: a V's rank 0 runs the embedding in
 *   chunk 0 and the head with its loss in chunk 1, docs/cost-model.md "Where a V runs
 *   its ends"): each chunk its own F, B and W; the sync's extra (bwd_sync_s) and
 *   DualPipeV's save stay half each.
 *   Op order: torch.distributed.pipelining's ScheduleZBVZeroBubble (warmup 2(P − s) − 1
 *   chunk-0 forwards, s pairs F1 F0, P − s triples F1 B1 W1, steady F0 B0 W0 F1 B1 W1,
 *   cooldown s pairs B0 B1, P − s pairs B0 W0, then the W's left), computed for
 *   max(m, 2P − 1) micro-batches and the ones past m dropped. Each stage holds at
 *   most 2P chunk micro-batches, P whole ones — 1F1B's stage 0. Equal stages, no p2p,
 *   F = B = W: T = m·(F + B + W) + (P − 1)·(F + B − 2W)/2... (tests/test_pipesim.c).
 *   DualPipeV (DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", Sec. 3.2.1; the
 *   "cut-in-half" V of deepseek-ai/DualPipe dualpipev.py, torch.distributed.pipelining's
 *   ScheduleDualPipeV): ZBV's chunks and V, needs m >= 2P. Stage s runs
 *   1. 2(P − 1 − s) F0;  2. s + 1 pairs F0 F1;  3. P − 1 − s triples B1 W F1 (B split);
 *   4. m − 2P + s + 1 pairs of overlapped steps F0&B1, F1&B0 (the last stage's first
 *   F0&B1 runs as F0 then B1);  5. P − 1 − s pairs B1, F1&B0;  6. s + 1 pairs B1 B0
 *   (split from the middle one on: s even its B0, s odd its B1);  7. P − 1 − s pairs
 *   W B0 (split);  8. s + 1 W. A W runs the oldest pending split B's weight gradient
 *   (FIFO); a B not split is the whole backward (W inside). An overlapped step F&B
 *   runs one chunk's forward and another micro-batch's whole backward together: it
 *   starts once both inputs have arrived, takes F + B − save with save =
 *   fb_save_s[s] / 2 (at most min(F, B); fb_save_s NULL: none, F&B = F + B) and sends
 *   both outputs at its end. It is two ops, F (fused 1) then B (fused 2), sharing
 *   the step in proportion to F and B. Each stage holds at most 2P + 1 chunk
 *   micro-batches (DeepSeek's PP + 1 with PP = 2P). Equal stages, no p2p, no save:
 *   T = m·(F + B + W) + (P − 1)·(F/2 + B/2 − W)... see tests/test_pipesim.c.
 * Gradient sync (sync_tail_s, bwd_sync_s) follows a stage's last W.
 *
 * Critical path. Every op records the dependency that bound its start (the
 * previous op on its stage, or its cross-stage input). Walking these back from the
 * op that ends last gives a dependency chain whose op times plus edge latencies
 * sum to the iteration time. When both dependencies are ready at the same time
 * (within 1e-10 of the total work) the one on the higher stage wins: among the
 * longest paths AutoPipe takes the one closest to the last stage.
 *
 * Master stage (AutoPipe: the stage the critical path passes in the 1F1B phase,
 * the one that "drives succeeding stages through FP and preceding stages through
 * BP"): the stage on which the critical path spends the most time running ops
 * back to back, i.e. ops whose binding dependency is the previous op on the same
 * stage. Ops the path reaches from a neighbour (the first micro-batch's forward
 * chain, the last one's backward chain) do not count. Ties go to the higher
 * stage. Balanced pipelines have the last stage as master; an imbalanced one with
 * a steady phase (m >= 2P or so), its slowest stage. With m close to P the fill
 * and drain dominate, and the path may run along the last stage instead.
 *
 * Optimizer step (opt_s): stage s steps once its own last op has ended, so the
 * iteration is max(flush, max_s(end of stage s's last op + opt_s[s])) — in 1F1B
 * stage 0's last backward ends last, later stages step while it drains. The
 * critical path stops at the last op: the step is a tail after it. A tied head's
 * all-reduce (tie_s) starts when stages 0 and P − 1 (tie_stage, where given: a V's
 * MTP depth on another rank) have both ended their last op; their steps start when
 * it ends.
 *
 * Gradient sync as the stacks run it (sync_tail_s): stage s's exposed sync follows
 * its own last op; then come the tied all-reduce (stages 0 and P − 1, from the later
 * of their syncs' ends) and its step.
 *
 * Blocking p2p (p2p_blocking, Megatron's plain 1F1B): with equal stages f + b, every
 * boundary c, the steady period of an inner stage is f + b + 2c, of the end stages
 * f + b + c; the first forward and the last backward each cross P − 1 boundaries.
 * Interleaved (Megatron-LM before core, and torch.distributed.pipelining's
 * ScheduleInterleaved1F1B, which wait on every exchange): each chunk's
 * op holds its stage for its send to the next (forward) or previous (backward)
 * virtual stage, so with v chunks a stage sends 2v hops a micro-batch, the first
 * and last stages 2v − 1 (the model's ends send nothing on).
 *
 * Rendezvous p2p (p2p_rendezvous, DeepSpeed's PipelineEngine as AMP's fork runs it,
 * cost.h knobs.ds_pipe_p2p): every send and receive is a blocking broadcast on the
 * pair's two-rank group, so a transfer starts when both stages have reached it and
 * holds both for its p2p_s. Each stage runs DeepSpeed's TrainSchedule (deepspeed/
 * runtime/pipe/schedule.py): 2(m + P − 1) steps, F(j) at step 2j + s, B(i) at step
 * 2i + 2P − s − 1 (the 1F1B order above), a forward step receiving the activation
 * from s − 1 and sending it the gradient of micro-batch j + s − P, a backward step
 * sending s + 1 the activation of i + P − s − 1 and receiving the gradient — one
 * exchange op (TSL_PIPESIM_P2P) of each step's one or two transfers, on both
 * stages, before the step's compute; warmup and cooldown steps without a
 * micro-batch run their exchange only. A compute op waits for its stage only. The
 * steady period of an inner stage is f + b + 2c_{s−1} + 2c_s, as the analytic K_i
 * = C_nosync(i) + p2p_{i−1} (pipeline.h); the fill and the drain cross each
 * boundary once each way. Busy and critical-path compute times leave the exchanges
 * out (crit_p2p_s holds the path's).
 *
 * Startup overhead: the time at which the last stage starts its first forward.
 *
 * Memory. The simulator never allocates: the caller passes a workspace of at least
 * tsl_pipesim_ws_bytes(P, m, n_sliced) bytes (interleaved: tsl_pipesim_ws_bytes(P,
 * m·v, 0)) (malloc'd memory or anything aligned
 * for double), reusable across calls. The critical path lives in that workspace
 * and stays valid until the workspace is reused or freed.
 *
 * Units: seconds. Pure, deterministic, thread-safe (one workspace per thread).
 */
#ifndef TSL_PIPESIM_H
#define TSL_PIPESIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define TSL_PIPESIM_MAX_STAGES 64u
/* m·v (micro-batches × model chunks) at most: a workspace is sized by the run's own
 * m·v (about 120 bytes per op, 2·m·v ops per stage; 64 stages × 8192 ≈ 130 MB), so
 * the cap only bounds what one call may ask. The search weighs schedules that need
 * the simulator only up to TSL_SEARCH_SIM_MAX_MICRO (search_engine.h). */
#define TSL_PIPESIM_MAX_MICRO 8192u

typedef enum tsl_pipesim_op {
    TSL_PIPESIM_FWD = 0,
    TSL_PIPESIM_BWD = 1, /* the whole backward; under ZB-H1 / ZBV its input-gradient part B */
    TSL_PIPESIM_WGT = 2, /* ZB-H1 / ZBV: the weight-gradient part W */
    TSL_PIPESIM_P2P = 3, /* p2p_rendezvous: one step's exchange with a neighbour, both
                            stages in it (half: 1 the activation, 2 the gradient, 3 both) */
} tsl_pipesim_op_t;

/* The schedule (docs/cost-model.md "Zero-bubble schedules"). */
typedef enum tsl_pipesim_sched {
    TSL_PIPESIM_SCHED_1F1B = 0,      /* 1F1B, interleaved with n_chunks > 1 */
    TSL_PIPESIM_SCHED_ZBH1 = 1,      /* Qi et al. 2024 ZB-H1 */
    TSL_PIPESIM_SCHED_ZBV = 2,       /* Qi et al. 2024 ZB-V: 2 chunks per stage in a V */
    TSL_PIPESIM_SCHED_DUALPIPEV = 3, /* DeepSeek-V3 DualPipeV: ZBV's V, overlapped F&B */
} tsl_pipesim_sched_t;

typedef struct tsl_pipesim_in {
    uint32_t n_stages;         /* P, 1..TSL_PIPESIM_MAX_STAGES */
    uint32_t n_micro;          /* m, 1..TSL_PIPESIM_MAX_MICRO */
    const double *fwd_s;       /* [P] forward time of one micro-batch on each stage */
    const double *bwd_s;       /* [P] backward time of one micro-batch */
    const double *bwd_sync_s;  /* [P] or NULL: backward of the last micro-batch, which
                                 also synchronises gradients (Eq. 9's C_sync) */
    const double *p2p_s;       /* [P − 1] or NULL (no communication): one micro-batch's
                                 boundary between stage s and s + 1, either direction */
    uint32_t n_sliced;         /* forwards of micro-batches 0 .. n_sliced − 1 run in halves */
    double slice_fwd_frac;     /* a half's forward time / the whole's; 0 means 0.5 */
    double slice_p2p_frac;     /* a half's p2p time / the whole's; 0 means 0.5 */
    uint32_t n_chunks;         /* v model chunks per stage (interleaved 1F1B); 0 or 1: plain */
    const double *opt_s;       /* [P] or NULL: each stage's optimizer step, run once after
                                 its last op (cost.h); the iteration ends when the last
                                 stage's step does */
    double tie_s;              /* a tied LM head's gradient all-reduce between stage 0 and
                                 stage P − 1 (cost.h): after both's last op, before
                                 either's step; 0 (or P = 1): none */
    uint32_t tie_stage;        /* the stage whose copy tie_s sums with stage 0's: 0 means
                                  P − 1 (a tied head on the last stage); a V's MTP depth
                                  on rank 1 names 1 (cost model 118), 1 .. P − 1 */
    const double *sync_tail_s; /* [P] or NULL: each stage's exposed gradient sync, run
                                  after its own last op and before its step (and the tied
                                  all-reduce) while the other stages go on — the stacks'
                                  sync (cost mode STACK; pass bwd_sync_s NULL then) */
    uint8_t p2p_blocking;      /* 1F1B, plain or interleaved: a send holds its stage
                                  (Megatron's batched isend/irecv, waited on before the
                                  next op; interleaved, Megatron-LM before core and
                                  torch.distributed.pipelining: cost.h
                                  tsl_cost_vp_blocking): an
                                  op's duration includes sending its output — F(s) the
                                  activation to s + 1, B(s) the gradient to s − 1; an
                                  interleaved chunk's to the next / previous virtual
                                  stage, the wrap between the last stage and the first
                                  at p2p_s[P − 2] — and the edge has no further
                                  latency. 0: AutoPipe's asynchronous sends (a latency
                                  on the edge) */
    uint8_t p2p_rendezvous;    /* plain 1F1B only, not with p2p_blocking or slicing:
                                  every transfer a blocking broadcast both stages sit in,
                                  in DeepSpeed's TrainSchedule order (see above); 0: as
                                  p2p_blocking says */
    uint8_t schedule;          /* tsl_pipesim_sched_t; ZB-H1 / ZBV: no slicing, no
                                  blocking sends, n_chunks 0 or 1 (ZBV implies 2) */
    const double *wgrad_s;     /* [P] or NULL: the weight-gradient part W of bwd_s (ZB
                                  schedules; NULL: half of it). B = bwd_s − W */
    uint32_t vp_group;         /* interleaved: micro-batches per group N of Megatron-LM's
                                  schedule table (pipeline.h tsl_pipeline_vp_table), 1..m;
                                  0: P (Megatron's default, m divisible by P) */
    const double *fb_save_s;   /* [P] or NULL (none): DualPipeV, what overlapping one
                                  micro-batch's forward with another's backward saves on
                                  stage s against running them one after the other
                                  (tsl_pipesim_fb_save_s); each chunk's step saves half */
    const double *c1_fwd_s;    /* [P] or NULL: ZBV / DualPipeV, the part of fwd_s that
                                  chunk 1 (virtual stage 2P − 1 − s) runs, chunk 0 the
                                  rest; NULL: half each. Given with c1_bwd_s */
    const double *c1_bwd_s;    /* [P] or NULL: the same of bwd_s (B and W together) */
    const double *c1_wgrad_s;  /* [P] or NULL: the same of wgrad_s, within c1_bwd_s;
                                  NULL: chunk 1's backward split as the stage's is */
} tsl_pipesim_in_t;

/* One op of the critical path. */
typedef struct tsl_pipesim_step {
    uint32_t stage;
    uint32_t micro;
    uint8_t op;     /* tsl_pipesim_op_t */
    uint8_t half;   /* 0: whole op; 1, 2: halves of a sliced forward */
    uint8_t steady; /* 1 when the op belongs to its stage's steady 1F1B phase */
    uint8_t chunk;  /* model chunk of the stage (interleaved 1F1B; 0 otherwise) */
    uint8_t fused;  /* DualPipeV: 1 the forward, 2 the backward of an overlapped F&B step */
    double start_s;
    double end_s;
    double p2p_before_s; /* edge latency between the previous step and this one (0 on
                            the same stage) */
} tsl_pipesim_step_t;

typedef struct tsl_pipesim_out {
    double iter_s;    /* end of the last op, or of the last optimizer step when later */
    double flush_s;   /* end of the last op (the pipeline flush) */
    double startup_s; /* start of the last stage's first forward */
    uint32_t master_stage;
    double busy_s[TSL_PIPESIM_MAX_STAGES];        /* compute time of each stage */
    double crit_s[TSL_PIPESIM_MAX_STAGES];        /* critical-path compute time per stage */
    double crit_steady_s[TSL_PIPESIM_MAX_STAGES]; /* ... of which in steady-state ops */
    double crit_chain_s[TSL_PIPESIM_MAX_STAGES];  /* ... of which back to back on the stage
                                                     (what elects the master) */
    double crit_p2p_s;                            /* critical-path edge latencies */
    uint32_t n_ops;                               /* ops simulated */
    uint32_t path_len;
    const tsl_pipesim_step_t *path; /* first op first; inside the workspace */
} tsl_pipesim_out_t;

/* Workspace bytes for P stages, m micro-batches, n_sliced sliced ones; 0 when a
 * count is out of range. */
size_t tsl_pipesim_ws_bytes(uint32_t n_stages, uint32_t n_micro, uint32_t n_sliced);

/* Workspace bytes and ops for in as given, any schedule (ZB schedules run 3 ops per
 * micro-batch and chunk); 0 when a count is out of range. */
size_t tsl_pipesim_in_ws_bytes(const tsl_pipesim_in_t *in);
uint32_t tsl_pipesim_n_ops(const tsl_pipesim_in_t *in);

/* The schedule's name ("1F1B", "interleaved", "zbh1", "zbv", "dualpipev") and back
 * (-1: unknown); its model chunks per stage (2 for ZBV and DualPipeV). */
const char *tsl_pipesim_sched_name(uint32_t sched, uint32_t n_chunks);
int tsl_pipesim_sched_parse(const char *name);
uint32_t tsl_pipesim_sched_chunks(uint32_t sched, uint32_t n_chunks);
/* Whether the schedule runs each rank's two chunks in a V (ZBV, DualPipeV): rank s
 * holds virtual stages s and 2P − 1 − s. */
bool tsl_pipesim_sched_is_v(uint32_t sched);

/*
 * DualPipeV's overlap (DeepSeek-V3 Sec. 3.2.1, Fig. 4): one micro-batch's forward
 * f_s and another's backward b_s on the same stage, of which comm_s (both together)
 * is communication a partner's compute can hide. Overlapped they take
 * min(f + b, max(C, A) + (k − 1)·min(C, A)) with C = f + b − A the compute, A =
 * comm_s and k ≥ 1 the cluster's overlap_slowdown (cost.h tsl_cost_overlap_s);
 * returns f + b less that, >= 0. Without communication (A = 0) nothing is saved:
 * F&B = F + B and DualPipeV gains by its bubble only.
 */
double tsl_pipesim_fb_save_s(double f_s, double b_s, double comm_s, double k);

/* The SMs DeepEP's normal (high-throughput) dispatch and combine kernels hold while
 * they run: deep_ep/buffer.py Buffer.num_sms = 20 (deepseek-ai/DeepEP at 82dcf48,
 * 2025-03-14), the 20 SMs of the DeepSeek-V3 report's Sec. 3.2.2 ("only 20 SMs are
 * sufficient to fully utilize the bandwidths of IB and NVLink"), and the grid of
 * 20 blocks every internode dispatch and combine kernel runs on in DeepSeek's
 * DualPipe training trace (deepseek-ai/profile-data train.json). */
#define TSL_PIPESIM_DEEPEP_SMS 20.0

/*
 * The k of tsl_pipesim_fb_save_s for an F&B step whose comm_s holds flex_s of
 * DeepEP's all-to-alls (a flex dispatcher's, DeepSeek's own kernels): those run
 * on flex_sms of the GPU's sms SMs, so the partner's kernels lose that share of
 * the GPU while they run (a slowdown of 1 + flex_sms / sms, as cost model 37's
 * userbuffers kernels), the rest of comm_s (NCCL's) the cluster's k. Returns the
 * comm-weighted mean 1 + (f·min(flex_s, comm_s) + (k − 1)·rest) / comm_s, f =
 * flex_sms / sms; k itself without flex time, comm or an SM figure (sms <=
 * flex_sms, e.g. 0: unknown), so such a step prices as before cost model 153.
 */
double tsl_pipesim_fb_k(double comm_s, double flex_s, double k, double sms, double flex_sms);

/* Simulates one iteration. Returns -1 with err naming the field (counts out of
 * range, missing or negative/non-finite times, workspace too small). */
int tsl_pipesim_run(const tsl_pipesim_in_t *in, void *ws, size_t ws_bytes, tsl_pipesim_out_t *out,
                    tsl_err_t *err);

/* One simulated op, for timelines (tsl_pipesim_events). */
typedef struct tsl_pipesim_event {
    uint32_t stage;
    uint32_t micro;
    uint8_t op;    /* tsl_pipesim_op_t */
    uint8_t half;  /* 0: whole op; 1, 2: halves of a sliced forward */
    uint8_t chunk; /* model chunk of the stage (interleaved 1F1B; 0 otherwise) */
    uint8_t fused; /* DualPipeV: 1 the forward, 2 the backward of an overlapped F&B step
                      (the step runs from the forward's start to the backward's end) */
    uint8_t whole; /* DualPipeV: a backward not split, its W inside */
    double start_s;
    double end_s;
    double p2p_s;  /* latency of its cross-stage input; 0 when it has none */
    double sent_s; /* when that input left the neighbour (the end of the op that
                        produced it); it arrived at sent_s + p2p_s <= start_s */
    uint32_t peer; /* TSL_PIPESIM_P2P: the other stage of the exchange (its own copy
                      there runs start_s .. end_s too); else the op's stage */
} tsl_pipesim_event_t;

/*
 * Every op of the run that the last successful tsl_pipesim_run(in, ws, ...) left
 * in ws, stage by stage and, on each stage, in the order it ran them (so start_s
 * never decreases within a stage), into ev[0 .. cap). Returns the count (the
 * run's n_ops), or -1 with err when cap is too small or in is out of range. Reads
 * the workspace only: call it before the workspace is reused. Optional: the
 * simulator itself records nothing extra. Interleaved (n_chunks = v > 1): 2·m·v
 * ops per stage, each naming its chunk.
 */
int tsl_pipesim_events(const tsl_pipesim_in_t *in, const void *ws, tsl_pipesim_event_t *ev,
                       size_t cap, tsl_err_t *err);

/* Number of warmup forwards of stage s under 1F1B: min(P − 1 − s, m). */
uint32_t tsl_pipesim_warmup(uint32_t stage, uint32_t n_stages, uint32_t n_micro);

#endif
