/*
 * agent_backoff.c — capped exponential backoff with equal jitter (agent.h).
 * The random draw is the caller's, so the arithmetic is tested exactly.
 */
#include <math.h>

#include "agent.h"

/* Past this many doublings every ceiling is the cap anyway; stops 2^n overflowing. */
#define MAX_DOUBLINGS 62u

void tsl_backoff_init(tsl_backoff_t *b, double base_s, double cap_s)
{
    b->base_s = base_s > 0 ? base_s : 0.001;
    b->cap_s = cap_s >= b->base_s ? cap_s : b->base_s;
    b->attempt = 0;
}

double tsl_backoff_ceiling(const tsl_backoff_t *b)
{
    uint32_t n = b->attempt < MAX_DOUBLINGS ? b->attempt : MAX_DOUBLINGS;
    double d = ldexp(b->base_s, (int)n);
    return d < b->cap_s ? d : b->cap_s;
}

double tsl_backoff_next(tsl_backoff_t *b, double u)
{
    double d = tsl_backoff_ceiling(b);
    if (!(u >= 0)) /* also NaN */
        u = 0;
    if (u >= 1)
        u = 0.999999;
    if (b->attempt < UINT32_MAX)
        b->attempt++;
    return d / 2 + u * (d / 2);
}

void tsl_backoff_reset(tsl_backoff_t *b)
{
    b->attempt = 0;
}
