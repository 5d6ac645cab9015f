/*
 * pipesim.c — 1F1B event simulator with critical path and master stage
 * (AutoPipe III-B-1). See pipesim.h for the schedule, the dependency rules, the
 * tie-breaking and the workspace contract.
 *
 * Method. Each stage's op sequence is fixed by 1F1B, so the simulation is a
 * longest-path computation over a DAG whose edges are "previous op on the same
 * stage" and "cross-stage input". Stages are swept alternately left-to-right and
 * right-to-left; each sweep advances a stage as far as its ops' inputs are known
 * (forwards cascade on the left-to-right sweep, backwards on the other). 1F1B is
 * deadlock-free, so a sweep without progress is an internal error.
 */
#include "pipesim.h"

#include <math.h>
#include <stdalign.h>
#include <stdbool.h>
#include <string.h>

#include "pipeline.h"
#include "minmax.h" /* the ops' times: sums of durations >= 0 or +INFINITY, never NaN */

typedef struct sim_op {
    double start_s;
    double end_s;
    double dur_s;
    double p2p_s;      /* latency on the cross-stage edge into this op */
    int32_t dep_stage; /* cross-stage input, -1 for none */
    uint32_t dep_idx;
    int32_t dep2_stage; /* DualPipeV's F&B: the backward's input too, -1 for none */
    uint32_t dep2_idx;
    double p2p2_s;
    int32_t pred_stage; /* the dependency that bound the start, -1 for none */
    uint32_t pred_idx;
    uint32_t micro;
    uint8_t op;
    uint8_t half;
    uint8_t steady;
    uint8_t chunk;
    uint8_t fused; /* 1, 2: forward, backward of an overlapped F&B step */
    uint8_t whole; /* DualPipeV: a backward not split */
    int32_t peer;  /* a rendezvous exchange (TSL_PIPESIM_P2P): the other stage */
} sim_op_t;

/* An unused slot (DualPipeV splits only some backwards: fewer W's than slots). */
#define OP_NONE 0xFFu

#define WS_ALIGN 16u

static size_t align_up(size_t x)
{
    return (x + WS_ALIGN - 1) / WS_ALIGN * WS_ALIGN;
}

static uint32_t ops_per_stage(uint32_t m, uint32_t n_sliced)
{
    return 2u * m + n_sliced;
}

static bool zero_bubble(const tsl_pipesim_in_t *in)
{
    return in->schedule == TSL_PIPESIM_SCHED_ZBH1 || in->schedule == TSL_PIPESIM_SCHED_ZBV ||
           in->schedule == TSL_PIPESIM_SCHED_DUALPIPEV;
}

bool tsl_pipesim_sched_is_v(uint32_t sched)
{
    return sched == TSL_PIPESIM_SCHED_ZBV || sched == TSL_PIPESIM_SCHED_DUALPIPEV;
}

uint32_t tsl_pipesim_sched_chunks(uint32_t sched, uint32_t n_chunks)
{
    if (tsl_pipesim_sched_is_v(sched))
        return 2;
    if (sched != TSL_PIPESIM_SCHED_1F1B)
        return 1;
    return n_chunks > 1 ? n_chunks : 1;
}

static uint32_t chunks(const tsl_pipesim_in_t *in)
{
    return tsl_pipesim_sched_chunks(in->schedule, in->n_chunks);
}

double tsl_pipesim_fb_save_s(double f_s, double b_s, double comm_s, double k)
{
    double all = f_s + b_s, a = fmin(fmax(comm_s, 0.0), all), c = all - a;
    double fb = fmax(c, a) + (fmax(k, 1.0) - 1.0) * fmin(c, a);
    return fb < all ? all - fb : 0.0;
}

double tsl_pipesim_fb_k(double comm_s, double flex_s, double k, double sms, double flex_sms)
{
    if (!(comm_s > 0) || !(flex_s > 0) || !(flex_sms > 0) || !(sms > flex_sms))
        return k;
    double a = fmin(flex_s, comm_s), rest = comm_s - a;
    return 1.0 + (flex_sms / sms * a + (fmax(k, 1.0) - 1.0) * rest) / comm_s;
}

/* DualPipeV's W's on stage s: every split B's, 2(P − 1 − s) + s + 1. */
static uint32_t dualpipev_w(uint32_t P, uint32_t s)
{
    return 2 * P - s - 1;
}

/* Ops per stage: F and B (3 with W under ZB) per micro-batch and chunk, and a
 * sliced forward's second half. */
static uint32_t stride_of(const tsl_pipesim_in_t *in)
{
    uint32_t mv = in->n_micro * chunks(in);
    if (in->p2p_rendezvous) /* F, B and at most 2m exchanges with each neighbour */
        return 6u * mv;
    return zero_bubble(in) ? 3u * mv : ops_per_stage(mv, in->n_sliced);
}

/* Rendezvous p2p: the exchanges over boundary b (stages b and b + 1), one per
 * DeepSpeed step that moves anything over it: the m activations, and the m
 * gradients, P − b − 1 steps behind (pipesim.h). */
static uint32_t rdv_exchanges(uint32_t P, uint32_t m, uint32_t b)
{
    uint32_t lag = P - b - 1;
    return m + (lag < m ? lag : m);
}

static size_t ws_bytes_for(uint32_t P, uint32_t mv, uint32_t stride)
{
    size_t ops = (size_t)P * stride;
    return align_up(ops * sizeof(sim_op_t)) + align_up(2u * (size_t)P * mv * sizeof(uint32_t)) +
           align_up(ops * sizeof(tsl_pipesim_step_t));
}

size_t tsl_pipesim_in_ws_bytes(const tsl_pipesim_in_t *in)
{
    uint32_t mv = in->n_micro * chunks(in);
    if (in->n_stages == 0 || in->n_stages > TSL_PIPESIM_MAX_STAGES || in->n_micro == 0 ||
        mv > TSL_PIPESIM_MAX_MICRO || in->n_sliced > in->n_micro)
        return 0;
    return ws_bytes_for(in->n_stages, mv, stride_of(in));
}

uint32_t tsl_pipesim_n_ops(const tsl_pipesim_in_t *in)
{
    if (in->p2p_rendezvous) { /* each boundary's exchanges on both of its stages */
        uint32_t n = 2 * in->n_stages * in->n_micro;
        for (uint32_t b = 0; b + 1 < in->n_stages; b++)
            n += 2 * rdv_exchanges(in->n_stages, in->n_micro, b);
        return n;
    }
    if (in->schedule != TSL_PIPESIM_SCHED_DUALPIPEV)
        return in->n_stages * stride_of(in);
    uint32_t n = 0;
    for (uint32_t s = 0; s < in->n_stages; s++)
        n += 4 * in->n_micro + dualpipev_w(in->n_stages, s);
    return n;
}

const char *tsl_pipesim_sched_name(uint32_t sched, uint32_t n_chunks)
{
    switch (sched) {
    case TSL_PIPESIM_SCHED_ZBH1: return "zbh1";
    case TSL_PIPESIM_SCHED_ZBV: return "zbv";
    case TSL_PIPESIM_SCHED_DUALPIPEV: return "dualpipev";
    default: return n_chunks > 1 ? "interleaved" : "1F1B";
    }
}

int tsl_pipesim_sched_parse(const char *name)
{
    if (strcmp(name, "1F1B") == 0 || strcmp(name, "1f1b") == 0 || strcmp(name, "interleaved") == 0)
        return TSL_PIPESIM_SCHED_1F1B;
    if (strcmp(name, "zbh1") == 0)
        return TSL_PIPESIM_SCHED_ZBH1;
    if (strcmp(name, "zbv") == 0)
        return TSL_PIPESIM_SCHED_ZBV;
    if (strcmp(name, "dualpipev") == 0)
        return TSL_PIPESIM_SCHED_DUALPIPEV;
    return -1;
}

