/*
 * profile_check.h — what a measured profile report (ReportProfile) must satisfy
 * before tesseld stores it: every figure within physical bounds for its unit,
 * the report's timestamp near the daemon's clock, and no figure wildly off the
 * same node's stored value of the same figure. Plans are priced from these
 * figures and cached, so one bad report would otherwise poison every plan for
 * that GPU model (a block time ×10^6 predicts days per iteration; ×10^-9 makes
 * every plan look impossible to beat).
 *
 * Pure: no I/O, no clock (the caller passes now); the labels' texts come from the
 * caller (tsl_profile_labels_json, once per figure), so the checks allocate only
 * the duplicate check's sort keys. Errors are TSL_E_INVALID naming the figure
 * (measurements[i], its name) and the bound it broke.
 *
 * Bounds by unit (docs/api.md, "Profile bounds"):
 *   s        1e-9 .. 3600 (one kernel, block or collective)
 *   bytes/s  1e4 .. 1e14 (100 TB/s); 0 only for a one-GPU group's bus bandwidth
 *   bytes    0 .. 16 TiB
 *   flop     0 .. 1e18
 *   flop/s   1e6 .. 1e17 (100 000 TFLOP/s, the cluster bound)
 *   ratio    0.5 .. 100 (overlap slowdowns: the cluster bound 1..100, less noise)
 * and gemm_fwd's implied rate 2·m·n·k·batch / time within flop/s's bounds.
 */
#ifndef TSL_API_PROFILE_CHECK_H
#define TSL_API_PROFILE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "tessel/v1/registry.pb-c.h"

/* A figure outside TSL_PROFILE_OUTLIER× / 1/TSL_PROFILE_OUTLIER of the node's
 * stored one is refused: hardware does not speed up or slow down 20× between
 * reports; a unit slip or a broken timer does. */
#define TSL_PROFILE_OUTLIER 20.0

/* measured_unix may lie this far behind the daemon's clock (a spool replayed
 * after a long outage) and this far ahead (clock skew). */
#define TSL_PROFILE_MAX_AGE_S  (366 * 86400)
#define TSL_PROFILE_MAX_SKEW_S 86400

/* One figure the node reported before (its newest stored value). */
typedef struct tsl_profile_prior {
    const char *name;
    const char *labels_json; /* compact JSON, keys sorted, as the store keeps it */
    int64_t device_index;    /* -1: a node figure (per_device false) */
    double value;
} tsl_profile_prior_t;

/* Measurement m's labels as the store keeps them and every check compares them:
 * a compact JSON object with sorted keys (one spelling per label set; of a key given
 * twice the last wins, and tsl_profile_check_labels refuses the report). The caller
 * frees it; NULL when out of memory. ReportProfile serialises each figure's labels
 * once with this and hands the texts to the checks below and to the store. */
char *tsl_profile_labels_json(const Tessel__V1__Measurement *m);

/* Measurement i's value within the bounds of its unit (an unknown unit is
 * refused, naming the known ones). */
int tsl_profile_check_figure(const Tessel__V1__Measurement *m, size_t i, tsl_err_t *err);

/* Measurement i's labels: no key given twice (the store kept the last one), and
 * the labels tesseld reads as numbers — a GEMM's m, n, k, batch; a block's h, s,
 * a, f (digits, then 'g' for a gated FFN), mb, tp; a collective's group (each
 * 0..2^32-1) and bytes (0..2^63-1) — whole decimal numbers, as tessel-worker writes
 * them ("inf" read as an infinite GEMM, "1e3" or "0x10" as numbers). */
int tsl_profile_check_labels(const Tessel__V1__Measurement *m, size_t i, tsl_err_t *err);

/* No figure (name, device or node, labels) given twice in one report: the
 * aggregate averaged the two as if two workers had measured them. labels[i] is
 * measurement i's tsl_profile_labels_json text. O(n log n). */
int tsl_profile_check_duplicates(const Tessel__V1__ReportProfileRequest *req,
                                 const char *const *labels, tsl_err_t *err);

/* measured_unix 0 (now) or within [now - MAX_AGE, now + MAX_SKEW]. */
int tsl_profile_check_time(int64_t measured_unix, int64_t now, tsl_err_t *err);

/* Every figure of req against prior (sorted in place; n_prior 0: none). Only
 * times and rates are compared (s, bytes/s, flop/s): memory figures move with
 * what else runs. Priors are the same worker's, and a worker's id changes with
 * its GPUs, so new GPUs start without history. */
int tsl_profile_check_outliers(const Tessel__V1__ReportProfileRequest *req,
                               const char *const *labels, tsl_profile_prior_t *prior,
                               size_t n_prior, tsl_err_t *err);

/* At least one figure, then all of the above: the time, each figure's labels and
 * bounds, the duplicates, the history. labels: as for tsl_profile_check_duplicates
 * (req->n_measurements texts). */
int tsl_profile_check_report(const Tessel__V1__ReportProfileRequest *req, const char *const *labels,
                             int64_t now, tsl_profile_prior_t *prior, size_t n_prior,
                             tsl_err_t *err);

#endif
