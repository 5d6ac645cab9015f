/*
 * test_sim_memo.c — the event simulator's answers kept by their input's fingerprint
 * (planner/sim_memo.h): an answer read back is the simulator's own, bit for bit;
 * every field of the input moves the fingerprint, where the arrays lie does not; the
 * memo starts afresh when full and still answers; and an engine whose zero-bubble
 * plans are read back from its memo costs them as a fresh engine simulates them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "partition.h"
#include "pipesim.h"
#include "search_engine.h"
#include "sim_memo.h"

#define P 4u

typedef struct sim_arrays {
    double fwd[P], bwd[P], sync[P], p2p[P], opt[P], tail[P], wgrad[P], fb[P], f1[P], b1[P], w1[P];
} sim_arrays_t;

static void fill(sim_arrays_t *a, double scale)
{
    for (uint32_t s = 0; s < P; s++) {
        a->fwd[s] = scale * (1.0 + 0.1 * s);
        a->bwd[s] = 2 * a->fwd[s];
        a->sync[s] = a->bwd[s] + 0.3;
        a->p2p[s] = 0.05 * scale;
        a->opt[s] = 0.2;
        a->tail[s] = 0.1 * (s + 1);
        a->wgrad[s] = 0.8 * a->fwd[s];
        a->fb[s] = 0.25 * a->fwd[s];
        a->f1[s] = 0.5 * a->fwd[s];
        a->b1[s] = 0.5 * a->bwd[s];
        a->w1[s] = 0.5 * a->wgrad[s];
    }
}

/* An input of each shape the search simulates: ZB-H1, ZBV and DualPipeV (their
 * chunks' own figures), interleaved 1F1B in a group N above P, plain 1F1B with the
 * stacks' sync tails, a step and a tied head. */
static tsl_pipesim_in_t input(const sim_arrays_t *a, int shape)
{
    tsl_pipesim_in_t in;
    memset(&in, 0, sizeof(in));
    in.n_stages = P;
    in.n_micro = 16;
    in.fwd_s = a->fwd;
    in.bwd_s = a->bwd;
    in.p2p_s = a->p2p;
    in.opt_s = a->opt;
    in.sync_tail_s = a->tail;
    switch (shape) {
    case 0:
        in.schedule = TSL_PIPESIM_SCHED_ZBH1;
        in.wgrad_s = a->wgrad;
        break;
    case 1:
    case 2:
        in.schedule = shape == 1 ? TSL_PIPESIM_SCHED_ZBV : TSL_PIPESIM_SCHED_DUALPIPEV;
        in.wgrad_s = a->wgrad;
        in.fb_save_s = shape == 2 ? a->fb : NULL;
        in.c1_fwd_s = a->f1;
        in.c1_bwd_s = a->b1;
        in.c1_wgrad_s = a->w1;
        break;
    case 3:
        in.n_chunks = 2;
        in.vp_group = 8;
        in.p2p_blocking = 1;
        break;
    default:
        in.tie_s = 0.05;
        in.tie_stage = 0;
        break;
    }
    return in;
}

static int run(const tsl_pipesim_in_t *in, double *flush_s, double *iter_s)
{
    size_t bytes = tsl_pipesim_in_ws_bytes(in);
    void *ws = malloc(bytes ? bytes : 1);
    tsl_pipesim_out_t out;
    int rc = ws != NULL && bytes ? tsl_pipesim_run(in, ws, bytes, &out, NULL) : -1;
    if (rc == 0) {
        *flush_s = out.flush_s;
        *iter_s = out.iter_s;
    }
    free(ws);
    return rc;
}

static bool same_key(const uint64_t a[2], const uint64_t b[2])
{
    return a[0] == b[0] && a[1] == b[1];
}

/* Each shape simulated and kept, then read back: the same figures to the bit; an
 * input not kept is not found. */
