/*
 * partition_v.c — the V schedules' partition (ZBV, DualPipeV): the stage counts
 * whose ranks, each holding two parts of the model, are balanced. See partition.h
 * tsl_partition_v for the contract and docs/partition.md for the method.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"

/* The DP's table: for ranks 0..s−1 placed, x layers taken from the front and d of
 * them with an odd count (so x − d from the back), the least largest rank load, and
 * the last rank's (b, odd) that reached it. */
typedef struct vdp {
    uint32_t L, P;
    const double *T; /* [L + 1] prefix sums of time_s */
    const tsl_partition_in_t *in;
    double *best;  /* [(P + 1) × (L + 1) × (P + 1)] */
    uint32_t *how; /* same: 2·b + odd of the step into the cell */
} vdp_t;

static size_t cell(const vdp_t *v, uint32_t s, uint32_t x, uint32_t d)
{
    return ((size_t)s * (v->L + 1) + x) * (v->P + 1) + d;
}

/* The p2p after layer l (0 past the model's end). */
static double p2p_after(const vdp_t *v, uint32_t l)
{
    return v->in->p2p_s && l + 1 < v->L ? v->in->p2p_s[l] : 0.0;
}

/* Rank s's load with its front part [x, x + a) and its back part [L − y − b, L − y):
 * their time at its speed, and the p2p of each part that sends to another rank (rank
 * P − 1's front part feeds its own back part; rank 0's back part ends the model). */
static double rank_load(const vdp_t *v, uint32_t s, uint32_t x, uint32_t a, uint32_t y, uint32_t b)
{
    const uint32_t L = v->L;
    double speed = v->in->speed ? v->in->speed[s] : 1.0;
    double t = (v->T[x + a] - v->T[x] + v->T[L - y] - v->T[L - y - b]) / speed;
    if (s + 1 < v->P)
        t += p2p_after(v, x + a - 1);
    if (s > 0)
        t += p2p_after(v, L - y - 1);
    return t;
}

/* One rank's steps from every reached cell of rank s. */
static void vdp_step(vdp_t *v, uint32_t s, uint32_t max_last)
{
    const uint32_t L = v->L, P = v->P, left = 2 * (P - s - 1); /* the later ranks' least */
    for (uint32_t x = 0; x <= L; x++)
        for (uint32_t d = 0; d <= s; d++) {
            double here = v->best[cell(v, s, x, d)];
            if (!isfinite(here))
                continue;
            uint32_t y = x - d, used = x + y;
            for (uint32_t odd = 0; odd <= 1; odd++)
                for (uint32_t b = 1; used + 2 * b + odd + left <= L; b++) {
                    uint32_t a = b + odd;
                    /* the last rank: every layer placed, its count within max_cut's reach */
                    if (s + 1 == P && (used + 2 * b + odd != L || 2 * b + odd < L - max_last))
                        continue;
                    double load = fmax(here, rank_load(v, s, x, a, y, b));
                    size_t to = cell(v, s + 1, x + a, d + odd);
                    if (load < v->best[to]) {
                        v->best[to] = load;
                        v->how[to] = 2 * b + odd;
                    }
                }
        }
}

int tsl_partition_v(const tsl_partition_in_t *in, uint32_t *first, double *max_rank_s,
                    tsl_err_t *err)
{
    if (!in || !in->time_s || !first)
        return tsl_err_set(err, "partition_v: %s is missing",
                           !in      ? "the input"
                           : !first ? "first"
                                    : "time_s");
    const uint32_t L = in->n_layers, P = in->n_stages;
    if (P == 0 || P > TSL_PARTITION_MAX_STAGES || L == 0 || L > TSL_PARTITION_MAX_LAYERS)
        return tsl_err_set(err, "n_stages: %u stages of %u layers are out of range", P, L);
    if (L < 2 * P)
        return TSL_PARTITION_NONE_FITS; /* a layer per part */
    uint32_t max_cut = in->max_cut ? in->max_cut : L - 1;
    size_t n = (size_t)(P + 1) * (L + 1) * (P + 1);
    vdp_t v = {.L = L, .P = P, .in = in};
    double *T = malloc((L + 1) * sizeof(double));
    v.best = malloc(n * sizeof(double));
    v.how = malloc(n * sizeof(uint32_t));
    int rc = TSL_PARTITION_ERR;
    if (!T || !v.best || !v.how) {
        tsl_err_set(err, "partition_v: out of memory (%zu cells)", n);
        goto out;
    }
    T[0] = 0;
    for (uint32_t l = 0; l < L; l++)
        T[l + 1] = T[l] + in->time_s[l];
    v.T = T;
    for (size_t i = 0; i < n; i++)
        v.best[i] = INFINITY;
    v.best[cell(&v, 0, 0, 0)] = 0;
    for (uint32_t s = 0; s < P; s++)
        vdp_step(&v, s, max_cut); /* the last rank starts at or before max_cut */
    /* the end: every layer placed, x from the front and x − d from the back */
    uint32_t x = 0, d = 0;
    double most = INFINITY;
    for (uint32_t dd = 0; dd <= P; dd++)
        if ((L + dd) % 2 == 0 && v.best[cell(&v, P, (L + dd) / 2, dd)] < most) {
            d = dd;
            x = (L + dd) / 2;
            most = v.best[cell(&v, P, x, d)];
        }
    if (!isfinite(most)) {
        rc = TSL_PARTITION_NONE_FITS;
        goto out;
    }
    uint32_t count[TSL_PARTITION_MAX_STAGES];
    for (uint32_t s = P; s-- > 0;) {
        uint32_t how = v.how[cell(&v, s + 1, x, d)], odd = how & 1, b = how / 2;
        count[s] = how;
        x -= b + odd;
        d -= odd;
    }
    first[0] = 0;
    for (uint32_t s = 0; s < P; s++)
        first[s + 1] = first[s] + count[s];
    if (max_rank_s)
        *max_rank_s = most;
    rc = TSL_PARTITION_OK;
out:
    free(T);
    free(v.best);
    free(v.how);
    return rc;
}