uint32_t tsl_pipesim_warmup(uint32_t stage, uint32_t n_stages, uint32_t n_micro)
{
    if (stage >= n_stages)
        return 0;
    uint32_t w = n_stages - 1 - stage;
    return w < n_micro ? w : n_micro;
}

size_t tsl_pipesim_ws_bytes(uint32_t n_stages, uint32_t n_micro, uint32_t n_sliced)
{
    if (n_stages == 0 || n_stages > TSL_PIPESIM_MAX_STAGES || n_micro == 0 ||
        n_micro > TSL_PIPESIM_MAX_MICRO || n_sliced > n_micro)
        return 0;
    return ws_bytes_for(n_stages, n_micro, ops_per_stage(n_micro, n_sliced));
}

static int check_times(const double *v, uint32_t n, const char *field, tsl_err_t *err)
{
    for (uint32_t i = 0; i < n; i++)
        if (!isfinite(v[i]) || v[i] < 0)
            return tsl_err_set(err, "%s[%u]: %g is not a valid time; give a finite value >= 0",
                               field, i, v[i]);
    return 0;
}

/* One chunk-1 array: times, each at most the stage's own of the whole (whole NULL:
 * at most half of bwd_s, a W's default) */
static int check_chunk1_times(const tsl_pipesim_in_t *in, const double *part, const double *whole,
                              const char *field, const char *of, tsl_err_t *err)
{
    if (check_times(part, in->n_stages, field, err))
        return -1;
    for (uint32_t s = 0; s < in->n_stages; s++) {
        double w = whole ? whole[s] : in->bwd_s[s] / 2;
        if (part[s] > w)
            return tsl_err_set(err, "%s[%u]: %g exceeds the stage's %s %g", field, s, part[s], of,
                               w);
    }
    return 0;
}

/* The V's uneven chunks: only under ZBV / DualPipeV, the forward's and the backward's
 * parts given together, each within the stage's figure and chunk 1's W within both
 * its backward and the stage's W. */
static int check_chunk1(const tsl_pipesim_in_t *in, tsl_err_t *err)
{
    const bool any = in->c1_fwd_s || in->c1_bwd_s || in->c1_wgrad_s;
    if (!any)
        return 0;
    if (!tsl_pipesim_sched_is_v(in->schedule))
        return tsl_err_set(err, "c1_fwd_s: a chunk's own times need a V schedule (zbv, "
                                "dualpipev)");
    if (!in->c1_fwd_s || !in->c1_bwd_s)
        return tsl_err_set(err, "%s: give chunk 1's forward and backward together",
                           in->c1_fwd_s ? "c1_bwd_s" : "c1_fwd_s");
    if (check_chunk1_times(in, in->c1_fwd_s, in->fwd_s, "c1_fwd_s", "forward", err) ||
        check_chunk1_times(in, in->c1_bwd_s, in->bwd_s, "c1_bwd_s", "backward", err))
        return -1;
    if (in->c1_wgrad_s) {
        if (check_chunk1_times(in, in->c1_wgrad_s, in->wgrad_s, "c1_wgrad_s", "W", err) ||
            check_chunk1_times(in, in->c1_wgrad_s, in->c1_bwd_s, "c1_wgrad_s", "chunk-1 backward",
                               err))
            return -1;
        for (uint32_t s = 0; s < in->n_stages; s++) { /* chunk 0's W within its backward */
            double w = in->wgrad_s ? in->wgrad_s[s] : in->bwd_s[s] / 2;
            double b0 = in->bwd_s[s] - in->c1_bwd_s[s];
            if (w - in->c1_wgrad_s[s] > b0 * (1 + 1e-12) + 1e-15)
                return tsl_err_set(err,
                                   "c1_wgrad_s[%u]: %g leaves chunk 0 a W of %g, more than "
                                   "its backward's %g",
                                   s, in->c1_wgrad_s[s], w - in->c1_wgrad_s[s], b0);
        }
    }
    return 0;
}

static int check_in(const tsl_pipesim_in_t *in, tsl_err_t *err)
{
    if (in->n_stages == 0 || in->n_stages > TSL_PIPESIM_MAX_STAGES)
        return tsl_err_set(err, "n_stages: %u is out of range; give 1..%u", in->n_stages,
                           TSL_PIPESIM_MAX_STAGES);
    if (in->n_micro == 0 || in->n_micro > TSL_PIPESIM_MAX_MICRO)
        return tsl_err_set(err, "n_micro: %u is out of range; give 1..%u", in->n_micro,
                           TSL_PIPESIM_MAX_MICRO);
    if (in->n_sliced > in->n_micro)
        return tsl_err_set(err, "n_sliced: %u exceeds the %u micro-batches", in->n_sliced,
                           in->n_micro);
    if (in->fwd_s == NULL || in->bwd_s == NULL)
        return tsl_err_set(err, "%s: missing per-stage times", in->fwd_s ? "bwd_s" : "fwd_s");
    if (check_times(in->fwd_s, in->n_stages, "fwd_s", err) ||
        check_times(in->bwd_s, in->n_stages, "bwd_s", err))
        return -1;
    if (in->bwd_sync_s && check_times(in->bwd_sync_s, in->n_stages, "bwd_sync_s", err))
        return -1;
    if (in->p2p_s && check_times(in->p2p_s, in->n_stages - 1, "p2p_s", err))
        return -1;
    if (in->opt_s && check_times(in->opt_s, in->n_stages, "opt_s", err))
        return -1;
    if (check_times(&in->tie_s, 1, "tie_s", err))
        return -1;
    if (in->tie_stage >= in->n_stages)
        return tsl_err_set(err, "tie_stage: %u is not a stage of %u (0: the last)", in->tie_stage,
                           in->n_stages);
    if (in->sync_tail_s && check_times(in->sync_tail_s, in->n_stages, "sync_tail_s", err))
        return -1;
    if (in->p2p_rendezvous && (in->p2p_blocking || in->n_chunks > 1 || in->n_sliced ||
                               in->schedule != TSL_PIPESIM_SCHED_1F1B))
        return tsl_err_set(err, "p2p_rendezvous: plain 1F1B only (DeepSpeed's TrainSchedule), "
                                "without p2p_blocking, chunks or slicing");
    if (!(in->slice_fwd_frac >= 0 && in->slice_fwd_frac <= 1))
        return tsl_err_set(err, "slice_fwd_frac: %g is out of range; give 0..1 (0: one half)",
                           in->slice_fwd_frac);
    if (!(in->slice_p2p_frac >= 0 && in->slice_p2p_frac <= 1))
        return tsl_err_set(err, "slice_p2p_frac: %g is out of range; give 0..1 (0: one half)",
                           in->slice_p2p_frac);
    if (in->schedule > TSL_PIPESIM_SCHED_DUALPIPEV)
        return tsl_err_set(err, "schedule: %u is not a schedule the simulator runs", in->schedule);
    if (zero_bubble(in) && (in->n_sliced || in->p2p_blocking || in->n_chunks > 1 ||
                            (uint64_t)in->n_micro * chunks(in) > TSL_PIPESIM_MAX_MICRO))
        return tsl_err_set(err,
                           "schedule %s: no slicing, no blocking sends, n_chunks 0 or 1 "
                           "and m·chunks at most %u",
                           tsl_pipesim_sched_name(in->schedule, 1), TSL_PIPESIM_MAX_MICRO);
    if (in->schedule == TSL_PIPESIM_SCHED_DUALPIPEV && in->n_micro < 2 * in->n_stages)
        return tsl_err_set(err,
                           "n_micro: DualPipeV runs at least 2 micro-batches per stage "
                           "(%u for %u stages), got %u",
                           2 * in->n_stages, in->n_stages, in->n_micro);
    if (in->fb_save_s && check_times(in->fb_save_s, in->n_stages, "fb_save_s", err))
        return -1;
    if (in->wgrad_s) {
        if (check_times(in->wgrad_s, in->n_stages, "wgrad_s", err))
            return -1;
        for (uint32_t s = 0; s < in->n_stages; s++)
            if (in->wgrad_s[s] > in->bwd_s[s])
                return tsl_err_set(err, "wgrad_s[%u]: %g exceeds the backward's %g", s,
                                   in->wgrad_s[s], in->bwd_s[s]);
    }
    if (check_chunk1(in, err) != 0)
        return -1;
    if (!zero_bubble(in) && in->n_chunks > 1 &&
        (in->n_sliced || (uint64_t)in->n_micro * in->n_chunks > TSL_PIPESIM_MAX_MICRO ||
         in->n_chunks > TSL_PIPELINE_MAX_CHUNKS))
        return tsl_err_set(err,
                           "n_chunks: %u chunks need m·v at most %u, at most %u chunks and "
                           "no slicing",
                           in->n_chunks, TSL_PIPESIM_MAX_MICRO, TSL_PIPELINE_MAX_CHUNKS);
    if (in->vp_group && (zero_bubble(in) || in->n_chunks <= 1))
        return tsl_err_set(err,
                           "vp_group: %u micro-batches per group need the interleaved "
                           "schedule (n_chunks > 1)",
                           in->vp_group);
    if (!zero_bubble(in) && in->n_chunks > 1 &&
        tsl_pipeline_vp_check(in->n_stages, in->n_micro, in->vp_group) != 0)
        return tsl_err_set(err,
                           "vp_group: %u micro-batches per group (0: the %u stages) with m %u: "
                           "Megatron-LM's interleaved schedule takes P <= N <= m and m mod N 0 "
                           "or at least P",
                           in->vp_group, in->n_stages, in->n_micro);
    return 0;
}

