/*
 * test_pipeline.c — Galvatron-BMW Eq. 9 by hand, 1F1B in-flight micro-batches,
 * the optimizer steps' tail, and the balance degrees of Eq. 6.
 */
#include <stdint.h>

#include "check.h"
#include "pipeline.h"

#define EPS 1e-12

static void test_time(void)
{
    double nosync[] = {1.0, 3.0, 2.0};
    double sync[] = {1.5, 3.5, 2.5};
    /* (m − 1) · max nosync + Σ sync = 3 · 3 + 7.5 */
    CHECK_NEAR(tsl_pipeline_time_s(3, nosync, sync, 4), 16.5, EPS, "Eq. 9, m = 4");
    CHECK_NEAR(tsl_pipeline_time_s(3, nosync, sync, 1), 7.5, EPS, "m = 1: one pass");
    CHECK_NEAR(tsl_pipeline_time_s(1, nosync, sync, 8), 7 * 1.0 + 1.5, EPS, "one stage");
    /* the bottleneck stage, not the first, paces the steady state */
    double flat[] = {2.0, 2.0, 2.0, 2.0}, flat_sync[] = {2.5, 2.5, 2.5, 2.5};
    CHECK_NEAR(tsl_pipeline_time_s(4, flat, flat_sync, 8), 7 * 2.0 + 10.0, EPS, "balanced");
    CHECK(tsl_pipeline_time_s(0, nosync, sync, 4) == 0, "no stages");
    CHECK(tsl_pipeline_time_s(3, nosync, sync, 0) == 0, "no micro-batches");
}

static void test_inflight(void)
{
    uint32_t want_m2[] = {2, 2, 2, 1}, want_m8[] = {4, 3, 2, 1};
    for (uint32_t i = 0; i < 4; i++) {
        CHECK(tsl_pipeline_inflight(i, 4, 2) == want_m2[i], "P 4, m 2, stage %u: %u", i,
              tsl_pipeline_inflight(i, 4, 2));
        CHECK(tsl_pipeline_inflight(i, 4, 8) == want_m8[i], "P 4, m 8, stage %u: %u", i,
              tsl_pipeline_inflight(i, 4, 8));
    }
    CHECK(tsl_pipeline_inflight(0, 1, 16) == 1, "no pipeline: one micro-batch at a time");
    CHECK(tsl_pipeline_inflight(4, 4, 8) == 0, "stage beyond the pipeline");
}

/* Interleaved 1F1B, v = 2 on 2 stages of nosync 2 s (sync 2.5 s), m = 4:
 * m·max + (Σ nosync − max) / v + Σ (sync − nosync) = 8 + 2 / 2 + 1 = 10, against
 * Eq. 9's 3·2 + 5 = 11; v = 1 is Eq. 9 itself. In flight on stage 0: Megatron's
 * (P − 1)·2 + (v − 1)·P = 4 warmup chunk forwards plus one, in chunks of half a
 * stage: ⌈5 / 2⌉ = 3 micro-batches (plain 1F1B: 2); stage 1: ⌈3 / 2⌉ = 2. */
static void test_interleaved(void)
{
    double nosync[] = {2.0, 2.0}, sync[] = {2.5, 2.5};
    CHECK_NEAR(tsl_pipeline_time_interleaved_s(2, nosync, sync, 4, 2), 10.0, EPS, "v 2: %g",
               tsl_pipeline_time_interleaved_s(2, nosync, sync, 4, 2));
    CHECK(tsl_pipeline_time_interleaved_s(2, nosync, sync, 4, 1) ==
              tsl_pipeline_time_s(2, nosync, sync, 4),
          "v 1 is Eq. 9");
    CHECK(tsl_pipeline_inflight_interleaved(0, 2, 4, 2) == 3 &&
              tsl_pipeline_inflight_interleaved(1, 2, 4, 2) == 2,
          "in flight under v 2: %u, %u", tsl_pipeline_inflight_interleaved(0, 2, 4, 2),
          tsl_pipeline_inflight_interleaved(1, 2, 4, 2));
    CHECK(tsl_pipeline_inflight_interleaved(0, 2, 1, 2) == 1, "never more than m");
    CHECK(tsl_pipeline_inflight_interleaved(0, 4, 8, 1) == tsl_pipeline_inflight(0, 4, 8),
          "v 1 is plain 1F1B");
}

