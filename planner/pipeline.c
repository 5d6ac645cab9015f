/*
 * pipeline.c — 1F1B-flush pipeline time (Galvatron-BMW Eq. 9), in-flight
 * micro-batches per stage, and balance degrees (Eq. 6).
 */
#include "pipeline.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

/* The slowest stage paces the m − 1 steady-state micro-batches; the last one
 * (with gradient sync) still has to pass through every stage. */
double tsl_pipeline_time_s(uint32_t n_stages, const double *stage_nosync_s,
                           const double *stage_sync_s, uint32_t m)
{
    if (n_stages == 0 || m == 0)
        return 0;
    double slowest = 0, sum_sync = 0;
    for (uint32_t i = 0; i < n_stages; i++) {
        slowest = fmax(slowest, stage_nosync_s[i]);
        sum_sync += stage_sync_s[i];
    }
    return (double)(m - 1) * slowest + sum_sync;
}

/* Under 1F1B stage i runs P − i forwards before its first backward, so it holds
 * that many micro-batches of activations — fewer when there are fewer. */
uint32_t tsl_pipeline_inflight(uint32_t stage, uint32_t n_stages, uint32_t m)
{
    if (stage >= n_stages)
        return 0;
    uint32_t warm = n_stages - stage;
    return warm < m ? warm : m;
}

/* The bubble is the fill and drain: every stage but the slowest once per
 * micro-batch's pass; with v chunks each pass is v hops of 1/v the time. */
double tsl_pipeline_time_interleaved_s(uint32_t n_stages, const double *stage_nosync_s,
                                       const double *stage_sync_s, uint32_t m, uint32_t v)
{
    if (v <= 1 || n_stages == 0 || m == 0)
        return tsl_pipeline_time_s(n_stages, stage_nosync_s, stage_sync_s, m);
    double slowest = 0, sum = 0, sync = 0;
    for (uint32_t i = 0; i < n_stages; i++) {
        slowest = fmax(slowest, stage_nosync_s[i]);
        sum += stage_nosync_s[i];
        sync += stage_sync_s[i] - stage_nosync_s[i];
    }
    return (double)m * slowest + (sum - slowest) / v + sync;
}

uint32_t tsl_pipeline_inflight_zb(uint32_t n_stages, uint32_t m)
{
    return n_stages < m ? n_stages : m;
}

void tsl_pipeline_v_parts(uint32_t n_stages, const uint32_t *stage_count, uint32_t *part_first)
{
    uint32_t at = 0;
    for (uint32_t q = 0; q < 2 * n_stages; q++) {
        uint32_t n = stage_count[tsl_pipeline_v_rank(q, n_stages)];
        part_first[q] = at;
        at += q < n_stages ? (n + 1) / 2 : n / 2;
    }
    part_first[2 * n_stages] = at;
}

uint32_t tsl_pipeline_recv_buffers(uint32_t stage, uint32_t n_stages, uint32_t v, bool vshape)
{
    if (n_stages <= 1 || stage >= n_stages)
        return 0;
    if (vshape)
        return stage == 0 ? 2 : 4;
    uint32_t chunks = v > 1 ? v : 1;
    return 2 * chunks - (stage == 0) - (stage == n_stages - 1);
}

uint32_t tsl_pipeline_inflight_dualpipev(uint32_t n_stages, uint32_t m)
{
    return n_stages + 1 < m ? n_stages + 1 : m;
}

/* tsl_pipeline_v_held's walk: each chunk's forwards begun and stashes freed, in
 * the schedule's order (unclipped: ZBV's order runs past m), and the best moment. */
typedef struct vwalk {
    uint32_t m, f[2], w[2], held[2];
    const double *a;
    double top;
} vwalk_t;

static uint32_t vw_live(const vwalk_t *z, uint32_t c)
{
    uint32_t f = z->f[c] < z->m ? z->f[c] : z->m, w = z->w[c] < z->m ? z->w[c] : z->m;
    return f - w;
}

