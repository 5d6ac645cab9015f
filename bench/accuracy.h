/*
 * accuracy.h — bench/accuracy (docs/cost-model.md, "bench/accuracy"): single-device plans run
 * through the stage executor in-process, each next to what the cost model predicts
 * for it from built-in figures, from a measured profile, and calibrated from the
 * other plans (leave-one-out); the error and rank correlation of each column.
 *
 * accuracy.c runs the plans; accuracy_stats.c holds the statistics (pure);
 * accuracy_out.c prints the markdown table and the JSON. Units: seconds, bytes.
 */
#ifndef TSL_BENCH_ACCURACY_H
#define TSL_BENCH_ACCURACY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calibrate.h"

typedef struct acc_plan {
    uint32_t hidden, heads, layers, seq, mbs, ga; /* ga: micro-batches per iteration */
    bool ckpt;
} acc_plan_t;

/* The columns of a row; NAN / 0 where a column does not exist. */
typedef enum {
    ACC_BUILTIN = 0, /* built-in figures (datasheet × efficiency, roofline) */
    ACC_PROFILE,     /* the measured profile (--profile) */
    ACC_FIT,         /* calibrated from all plans, this one included (in-sample) */
    ACC_LOO,         /* calibrated from the other plans (leave-one-out) */
    ACC_TORCH,       /* PyTorch on the same shapes (--torch): a reference, not a prediction */
    ACC_COLUMNS
} acc_col_t;

typedef struct acc_row {
    acc_plan_t p; /* as run (after --scale-down) */
    bool ran, oom;
    char why[512];              /* why a plan did not run */
    double iter_s[ACC_COLUMNS]; /* predicted (or PyTorch) iteration time */
    uint64_t peak[ACC_COLUMNS]; /* predicted (or PyTorch) peak memory */
    double meas_s;              /* the executor's median iteration */
    double meas_opt_s;          /* of which the optimizer step (the model has none) */
    uint64_t meas_peak;         /* the executor's peak device memory */
    tsl_calib_sample_t sample;  /* the calibration base's prediction + the measurement */
} acc_row_t;

const char *acc_col_name(acc_col_t c);

/* Mean absolute relative error of pred against meas over the pairs where both
 * are finite and meas > 0; NAN when there are none. n_out: how many. */
double acc_mae(const double *pred, const double *meas, size_t n, size_t *n_out);

/* Spearman rank correlation (ties get their mean rank) over the same pairs; NAN
 * with fewer than 2 or when either side is constant. */
double acc_spearman(const double *x, const double *y, size_t n);

typedef struct acc_report {
    const char *devops, *gpu, *profile;
    bool scaled_down, torch;
    acc_row_t *rows;
    size_t n_rows;
    tsl_calib_t all; /* the fit over every plan: what the daemon would store and show */
} acc_report_t;

void acc_print_markdown(const acc_report_t *r);
/* The same as one JSON document on f. */
void acc_print_json(const acc_report_t *r, void *file);

#endif