/* The optimizer tail by hand. Three stages, forward f = 1, nosync 4 (so the
 * backward plus both p2p directions is 3), p2p 0.5 (0.25 per direction), the
 * last micro-batch's gradient sync 0.5 more (sync 4.5). Stage i's last backward
 * ends tail_i before T: tail_0 = 0, tail_1 = (4 − 1 − 0.25) + 0.5 = 3.25,
 * tail_2 = 6.5. Steps of 1, 2, 9: the tail is max(1 − 0, 2 − 3.25, 9 − 6.5) = 2.5
 * (the last stage's long step outlasts the drain below it); steps 1, 2, 3: stage
 * 0's own 1 (it ends last). Under v = 2 the backward part of the drain halves,
 * the sync does not: tail_1 = 2.75 / 2 + 0.5 = 1.875, tail_2 = 3.75: with steps
 * 1, 2, 3 the tail is max(1, 0.125, −0.75) = 1. */
static void test_opt_tail(void)
{
    double fwd[] = {1, 1, 1}, nosync[] = {4, 4, 4}, sync[] = {4.5, 4.5, 4.5};
    double p2p[] = {0.5, 0.5, 0.5}, big[] = {1, 2, 9}, small[] = {1, 2, 3};
    CHECK_NEAR(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, big, 0, 1), 2.5, EPS,
               "a long last step: %g",
               tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, big, 0, 1));
    CHECK_NEAR(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, small, 0, 1), 1.0, EPS,
               "stage 0 ends last");
    CHECK_NEAR(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, small, 0, 2), 1.0, EPS,
               "interleaved: stage 0 still last");
    CHECK_NEAR(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, big, 0, 2), 9 - 3.75, EPS,
               "interleaved drain is shorter: %g",
               tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, big, 0, 2));
    double none[] = {0, 0, 0};
    CHECK(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, none, 0, 1) == 0, "no steps");
    CHECK(tsl_pipeline_opt_tail_s(0, fwd, nosync, sync, p2p, big, 0, 1) == 0, "no stages");
    CHECK(tsl_pipeline_opt_tail_s(1, fwd, nosync, sync, p2p, big, 0, 1) == 1,
          "one stage: its step");
    /* A tied head's all-reduce of 0.5 s: stages 0 and 2 start it at T (stage 0's
     * backward ends last) and step after it; stage 1 keeps its credit. Steps 1, 2,
     * 3: max(0.5 + 1, 2 − 3.25, 0.5 + 3) = 3.5; steps 1, 2, 9: 0.5 + 9 = 9.5 (the
     * last stage no longer steps during the drain). One stage: no all-reduce. */
    CHECK_NEAR(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, small, 0.5, 1), 3.5, EPS,
               "tied: %g", tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, small, 0.5, 1));
    CHECK_NEAR(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, big, 0.5, 1), 9.5, EPS,
               "tied, long last step");
    CHECK_NEAR(tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, none, 0.5, 1), 0.5, EPS,
               "tied, no steps: the all-reduce alone");
    CHECK(tsl_pipeline_opt_tail_s(1, fwd, nosync, sync, p2p, big, 0.5, 1) == 1,
          "one stage: no all-reduce");
}

/* tsl_pipeline_iter by hand, on test_opt_tail's three stages (f 1, nosync 4 with
 * p2p 0.5, sync 4.5), m = 4.
 * STACK, v = 1: T0 = 3 · 4 + 12 = 24; each sync (0.5) after the stage's own last
 * backward, which ends tail_i = 0, 2.75, 5.5 before T0: ends 24.5, 21.75, 19 —
 * flush 24.5 (Eq. 9 sums them: 25.5). Steps 1, 2, 3: done at max(25.5, 23.75, 22),
 * tail 1; steps 1, 2, 9: 28, tail 3.5. Tied (0.5): stages 0 and 2 meet at
 * max(24.5, 19) and step after 25: max(26, 28) → tail 3.5. A slow sync on the last
 * stage (6.5, its backward ending at 24 − 5.5) ends at 18.5 + 6.5 = 25: flush 25
 * against Eq. 9's 31.5.
 * v = 2, m = 6: K = 3.5, T0 = 6 · 3.5 + 7 / 2 + 1.5 · 1/2 = 25.25; tails halve
 * (0, 1.375, 2.75): flush 25.75, steps 1, 2, 3 → tail 1.
 * PAPER: Eq. 9 / T_v and tsl_pipeline_opt_tail_s, bit for bit. */