/* A forward of chunk c: the moment its stash joins the others'. */
static void vw_fwd(vwalk_t *z, uint32_t c)
{
    z->f[c]++;
    uint32_t n0 = vw_live(z, 0), n1 = vw_live(z, 1);
    double x = z->a[0] * n0 + z->a[1] * n1;
    if (x > z->top || (x == z->top && n0 + n1 > z->held[0] + z->held[1])) {
        z->top = x;
        z->held[0] = n0;
        z->held[1] = n1;
    }
}

static void vw_free(vwalk_t *z, uint32_t c)
{
    z->w[c]++;
}

/* ScheduleZBVZeroBubble up to its cooldown (which runs no forward). */
static void vwalk_zbv(vwalk_t *z, uint32_t s, uint32_t P)
{
    const uint32_t n = z->m > 2 * P - 1 ? z->m : 2 * P - 1;
    for (uint32_t k = 0; k < 2 * (P - s) - 1; k++)
        vw_fwd(z, 0);
    for (uint32_t k = 0; k < s; k++) {
        vw_fwd(z, 1);
        vw_fwd(z, 0);
    }
    for (uint32_t k = 0; k < P - s; k++) { /* F1 I1 W1 */
        vw_fwd(z, 1);
        vw_free(z, 1);
    }
    while (z->f[1] < z->f[0] || z->f[0] < n) { /* F0 I0 W0 F1 I1 W1 */
        if (z->f[0] < n)
            vw_fwd(z, 0);
        vw_free(z, 0);
        vw_fwd(z, 1);
        vw_free(z, 1);
    }
}

/* dualpipev.py steps 1-5 (6-8 run backwards and W's only). Step 3's W runs the B1
 * split just before it (none is pending earlier). */
static void vwalk_dualpipev(vwalk_t *z, uint32_t s, uint32_t P)
{
    for (uint32_t k = 0; k < 2 * (P - 1 - s); k++)
        vw_fwd(z, 0);
    for (uint32_t k = 0; k < s + 1; k++) {
        vw_fwd(z, 0);
        vw_fwd(z, 1);
    }
    for (uint32_t k = 0; k < P - 1 - s; k++) { /* B1 W F1 */
        vw_free(z, 1);
        vw_fwd(z, 1);
    }
    for (uint32_t k = 0; k < z->m - 2 * P + s + 1; k++) { /* F0&B1 F1&B0 */
        vw_fwd(z, 0);
        vw_free(z, 1);
        vw_fwd(z, 1);
        vw_free(z, 0);
    }
    for (uint32_t k = 0; k < P - 1 - s; k++) { /* B1 F1&B0 */
        vw_free(z, 1);
        vw_fwd(z, 1);
        vw_free(z, 0);
    }
}

uint32_t tsl_pipeline_v_held(bool dualpipev, uint32_t stage, uint32_t n_stages, uint32_t m,
                             const double *chunk_w, uint32_t *held)
{
    if (dualpipev && m < 2 * n_stages) {
        held[0] = held[1] = tsl_pipeline_inflight_dualpipev(n_stages, m);
        return held[0] + held[1];
    }
    vwalk_t z = {.m = m, .a = chunk_w, .top = -1.0};
    if (stage < n_stages && m > 0) {
        if (dualpipev)
            vwalk_dualpipev(&z, stage, n_stages);
        else
            vwalk_zbv(&z, stage, n_stages);
    }
    held[0] = z.held[0];
    held[1] = z.held[1];
    return held[0] + held[1];
}

uint32_t tsl_pipeline_inflight_interleaved(uint32_t stage, uint32_t n_stages, uint32_t m,
                                           uint32_t v)
{
    if (v <= 1 || stage >= n_stages)
        return tsl_pipeline_inflight(stage, n_stages, m);
    uint64_t w = (uint64_t)(n_stages - stage - 1) * 2 + (uint64_t)(v - 1) * n_stages;
    if (w > (uint64_t)m * v)
        w = (uint64_t)m * v;
    uint64_t held = (w + 1 + v - 1) / v; /* chunk activations are 1/v of the stage's */
    return held < m ? (uint32_t)held : m;
}

/* get_schedule_table: groups of N micro-batches, each run through chunk 0, then
 * chunk 1, ...; the last group (the one reaching m) takes the rest, however many. */