/* Interleaved with blocking sends (p2p_blocking: Megatron-LM before core waits on
 * every batched isend/irecv): what chunk c's forward (fwd) or backward on stage s
 * holds its stage for, sending its output on to the next virtual stage (the
 * forward) or back to the previous one (the backward); the hop between the last
 * stage and the first is the wrap's (p2p_s[P − 2], as the latency takes it). The
 * model's first and last virtual stages send nothing that way. */
static double interleaved_send_s(const tsl_pipesim_in_t *in, uint32_t s, uint32_t c, bool fwd)
{
    const uint32_t P = in->n_stages, v = in->n_chunks;
    if (!in->p2p_blocking || in->p2p_s == NULL || P < 2)
        return 0.0;
    const double wrap = in->p2p_s[P - 2];
    if (fwd)
        return s + 1 < P ? in->p2p_s[s] : (c + 1 < v ? wrap : 0.0);
    return s > 0 ? in->p2p_s[s - 1] : (c > 0 ? wrap : 0.0);
}

/* Interleaved 1F1B: stage s's ops in Megatron's order (see pipesim.h); idx[c·m + j]
 * records where F (fidx) or B (bidx) of chunk c, micro-batch j sits. Inputs are
 * resolved in layout(). */
static uint32_t build_stage_interleaved(const tsl_pipesim_in_t *in, uint32_t s, sim_op_t *ops,
                                        uint32_t *fidx, uint32_t *bidx)
{
    const uint32_t P = in->n_stages, m = in->n_micro, v = in->n_chunks, total = m * v;
    const uint32_t N = tsl_pipeline_vp_group(P, in->vp_group);
    uint32_t w = tsl_pipeline_vp_warmup(s, P, m, v, N), q = 0, nf = 0, nb = 0, c, j;
    tsl_pipeline_vp_walk_t fw, bw; /* the table's forwards and backwards, each in order */
    tsl_pipeline_vp_walk_init(&fw, m, v, N);
    tsl_pipeline_vp_walk_init(&bw, m, v, N);
    while (nf < total || nb < total) {
        bool fwd = nf < w || (nf < total && nf - w == nb);
        uint32_t k = fwd ? nf++ : nb++;
        tsl_pipeline_vp_walk_next(fwd ? &fw : &bw, &j, &c);
        if (!fwd) /* backward k: the same micro-batch, the chunks in reverse */
            c = v - 1 - c;
        sim_op_t *o = &ops[q];
        memset(o, 0, sizeof(*o));
        o->op = fwd ? TSL_PIPESIM_FWD : TSL_PIPESIM_BWD;
        o->micro = j;
        o->chunk = (uint8_t)c;
        o->steady = fwd ? k >= w : k < total - w;
        double sync = (j == m - 1 && in->bwd_sync_s) ? in->bwd_sync_s[s] : in->bwd_s[s];
        o->dur_s = (fwd ? in->fwd_s[s] : sync) / v + interleaved_send_s(in, s, c, fwd);
        o->dep_stage = -1;
        o->pred_stage = -1;
        (fwd ? fidx : bidx)[c * m + j] = q++;
    }
    return q;
}

/* Interleaved: the op's input, F(q − 1) or B(q + 1) of virtual stage q = c·P + s
 * (the last virtual stage's backward: its own forward), and the hop's latency. */
static void resolve_interleaved(const tsl_pipesim_in_t *in, uint32_t s, sim_op_t *o,
                                const uint32_t *fidx, const uint32_t *bidx)
{
    const uint32_t P = in->n_stages, m = in->n_micro, v = in->n_chunks, mv = m * v;
    const uint32_t qv = o->chunk * P + s;
    const double wrap = P > 1 && in->p2p_s ? in->p2p_s[P - 2] : 0;
    uint32_t d, c;
    if (o->op == TSL_PIPESIM_FWD) {
        if (qv == 0)
            return;
        d = s > 0 ? s - 1 : P - 1;
        c = s > 0 ? o->chunk : o->chunk - 1u;
        o->p2p_s = s > 0 ? (in->p2p_s ? in->p2p_s[s - 1] : 0) : wrap;
        o->dep_idx = fidx[(size_t)d * mv + c * m + o->micro];
    } else if (qv == P * v - 1) {
        d = s;
        o->dep_idx = fidx[(size_t)d * mv + o->chunk * m + o->micro];
    } else {
        d = s + 1 < P ? s + 1 : 0;
        c = s + 1 < P ? o->chunk : o->chunk + 1u;
        o->p2p_s = s + 1 < P ? (in->p2p_s ? in->p2p_s[s] : 0) : wrap;
        o->dep_idx = bidx[(size_t)d * mv + c * m + o->micro];
    }
    o->dep_stage = (int32_t)d;
    if (in->p2p_blocking) /* the sender paid the hop in its op: none on the edge */
        o->p2p_s = 0;
}

/* Zero-bubble schedules: appends op (kind, chunk c, micro-batch j) to a stage's
 * sequence; ops of micro-batches past m (ZBV's order is computed for at least
 * 2P − 1) are left out. */
typedef struct zb_stage {
    const tsl_pipesim_in_t *in;
    uint32_t s, q, m;
    sim_op_t *ops;
    uint32_t *fidx, *bidx;
    double f[2], b[2], w[2], w_sync[2]; /* each chunk's F, B, W; its last W's with the sync */
    double save;                        /* DualPipeV: what one chunk's F&B step saves */
    uint32_t nf[2], nb[2];              /* DualPipeV: F's and B's laid out per chunk */
    uint32_t wq[4 * TSL_PIPESIM_MAX_STAGES], wh, wt; /* DualPipeV: split B's awaiting
                                                        their W, chunk·m + j, FIFO */
} zb_stage_t;

