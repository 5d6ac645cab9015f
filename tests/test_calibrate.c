/*
 * test_calibrate.c — planner/calibrate: the identity with no samples, a known
 * per-range compute scale recovered from synthetic trials, leave-one-out (a
 * sample never calibrates itself), bad samples ignored, one outlier bounded,
 * the communication and memory factors.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibrate.h"
#include "check.h"

/* A trial whose true compute is `scale` × predicted and whose communication is
 * `comm` × predicted; the rest of the iteration (0.1 s) is predicted right. */
static tsl_calib_sample_t sample(uint32_t tokens, double pred_compute, double scale, double comm)
{
    tsl_calib_sample_t s = {.hidden = 2048, .tokens = tokens, .tp = 1};
    s.pred_compute_s = pred_compute;
    s.pred_comm_s = 0.05;
    s.pred_iter_s = pred_compute + s.pred_comm_s + 0.1;
    s.meas_compute_s = pred_compute * scale;
    s.meas_comm_s = s.pred_comm_s * comm;
    s.meas_iter_s = s.meas_compute_s + s.meas_comm_s + 0.1;
    s.pred_peak_bytes = 1000000000ull + tokens;
    s.meas_peak_bytes = s.pred_peak_bytes;
    return s;
}

static void test_identity(void)
{
    tsl_calib_t c;
    tsl_calib_fit(NULL, 0, &c);
    CHECK(c.n_samples == 0 && c.comm_scale == 1.0 && c.mem_scale == 1.0, "identity factors");
    for (uint32_t r = 0; r < TSL_CALIB_RANGES; r++)
        CHECK(c.compute_scale[r] == 1.0 && c.range_samples[r] == 0, "range %u", r);
    CHECK(c.mae_before == 0 && c.mae_after == 0, "no error without samples");
    tsl_calib_sample_t s = sample(8192, 1.0, 2.0, 1.0);
    CHECK(tsl_calib_predict_iter(&c, &s) == s.pred_iter_s, "identity predicts the model");
    CHECK(tsl_calib_predict_peak(&c, &s) == s.pred_peak_bytes, "identity keeps memory");
    CHECK(tsl_calib_compute_scale(NULL, 1024, 1024) == 1.0, "NULL is the identity");
    tsl_calib_t id;
    tsl_calib_identity(&id);
    CHECK(id.range_max[0] < id.range_max[1] && id.range_max[TSL_CALIB_RANGES - 1] == UINT32_MAX,
          "ranges ascend, the last takes any");
}

static const double k_scale[TSL_CALIB_RANGES] = {1.6, 1.25, 0.9, 1.1};

/* Three trials per range of micro-batch × sequence, mb 1–32 × seq 1024–4096. */
static size_t spread(tsl_calib_sample_t *s)
{
    static const uint32_t tokens[] = {1024,  2048,  3072,  4096,  8192,   12288,
                                      16384, 32768, 49152, 65536, 131072, 98304};
    tsl_calib_t id;
    tsl_calib_identity(&id);
    size_t n = sizeof(tokens) / sizeof(tokens[0]);
    for (size_t i = 0; i < n; i++) {
        uint32_t r = 0;
        while (r + 1 < TSL_CALIB_RANGES && tokens[i] >= id.range_max[r])
            r++;
        s[i] = sample(tokens[i], 0.2 + 0.1 * (double)i, k_scale[r], 1.0);
    }
    return n;
}

static void test_ranges(void)
{
    tsl_calib_sample_t s[16];
    size_t n = spread(s);
    tsl_calib_t c;
    tsl_calib_fit(s, n, &c);
    CHECK(c.n_samples == n, "all %zu samples used (%u)", n, c.n_samples);
    for (uint32_t r = 0; r < TSL_CALIB_RANGES; r++) {
        CHECK(c.range_samples[r] == 3, "range %u has 3 samples (%u)", r, c.range_samples[r]);
        CHECK_NEAR(c.compute_scale[r], k_scale[r], 1e-9, "range %u scale %g", r,
                   c.compute_scale[r]);
    }
    CHECK_NEAR(tsl_calib_compute_scale(&c, 4096, 1024), 1.6, 1e-9, "lookup, small");
    CHECK_NEAR(tsl_calib_compute_scale(&c, 4096, 131072), 1.1, 1e-9, "lookup, large");
    for (size_t i = 0; i < n; i++)
        CHECK_NEAR(tsl_calib_predict_iter(&c, &s[i]), s[i].meas_iter_s, 1e-9, "sample %zu", i);
    CHECK(c.mae_before > 0.05, "the model was off (%g)", c.mae_before);
    CHECK(c.mae_after < 1e-9, "two others per range recover it exactly (%g)", c.mae_after);
    CHECK_NEAR(c.comm_scale, 1.0, 1e-12, "comm right");
}

/* A range with one sample: in sample its factor is exact, left out it falls
 * back to the pooled factor of the others, so mae_after shows the miss. */
static void test_leave_one_out(void)
{
    tsl_calib_sample_t s[4];
    for (int i = 0; i < 3; i++)
        s[i] = sample(8192, 1.0, 1.0, 1.0);
    s[3] = sample(100000, 1.0, 3.0, 1.0);
    tsl_calib_t c;
    tsl_calib_fit(s, 4, &c);
    CHECK_NEAR(c.compute_scale[3], 3.0, 1e-9, "in sample the lone range is exact");
    CHECK_NEAR(tsl_calib_predict_iter(&c, &s[3]), s[3].meas_iter_s, 1e-9, "in-sample fit");
    double miss = (s[3].meas_iter_s - s[3].pred_iter_s) / s[3].meas_iter_s;
    CHECK_NEAR(c.mae_before, miss / 4, 1e-9, "before: %g", c.mae_before);
    CHECK_NEAR(c.mae_after, miss / 4, 1e-9, "after: the lone sample is not its own witness (%g)",
               c.mae_after);
    /* with a twin the left-out one is predicted by the other */
    tsl_calib_sample_t t[5];
    memcpy(t, s, sizeof(s));
    t[4] = sample(120000, 2.0, 3.0, 1.0);
    tsl_calib_fit(t, 5, &c);
    CHECK(c.mae_after < 1e-9 && c.mae_before > 0.1, "twin: %g -> %g", c.mae_before, c.mae_after);
}