static void test_hit_is_run(void)
{
    sim_arrays_t a;
    fill(&a, 1.0);
    tsl_sim_memo_t *memo = NULL;
    double flush[5], iter[5];
    uint64_t h[5][2];
    for (int shape = 0; shape < 5; shape++) {
        tsl_pipesim_in_t in = input(&a, shape);
        CHECK(run(&in, &flush[shape], &iter[shape]) == 0, "shape %d simulates", shape);
        tsl_sim_memo_key(&in, h[shape]);
        CHECK(!tsl_sim_memo_get(memo, h[shape], &flush[shape], &iter[shape]),
              "shape %d found before it was kept", shape);
        tsl_sim_memo_put(&memo, h[shape], flush[shape], iter[shape]);
    }
    for (int shape = 0; shape < 5; shape++) {
        double f = 0, i = 0;
        CHECK(tsl_sim_memo_get(memo, h[shape], &f, &i) &&
                  memcmp(&f, &flush[shape], sizeof f) == 0 &&
                  memcmp(&i, &iter[shape], sizeof i) == 0,
              "shape %d read back %.17g %.17g, simulated %.17g %.17g", shape, f, i, flush[shape],
              iter[shape]);
    }
    tsl_sim_memo_free(memo);
}

/* The arrays copied elsewhere key alike; each scalar changed, each array's last
 * figure changed (p2p_s: its P − 1st) and each optional array taken away or given
 * moves the key. */
static void test_every_field(void)
{
    sim_arrays_t a, copy;
    fill(&a, 1.0);
    copy = a;
    uint64_t base[2], k[2];
    tsl_pipesim_in_t in = input(&a, 2), alt = input(&copy, 2);
    tsl_sim_memo_key(&in, base);
    tsl_sim_memo_key(&alt, k);
    CHECK(same_key(base, k), "the same figures elsewhere key apart");
    /* p2p_s[P − 1] is not read (P − 1 boundaries): it keys alike */
    copy.p2p[P - 1] += 1;
    tsl_sim_memo_key(&alt, k);
    CHECK(same_key(base, k), "p2p_s past its P − 1 boundaries moved the key");
    copy.p2p[P - 1] = a.p2p[P - 1];
    int moved = 0, tried = 0;
#define MOVES(stmt)                                                                                \
    do {                                                                                           \
        sim_arrays_t b = a;                                                                        \
        tsl_pipesim_in_t x = input(&b, 2);                                                         \
        stmt;                                                                                      \
        tsl_sim_memo_key(&x, k);                                                                   \
        tried++;                                                                                   \
        moved += !same_key(base, k);                                                               \
        CHECK(!same_key(base, k), "%s keeps the key", #stmt);                                      \
    } while (0)
    MOVES(x.n_stages = P - 1);
    MOVES(x.n_micro++);
    MOVES(x.n_sliced = 1);
    MOVES(x.slice_fwd_frac = 0.4);
    MOVES(x.slice_p2p_frac = 0.4);
    MOVES(x.n_chunks = 2);
    MOVES(x.tie_s = 0.01);
    MOVES(x.tie_stage = 1);
    MOVES(x.p2p_blocking = 1);
    MOVES(x.p2p_rendezvous = 1);
    MOVES(x.schedule = TSL_PIPESIM_SCHED_ZBV);
    MOVES(x.vp_group = 8);
    MOVES(b.fwd[P - 1] += 1e-12);
    MOVES(b.bwd[P - 1] += 1e-12);
    MOVES(x.bwd_sync_s = b.sync);
    MOVES(b.p2p[P - 2] += 1e-12);
    MOVES(x.p2p_s = NULL);
    MOVES(b.opt[P - 1] += 1e-12);
    MOVES(x.opt_s = NULL);
    MOVES(b.tail[P - 1] += 1e-12);
    MOVES(x.sync_tail_s = NULL);
    MOVES(b.wgrad[P - 1] += 1e-12);
    MOVES(x.wgrad_s = NULL);
    MOVES(b.fb[P - 1] += 1e-12);
    MOVES(x.fb_save_s = NULL);
    MOVES(b.f1[P - 1] += 1e-12);
    MOVES(x.c1_fwd_s = NULL);
    MOVES(b.b1[P - 1] += 1e-12);
    MOVES(x.c1_bwd_s = NULL);
    MOVES(b.w1[P - 1] += 1e-12);
    MOVES(x.c1_wgrad_s = NULL);
    /* a figure moved from one array to the next keys apart too */
    MOVES((x.c1_bwd_s = b.f1, x.c1_fwd_s = b.b1));
#undef MOVES
    CHECK(moved == tried, "%d of %d changes moved the key", moved, tried);
}

/* More answers than the memo holds: it starts afresh and still answers the latest. */
static void test_afresh(void)
{
    tsl_sim_memo_t *memo = NULL;
    const uint32_t n = TSL_SIM_MEMO_SLOTS + 100;
    uint32_t found = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t h[2] = {0x9e3779b97f4a7c15ull * (i + 1), i};
        tsl_sim_memo_put(&memo, h, i, 2.0 * i);
        double f, it;
        found += tsl_sim_memo_get(memo, h, &f, &it) && f == i && it == 2.0 * i;
    }
    CHECK(found == n, "%u of %u answers read back right after they were kept", found, n);
    tsl_sim_memo_free(memo);
}