static void zb_push(zb_stage_t *z, uint8_t kind, uint32_t c, uint32_t j, bool steady)
{
    if (j >= z->m)
        return;
    sim_op_t *o = &z->ops[z->q];
    memset(o, 0, sizeof(*o));
    o->op = kind;
    o->micro = j;
    o->chunk = (uint8_t)c;
    o->steady = steady;
    o->dur_s = kind == TSL_PIPESIM_FWD   ? z->f[c]
               : kind == TSL_PIPESIM_BWD ? z->b[c]
                                         : (j == z->m - 1 ? z->w_sync[c] : z->w[c]);
    o->dep_stage = -1;
    o->pred_stage = -1;
    if (kind == TSL_PIPESIM_FWD)
        z->fidx[c * z->m + j] = z->q;
    else if (kind == TSL_PIPESIM_BWD)
        z->bidx[c * z->m + j] = z->q;
    z->q++;
}

/* ZB-H1 (pipesim.h): 1F1B's forwards and B's, W's d_s = s behind the B's. */
static void zbh1_order(zb_stage_t *z)
{
    const uint32_t P = z->in->n_stages, m = z->m, s = z->s;
    const uint32_t w = tsl_pipesim_warmup(s, P, m), d = s < m ? s : m;
    uint32_t nf = 0, nb = 0, nw = 0;
    while (nf < w)
        zb_push(z, TSL_PIPESIM_FWD, 0, nf++, false);
    while (nf < m) {
        zb_push(z, TSL_PIPESIM_FWD, 0, nf++, true);
        zb_push(z, TSL_PIPESIM_BWD, 0, nb++, true);
        if (nb - nw > d)
            zb_push(z, TSL_PIPESIM_WGT, 0, nw++, true);
    }
    while (nb < m) {
        zb_push(z, TSL_PIPESIM_BWD, 0, nb++, false);
        if (nb - nw > d)
            zb_push(z, TSL_PIPESIM_WGT, 0, nw++, false);
    }
    while (nw < m)
        zb_push(z, TSL_PIPESIM_WGT, 0, nw++, false);
}

/* ZBV (pipesim.h): ScheduleZBVZeroBubble's order for rank s over n = max(m, 2P − 1)
 * micro-batches. */
static void zbv_order(zb_stage_t *z)
{
    const uint32_t P = z->in->n_stages, s = z->s;
    const uint32_t n = z->m > 2 * P - 1 ? z->m : 2 * P - 1;
    uint32_t f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    for (uint32_t k = 0; k < 2 * (P - s) - 1; k++)
        zb_push(z, TSL_PIPESIM_FWD, 0, f0++, false);
    for (uint32_t k = 0; k < s; k++) {
        zb_push(z, TSL_PIPESIM_FWD, 1, f1++, false);
        zb_push(z, TSL_PIPESIM_FWD, 0, f0++, false);
    }
    for (uint32_t k = 0; k < P - s; k++) {
        zb_push(z, TSL_PIPESIM_FWD, 1, f1++, false);
        zb_push(z, TSL_PIPESIM_BWD, 1, b1, false);
        zb_push(z, TSL_PIPESIM_WGT, 1, b1++, false);
    }
    while (f1 < f0 || f0 < n) {
        if (f0 < n)
            zb_push(z, TSL_PIPESIM_FWD, 0, f0++, true);
        zb_push(z, TSL_PIPESIM_BWD, 0, b0, true);
        zb_push(z, TSL_PIPESIM_WGT, 0, b0++, true);
        zb_push(z, TSL_PIPESIM_FWD, 1, f1++, true);
        zb_push(z, TSL_PIPESIM_BWD, 1, b1, true);
        zb_push(z, TSL_PIPESIM_WGT, 1, b1++, true);
    }
    uint32_t w0 = b0, w1 = b1;
    for (uint32_t k = 0; k < s; k++) {
        zb_push(z, TSL_PIPESIM_BWD, 0, b0++, false);
        zb_push(z, TSL_PIPESIM_BWD, 1, b1++, false);
    }
    for (uint32_t k = 0; k < P - s; k++) {
        zb_push(z, TSL_PIPESIM_BWD, 0, b0++, false);
        zb_push(z, TSL_PIPESIM_WGT, 0, w0++, false);
    }
    while (w1 < b1)
        zb_push(z, TSL_PIPESIM_WGT, 1, w1++, false);
    while (w0 < b0)
        zb_push(z, TSL_PIPESIM_WGT, 0, w0++, false);
}

/* DualPipeV: the next forward of chunk c. */
static sim_op_t *dpv_f(zb_stage_t *z, uint32_t c, bool steady)
{
    zb_push(z, TSL_PIPESIM_FWD, c, z->nf[c]++, steady);
    return &z->ops[z->q - 1];
}

/* DualPipeV: the next backward of chunk c, split (its W queued) or whole. */
static sim_op_t *dpv_b(zb_stage_t *z, uint32_t c, bool split, bool steady)
{
    uint32_t j = z->nb[c]++;
    zb_push(z, TSL_PIPESIM_BWD, c, j, steady);
    sim_op_t *o = &z->ops[z->q - 1];
    if (split) {
        z->wq[z->wt++ % (4 * TSL_PIPESIM_MAX_STAGES)] = c * z->m + j;
    } else {
        o->whole = 1;
        o->dur_s += j == z->m - 1 ? z->w_sync[c] : z->w[c];
    }
    return o;
}

/* DualPipeV: the oldest split B's W, if any. */
static void dpv_w(zb_stage_t *z)
{
    if (z->wh == z->wt)
        return;
    uint32_t k = z->wq[z->wh++ % (4 * TSL_PIPESIM_MAX_STAGES)];
    zb_push(z, TSL_PIPESIM_WGT, k / z->m, k % z->m, false);
}

/* DualPipeV: an overlapped step, chunk cf's forward with chunk cb's whole
 * backward: F + B − save, at most min(F, B) saved, shared in proportion. */
static void dpv_fb(zb_stage_t *z, uint32_t cf, uint32_t cb)
{
    sim_op_t *f = dpv_f(z, cf, true);
    sim_op_t *b = dpv_b(z, cb, false, true);
    double sf = f->dur_s, sb = b->dur_s, all = sf + sb;
    double save = tsl_min(z->save, tsl_min(sf, sb));
    if (all > 0) {
        f->dur_s = sf - save * sf / all;
        b->dur_s = sb - save * sb / all;
    }
    f->fused = 1;
    b->fused = 2;
}

