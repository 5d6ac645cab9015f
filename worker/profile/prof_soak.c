/*
 * prof_soak.c — the soak before the GEMM table (prof.h tsl_prof_soak): device-free,
 * so that the cuda backend's windows (prof_dev.c) and the sim backend's modelled clock
 * (prof_sim.c) settle by the same rule, and a test can drive it.
 *
 * Why: a short GEMM burst runs at the boost clock; a training step keeps the GPU at
 * its power limit, where the SM clock settles lower (ml-engineering's mamf-finder
 * reports MAMF, the best burst, and MSMF, the best rate a shape holds at full power;
 * docs/cost-model.md "Sustained clocks"). The built-in GPUs are priced at the latter,
 * so a measured profile must be too.
 */
#include "prof.h"

#include <string.h>

#define MAX_WINDOWS 100000u

/* The last n rates of the ring r (STABLE long, w windows so far): median and spread. */
static void last_stats(const double *r, uint32_t w, double *median, double *spread)
{
    uint32_t n = w < TSL_PROF_SOAK_STABLE ? w : TSL_PROF_SOAK_STABLE;
    double v[TSL_PROF_SOAK_STABLE], lo = 0, hi = 0;
    for (uint32_t i = 0; i < n; i++) {
        v[i] = r[(w - 1 - i) % TSL_PROF_SOAK_STABLE];
        lo = i == 0 || v[i] < lo ? v[i] : lo;
        hi = i == 0 || v[i] > hi ? v[i] : hi;
    }
    *spread = lo > 0 ? hi / lo - 1 : 0;
    *median = tsl_prof_median(v, n);
}

int tsl_prof_soak(tsl_prof_window_fn fn, void *ud, tsl_prof_soak_t *s, FILE *progress,
                  tsl_err_t *err)
{
    double ring[TSL_PROF_SOAK_STABLE];
    s->windows = 0;
    s->seconds = 0;
    s->settled = false;
    s->first_tflops = s->last_tflops = s->settled_tflops = s->spread = 0;
    if (!(s->max_s > 0))
        return 0;
    if (!(s->window_s > 0))
        return tsl_err_set(err, "soak: window %g s must be > 0", s->window_s);
    while (s->seconds < s->max_s && s->windows < MAX_WINDOWS) {
        double took = 0, rate = 0;
        if (fn(ud, s->window_s, &took, &rate, err))
            return -1;
        if (!(took > 0) || !(rate > 0))
            return tsl_err_set(err, "soak: window %u took %g s at %g FLOP/s", s->windows + 1, took,
                               rate);
        ring[s->windows % TSL_PROF_SOAK_STABLE] = rate / 1e12;
        s->windows++;
        s->seconds += took;
        if (s->windows == 1)
            s->first_tflops = rate / 1e12;
        s->last_tflops = rate / 1e12;
        last_stats(ring, s->windows, &s->settled_tflops, &s->spread);
        s->settled = s->windows >= TSL_PROF_SOAK_STABLE && s->spread <= TSL_PROF_SOAK_TOL;
        if (progress)
            fprintf(progress,
                    "profile: soak %5.1f s of at most %g: %.1f TFLOP/s (last %u windows within "
                    "%.2f %%)\n",
                    s->seconds, s->max_s, s->last_tflops,
                    s->windows < TSL_PROF_SOAK_STABLE ? s->windows : TSL_PROF_SOAK_STABLE,
                    100 * s->spread);
        if (s->settled)
            break;
    }
    if (progress && s->settled)
        fprintf(progress,
                "profile: soak settled at %.1f TFLOP/s after %.1f s (%u windows; first window "
                "%.1f)\n",
                s->settled_tflops, s->seconds, s->windows, s->first_tflops);
    else if (progress)
        fprintf(progress,
                "profile: soak stopped at its %g s cap before settling (last %u windows %.2f %% "
                "apart, more than %.0f %%): the GEMM table may run above the sustained rate; "
                "a longer --soak lets it settle\n",
                s->max_s, s->windows < TSL_PROF_SOAK_STABLE ? s->windows : TSL_PROF_SOAK_STABLE,
                100 * s->spread, 100 * TSL_PROF_SOAK_TOL);
    return 0;
}
