/*
 * accuracy_out.c — bench/accuracy's markdown table and JSON document: one row
 * per plan (shape, predicted columns, measured), then per column the mean
 * absolute error and Spearman's rank correlation against the measurement, for
 * the iteration time and for peak memory.
 */
#include "accuracy.h"

#include <math.h>
#include <stdio.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

static bool shown(const acc_report_t *r, acc_col_t c)
{
    return (c != ACC_PROFILE || r->profile != NULL) && (c != ACC_TORCH || r->torch);
}

/* Column c of every row, and the measurement, as arrays (time or memory). */
static void column(const acc_report_t *r, acc_col_t c, bool mem, double *x, double *y)
{
    for (size_t i = 0; i < r->n_rows; i++) {
        const acc_row_t *w = &r->rows[i];
        bool ok = w->ran && !w->oom;
        if (mem) {
            x[i] = ok && w->peak[c] ? (double)w->peak[c] : NAN;
            y[i] = ok && w->meas_peak ? (double)w->meas_peak : NAN;
        } else {
            x[i] = ok ? w->iter_s[c] : NAN;
            y[i] = ok ? w->meas_s : NAN;
        }
    }
}

static void cell_s(double v)
{
    if (isfinite(v))
        printf(" %.4g |", v);
    else
        printf(" – |");
}

static void print_row(const acc_report_t *r, const acc_row_t *w)
{
    const acc_plan_t *p = &w->p;
    printf("| %u | %u | %u | %u | %u | %s |", p->hidden, p->layers, p->seq, p->mbs, p->ga,
           p->ckpt ? "on" : "off");
    for (acc_col_t c = 0; c < ACC_COLUMNS; c++)
        if (shown(r, c) && c != ACC_FIT)
            cell_s(w->ran && !w->oom ? w->iter_s[c] : NAN);
    if (!w->ran || w->oom)
        printf(" %s | – |", w->oom ? "OOM" : "did not run");
    else
        printf(" %.4g | %.0f%% |", w->meas_s, 100 * w->meas_opt_s / w->meas_s);
    if (w->ran && !w->oom)
        printf(" %.2f / %.2f |\n", (double)w->peak[r->profile ? ACC_PROFILE : ACC_BUILTIN] / GIB,
               (double)w->meas_peak / GIB);
    else
        printf(" – |\n");
}

static void print_summary(const acc_report_t *r, double *x, double *y)
{
    printf("\n| column | iteration MAE | Spearman | memory MAE | plans |\n|---|---|---|---|---|\n");
    for (acc_col_t c = 0; c < ACC_COLUMNS; c++) {
        if (!shown(r, c))
            continue;
        size_t k;
        column(r, c, false, x, y);
        double mae = acc_mae(x, y, r->n_rows, &k), rho = acc_spearman(x, y, r->n_rows);
        column(r, c, true, x, y);
        double mem = acc_mae(x, y, r->n_rows, NULL);
        printf("| %s | %.1f%% | %.3f | %.1f%% | %zu |\n", acc_col_name(c), 100 * mae, rho,
               100 * mem, k);
    }
}

void acc_print_markdown(const acc_report_t *r)
{
    printf("bench/accuracy: devops %s, predicted for 1x%s%s%s%s\n\n", r->devops, r->gpu,
           r->profile ? ", profile " : "", r->profile ? r->profile : "",
           r->scaled_down ? " (--scale-down: a smoke run, not a measurement)" : "");
    printf("| hidden | layers | seq | mbs | ga | ckpt | built-in s |%s loo s |%s measured s | "
           "opt | memory GiB pred / meas |\n",
           r->profile ? " profile s |" : "", r->torch ? " torch s |" : "");
    printf("|---|---|---|---|---|---|---|%s---|%s---|---|---|\n", r->profile ? "---|" : "",
           r->torch ? "---|" : "");
    for (size_t i = 0; i < r->n_rows; i++)
        print_row(r, &r->rows[i]);
    double x[256], y[256];
    if (r->n_rows <= 256)
        print_summary(r, x, y);
    printf("\ncalibration over all %u plans (what the daemon stores): iteration error %.1f%% -> "
           "%.1f%% leave-one-out, memory %.1f%% -> %.1f%%\n",
           r->all.n_samples, 100 * r->all.mae_before, 100 * r->all.mae_after,
           100 * r->all.mem_mae_before, 100 * r->all.mem_mae_after);
}