/* DualPipeV (pipesim.h): dualpipev.py's steps 1-8 for rank s. */
static void dualpipev_order(zb_stage_t *z)
{
    const uint32_t P = z->in->n_stages, s = z->s, m = z->m;
    for (uint32_t k = 0; k < 2 * (P - 1 - s); k++) /* 1: F0 */
        dpv_f(z, 0, false);
    for (uint32_t k = 0; k < s + 1; k++) { /* 2: F0 F1 */
        dpv_f(z, 0, false);
        dpv_f(z, 1, false);
    }
    for (uint32_t k = 0; k < P - 1 - s; k++) { /* 3: B1 W F1, split */
        dpv_b(z, 1, true, false);
        dpv_w(z);
        dpv_f(z, 1, false);
    }
    for (uint32_t k = 0; k < m - 2 * P + s + 1; k++) { /* 4: F0&B1 F1&B0 */
        if (k == 0 && s == P - 1) {                    /* the last stage's first: not overlapped */
            dpv_f(z, 0, true);
            dpv_b(z, 1, false, true);
        } else {
            dpv_fb(z, 0, 1);
        }
        dpv_fb(z, 1, 0);
    }
    for (uint32_t k = 0; k < P - 1 - s; k++) { /* 5: B1 F1&B0 */
        dpv_b(z, 1, false, true);
        dpv_fb(z, 1, 0);
    }
    bool split = false;
    for (uint32_t k = 0; k < s + 1; k++) { /* 6: B1 B0, split from the middle */
        if (k == (s + 1) / 2 && s % 2 == 1)
            split = true;
        dpv_b(z, 1, split, false);
        if (k == (s + 1) / 2 && s % 2 == 0)
            split = true;
        dpv_b(z, 0, split, false);
    }
    for (uint32_t k = 0; k < P - 1 - s; k++) { /* 7: W B0, split */
        dpv_w(z);
        dpv_b(z, 0, true, false);
    }
    while (z->wh != z->wt) /* 8: the W's left (s + 1) */
        dpv_w(z);
}

/* Each chunk's F, B and W on stage s: the stage's divided evenly over its chunks, or
 * a V's chunk 1 as chunk1_* give it and chunk 0 the rest (check_chunk1). */
static void chunk_times(const tsl_pipesim_in_t *in, uint32_t s, zb_stage_t *z)
{
    const double v = chunks(in);
    const double wg = in->wgrad_s ? in->wgrad_s[s] : in->bwd_s[s] / 2;
    double f1 = in->fwd_s[s] / v, bw1 = in->bwd_s[s] / v, w1 = wg / v;
    if (in->c1_fwd_s) {
        f1 = in->c1_fwd_s[s];
        bw1 = in->c1_bwd_s[s];
        w1 = in->c1_wgrad_s ? in->c1_wgrad_s[s] : in->bwd_s[s] > 0 ? wg * bw1 / in->bwd_s[s] : 0;
    }
    if (v < 2) { /* ZB-H1: one chunk, the stage's */
        z->f[0] = in->fwd_s[s];
        z->b[0] = in->bwd_s[s] - wg;
        z->w[0] = wg;
        return;
    }
    z->f[1] = f1;
    z->b[1] = fmax(bw1 - w1, 0);
    z->w[1] = w1;
    z->f[0] = fmax(in->fwd_s[s] - f1, 0);
    z->w[0] = fmax(wg - w1, 0);
    z->b[0] = fmax(in->bwd_s[s] - bw1 - z->w[0], 0);
}

static uint32_t build_stage_zb(const tsl_pipesim_in_t *in, uint32_t s, sim_op_t *ops,
                               uint32_t *fidx, uint32_t *bidx)
{
    const double v = chunks(in);
    const double extra = in->bwd_sync_s ? in->bwd_sync_s[s] - in->bwd_s[s] : 0;
    zb_stage_t z = {.in = in,
                    .s = s,
                    .m = in->n_micro,
                    .ops = ops,
                    .fidx = fidx,
                    .bidx = bidx,
                    .save = in->fb_save_s ? in->fb_save_s[s] / v : 0};
    chunk_times(in, s, &z);
    for (uint32_t c = 0; c < v; c++)
        z.w_sync[c] = z.w[c] + extra / v;
    if (in->schedule == TSL_PIPESIM_SCHED_DUALPIPEV)
        dualpipev_order(&z);
    else if (in->schedule == TSL_PIPESIM_SCHED_ZBV)
        zbv_order(&z);
    else
        zbh1_order(&z);
    for (uint32_t q = z.q, n = stride_of(in); q < n; q++) { /* DualPipeV's unused slots */
        memset(&ops[q], 0, sizeof(ops[q]));
        ops[q].op = OP_NONE;
    }
    return z.q;
}

/* Zero-bubble: the op's input. ZB-H1 as 1F1B (the last stage's B after its own F);
 * ZBV: chunk 0 of stage s is virtual stage s, chunk 1 virtual stage 2P − 1 − s —
 * F0 from F0 of s − 1, F1 from F1 of s + 1 (stage P − 1: its own F0), B1 from B1 of
 * s − 1 (stage 0: its own F1, the loss), B0 from B0 of s + 1 (stage P − 1: its own
 * B1). W: none (its B precedes it on the stage). m micro-batches, mv = m × the chunks
 * (the caller's, made once: this runs for every op). */
static void resolve_zb(const tsl_pipesim_in_t *in, uint32_t m, uint32_t mv, uint32_t s, sim_op_t *o,
                       const uint32_t *fidx, const uint32_t *bidx)
{
    const uint32_t P = in->n_stages;
    const bool down = o->chunk == 0; /* the way the chunk's forward runs: to higher stages */
    const bool fwd = o->op == TSL_PIPESIM_FWD;
    if (o->op == TSL_PIPESIM_WGT)
        return;
    int32_t d; /* the neighbour the input comes from */
    uint32_t c = o->chunk;
    const uint32_t *idx = fwd ? fidx : bidx;
    if (fwd == down) {
        d = (int32_t)s - 1; /* F0 and B1 come from the stage below */
        if (d < 0) {
            if (fwd)
                return; /* the model's input */
            d = 0;      /* B1 of stage 0: after its own F1 (the loss) */
            idx = fidx;
        }
    } else {
        d = (int32_t)s + 1; /* F1 and B0 from the stage above */
        if ((uint32_t)d == P || in->schedule == TSL_PIPESIM_SCHED_ZBH1) {
            if (in->schedule == TSL_PIPESIM_SCHED_ZBH1 && (uint32_t)d < P) {
                /* ZB-H1's B from the next stage */
            } else if (in->schedule == TSL_PIPESIM_SCHED_ZBH1) {
                d = (int32_t)s; /* the last stage's B after its own F */
                idx = fidx;
            } else {
                d = (int32_t)s; /* the turn of the V: F1 after F0, B0 after B1 */
                c = fwd ? 0 : 1;
            }
        }
    }
    o->dep_stage = d;
    o->dep_idx = idx[(size_t)d * mv + c * m + o->micro];
    o->p2p_s = 0;
    if ((uint32_t)d != s && in->p2p_s)
        o->p2p_s = in->p2p_s[(uint32_t)d < s ? (uint32_t)d : s];
}

/* Lays out stage s's 1F1B op sequence; fidx/bidx record where F(j) (its first
 * half when sliced) and B(j) sit. */