void tsl_pipeline_vp_table(uint32_t k, uint32_t m, uint32_t v, uint32_t N, uint32_t *micro,
                           uint32_t *chunk)
{
    if (N == 0 || N > m)
        N = m;
    uint32_t last = (m - 1) / N * N; /* the last group's first micro-batch */
    uint64_t start = (uint64_t)last * v;
    if (k >= start) {
        uint32_t r = (uint32_t)(k - start), n = m - last;
        *chunk = r / n;
        *micro = last + r % n;
        return;
    }
    uint32_t g = k / (N * v), r = k % (N * v);
    *chunk = r / N;
    *micro = g * N + r % N;
}

void tsl_pipeline_vp_walk_init(tsl_pipeline_vp_walk_t *w, uint32_t m, uint32_t v, uint32_t N)
{
    if (N == 0 || N > m)
        N = m;
    w->m = m;
    w->v = v;
    w->N = N;
    w->last = N ? (m - 1) / N * N : 0;
    w->first = 0;
    w->size = w->last == 0 ? m : N;
    w->chunk = 0;
    w->i = 0;
}

uint32_t tsl_pipeline_vp_warmup(uint32_t stage, uint32_t n_stages, uint32_t m, uint32_t v,
                                uint32_t N)
{
    if (stage >= n_stages)
        return 0;
    uint64_t w = (uint64_t)(n_stages - stage - 1) * 2 + (uint64_t)(v - 1) * N,
             total = (uint64_t)m * v;
    return (uint32_t)(w < total ? w : total);
}

uint32_t tsl_pipeline_vp_group(uint32_t n_stages, uint32_t N)
{
    return N ? N : n_stages;
}

uint32_t tsl_pipeline_torch_vp_group(uint32_t n_stages, uint32_t m)
{
    if (n_stages == 0 || m == 0)
        return 0;
    uint32_t rounds = m / n_stages > 1 ? m / n_stages : 1;
    return m % rounds == 0 ? m / rounds : 0;
}

double tsl_pipeline_ep_overlap_s(uint32_t stage, uint32_t n_stages, uint32_t m, uint32_t v,
                                 uint32_t N, double save_s)
{
    v = v > 1 ? v : 1;
    if (m < 2 || stage >= n_stages || (n_stages > 1 && v == 1))
        return 0.0;
    uint64_t steps = (uint64_t)v * m;
    uint64_t w = n_stages == 1 ? 1
                               : tsl_pipeline_vp_warmup(stage, n_stages, m, v,
                                                        tsl_pipeline_vp_group(n_stages, N));
    return w < steps ? save_s * (double)(steps - w) / (double)steps : 0.0;
}

int tsl_pipeline_vp_check(uint32_t n_stages, uint32_t m, uint32_t N)
{
    N = tsl_pipeline_vp_group(n_stages, N);
    if (N < n_stages || N > m)
        return -1;
    uint32_t r = m % N;
    return r == 0 || r >= n_stages ? 0 : -1;
}

uint32_t tsl_pipeline_inflight_chunks(uint32_t m, uint32_t v, uint32_t N, uint32_t warmup,
                                      const double *chunk_w, uint32_t *held)
{
    uint8_t live[TSL_PIPELINE_MAX_CHUNKS];
    return tsl_pipeline_peak_chunks(m, v, N, warmup, chunk_w, NULL, held, live);
}

/* The walk's state: chunk micro-batches live, gradients come, the bytes held. */
typedef struct chunk_walk {
    uint32_t stash[TSL_PIPELINE_MAX_CHUNKS];
    uint8_t grads[TSL_PIPELINE_MAX_CHUNKS];
    double sum, best;
} chunk_walk_t;

/* Records the walk's state as the peak where the sum first exceeds the best. */
static void walk_mark(chunk_walk_t *st, uint32_t v, uint32_t *held, uint8_t *live)
{
    if (st->best >= 0 && !(st->sum > st->best * (1 + 1e-12)))
        return;
    st->best = st->sum;
    for (uint32_t q = 0; q < v; q++) {
        held[q] = st->stash[q];
        live[q] = st->grads[q];
    }
}

