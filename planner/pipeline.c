/*
 * pipeline.c — 1F1B-flush pipeline time (Galvatron-BMW Eq. 9), in-flight
 * micro-batches per stage, and balance degrees (Eq. 6).
 */
#include "pipeline.h"

#include <math.h>

/* The slowest stage paces the m − 1 steady-state micro-batches; the last one
 * (with gradient sync) still has to pass through every stage. */
double tsl_pipeline_time_s(uint32_t n_stages, const double *stage_nosync_s,
                           const double *stage_sync_s, uint32_t m) {
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
uint32_t tsl_pipeline_inflight(uint32_t stage, uint32_t n_stages, uint32_t m) {
    if (stage >= n_stages)
        return 0;
    uint32_t warm = n_stages - stage;
    return warm < m ? warm : m;
}

double tsl_pipeline_balance(uint32_t n, const double *values) {
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
