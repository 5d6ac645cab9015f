/*
 * test_accuracy_stats.c — bench/accuracy's statistics by hand: the mean
 * absolute relative error and Spearman's rank correlation (ties at their mean
 * rank), both skipping rows without a figure.
 */
#include <math.h>

#include "accuracy.h"
#include "check.h"

int main(void)
{
    double meas[] = {1, 2, 4, 8, 16};
    double pred[] = {1.1, 1.8, 4, 9.6, NAN};
    size_t k;
    CHECK_NEAR(acc_mae(pred, meas, 5, &k), (0.1 + 0.1 + 0 + 0.2) / 4, 1e-12, "mae");
    CHECK(k == 4, "the NAN row is skipped (%zu)", k);
    double none[] = {NAN, NAN};
    CHECK(isnan(acc_mae(none, meas, 2, &k)) && k == 0, "no pairs: NAN");

    CHECK_NEAR(acc_spearman(pred, meas, 5), 1.0, 1e-12, "monotone: 1");
    double rev[] = {5, 4, 3, 2, 1};
    CHECK_NEAR(acc_spearman(rev, meas, 5), -1.0, 1e-12, "reversed: -1");
    /* x ranks 1, 2.5, 2.5, 4 (a tie); y ranks 1..4: Pearson of the ranks */
    double tx[] = {1, 2, 2, 3}, ty[] = {1, 2, 3, 4};
    double mx = 2.5, my = 2.5, rx[] = {1, 2.5, 2.5, 4}, cov = 0, vx = 0, vy = 0;
    for (int i = 0; i < 4; i++) {
        cov += (rx[i] - mx) * (ty[i] - my);
        vx += (rx[i] - mx) * (rx[i] - mx);
        vy += (ty[i] - my) * (ty[i] - my);
    }
    CHECK_NEAR(acc_spearman(tx, ty, 4), cov / sqrt(vx * vy), 1e-12, "ties at their mean rank");
    double flat[] = {3, 3, 3};
    CHECK(isnan(acc_spearman(flat, meas, 3)), "a constant column has no rank correlation");
    CHECK(isnan(acc_spearman(pred, meas, 1)), "one pair: NAN");
    return CHECK_DONE();
}