static void json_num(FILE *f, const char *key, double v, const char *sep)
{
    if (isfinite(v))
        fprintf(f, "\"%s\": %.9g%s", key, v, sep);
    else
        fprintf(f, "\"%s\": null%s", key, sep);
}

static void json_row(FILE *f, const acc_report_t *r, const acc_row_t *w, const char *sep)
{
    const acc_plan_t *p = &w->p;
    fprintf(f,
            "    {\"hidden\": %u, \"heads\": %u, \"layers\": %u, \"seq\": %u, \"mbs\": %u, "
            "\"ga\": %u, \"ckpt\": %s, \"ran\": %s, \"oom\": %s, ",
            p->hidden, p->heads, p->layers, p->seq, p->mbs, p->ga, p->ckpt ? "true" : "false",
            w->ran ? "true" : "false", w->oom ? "true" : "false");
    for (acc_col_t c = 0; c < ACC_COLUMNS; c++) {
        char key[32];
        snprintf(key, sizeof(key), "%s_s", acc_col_name(c));
        json_num(f, key, shown(r, c) ? w->iter_s[c] : NAN, ", ");
        snprintf(key, sizeof(key), "%s_peak_bytes", acc_col_name(c));
        json_num(f, key, shown(r, c) && w->peak[c] ? (double)w->peak[c] : NAN, ", ");
    }
    json_num(f, "measured_s", w->ran && !w->oom ? w->meas_s : NAN, ", ");
    json_num(f, "measured_opt_s", w->ran && !w->oom ? w->meas_opt_s : NAN, ", ");
    json_num(f, "measured_peak_bytes", (double)w->meas_peak, "}");
    fprintf(f, "%s\n", sep);
}

void acc_print_json(const acc_report_t *r, void *file)
{
    FILE *f = file;
    fprintf(f, "{\n  \"devops\": \"%s\", \"gpu\": \"%s\", \"scaled_down\": %s,\n  \"rows\": [\n",
            r->devops, r->gpu, r->scaled_down ? "true" : "false");
    for (size_t i = 0; i < r->n_rows; i++)
        json_row(f, r, &r->rows[i], i + 1 < r->n_rows ? "," : "");
    fprintf(f, "  ],\n  \"summary\": {\n");
    double x[256], y[256];
    bool first = true;
    for (acc_col_t c = 0; c < ACC_COLUMNS && r->n_rows <= 256; c++) {
        if (!shown(r, c))
            continue;
        column(r, c, false, x, y);
        double mae = acc_mae(x, y, r->n_rows, NULL), rho = acc_spearman(x, y, r->n_rows);
        column(r, c, true, x, y);
        double mem = acc_mae(x, y, r->n_rows, NULL);
        fprintf(f, "%s    \"%s\": {", first ? "" : ",\n", acc_col_name(c));
        json_num(f, "mae", mae, ", ");
        json_num(f, "spearman", rho, ", ");
        json_num(f, "memory_mae", mem, "}");
        first = false;
    }
    fprintf(f, "\n  },\n  \"calibration\": {\"trials\": %u, ", r->all.n_samples);
    json_num(f, "iter_error_before", r->all.mae_before, ", ");
    json_num(f, "iter_error_after", r->all.mae_after, ", ");
    json_num(f, "mem_error_before", r->all.mem_mae_before, ", ");
    json_num(f, "mem_error_after", r->all.mem_mae_after, "}\n}\n");
}
