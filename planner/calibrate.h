/*
 * calibrate.h — corrections fitted from trials (docs/cost-model.md "Calibration — from
 * trials"): what
 * the cost model predicted for a plan next to what the executor measured, per
 * hardware key, turned into factors that later plans on that hardware use.
 *
 * CONTRACT (fixed by the integration; the implementation may refine the fit but
 * keeps these types and functions):
 *
 *  - A sample is one finished trial, reduced to its slowest stage: predicted and
 *    measured compute (forward + backward, recomputation included), exposed
 *    communication, iteration time and peak memory, and the shape it ran
 *    (hidden size, tokens per micro-batch on one device, TP degree), so that
 *    compute corrections can depend on the shape range.
 *  - tsl_calib_fit fits corrections from n samples (n = 0: the identity).
 *    Samples with a non-positive measured or predicted time are ignored.
 *  - tsl_calib_predict_iter gives the corrected iteration time of a sample
 *    (what the cost model would now predict): it never reads the sample's
 *    measured fields. Leave-one-out = fit on the other samples, predict this one.
 *  - tsl_calib_compute_scale is what the cost model multiplies a block's compute
 *    time by on this hardware, for its shape; comm_scale its communication
 *    times; mem_scale its activation/peak memory.
 *  - mae_before / mae_after: mean absolute relative error of the iteration time
 *    over the fitted samples, uncorrected and corrected (leave-one-out, so a
 *    sample never calibrates itself).
 *
 * The fit (calibrate.c; docs/cost-model.md "Calibration"): each factor is a
 * Huber M-estimate of log(measured / predicted), robust to one outlier; the
 * compute factor is fitted to the measured iteration once communication is
 * corrected (so it fixes the figure plans are ranked by), per token range with
 * edges 4096, 16384, 65536 (the last range takes any); a range without samples
 * carries the pooled factor. The cost model applies a calibration attached to
 * a GPU type (cluster.h, tsl_cluster_set_calib; cost.h says where).
 *
 * Pure: no I/O, no allocation. Units: seconds, bytes.
 */
#ifndef TSL_CALIBRATE_H
#define TSL_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>

#define TSL_CALIB_RANGES 4u /* shape ranges (tokens per micro-batch) with their own factor */

typedef struct tsl_calib_sample {
    uint32_t hidden, tokens, tp; /* tokens: micro-batch samples on one device x sequence */
    double pred_compute_s, pred_comm_s, pred_iter_s;
    double meas_compute_s, meas_comm_s, meas_iter_s;
    uint64_t pred_peak_bytes, meas_peak_bytes;
} tsl_calib_sample_t;

typedef struct tsl_calib {
    uint32_t n_samples;
    /* compute factor per token range: tokens < range_max[i] (the last: any) */
    uint32_t range_max[TSL_CALIB_RANGES];
    double compute_scale[TSL_CALIB_RANGES];
    uint32_t range_samples[TSL_CALIB_RANGES];
    double comm_scale, mem_scale;
    double mae_before, mae_after; /* iteration time, relative; leave-one-out after */
    double mem_mae_before, mem_mae_after;
} tsl_calib_t;

/* A fit is applied only within these (docs/profile-format.md "Calibration": the
 * profile files' bounds, 1/20 .. 20 — hardware is never off by more; a factor
 * beyond says the trials did not time what was predicted) and only when its
 * leave-one-out iteration error stays below TSL_CALIB_MAX_LOO_ERROR: a fit that
 * does not predict its own trials better than that would replace a known error
 * with an unknown one. */
#define TSL_CALIB_SCALE_MIN     0.05
#define TSL_CALIB_SCALE_MAX     20.0
#define TSL_CALIB_MAX_LOO_ERROR 0.5

void tsl_calib_identity(tsl_calib_t *c);
/* 0 when the fit c may be applied; -1 with why (NUL-terminated, at most cap,
 * naming the figure, its value and the bound) when it must be refused. */
int tsl_calib_check(const tsl_calib_t *c, char *why, size_t cap);
void tsl_calib_fit(const tsl_calib_sample_t *s, size_t n, tsl_calib_t *out);
double tsl_calib_compute_scale(const tsl_calib_t *c, uint32_t hidden, uint32_t tokens);
double tsl_calib_predict_iter(const tsl_calib_t *c, const tsl_calib_sample_t *s);
uint64_t tsl_calib_predict_peak(const tsl_calib_t *c, const tsl_calib_sample_t *s);

#endif