static uint32_t build_stage(const tsl_pipesim_in_t *in, uint32_t s, sim_op_t *ops, uint32_t *fidx,
                            uint32_t *bidx)
{
    const uint32_t P = in->n_stages, m = in->n_micro;
    const uint32_t w = tsl_pipesim_warmup(s, P, m);
    const double ffrac = in->slice_fwd_frac > 0 ? in->slice_fwd_frac : 0.5;
    const double cfrac = in->slice_p2p_frac > 0 ? in->slice_p2p_frac : 0.5;
    double c_in_f = (s > 0 && in->p2p_s) ? in->p2p_s[s - 1] : 0;
    double c_in_b = (s + 1 < P && in->p2p_s) ? in->p2p_s[s] : 0;
    /* blocking sends: the sender pays them in its op, the edge nothing */
    const double send_f = in->p2p_blocking ? c_in_b : 0, send_b = in->p2p_blocking ? c_in_f : 0;
    if (in->p2p_blocking)
        c_in_f = c_in_b = 0;
    uint32_t q = 0, nf = 0, nb = 0;

    while (nf < m || nb < m) {
        /* the next op is a forward during warmup, alternately F/B in steady state
         * (F first), backward in cooldown */
        bool fwd;
        if (nf < w)
            fwd = true;
        else if (nf < m)
            fwd = (nf - w) == nb;
        else
            fwd = false;
        if (fwd) {
            uint32_t j = nf++;
            fidx[j] = q;
            uint32_t halves = j < in->n_sliced ? 2u : 1u;
            for (uint32_t h = 0; h < halves; h++) {
                sim_op_t *o = &ops[q];
                memset(o, 0, sizeof(*o));
                o->op = TSL_PIPESIM_FWD;
                o->micro = j;
                o->half = halves == 2 ? (uint8_t)(h + 1) : 0;
                o->steady = j >= w;
                o->dur_s = (in->fwd_s[s] + send_f) * (halves == 2 ? ffrac : 1.0);
                o->p2p_s = c_in_f * (halves == 2 ? cfrac : 1.0);
                o->dep_stage = s > 0 ? (int32_t)(s - 1) : -1;
                o->dep_idx = 0; /* resolved once the left stage is laid out */
                o->pred_stage = -1;
                q++;
            }
        } else {
            uint32_t j = nb++;
            bidx[j] = q;
            sim_op_t *o = &ops[q];
            memset(o, 0, sizeof(*o));
            o->op = TSL_PIPESIM_BWD;
            o->micro = j;
            o->steady = j < m - w;
            o->dur_s = send_b + ((j == m - 1 && in->bwd_sync_s) ? in->bwd_sync_s[s] : in->bwd_s[s]);
            o->p2p_s = c_in_b;
            o->dep_stage = s + 1 < P ? (int32_t)(s + 1) : -1;
            o->pred_stage = -1;
            q++;
        }
    }
    return q;
}

/* Rendezvous p2p: appends the exchange of a DeepSpeed step with peer over boundary
 * b, carrying the activation of micro-batch act and the gradient of grad (each
 * where it is one of the m); none when neither is. */
static void rdv_exchange(const tsl_pipesim_in_t *in, sim_op_t *ops, uint32_t *q, uint32_t peer,
                         uint32_t b, int64_t act, int64_t grad)
{
    const int64_t m = in->n_micro;
    const bool a = act >= 0 && act < m, g = grad >= 0 && grad < m;
    if (!a && !g)
        return;
    sim_op_t *o = &ops[(*q)++];
    memset(o, 0, sizeof(*o));
    o->op = TSL_PIPESIM_P2P;
    o->micro = (uint32_t)(a ? act : grad);
    o->half = (uint8_t)((a ? 1u : 0u) | (g ? 2u : 0u));
    o->dur_s = ((a ? 1.0 : 0.0) + (g ? 1.0 : 0.0)) * (in->p2p_s ? in->p2p_s[b] : 0.0);
    o->peer = (int32_t)peer;
    o->dep_stage = (int32_t)peer; /* the peer's op before its side: resolved in layout */
    o->pred_stage = -1;
}

/* Rendezvous p2p: stage s's instructions in DeepSpeed's TrainSchedule order, step
 * by step (pipesim.h): a forward step of micro-batch j receives j's activation from
 * s − 1 and sends it the gradient of j + s − P, then runs F(j); a backward step of
 * i sends s + 1 the activation of i + P − s − 1, receives i's gradient, then runs
 * B(i). Steps whose micro-batch is none of the m run their exchange only. */
static uint32_t build_stage_rendezvous(const tsl_pipesim_in_t *in, uint32_t s, sim_op_t *ops,
                                       uint32_t *fidx, uint32_t *bidx)
{
    const uint32_t P = in->n_stages, m = in->n_micro, w = tsl_pipesim_warmup(s, P, m);
    const int64_t S = s, PP = P;
    uint32_t q = 0;
    for (int64_t t = 0; t < 2 * ((int64_t)m + PP - 1); t++) {
        const bool fwd = (t + S) % 2 == 0;
        const int64_t j = fwd ? (t - S) / 2 : (t + S + 1 - 2 * PP) / 2;
        if (fwd && s > 0)
            rdv_exchange(in, ops, &q, s - 1, s - 1, j, j + S - PP);
        else if (!fwd && s + 1 < P)
            rdv_exchange(in, ops, &q, s + 1, s, j + PP - S - 1, j);
        if (j < 0 || j >= (int64_t)m)
            continue;
        sim_op_t *o = &ops[q];
        memset(o, 0, sizeof(*o));
        o->op = fwd ? TSL_PIPESIM_FWD : TSL_PIPESIM_BWD;
        o->micro = (uint32_t)j;
        o->steady = fwd ? j >= w : j < (int64_t)(m - w);
        o->dur_s = fwd                                       ? in->fwd_s[s]
                   : (j + 1 == (int64_t)m && in->bwd_sync_s) ? in->bwd_sync_s[s]
                                                             : in->bwd_s[s];
        o->dep_stage = o->pred_stage = -1; /* its input came in the step's exchange */
        (fwd ? fidx : bidx)[j] = q++;
    }
    for (uint32_t k = q, n = stride_of(in); k < n; k++) { /* the slots left */
        memset(&ops[k], 0, sizeof(ops[k]));
        ops[k].op = OP_NONE;
    }
    return q;
}

/* Rendezvous p2p: pairs the two sides of every exchange over boundary b, the k-th
 * on stage b with the k-th on stage b + 1 (both run them in the same order); each
 * side waits for the op before the other's. */
static void resolve_rendezvous(sim_op_t *left, uint32_t nl, sim_op_t *right, uint32_t nr,
                               uint32_t b)
{
    uint32_t i = 0, k = 0;
    for (;;) {
        while (i < nl && !(left[i].op == TSL_PIPESIM_P2P && left[i].peer == (int32_t)b + 1))
            i++;
        while (k < nr && !(right[k].op == TSL_PIPESIM_P2P && right[k].peer == (int32_t)b))
            k++;
        if (i >= nl || k >= nr)
            return;
        left[i].dep_stage = k > 0 ? (int32_t)b + 1 : -1;
        left[i].dep_idx = k > 0 ? k - 1 : 0;
        right[k].dep_stage = i > 0 ? (int32_t)b : -1;
        right[k].dep_idx = i > 0 ? i - 1 : 0;
        i++;
        k++;
    }
}

/* One simulation's working set: the op table and the index arrays, carved out of
 * the caller's workspace. */
typedef struct sim {
    const tsl_pipesim_in_t *in;
    uint32_t P, m, stride;
    uint32_t mv;  /* m · v: (chunk, micro-batch) pairs per stage */
    size_t n_all; /* op slots */
    size_t n_run; /* ops laid out (DualPipeV: fewer than slots) */
    sim_op_t *ops;
    uint32_t *fidx, *bidx;
    tsl_pipesim_step_t *path;
    uint32_t nops[TSL_PIPESIM_MAX_STAGES];
    double busy[TSL_PIPESIM_MAX_STAGES]; /* each stage's compute, summed as the sweep
                                            times its ops (in their order) */
    double tol;
} sim_t;

static int carve_ws(sim_t *sm, const tsl_pipesim_in_t *in, void *ws, size_t ws_bytes,
                    tsl_err_t *err)
{
    const uint32_t P = in->n_stages, m = in->n_micro, mv = m * chunks(in);
    const size_t need = tsl_pipesim_in_ws_bytes(in);
    if (ws == NULL || ws_bytes < need)
        return tsl_err_set(err,
                           "workspace: %zu bytes given, %zu needed for %u stages, "
                           "%u micro-batches, %u sliced; size it with tsl_pipesim_ws_bytes",
                           ws ? ws_bytes : 0, need, P, m, in->n_sliced);
    if ((uintptr_t)ws % alignof(double) != 0)
        return tsl_err_set(err, "workspace: not aligned for double");

    sm->in = in;
    sm->P = P;
    sm->m = m;
    sm->mv = mv;
    sm->stride = stride_of(in);
    sm->n_all = (size_t)P * sm->stride;
    unsigned char *base = ws;
    sm->ops = (sim_op_t *)base;
    sm->fidx = (uint32_t *)(base + align_up(sm->n_all * sizeof(sim_op_t)));
    sm->bidx = sm->fidx + (size_t)P * mv;
    sm->path = (tsl_pipesim_step_t *)((unsigned char *)sm->fidx +
                                      align_up(2u * (size_t)P * mv * sizeof(uint32_t)));
    return 0;
}