static void test_iter(void)
{
    double fwd[] = {1, 1, 1}, nosync[] = {4, 4, 4}, sync[] = {4.5, 4.5, 4.5};
    double p2p[] = {0.5, 0.5, 0.5}, big[] = {1, 2, 9}, small[] = {1, 2, 3};
    tsl_pipeline_in_t in = {.n_stages = 3,
                            .n_micro = 4,
                            .interleave = 1,
                            .fwd_s = fwd,
                            .nosync_s = nosync,
                            .sync_s = sync,
                            .p2p_s = p2p,
                            .opt_s = small};
    tsl_pipeline_out_t o;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.flush_s, 24.5, EPS, "stack flush: %g", o.flush_s);
    CHECK_NEAR(o.opt_tail_s, 1.0, EPS, "stack steps: %g", o.opt_tail_s);
    in.opt_s = big;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.flush_s + o.opt_tail_s, 28.0, EPS, "stack, a long last step: %g",
               o.flush_s + o.opt_tail_s);
    in.opt_s = small;
    in.tie_s = 0.5;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.opt_tail_s, 3.5, EPS, "stack, tied: %g", o.opt_tail_s);
    in.tie_s = 0;
    double slow[] = {4.5, 4.5, 10.5};
    in.sync_s = slow;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.flush_s, 25.0, EPS, "stack: a slow sync overlaps the drain: %g", o.flush_s);
    CHECK_NEAR(tsl_pipeline_time_s(3, nosync, slow, 4), 31.5, EPS, "Eq. 9 sums it");
    in.paper = true;
    tsl_pipeline_iter(&in, &o);
    CHECK(o.flush_s == tsl_pipeline_time_s(3, nosync, slow, 4) &&
              o.opt_tail_s == tsl_pipeline_opt_tail_s(3, fwd, nosync, slow, p2p, small, 0, 1),
          "paper: Eq. 9 and its tail");
    in.paper = false;
    in.sync_s = sync;
    in.interleave = 2;
    in.n_micro = 6;
    tsl_pipeline_iter(&in, &o);
    CHECK_NEAR(o.flush_s, 25.75, EPS, "stack, v 2: %g", o.flush_s);
    CHECK_NEAR(o.opt_tail_s, 1.0, EPS, "stack, v 2 steps: %g", o.opt_tail_s);
    in.paper = true;
    tsl_pipeline_iter(&in, &o);
    CHECK(o.flush_s == tsl_pipeline_time_interleaved_s(3, nosync, sync, 6, 2) &&
              o.opt_tail_s == tsl_pipeline_opt_tail_s(3, fwd, nosync, sync, p2p, small, 0, 2),
          "paper, v 2: T_v and its tail");
    in.n_stages = 0;
    tsl_pipeline_iter(&in, &o);
    CHECK(o.flush_s == 0 && o.opt_tail_s == 0, "no stages");
}

static void test_balance(void)
{
    double equal[] = {3, 3, 3, 3};
    CHECK_NEAR(tsl_pipeline_balance(4, equal), 1 - 1.0 / 4, EPS, "perfect balance = 1 - 1/P");
    double lopsided[] = {0, 0, 5, 0};
    CHECK_NEAR(tsl_pipeline_balance(4, lopsided), 0, EPS, "all on one stage = 0");
    double ramp[] = {1, 2, 3, 4};
    CHECK_NEAR(tsl_pipeline_balance(4, ramp), 1 - 4.0 / 10, EPS, "1 - max/sum");
    CHECK(tsl_pipeline_balance(1, ramp) == 0, "one stage");
    double zeros[] = {0, 0, 0};
    CHECK(tsl_pipeline_balance(3, zeros) == 0, "zero sum");

    /* any values: α ∈ [0, 1 − 1/P] */
    uint32_t seed = 12345;
    for (int rep = 0; rep < 1000; rep++) {
        double v[8];
        uint32_t p = 2 + (uint32_t)rep % 7;
        for (uint32_t i = 0; i < p; i++) {
            seed = seed * 1103515245u + 12345u;
            v[i] = (double)(seed >> 8) / (1u << 24);
        }
        double a = tsl_pipeline_balance(p, v);
        CHECK(a >= 0 && a <= 1 - 1.0 / p + EPS, "alpha %g for P %u", a, p);
    }
}

int main(void)
{
    test_time();
    test_inflight();
    test_interleaved();
    test_opt_tail();
    test_iter();
    test_balance();
    return CHECK_DONE();
}
