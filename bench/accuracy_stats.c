/*
 * accuracy_stats.c — the two figures bench/accuracy quotes per column: mean
 * absolute relative error and Spearman's rank correlation. Pure; n is a few
 * dozen rows, so the ranks are counted in O(n²) without sorting.
 */
#include "accuracy.h"

#include <math.h>

static bool pair_ok(double x, double y)
{
    return isfinite(x) && isfinite(y) && y > 0;
}

double acc_mae(const double *pred, const double *meas, size_t n, size_t *n_out)
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (pair_ok(pred[i], meas[i])) {
            sum += fabs(pred[i] - meas[i]) / meas[i];
            k++;
        }
    if (n_out != NULL)
        *n_out = k;
    return k ? sum / (double)k : NAN;
}

/* Mean rank (1-based) of v[i] among the valid entries of v; ties share it. */
static double rank_of(const double *x, const double *y, size_t n, const double *v, size_t i)
{
    double below = 0, equal = 0;
    for (size_t j = 0; j < n; j++) {
        if (!pair_ok(x[j], y[j]))
            continue;
        if (v[j] < v[i])
            below++;
        else if (v[j] == v[i])
            equal++;
    }
    return below + (equal + 1) / 2;
}

double acc_spearman(const double *x, const double *y, size_t n)
{
    double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!pair_ok(x[i], y[i]))
            continue;
        double a = rank_of(x, y, n, x, i), b = rank_of(x, y, n, y, i);
        sx += a, sy += b, sxx += a * a, syy += b * b, sxy += a * b;
        k++;
    }
    if (k < 2)
        return NAN;
    double cov = sxy - sx * sy / k, vx = sxx - sx * sx / k, vy = syy - sy * sy / k;
    if (vx <= 0 || vy <= 0)
        return NAN;
    return cov / sqrt(vx * vy);
}

const char *acc_col_name(acc_col_t c)
{
    static const char *names[ACC_COLUMNS] = {"builtin", "profile", "fit", "loo", "torch"};
    return c < ACC_COLUMNS ? names[c] : "?";
}