/* DualPipeV: an F&B step waits for the backward's input too, and its outputs leave
 * at its end — what waits for its forward waits for the step's backward op. Op q of
 * stage s, its input resolved (every stage laid out): an input that is a step's
 * forward becomes that step's backward; and when q is a step's backward, the step's
 * forward (q − 1) waits for q's input as well. One pass with the inputs' (each op
 * once, in order), where two passes over every op came after them. */
static void link_fused(sim_t *sm, sim_op_t *so, uint32_t q)
{
    sim_op_t *o = &so[q];
    if (o->dep_stage >= 0 && sm->ops[(size_t)o->dep_stage * sm->stride + o->dep_idx].fused == 1)
        o->dep_idx++;
    if (q > 0 && so[q - 1].fused == 1) { /* q: the step's backward */
        so[q - 1].dep2_stage = o->dep_stage;
        so[q - 1].dep2_idx = o->dep_idx;
        so[q - 1].p2p2_s = o->p2p_s;
    }
}

/* Lays out every stage and resolves cross-stage inputs: F(s, j, half) <-
 * F(s − 1, j, half); B(s, j) <- B(s + 1, j). Sets the tie tolerance from the
 * total work. */
static void layout(sim_t *sm)
{
    const uint32_t P = sm->P, m = sm->m, mv = sm->mv, stride = sm->stride;
    const bool zb = zero_bubble(sm->in);
    const bool inter = !zb && chunks(sm->in) > 1, rdv = sm->in->p2p_rendezvous;
    const bool fused = sm->in->schedule == TSL_PIPESIM_SCHED_DUALPIPEV;
    double scale = 0;
    for (uint32_t s = 0; s < P; s++) {
        sim_op_t *so = sm->ops + (size_t)s * stride;
        uint32_t *fi = sm->fidx + (size_t)s * mv, *bi = sm->bidx + (size_t)s * mv;
        sm->nops[s] = inter ? build_stage_interleaved(sm->in, s, so, fi, bi)
                      : zb  ? build_stage_zb(sm->in, s, so, fi, bi)
                      : rdv ? build_stage_rendezvous(sm->in, s, so, fi, bi)
                            : build_stage(sm->in, s, so, fi, bi);
    }
    for (uint32_t b = 0; rdv && b + 1 < P; b++)
        resolve_rendezvous(sm->ops + (size_t)b * stride, sm->nops[b],
                           sm->ops + (size_t)(b + 1) * stride, sm->nops[b + 1], b);
    for (uint32_t s = 0; s < P; s++) {
        sim_op_t *so = sm->ops + (size_t)s * stride;
        for (uint32_t q = 0; q < sm->nops[s]; q++) {
            sim_op_t *o = &so[q];
            if (inter)
                resolve_interleaved(sm->in, s, o, sm->fidx, sm->bidx);
            else if (zb)
                resolve_zb(sm->in, m, mv, s, o, sm->fidx, sm->bidx);
            if (fused)
                link_fused(sm, so, q);
            scale += o->dur_s + o->p2p_s;
            if (o->dep_stage < 0 || inter || zb || rdv)
                continue;
            uint32_t d = (uint32_t)o->dep_stage;
            if (o->op == TSL_PIPESIM_FWD)
                o->dep_idx = sm->fidx[(size_t)d * m + o->micro] + (o->half == 2 ? 1u : 0u);
            else
                o->dep_idx = sm->bidx[(size_t)d * m + o->micro];
        }
    }
    sm->n_run = 0;
    for (uint32_t s = 0; s < P; s++)
        sm->n_run += sm->nops[s];
    sm->tol = 1e-10 * scale;
}

/* Times op ptr[s] of stage s and adds a compute op's time to the stage's busy time
 * (the ops of a stage are timed in their order); returns false when its cross-stage
 * input is not known yet. */
static bool time_op(sim_t *sm, uint32_t s, const uint32_t *ptr)
{
    sim_op_t *so = sm->ops + (size_t)s * sm->stride;
    sim_op_t *o = &so[ptr[s]];
    bool has_prev = ptr[s] > 0;
    double prev_end = has_prev ? so[ptr[s] - 1].end_s : 0;
    /* the cross-stage input that arrives last (an F&B step: of two) */
    int32_t dd = -1;
    uint32_t didx = 0;
    double ready = 0;
    for (int k = 0; k < 2; k++) {
        int32_t ds = k == 0 ? o->dep_stage : o->fused == 1 ? o->dep2_stage : -1;
        uint32_t di = k == 0 ? o->dep_idx : o->dep2_idx;
        if (ds < 0)
            continue;
        if (ptr[ds] <= di)
            return false;
        double r = sm->ops[(size_t)ds * sm->stride + di].end_s + (k == 0 ? o->p2p_s : o->p2p2_s);
        if (dd < 0 || r > ready + sm->tol || (r >= ready - sm->tol && ds > dd)) {
            dd = ds;
            didx = di;
            ready = r;
        }
    }
    if (dd < 0) {
        o->start_s = prev_end;
        o->pred_stage = has_prev ? (int32_t)s : -1;
        o->pred_idx = has_prev ? ptr[s] - 1 : 0;
    } else {
        uint32_t d = (uint32_t)dd;
        bool take_dep;
        if (!has_prev || ready > prev_end + sm->tol)
            take_dep = true;
        else if (ready < prev_end - sm->tol)
            take_dep = false;
        else
            take_dep = d > s; /* tie: the path closer to the last stage */
        o->start_s = tsl_max(ready, prev_end);
        if (take_dep) {
            o->pred_stage = (int32_t)d;
            o->pred_idx = didx;
        } else {
            o->pred_stage = (int32_t)s;
            o->pred_idx = ptr[s] - 1;
        }
    }
    o->end_s = o->start_s + o->dur_s;
    if (o->op != TSL_PIPESIM_P2P) /* compute; an exchange is communication */
        sm->busy[s] += o->dur_s;
    return true;
}

/* Longest path, sweeping stages alternately left-to-right and right-to-left. */
static int sweep(sim_t *sm, tsl_err_t *err)
{
    const uint32_t P = sm->P;
    uint32_t ptr[TSL_PIPESIM_MAX_STAGES] = {0};
    size_t done = 0;
    bool ltr = true;
    while (done < sm->n_run) {
        bool progressed = false;
        for (uint32_t k = 0; k < P; k++) {
            uint32_t s = ltr ? k : P - 1 - k;
            while (ptr[s] < sm->nops[s] && time_op(sm, s, ptr)) {
                ptr[s]++;
                done++;
                progressed = true;
            }
        }
        if (!progressed)
            return tsl_err_set(err,
                               "pipesim: schedule deadlocked after %zu of %zu ops "
                               "(internal error)",
                               done, sm->n_run);
        ltr = !ltr;
    }
    return 0;
}

/* Busy times and the op that ends last (ties: the higher stage); the iteration
 * ends after the last optimizer step when one runs past it. */
/* When a stage's step may start: after its last op, and for stages 0 and P − 1
 * of a tied head after both's last op and their all-reduce. */
