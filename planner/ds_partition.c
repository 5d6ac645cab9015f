/*
 * ds_partition.c — DeepSpeed's PipelineModule stage cuts (ds_partition.h).
 */
#include "ds_partition.h"

#include <stdlib.h>

void tsl_ds_partition_uniform(uint32_t n, uint32_t P, uint32_t *parts)
{
    if (n <= P) {
        for (uint32_t p = 0; p <= P; p++)
            parts[p] = p < n ? p : n;
        return;
    }
    uint32_t chunk = n / P, extra = n % P;
    for (uint32_t p = 0; p <= P; p++)
        parts[p] = p * chunk + (p < extra ? p : extra);
}

/* One state of the programme: the (max, min) part weights it keeps. */
typedef struct {
    int64_t max, min;
} span_t;

int tsl_ds_partition_balanced(const uint64_t *w, uint32_t n, uint32_t P, uint32_t *parts)
{
    if (n <= P) {
        tsl_ds_partition_uniform(n, P, parts);
        return 0;
    }
    size_t cols = (size_t)P + 1;
    int64_t *prefix = malloc((n + 1) * sizeof(*prefix));
    span_t *prev = malloc((n + 1) * sizeof(*prev)), *cur = malloc((n + 1) * sizeof(*cur));
    uint32_t *pos = malloc((n + 1) * cols * sizeof(*pos));
    int rc = -1;
    if (prefix == NULL || prev == NULL || cur == NULL || pos == NULL)
        goto out;
    prefix[0] = 0;
    for (uint32_t i = 0; i < n; i++)
        prefix[i + 1] = prefix[i] + (int64_t)w[i];
    for (uint32_t j = 1; j <= P; j++) {
        for (uint32_t i = j; i <= n; i++) {
            if (j == 1) {
                /* only state (0, 0) = (0, +inf) is reachable: the one part [0, i) */
                cur[i] = (span_t){prefix[i], prefix[i]};
                pos[i * cols + j] = 0;
                continue;
            }
            /* the largest k of the least max − min: from the right, strictly better only */
            int64_t best = -1;
            uint32_t best_k = i - 1;
            for (uint32_t k = i; k-- > j - 1;) {
                int64_t part = prefix[i] - prefix[k];
                /* max − min ≥ part − (the least of j − 1 parts) ≥ part − their mean,
                 * which only grows as k moves left: no k further left beats best */
                if (best >= 0 && part * (j - 1) - prefix[k] > best * (int64_t)(j - 1))
                    break;
                int64_t hi = prev[k].max > part ? prev[k].max : part;
                int64_t lo = prev[k].min < part ? prev[k].min : part;
                if (best < 0 || hi - lo < best) {
                    best = hi - lo;
                    best_k = k;
                    cur[i] = (span_t){hi, lo};
                }
            }
            pos[i * cols + j] = best_k;
        }
        span_t *t = prev;
        prev = cur;
        cur = t;
    }
    parts[P] = n;
    for (uint32_t j = P; j >= 1; j--)
        parts[j - 1] = pos[(size_t)parts[j] * cols + j];
    rc = 0;
out:
    free(prefix);
    free(prev);
    free(cur);
    free(pos);
    return rc;
}
