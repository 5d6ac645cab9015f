/*
 * clock.c — the daemon's clocks for durations (clock.h).
 */
#include "clock.h"

#include <pthread.h>

static tsl_clock_source_fn source = clock_gettime;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int64_t anchor_unix_s;
static double anchor_mono_s;

static double read_s(clockid_t id)
{
    struct timespec t = {0, 0};
    source(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void anchor(void)
{
    anchor_mono_s = read_s(CLOCK_MONOTONIC);
    anchor_unix_s = (int64_t)read_s(CLOCK_REALTIME);
}

double tsl_clock_mono_s(void)
{
    return read_s(CLOCK_MONOTONIC);
}

int64_t tsl_clock_unix_s(void)
{
    pthread_once(&once, anchor);
    return anchor_unix_s + (int64_t)(read_s(CLOCK_MONOTONIC) - anchor_mono_s);
}

void tsl_clock_set_source(tsl_clock_source_fn fn)
{
    pthread_once(&once, anchor);
    source = fn ? fn : clock_gettime;
    anchor();
}