/* The end of stage s's last op and of its exposed gradient sync (sync_tail_s). */
static double synced_end(const sim_t *sm, uint32_t s)
{
    const double *y = sm->in->sync_tail_s;
    return sm->ops[(size_t)s * sm->stride + sm->nops[s] - 1].end_s + (y ? y[s] : 0.0);
}

/* Stage s's step: after its own sync, and for stage 0 and the tie's other stage
 * (tie_stage, 0: the last) after the tied all-reduce that follows both. */
static double step_start(const sim_t *sm, uint32_t s, double tie_s)
{
    double own = synced_end(sm, s);
    uint32_t peer = sm->in->tie_stage ? sm->in->tie_stage : sm->P - 1;
    if (!(tie_s > 0) || sm->P < 2 || (s != 0 && s != peer) || sm->nops[0] == 0 ||
        sm->nops[peer] == 0)
        return own;
    return tsl_max(synced_end(sm, 0), synced_end(sm, peer)) + tie_s;
}

static void find_end(const sim_t *sm, const double *opt_s, double tie_s, tsl_pipesim_out_t *out,
                     uint32_t *end_stage, uint32_t *end_idx)
{
    double stepped = 0;
    double iter = -1;
    uint32_t last_stage = 0, last_idx = 0;
    /* A stage's ops end in order (each starts after the one before has ended), so its
     * last op ends last and the op that ends last overall, ties to the later one in
     * stage order within tol, is a stage's last: stage s's where it ends no earlier
     * than every earlier stage's, less tol. O(P), where every op was read. */
    for (uint32_t s = 0; s < sm->P; s++) {
        out->busy_s[s] = sm->busy[s];
        if (sm->nops[s] == 0)
            continue;
        const double end = sm->ops[(size_t)s * sm->stride + sm->nops[s] - 1].end_s;
        if (end >= iter - sm->tol) {
            if (end > iter)
                iter = end;
            last_stage = s;
            last_idx = sm->nops[s] - 1;
        }
        stepped = tsl_max(stepped, step_start(sm, s, tie_s) + (opt_s ? opt_s[s] : 0.0));
    }
    *end_stage = last_stage;
    *end_idx = last_idx;
    out->flush_s = iter;
    out->iter_s = tsl_max(iter, stepped);
}

/* Walks the binding dependencies back from the last op; stores the path first op
 * first. */
static uint32_t walk_path(const sim_t *sm, uint32_t end_stage, uint32_t end_idx)
{
    tsl_pipesim_step_t *path = sm->path;
    uint32_t len = 0;
    int32_t cs = (int32_t)end_stage;
    uint32_t ci = end_idx;
    while (cs >= 0) {
        const sim_op_t *o = &sm->ops[(size_t)cs * sm->stride + ci];
        tsl_pipesim_step_t *st = &path[len++];
        st->stage = (uint32_t)cs;
        st->micro = o->micro;
        st->op = o->op;
        st->half = o->half;
        st->steady = o->steady;
        st->chunk = o->chunk;
        st->fused = o->fused;
        st->start_s = o->start_s;
        st->end_s = o->end_s;
        st->p2p_before_s = (o->pred_stage >= 0 && o->pred_stage != cs) ? o->p2p_s : 0;
        int32_t ns = o->pred_stage;
        ci = o->pred_idx;
        cs = ns;
    }
    for (uint32_t a = 0, b = len ? len - 1 : 0; a < b; a++, b--) {
        tsl_pipesim_step_t t = path[a];
        path[a] = path[b];
        path[b] = t;
    }
    return len;
}

/* Per-stage critical-path times and the master stage. */
static void path_stats(const sim_t *sm, tsl_pipesim_out_t *out)
{
    const tsl_pipesim_step_t *path = out->path;
    for (uint32_t k = 0; k < out->path_len; k++) {
        double d = path[k].end_s - path[k].start_s;
        uint32_t st = path[k].stage;
        out->crit_p2p_s += path[k].p2p_before_s;
        if (path[k].op == TSL_PIPESIM_P2P) { /* a rendezvous exchange: communication */
            out->crit_p2p_s += d;
            continue;
        }
        out->crit_s[st] += d;
        if (path[k].steady)
            out->crit_steady_s[st] += d;
        /* the stage drives the path here: the op waited for nothing but its own
         * previous op (the first op of the path, at time 0, too) */
        if (k == 0 || (path[k - 1].stage == st))
            out->crit_chain_s[st] += d;
    }
    uint32_t master = 0;
    double best = -1;
    for (uint32_t s = 0; s < sm->P; s++)
        if (out->crit_chain_s[s] >= best - sm->tol) {
            if (out->crit_chain_s[s] > best)
                best = out->crit_chain_s[s];
            master = s;
        }
    out->master_stage = master;
}

int tsl_pipesim_run(const tsl_pipesim_in_t *in, void *ws, size_t ws_bytes, tsl_pipesim_out_t *out,
                    tsl_err_t *err)
{
    if (in == NULL || out == NULL)
        return tsl_err_set(err, "pipesim: %s is NULL", in ? "out" : "in");
    if (check_in(in, err))
        return -1;
    sim_t sm = {0};
    if (carve_ws(&sm, in, ws, ws_bytes, err))
        return -1;
    layout(&sm);
    if (sweep(&sm, err))
        return -1;

    memset(out, 0, sizeof(*out));
    out->n_ops = (uint32_t)sm.n_run;
    /* the last stage's first forward (rendezvous: after its first exchange) */
    out->startup_s = sm.ops[(size_t)(sm.P - 1) * sm.stride +
                            (in->p2p_rendezvous ? sm.fidx[(size_t)(sm.P - 1) * sm.mv] : 0)]
                         .start_s;
    uint32_t end_stage, end_idx;
    find_end(&sm, in->opt_s, in->tie_s, out, &end_stage, &end_idx);
    out->path_len = walk_path(&sm, end_stage, end_idx);
    out->path = sm.path;
    path_stats(&sm, out);
    return 0;
}

int tsl_pipesim_events(const tsl_pipesim_in_t *in, const void *ws, tsl_pipesim_event_t *ev,
                       size_t cap, tsl_err_t *err)
{
    if (in == NULL || ws == NULL || check_in(in, err))
        return in && ws ? -1 : tsl_err_set(err, "pipesim: %s is NULL", in ? "ws" : "in");
    const uint32_t stride = stride_of(in);
    const size_t n_all = (size_t)in->n_stages * stride, n = tsl_pipesim_n_ops(in);
    if (ev == NULL || cap < n)
        return tsl_err_set(err, "events: room for %zu, %zu needed", ev ? cap : 0, n);
    const sim_op_t *ops = ws;
    size_t at = 0;
    for (size_t k = 0; k < n_all && at < n; k++) {
        const sim_op_t *o = &ops[k];
        if (o->op == OP_NONE)
            continue;
        tsl_pipesim_event_t *e = &ev[at++];
        e->stage = (uint32_t)(k / stride);
        e->micro = o->micro;
        e->op = o->op;
        e->half = o->half;
        e->chunk = o->chunk;
        e->fused = o->fused;
        e->whole = o->whole;
        e->start_s = o->start_s;
        e->end_s = o->end_s;
        e->peer = o->op == TSL_PIPESIM_P2P ? (uint32_t)o->peer : e->stage;
        e->p2p_s = o->dep_stage >= 0 ? o->p2p_s : 0;
        e->sent_s = o->dep_stage >= 0 && o->op != TSL_PIPESIM_P2P
                        ? ops[(size_t)o->dep_stage * stride + o->dep_idx].end_s
                        : 0;
    }
    return (int)n;
}
