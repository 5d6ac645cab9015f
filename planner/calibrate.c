/*
 * calibrate.c — the fit of calibrate.h (docs/cost-model.md, "Calibration").
 *
 * Every factor is a robust mean of log ratios (measured over predicted): a
 * Huber M-estimate of location on log(ratio) with a fixed threshold of
 * TSL_CALIB_HUBER (≈ 10 %), so one wild trial (a throttled GPU, a noisy
 * neighbour) moves a factor by at most threshold / n instead of dragging it.
 * The Huber loss is convex: the iteration converges to the one minimum from
 * any start. No sorting, so no allocation.
 *
 * What each factor is fitted to:
 *   comm_scale     measured over predicted exposed communication (samples where
 *                  both are positive; else 1);
 *   compute_scale  the compute time that explains the measured iteration once
 *                  communication is corrected — (meas_iter − (pred_iter −
 *                  pred_compute − pred_comm) − comm_scale·pred_comm) / pred_compute —
 *                  so the correction fixes the figure plans are chosen by; when that
 *                  is not positive (the rest was over-predicted), meas_compute /
 *                  pred_compute. Per token range; a range without samples takes the
 *                  pooled factor of all ranges;
 *   mem_scale      measured over predicted peak memory.
 * Ranges (tokens per micro-batch on one device): < 4096, < 16384, < 65536, any:
 * micro-batch 1–32 × sequence 1024–4096 spans 1024–131072 tokens, two powers of
 * two per range.
 */
#include "calibrate.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define TSL_CALIB_HUBER 0.1 /* log-ratio threshold of the Huber estimate */
#define NO_SKIP         ((size_t)-1)

static const uint32_t k_range_max[TSL_CALIB_RANGES] = {4096u, 16384u, 65536u, UINT32_MAX};

static bool pos(double x)
{
    return isfinite(x) && x > 0;
}

static bool sample_ok(const tsl_calib_sample_t *s)
{
    return pos(s->pred_iter_s) && pos(s->meas_iter_s);
}

static uint32_t range_of(const tsl_calib_t *c, uint32_t tokens)
{
    for (uint32_t i = 0; i + 1 < TSL_CALIB_RANGES; i++)
        if (tokens < c->range_max[i])
            return i;
    return TSL_CALIB_RANGES - 1;
}

void tsl_calib_identity(tsl_calib_t *c)
{
    memset(c, 0, sizeof(*c));
    for (uint32_t i = 0; i < TSL_CALIB_RANGES; i++) {
        c->range_max[i] = k_range_max[i];
        c->compute_scale[i] = 1.0;
    }
    c->comm_scale = c->mem_scale = 1.0;
}

/* What one sample says about one factor: a log ratio, or false. */
typedef bool (*log_ratio_fn)(const tsl_calib_sample_t *s, double comm_scale, double *out);

static bool comm_ratio(const tsl_calib_sample_t *s, double comm_scale, double *out)
{
    (void)comm_scale;
    if (!sample_ok(s) || !pos(s->pred_comm_s) || !pos(s->meas_comm_s))
        return false;
    *out = log(s->meas_comm_s / s->pred_comm_s);
    return true;
}

static bool compute_ratio(const tsl_calib_sample_t *s, double comm_scale, double *out)
{
    if (!sample_ok(s) || !pos(s->pred_compute_s))
        return false;
    double comm = pos(s->pred_comm_s) ? s->pred_comm_s : 0.0;
    double rest = s->pred_iter_s - s->pred_compute_s - comm;
    double target = s->meas_iter_s - fmax(rest, 0.0) - comm_scale * comm;
    if (pos(target)) {
        *out = log(target / s->pred_compute_s);
        return true;
    }
    if (!pos(s->meas_compute_s))
        return false;
    *out = log(s->meas_compute_s / s->pred_compute_s);
    return true;
}

static bool mem_ratio(const tsl_calib_sample_t *s, double comm_scale, double *out)
{
    (void)comm_scale;
    if (s->pred_peak_bytes == 0 || s->meas_peak_bytes == 0)
        return false;
    *out = log((double)s->meas_peak_bytes / (double)s->pred_peak_bytes);
    return true;
}

/* Which samples one estimate reads: all but `skip`, in token range `range`
 * (TSL_CALIB_RANGES: any). */
typedef struct pick {
    const tsl_calib_sample_t *s;
    size_t n, skip;
    uint32_t range;
    const tsl_calib_t *ranges; /* range edges */
    log_ratio_fn fn;
    double comm_scale;
} pick_t;

static bool picked(const pick_t *p, size_t i, double *x)
{
    if (i == p->skip)
        return false;
    if (p->range < TSL_CALIB_RANGES && range_of(p->ranges, p->s[i].tokens) != p->range)
        return false;
    return p->fn(&p->s[i], p->comm_scale, x);
}

/* Huber M-estimate of the picked log ratios by iterated reweighting; *count
 * gets how many there were. 0 (a factor of 1) with none. */
static double huber_mean(const pick_t *p, uint32_t *count)
{
    double sum = 0, x;
    uint32_t k = 0;
    for (size_t i = 0; i < p->n; i++)
        if (picked(p, i, &x)) {
            sum += x;
            k++;
        }
    *count = k;
    if (k == 0)
        return 0.0;
    double mu = sum / k;
    for (int it = 0; it < 100; it++) {
        double wsum = 0, wx = 0;
        for (size_t i = 0; i < p->n; i++) {
            if (!picked(p, i, &x))
                continue;
            double d = fabs(x - mu);
            double w = d <= TSL_CALIB_HUBER ? 1.0 : TSL_CALIB_HUBER / d;
            wsum += w;
            wx += w * x;
        }
        double next = wx / wsum;
        if (fabs(next - mu) < 1e-12) {
            mu = next;
            break;
        }
        mu = next;
    }
    return mu;
}