uint32_t tsl_pipeline_peak_chunks(uint32_t m, uint32_t v, uint32_t N, uint32_t warmup,
                                  const double *chunk_w, const double *grad_w, uint32_t *held,
                                  uint8_t *live)
{
    if (v < 1 || v > TSL_PIPELINE_MAX_CHUNKS || m == 0 || N == 0)
        return 0;
    chunk_walk_t st = {.sum = 0, .best = -1};
    uint32_t total = m * v, nf = 0, nb = 0, j, c;
    tsl_pipeline_vp_walk_t fw, bw; /* the table's forwards and backwards, each in order */
    tsl_pipeline_vp_walk_init(&fw, m, v, N);
    tsl_pipeline_vp_walk_init(&bw, m, v, N);
    uint32_t w = warmup < total ? warmup : total;
    for (c = 0; c < v; c++) {
        held[c] = 0;
        st.grads[c] = grad_w == NULL; /* a buffer from the start: not in the sum */
        live[c] = st.grads[c];
    }
    while (nf < total || nb < total) {
        bool fwd = nf < w || (nf < total && nf - w == nb);
        nf += fwd;
        nb += !fwd;
        tsl_pipeline_vp_walk_next(fwd ? &fw : &bw, &j, &c);
        if (!fwd) { /* backward k runs chunk v − 1 − its table chunk */
            uint32_t b = v - 1 - c;
            if (!st.grads[b]) { /* its gradients come while its stash is held */
                st.grads[b] = 1;
                st.sum += grad_w[b];
                walk_mark(&st, v, held, live);
            }
            st.stash[b]--;
            st.sum -= chunk_w ? chunk_w[b] : 1.0;
            continue;
        }
        st.stash[c]++;
        st.sum += chunk_w ? chunk_w[c] : 1.0;
        walk_mark(&st, v, held, live); /* the first moment of the peak */
    }
    uint32_t n = 0;
    for (c = 0; c < v; c++)
        n += held[c];
    return n;
}

void tsl_pipeline_chunk_layers(uint32_t n_layers, bool emb, bool head, uint32_t mtp, uint32_t v,
                               uint32_t *count)
{
    if (v <= 1) {
        count[0] = n_layers;
        return;
    }
    mtp = mtp < n_layers ? mtp : 0;
    n_layers -= mtp;
    uint32_t extra = (uint32_t)emb + (uint32_t)head, nb = n_layers > extra ? n_layers - extra : 0;
    bool whole = nb % v == 0; /* the blocks divide: the embedding and head ride along */
    uint32_t units = whole ? nb : n_layers;
    for (uint32_t c = 0; c < v; c++)
        count[c] = units / v + (c < units % v);
    if (whole) {
        count[0] += emb;
        count[v - 1] += head;
    }
    count[v - 1] += mtp;
}

bool tsl_pipeline_chunks_even(uint32_t n_layers, bool emb, bool head, uint32_t mtp, uint32_t v,
                              bool ends)
{
    if (v <= 1)
        return true;
    n_layers -= mtp < n_layers ? mtp : 0;
    uint32_t extra = (uint32_t)emb + (uint32_t)head, nb = n_layers > extra ? n_layers - extra : 0;
    return (nb >= v && nb % v == 0) || (ends && n_layers >= v && n_layers % v == 0);
}

uint32_t tsl_pipeline_chunk_ckpt(uint32_t n_layers, bool emb, bool head, uint32_t mtp, uint32_t v,
                                 uint32_t N)
{
    uint32_t count[TSL_PIPELINE_MAX_CHUNKS], chunks = v > 1 ? v : 1, sum = 0;
    if (chunks > TSL_PIPELINE_MAX_CHUNKS)
        return 0;
    tsl_pipeline_chunk_layers(n_layers, emb, head, mtp, chunks, count);
    mtp = mtp < n_layers ? mtp : 0;
    for (uint32_t c = 0; c < chunks; c++) {
        uint32_t other = (c == 0 && emb) + (c + 1 == chunks ? (uint32_t)head + mtp : 0);
        uint32_t blocks = count[c] > other ? count[c] - other : 0;
        sum += blocks < N ? blocks : N;
    }
    return sum;
}

