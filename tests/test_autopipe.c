/*
 * test_autopipe.c — Algorithm 1, the master-stage heuristic partitioner and the
 * micro-batch slicer (planner/autopipe.h).
 */
#include "check.h"

#include <stdint.h>
#include <string.h>

#include "autopipe.h"
#include "pipesim.h"

#define LCG_SEED 0xa070b1beu
#include "lcg.h"

/* Exhaustive min-max over all partitions of w[0..n) into p non-empty stages. */
static double brute_minmax(const double *w, uint32_t n, uint32_t p, uint32_t from, double acc_max)
{
    if (p == 1) {
        double sum = 0;
        for (uint32_t k = from; k < n; k++)
            sum += w[k];
        return fmax(acc_max, sum);
    }
    double best = INFINITY, sum = 0;
    for (uint32_t end = from + 1; end + (p - 1) <= n; end++) {
        sum = 0;
        for (uint32_t k = from; k < end; k++)
            sum += w[k];
        best = fmin(best, brute_minmax(w, n, p - 1, end, fmax(acc_max, sum)));
    }
    return best;
}

static void test_minmax(void)
{
    double w[12];
    uint32_t first[13];
    int n_cases = 0, ok = 0;
    for (int t = 0; t < 400; t++) {
        uint32_t n = 1 + lcg_below(11), p = 1 + lcg_below(n < 5 ? n : 5);
        for (uint32_t k = 0; k < n; k++)
            w[k] = (t % 3 == 0) ? (double)(1 + lcg_below(4)) : lcg01() * 3;
        double got;
        tsl_err_t err;
        if (tsl_autopipe_minmax(w, n, p, first, &got, &err)) {
            fprintf(stderr, "minmax: %s\n", err.msg);
            continue;
        }
        n_cases++;
        double want = brute_minmax(w, n, p, 0, 0);
        int valid = first[0] == 0 && first[p] == n;
        double mx = 0;
        for (uint32_t s = 0; s < p; s++) {
            valid = valid && first[s + 1] > first[s];
            double sum = 0;
            for (uint32_t k = first[s]; k < first[s + 1] && valid; k++)
                sum += w[k];
            mx = fmax(mx, sum);
        }
        if (valid && got == want && mx == got)
            ok++;
        else
            fprintf(stderr, "minmax n=%u p=%u: %.17g, brute force %.17g, valid %d\n", n, p, got,
                    want, valid);
    }
    CHECK(n_cases == 400 && ok == n_cases, "Algorithm 1 = exhaustive optimum in %d of %d", ok,
          n_cases);
    printf("Algorithm 1: equals the exhaustive min-max in %d/%d random cases\n", ok, n_cases);

    tsl_err_t err;
    err.msg[0] = 0;
    CHECK(tsl_autopipe_minmax(w, 3, 4, first, NULL, &err) == -1 && strstr(err.msg, "n_stages"),
          "more stages than blocks: %s", err.msg);
    w[1] = -1;
    CHECK(tsl_autopipe_minmax(w, 3, 2, first, NULL, &err) == -1 && strstr(err.msg, "w[1]"),
          "negative weight: %s", err.msg);
}

static int simulate_first(const tsl_autopipe_in_t *in, const uint32_t *first, double *iter)
{
    double f[64], b[64], c[64];
    tsl_err_t err;
    if (tsl_autopipe_stage_times(in, first, f, b, c, &err))
        return -1;
    tsl_pipesim_in_t si;
    memset(&si, 0, sizeof(si));
    si.n_stages = in->n_stages;
    si.n_micro = in->n_micro;
    si.fwd_s = f;
    si.bwd_s = b;
    si.p2p_s = c;
    size_t bytes = tsl_pipesim_ws_bytes(in->n_stages, in->n_micro, 0);
    void *ws = malloc(bytes);
    tsl_pipesim_out_t o;
    int rc = ws ? tsl_pipesim_run(&si, ws, bytes, &o, &err) : -1;
    if (rc == 0)
        *iter = o.iter_s;
    free(ws);
    return rc;
}