/* The factors from every valid sample but `skip`; mae fields untouched. */
static void fit_factors(const tsl_calib_sample_t *s, size_t n, size_t skip, tsl_calib_t *c)
{
    uint32_t k;
    tsl_calib_identity(c);
    pick_t p = {.s = s, .n = n, .skip = skip, .range = TSL_CALIB_RANGES, .ranges = c};
    p.fn = comm_ratio;
    c->comm_scale = exp(huber_mean(&p, &k));
    p.fn = mem_ratio;
    c->mem_scale = exp(huber_mean(&p, &k));
    p.fn = compute_ratio;
    p.comm_scale = c->comm_scale;
    double pooled = huber_mean(&p, &k);
    c->n_samples = k;
    for (uint32_t r = 0; r < TSL_CALIB_RANGES; r++) {
        p.range = r;
        double mu = huber_mean(&p, &c->range_samples[r]);
        c->compute_scale[r] = exp(c->range_samples[r] ? mu : pooled);
    }
}

static double rel_err(double pred, double meas)
{
    return fabs(pred - meas) / meas;
}

void tsl_calib_fit(const tsl_calib_sample_t *s, size_t n, tsl_calib_t *out)
{
    fit_factors(s, n, NO_SKIP, out);
    double before = 0, after = 0, mb = 0, ma = 0;
    uint32_t k = 0, km = 0;
    for (size_t i = 0; i < n; i++) {
        if (!sample_ok(&s[i]))
            continue;
        tsl_calib_t loo;
        fit_factors(s, n, i, &loo); /* n is a handful of trials: naive is fine */
        before += rel_err(s[i].pred_iter_s, s[i].meas_iter_s);
        after += rel_err(tsl_calib_predict_iter(&loo, &s[i]), s[i].meas_iter_s);
        k++;
        if (s[i].pred_peak_bytes > 0 && s[i].meas_peak_bytes > 0) {
            double meas = (double)s[i].meas_peak_bytes;
            mb += rel_err((double)s[i].pred_peak_bytes, meas);
            ma += rel_err((double)tsl_calib_predict_peak(&loo, &s[i]), meas);
            km++;
        }
    }
    out->n_samples = k;
    out->mae_before = k ? before / k : 0.0;
    out->mae_after = k ? after / k : 0.0;
    out->mem_mae_before = km ? mb / km : 0.0;
    out->mem_mae_after = km ? ma / km : 0.0;
}

static bool scale_ok(double x)
{
    return x >= TSL_CALIB_SCALE_MIN && x <= TSL_CALIB_SCALE_MAX;
}

int tsl_calib_check(const tsl_calib_t *c, char *why, size_t cap)
{
    for (uint32_t i = 0; i < TSL_CALIB_RANGES; i++)
        if (c->range_samples[i] > 0 && !scale_ok(c->compute_scale[i])) {
            snprintf(why, cap, "compute factor x%.4g (token range %u) outside [%g, %g]",
                     c->compute_scale[i], i, TSL_CALIB_SCALE_MIN, TSL_CALIB_SCALE_MAX);
            return -1;
        }
    if (!scale_ok(c->comm_scale) || !scale_ok(c->mem_scale)) {
        bool comm = !scale_ok(c->comm_scale);
        snprintf(why, cap, "%s factor x%.4g outside [%g, %g]", comm ? "comm" : "memory",
                 comm ? c->comm_scale : c->mem_scale, TSL_CALIB_SCALE_MIN, TSL_CALIB_SCALE_MAX);
        return -1;
    }
    if (!(c->mae_after <= TSL_CALIB_MAX_LOO_ERROR)) {
        snprintf(why, cap,
                 "its leave-one-out iteration error stays %.1f%% (before: %.1f%%), above %.0f%%",
                 100 * c->mae_after, 100 * c->mae_before, 100 * TSL_CALIB_MAX_LOO_ERROR);
        return -1;
    }
    if (cap)
        why[0] = '\0';
    return 0;
}

double tsl_calib_compute_scale(const tsl_calib_t *c, uint32_t hidden, uint32_t tokens)
{
    (void)hidden; /* the ranges are by tokens alone (calibrate.h) */
    if (c == NULL)
        return 1.0;
    double f = c->compute_scale[range_of(c, tokens)];
    return pos(f) ? f : 1.0;
}

double tsl_calib_predict_iter(const tsl_calib_t *c, const tsl_calib_sample_t *s)
{
    double iter = s->pred_iter_s;
    if (c == NULL || !pos(iter))
        return iter;
    if (pos(s->pred_compute_s))
        iter += s->pred_compute_s * (tsl_calib_compute_scale(c, s->hidden, s->tokens) - 1.0);
    if (pos(s->pred_comm_s) && pos(c->comm_scale))
        iter += s->pred_comm_s * (c->comm_scale - 1.0);
    return fmax(iter, 0.0);
}

uint64_t tsl_calib_predict_peak(const tsl_calib_t *c, const tsl_calib_sample_t *s)
{
    if (c == NULL || !pos(c->mem_scale))
        return s->pred_peak_bytes;
    return (uint64_t)llround((double)s->pred_peak_bytes * c->mem_scale);
}