/*
 * GPT2-345M on 2x4 V100-16G: the zero-bubble configurations of a sweep costed twice
 * in one engine (the second time from its memos) and once in a fresh engine each: the
 * same plans to the bit, and each kept answer is the fresh engine's simulation.
 */
static void test_engine_reads_back(void)
{
    tsl_model_t m = {0};
    tsl_cluster_t c = {0};
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("GPT2-345M", &m, &err) == 0 &&
              tsl_cluster_parse_spec(&c, "2x4xV100-16G:ib100", &err) == 0,
          "%s", err.msg);
    tsl_request_t r;
    tsl_request_init(&r);
    tsl_space_t sp = tsl_space_tessel(&r);
    static tsl_engine_t shared, fresh;
    static tsl_plan_t a, a2, b;
    static tsl_plan_sim_t sim;
    CHECK(tsl_engine_init(&shared, &m, &c, &r, NULL, &sp, &err) == 0, "%s", err.msg);
    static const uint32_t pps[] = {2, 4, 8};
    int zb = 0, alike = 0, kept = 0, tried = 0;
    for (size_t pi = 0; pi < sizeof(pps) / sizeof(pps[0]); pi++)
        for (uint32_t B = 16; B <= 64; B *= 2)
            for (uint32_t mc = pps[pi]; mc <= B && mc <= 4 * pps[pi]; mc *= 2) {
                uint32_t first[TSL_PLAN_MAX_STAGES + 1];
                tsl_partition_by_flops(&m, pps[pi], first);
                tsl_plan_init(&a);
                tsl_engine_eval(&shared, B, pps[pi], mc, first, &a);
                tsl_plan_init(&a2);
                tsl_engine_eval(&shared, B, pps[pi], mc, first, &a2);
                CHECK(tsl_engine_init(&fresh, &m, &c, &r, NULL, &sp, &err) == 0, "%s", err.msg);
                tsl_plan_init(&b);
                tsl_engine_eval(&fresh, B, pps[pi], mc, first, &b);
                tsl_engine_free(&fresh);
                tried++;
                alike += a.valid == b.valid && a2.valid == b.valid &&
                         (!b.valid ||
                          (a.iter_time_s == b.iter_time_s && a2.iter_time_s == b.iter_time_s &&
                           a.opt_tail_s == b.opt_tail_s && a2.opt_tail_s == b.opt_tail_s &&
                           a2.schedule == b.schedule && a2.interleave == b.interleave));
                if (!b.valid || !b.schedule)
                    continue;
                zb++;
                uint64_t h[2];
                double f, it;
                tsl_plan_sim_input(&b, false, &sim);
                tsl_sim_memo_key(&sim.in, h);
                kept +=
                    tsl_sim_memo_get(shared.sim_memo, h, &f, &it) && f + (it - f) == b.iter_time_s;
            }
    CHECK(alike == tried, "%d of %d configurations cost alike twice and fresh", alike, tried);
    CHECK(zb >= 3 && kept == zb, "%d of %d zero-bubble plans' simulations kept", kept, zb);
    tsl_engine_free(&shared);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

int main(void)
{
    test_hit_is_run();
    test_every_field();
    test_afresh();
    test_engine_reads_back();
    return CHECK_DONE();
}