static void test_partition(void)
{
    double f[96], b[96];
    int n_cases = 0, valid = 0, not_worse = 0, improved = 0, consistent = 0, same = 0;
    double best_gain = 0;
    for (int t = 0; t < 200; t++) {
        tsl_autopipe_in_t in;
        memset(&in, 0, sizeof(in));
        in.n_blocks = 8 + lcg_below(80);
        in.n_stages = 2 + lcg_below(7);
        in.n_micro = in.n_stages * (1 + lcg_below(4));
        in.p2p_s = 0.05 * lcg01();
        for (uint32_t k = 0; k < in.n_blocks; k++) {
            /* Transformer-like: alternating attention/FFN blocks, an embedding-like
             * light block first and a heavy head last */
            f[k] = (k % 2 ? 1.3 : 1.0) * (0.8 + 0.4 * lcg01());
            if (k == 0)
                f[k] = 0.05;
            if (k == in.n_blocks - 1)
                f[k] = 2 + 3 * lcg01();
            b[k] = f[k] * (1.8 + 0.4 * lcg01());
        }
        in.fwd_s = f;
        in.bwd_s = b;
        tsl_autopipe_result_t r, r2;
        tsl_err_t err;
        if (tsl_autopipe_partition(&in, &r, &err)) {
            fprintf(stderr, "partition: %s\n", err.msg);
            continue;
        }
        n_cases++;
        int v = r.n_stages == in.n_stages && r.first[0] == 0 && r.first[in.n_stages] == in.n_blocks;
        for (uint32_t s = 0; s < in.n_stages; s++)
            v = v && r.first[s + 1] > r.first[s];
        valid += v;
        if (r.iter_s <= r.alg1_iter_s)
            not_worse++;
        if (r.iter_s < r.alg1_iter_s * (1 - 1e-9)) {
            improved++;
            best_gain = fmax(best_gain, 1 - r.iter_s / r.alg1_iter_s);
        }
        double again, alg1_again;
        if (simulate_first(&in, r.first, &again) == 0 &&
            simulate_first(&in, r.alg1_first, &alg1_again) == 0 && again == r.iter_s &&
            alg1_again == r.alg1_iter_s)
            consistent++;
        if (tsl_autopipe_partition(&in, &r2, &err) == 0 && memcmp(&r, &r2, sizeof(r)) == 0)
            same++;
    }
    CHECK(n_cases == 200, "partition: %d cases ran", n_cases);
    CHECK(valid == n_cases, "partition: %d of %d valid", valid, n_cases);
    CHECK(not_worse == n_cases, "heuristic no worse than Algorithm 1 in %d of %d", not_worse,
          n_cases);
    CHECK(improved > 0, "the master-stage moves never improved on Algorithm 1");
    CHECK(consistent == n_cases, "reported times re-simulate in %d of %d", consistent, n_cases);
    CHECK(same == n_cases, "deterministic in %d of %d", same, n_cases);
    printf("partitioner: %d random cases, master-stage moves beat Algorithm 1's simulated "
           "time in %d (best -%.2f%%)\n",
           n_cases, improved, 100 * best_gain);

    /* a balanced case has nothing to gain: Algorithm 1's partition stays */
    double uf[16], ub[16];
    for (int k = 0; k < 16; k++) {
        uf[k] = 1;
        ub[k] = 2;
    }
    tsl_autopipe_in_t in;
    memset(&in, 0, sizeof(in));
    in.n_blocks = 16;
    in.fwd_s = uf;
    in.bwd_s = ub;
    in.n_stages = 4;
    in.n_micro = 8;
    tsl_autopipe_result_t r;
    tsl_err_t err;
    CHECK(tsl_autopipe_partition(&in, &r, &err) == 0, "uniform: %s", err.msg);
    CHECK(r.max_stage_s == 12 && r.iter_s == (8 + 3) * 12.0, "uniform: max %g, T %g", r.max_stage_s,
          r.iter_s);

    in.n_stages = 17;
    err.msg[0] = 0;
    CHECK(tsl_autopipe_partition(&in, &r, &err) == -1 && strstr(err.msg, "n_stages"),
          "17 stages for 16 blocks: %s", err.msg);
    in.n_stages = 4;
    in.n_micro = 0;
    CHECK(tsl_autopipe_partition(&in, &r, &err) == -1 && strstr(err.msg, "n_micro"),
          "0 micro-batches: %s", err.msg);
}

/* Two pinned cases of a second generator (seed 0x1234): case 0 needs step 3 (the
 * master-stage moves; without them the result stays at Algorithm 1's 217.82),
 * case 82 needs step 2 (the Eq. (1) adjustment after the master; without it the
 * best found is 155.39). The pinned values are this implementation's results. */
static void test_pinned(void)
{
    uint64_t st = 0x1234u;
    double f[64], b[64];
    for (int t = 0; t <= 82; t++) {
#define R01() lcg_next01(&st)
        tsl_autopipe_in_t in;
        memset(&in, 0, sizeof(in));
        in.n_blocks = 8 + (uint32_t)(R01() * 40);
        in.n_stages = 2 + (uint32_t)(R01() * 7);
        in.n_micro = in.n_stages * (1 + (uint32_t)(R01() * 4));
        in.p2p_s = 0.05 * R01();
        for (uint32_t k = 0; k < in.n_blocks; k++) {
            f[k] = (k % 2 ? 1.3 : 1.0) * (0.8 + 0.4 * R01());
            if (k == 0)
                f[k] = 0.05;
            if (k == in.n_blocks - 1)
                f[k] = 2 + 3 * R01();
            b[k] = f[k] * (1.8 + 0.4 * R01());
        }
#undef R01
        if (t != 0 && t != 82)
            continue;
        in.fwd_s = f;
        in.bwd_s = b;
        tsl_autopipe_result_t r;
        tsl_err_t err;
        if (tsl_autopipe_partition(&in, &r, &err)) {
            CHECK(0, "pinned case %d: %s", t, err.msg);
            continue;
        }
        double want = t == 0 ? 202.251318676 : 152.973606793;
        CHECK(r.iter_s <= want * (1 + 1e-9), "pinned case %d: %.12g, want <= %.12g (Alg. 1 %.12g)",
              t, r.iter_s, want, r.alg1_iter_s);
        printf("pinned case %d (%u blocks, %u stages, m=%u): Algorithm 1 %.3f -> AutoPipe %.3f "
               "(master %u -> %u, %u partitions simulated)\n",
               t, in.n_blocks, in.n_stages, in.n_micro, r.alg1_iter_s, r.iter_s,
               r.alg1_master_stage, r.master_stage, r.evals);
    }
}

