/*
 * ratelimit.c — see ratelimit.h.
 */
#include "ratelimit.h"

#include <time.h>

bool tsl_ratelimit_ok(tsl_ratelimit_t *rl, int interval_s, uint64_t *skipped)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t t = (int64_t)now.tv_sec;
    int64_t next = atomic_load(&rl->next_s);
    /* One winner per interval: the thread whose compare-exchange moves next_s. */
    if (t < next || !atomic_compare_exchange_strong(&rl->next_s, &next, t + interval_s)) {
        atomic_fetch_add(&rl->suppressed, 1);
        return false;
    }
    *skipped = atomic_exchange(&rl->suppressed, 0);
    return true;
}