/* Stage i's last backward ends after stage i + 1's and before stage i − 1's:
 * the drain below it (tail) runs while it steps. A tied head's all-reduce holds
 * the first and last stages until stage 0's backward is done, and tie after. */
double tsl_pipeline_opt_tail_s(uint32_t n_stages, const double *stage_fwd_s,
                               const double *stage_nosync_s, const double *stage_sync_s,
                               const double *stage_p2p_s, const double *stage_opt_s, double tie_s,
                               uint32_t v)
{
    double chunks = v > 1 ? v : 1, tail = 0, extra = 0;
    bool tied = n_stages > 1 && tie_s > 0;
    for (uint32_t i = 0; i < n_stages; i++) {
        bool waits = tied && (i == 0 || i + 1 == n_stages);
        extra = fmax(extra, waits ? tie_s + stage_opt_s[i] : stage_opt_s[i] - tail);
        double bwd = stage_nosync_s[i] - stage_fwd_s[i] - stage_p2p_s[i] / 2.0;
        tail += bwd / chunks + (stage_sync_s[i] - stage_nosync_s[i]);
    }
    return extra;
}

/* Megatron's blocking exchanges, plain 1F1B and Megatron-LM 2021's interleaving
 * (cost model 161): each step's batched isend/irecv runs a boundary's two directions
 * at once (send_forward_recv_backward with the next stage, send_backward_recv_forward
 * with the previous one), so a stage's cycle holds one hop of each of its boundaries,
 * p2p_{i−1}/2 + p2p_i/2, not both hops of its own (p2p_i, which C_nosync(i) carries):
 * the last stage holds its incoming boundary's hop, stage 0 one hop of its own. The
 * event simulator's blocking sends (pipesim.h p2p_blocking) hold the same. Stage 0's
 * incoming boundary under interleaving is the last stage's wrap (its p2p_{P−1}); the
 * shifts sum to 0 over the stages. */
static double exchange_shift_s(const tsl_pipeline_in_t *in, uint32_t i)
{
    uint32_t P = in->n_stages;
    double from = i > 0 ? in->p2p_s[i - 1] : (in->interleave > 1 ? in->p2p_s[P - 1] : 0.0);
    return (from - in->p2p_s[i]) / 2.0;
}

/* T0 of tsl_pipeline_iter: the pipeline without gradient sync. Interleaved, the
 * steady state hides the p2p (Megatron's overlap_p2p_comm); the fill and drain
 * expose the hops of every chunk but the first, (v − 1)/v of the stage's p2p
 * (fitted to pipesim's schedule: within 5 % for stages within 10 % of each other,
 * tests/test_pipesim.c). With p2p_blocking (Megatron-LM before core) nothing is
 * hidden: its hops are stage time, and the fill and drain take 1/v of it.
 * Blocking (plain 1F1B, or p2p_blocking), the steady state's K_i holds one hop of
 * each of stage i's boundaries (exchange_shift_s) rather than both of its own; the
 * once-through term Σ_i K_i is the same either way.
 * With p2p_both (plain 1F1B) the receiving stage holds each exchange too: every
 * transfer is a blocking broadcast both ranks sit in, so stage i's cycle has its
 * incoming boundary's p2p besides its own, K_i = C_nosync(i) + p2p_{i−1}; the fill
 * and the drain still cross each boundary once each way, Σ_i C_nosync(i) (one
 * micro-batch: F, hop, F, ..., B, hop, B — the event simulator's rendezvous). */
static double stack_body_s(const tsl_pipeline_in_t *in)
{
    uint32_t P = in->n_stages, v = in->interleave > 1 ? in->interleave : 1;
    double slowest = 0, sum = 0, hops = 0;
    bool hidden = v > 1 && !in->p2p_blocking; /* blocking: every hop is stage time */
    for (uint32_t i = 0; i < P; i++) {
        double k = in->nosync_s[i] - (hidden ? in->p2p_s[i] : 0.0);
        sum += k;
        if (in->p2p_both && v == 1 && i > 0) /* the steady state's incoming exchanges */
            k += in->p2p_s[i - 1];
        else if (!hidden && !in->p2p_both) /* one hop of each boundary */
            k += exchange_shift_s(in, i);
        slowest = fmax(slowest, k);
        hops += in->p2p_s[i];
    }
    if (v == 1)
        return (double)(in->n_micro - 1) * slowest + sum;
    if (!hidden) /* each chunk's hops ride in its 1/v of the stage, fill and drain too */
        return (double)in->n_micro * slowest + (sum - slowest) / v;
    return (double)in->n_micro * slowest + (sum - slowest) / v + hops * (v - 1.0) / v;
}