static void test_bad_and_outlier(void)
{
    tsl_calib_sample_t s[16];
    size_t n = spread(s);
    tsl_calib_t clean, dirty;
    tsl_calib_fit(s, n, &clean);
    s[n] = sample(2048, 1.0, 1.0, 1.0);
    s[n].meas_iter_s = 0;
    s[n + 1] = sample(2048, 1.0, 1.0, 1.0);
    s[n + 1].pred_iter_s = -1;
    s[n + 2] = sample(2048, 1.0, 1.0, 1.0);
    s[n + 2].meas_iter_s = NAN;
    tsl_calib_fit(s, n + 3, &dirty);
    CHECK(dirty.n_samples == n, "bad samples not counted (%u)", dirty.n_samples);
    for (uint32_t r = 0; r < TSL_CALIB_RANGES; r++)
        CHECK(dirty.compute_scale[r] == clean.compute_scale[r], "range %u unchanged", r);
    CHECK(dirty.mae_before == clean.mae_before && dirty.mae_after == clean.mae_after, "mae");

    /* nine trials at 1.2, one at 10x: the factor stays near 1.2 */
    tsl_calib_sample_t o[10];
    for (int i = 0; i < 10; i++)
        o[i] = sample(8192, 1.0, i == 7 ? 12.0 : 1.2, 1.0);
    tsl_calib_t c;
    tsl_calib_fit(o, 10, &c);
    CHECK(fabs(c.compute_scale[1] / 1.2 - 1) < 0.02, "outlier bounded: %g", c.compute_scale[1]);
    CHECK(c.compute_scale[0] == c.compute_scale[1], "empty range takes the pooled factor");
}

static void test_comm_and_memory(void)
{
    tsl_calib_sample_t s[6];
    for (int i = 0; i < 6; i++) {
        s[i] = sample(4096u << i, 1.0, 1.0, 2.0);
        s[i].meas_peak_bytes = (uint64_t)llround(1.15 * (double)s[i].pred_peak_bytes);
    }
    tsl_calib_t c;
    tsl_calib_fit(s, 6, &c);
    CHECK_NEAR(c.comm_scale, 2.0, 1e-9, "comm scale %g", c.comm_scale);
    for (uint32_t r = 0; r < TSL_CALIB_RANGES; r++)
        CHECK_NEAR(c.compute_scale[r], 1.0, 1e-9, "compute untouched by comm: %g",
                   c.compute_scale[r]);
    CHECK_NEAR(c.mem_scale, 1.15, 1e-6, "mem scale %g", c.mem_scale);
    CHECK(c.mem_mae_before > 0.1 && c.mem_mae_after < 1e-6, "memory %g -> %g", c.mem_mae_before,
          c.mem_mae_after);
    CHECK_NEAR((double)tsl_calib_predict_peak(&c, &s[0]), (double)s[0].meas_peak_bytes, 1e-6,
               "peak");
    CHECK(c.mae_after < 1e-9, "iteration after comm correction (%g)", c.mae_after);
}

/* tsl_calib_check: a consistent fit is applied; a factor beyond [0.05, 20] (the
 * cpu executor timed against an H100: x48,677) or a leave-one-out error above
 * 50% is refused, naming the figure. */
static void test_check(void)
{
    tsl_calib_sample_t s[6];
    tsl_calib_t c;
    char why[200] = "x";
    for (int i = 0; i < 6; i++)
        s[i] = sample(4096u << i, 1.0, 1.3, 1.0);
    tsl_calib_fit(s, 6, &c);
    CHECK(tsl_calib_check(&c, why, sizeof why) == 0 && why[0] == '\0', "x1.3 applied: %s", why);
    for (int i = 0; i < 6; i++)
        s[i] = sample(4096u << i, 1.0, 48677.0, 1.0);
    tsl_calib_fit(s, 6, &c);
    CHECK(tsl_calib_check(&c, why, sizeof why) != 0 && strstr(why, "compute factor") &&
              strstr(why, "outside [0.05, 20]"),
          "x48677 refused: %s", why);
    for (int i = 0; i < 6; i++)
        s[i] = sample(4096u << i, 1.0, 1.0, 760.0);
    tsl_calib_fit(s, 6, &c);
    CHECK(tsl_calib_check(&c, why, sizeof why) != 0 && strstr(why, "comm factor"),
          "comm x760 refused: %s", why);
    /* factors in bounds, but the trials disagree: each left out is mispredicted */
    tsl_calib_sample_t d[2] = {sample(8192, 1.0, 0.1, 1.0), sample(8192, 1.0, 8.0, 1.0)};
    tsl_calib_fit(d, 2, &c);
    CHECK(c.mae_after > 0.5, "the pair's leave-one-out error is large (%g)", c.mae_after);
    CHECK(tsl_calib_check(&c, why, sizeof why) != 0 && strstr(why, "leave-one-out"),
          "a fit that does not predict its trials is refused: %s", why);
}

int main(void)
{
    test_check();
    test_identity();
    test_ranges();
    test_leave_one_out();
    test_bad_and_outlier();
    test_comm_and_memory();
    return CHECK_DONE();
}