static int slice_balanced(uint32_t P, uint32_t m, double p2p, const tsl_autopipe_slice_cfg_t *cfg,
                          tsl_autopipe_slice_t *out)
{
    double f[64], b[64], c[64];
    for (uint32_t s = 0; s < P; s++) {
        f[s] = 1;
        b[s] = 2;
        c[s] = p2p;
    }
    tsl_pipesim_in_t in;
    memset(&in, 0, sizeof(in));
    in.n_stages = P;
    in.n_micro = m;
    in.fwd_s = f;
    in.bwd_s = b;
    in.p2p_s = c;
    tsl_err_t err;
    int rc = tsl_autopipe_slice(&in, cfg, out, &err);
    if (rc)
        fprintf(stderr, "slice: %s\n", err.msg);
    return rc;
}

static void test_slicer(void)
{
    tsl_autopipe_slice_t s;
    /* P = 2: never (AutoPipe Fig. 10) */
    for (uint32_t m = 1; m <= 16; m++)
        if (slice_balanced(2, m, 0.1, NULL, &s) == 0)
            CHECK(!s.applied && s.n_sliced == 0 && strstr(s.why, "not applied"),
                  "P=2 m=%u: applied (%s)", m, s.why);

    /* deep balanced pipelines: applied, startup cut >= 40% */
    static const uint32_t Ps[] = {4, 5, 6, 8, 12, 16};
    static const double p2ps[] = {0, 0.05, 0.2};
    for (size_t a = 0; a < sizeof(Ps) / sizeof(Ps[0]); a++)
        for (size_t k = 0; k < sizeof(p2ps) / sizeof(p2ps[0]); k++) {
            uint32_t P = Ps[a];
            if (slice_balanced(P, 2 * P, p2ps[k], NULL, &s))
                continue;
            CHECK(s.applied && s.n_sliced >= 1, "P=%u p2p %g: not applied (%s)", P, p2ps[k], s.why);
            CHECK(s.startup_cut >= 0.40, "P=%u p2p %g: startup cut %.1f%%", P, p2ps[k],
                  100 * s.startup_cut);
            CHECK(s.sliced_iter_s < s.iter_s, "P=%u p2p %g: iteration %g not below %g", P, p2ps[k],
                  s.sliced_iter_s, s.iter_s);
            if (P == 4 || P == 8)
                printf("slicer P=%u m=%u p2p %.2f: %u sliced, startup %.3f -> %.3f (-%.1f%%), "
                       "iteration %.3f -> %.3f (-%.2f%%)\n",
                       P, 2 * P, p2ps[k], s.n_sliced, s.startup_s, s.sliced_startup_s,
                       100 * s.startup_cut, s.iter_s, s.sliced_iter_s,
                       100 * (1 - s.sliced_iter_s / s.iter_s));
        }

    /* the simulator says no: halves as slow as wholes only add work */
    tsl_autopipe_slice_cfg_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.half_fwd_frac = 1.0;
    if (slice_balanced(8, 16, 0, &cfg, &s) == 0)
        CHECK(!s.applied && strstr(s.why, "not applied"), "slow halves: applied (%s)", s.why);
    /* or the gain is below the required one */
    memset(&cfg, 0, sizeof(cfg));
    cfg.min_gain = 0.5;
    if (slice_balanced(8, 16, 0, &cfg, &s) == 0)
        CHECK(!s.applied, "min_gain 50%%: applied (%s)", s.why);
    /* one stage: nothing to cut */
    if (slice_balanced(1, 4, 0, NULL, &s) == 0)
        CHECK(!s.applied, "P=1: applied (%s)", s.why);
    /* min_stages lowered to 2: the simulation alone decides */
    memset(&cfg, 0, sizeof(cfg));
    cfg.min_stages = 2;
    if (slice_balanced(2, 8, 0, &cfg, &s) == 0)
        CHECK(s.applied == (s.sliced_iter_s < s.iter_s), "P=2, min_stages 2: %s", s.why);
}

int main(void)
{
    test_minmax();
    test_partition();
    test_pinned();
    test_slicer();
    return CHECK_DONE();
}