/* STACK: each stage syncs after its own last backward (tail_i before T0) and
 * steps after that; a tied head's two stages meet first. With p2p_both a stage's
 * last instruction is the send of its last gradient, which holds it too: its sync
 * starts one hop (p2p_{i−1} / 2) after its backward. */
static void stack_iter(const tsl_pipeline_in_t *in, tsl_pipeline_out_t *out)
{
    uint32_t P = in->n_stages;
    double v = in->interleave > 1 ? in->interleave : 1, tail = 0;
    double flush = -INFINITY, done = -INFINITY, end[2] = {0, 0};
    for (uint32_t i = 0; i < P; i++) {
        double held = in->p2p_both && v == 1 && i > 0 ? in->p2p_s[i - 1] / 2.0 : 0.0;
        double e = in->sync_s[i] - in->nosync_s[i] - tail + held; /* end_i − T0 */
        flush = fmax(flush, e);
        done = fmax(done, e + in->opt_s[i]);
        if (i == 0 || i + 1 == P)
            end[i == 0 ? 0 : 1] = e;
        tail += (in->nosync_s[i] - in->fwd_s[i] - in->p2p_s[i] / 2.0) / v;
    }
    if (P > 1 && in->tie_s > 0) {
        double met = fmax(end[0], end[1]) + in->tie_s;
        done = fmax(done, met + fmax(in->opt_s[0], in->opt_s[P - 1]));
    }
    double t0 = stack_body_s(in);
    out->flush_s = t0 + flush;
    out->opt_tail_s = (t0 + done) - out->flush_s;
}

void tsl_pipeline_iter(const tsl_pipeline_in_t *in, tsl_pipeline_out_t *out)
{
    out->flush_s = out->opt_tail_s = 0;
    if (in->n_stages == 0 || in->n_micro == 0)
        return;
    if (!in->paper) {
        stack_iter(in, out);
        return;
    }
    out->flush_s = tsl_pipeline_time_interleaved_s(in->n_stages, in->nosync_s, in->sync_s,
                                                   in->n_micro, in->interleave);
    out->opt_tail_s = tsl_pipeline_opt_tail_s(in->n_stages, in->fwd_s, in->nosync_s, in->sync_s,
                                              in->p2p_s, in->opt_s, in->tie_s, in->interleave);
}

double tsl_pipeline_chunk_rs_s(double rs_s, double chunk_bwd_s, uint32_t stage, uint32_t n_stages,
                               uint32_t v)
{
    if (!(rs_s > 0))
        return 0.0;
    if (v <= 1)
        return rs_s;
    double share = rs_s / v, beta = fmax(chunk_bwd_s, 0.0), out = share;
    for (uint32_t c = 1; c < v; c++) { /* chunk c launched `ahead` backwards before the end */
        double ahead = fmax((double)c * n_stages - stage, 0.0);
        out = fmax(out, (c + 1.0) * share - ahead * beta);
    }
    return out;
}

double tsl_pipeline_chunk_rs_cost_s(double rs_s, double chunk_bwd_s, uint32_t stage,
                                    uint32_t n_stages, uint32_t v, double k)
{
    double after = tsl_pipeline_chunk_rs_s(rs_s, chunk_bwd_s, stage, n_stages, v);
    double beside = fmax(rs_s - after, 0.0); /* ran under the drain's backwards */
    return after + (k > 1.0 ? (k - 1.0) * beside : 0.0);
}

double tsl_pipeline_balance(uint32_t n, const double *values)
{
    if (n <= 1)
        return 0;
    double max = 0, sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        max = fmax(max, values[i]);
        sum += values[i];
    }
    if (!(sum > 0))
        return 0;
    return 1.0 - max / sum;
}
