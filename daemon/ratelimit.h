/*
 * ratelimit.h — "log once per interval" for events a client can cause at will
 * (refused calls, failing accepts): a flood must cost a line per interval, not
 * a line per event (a tight accept loop once wrote 224 MB of log in 20 s).
 *
 * Usage: static tsl_ratelimit_t rl; uint64_t skipped;
 *        if (tsl_ratelimit_ok(&rl, 10, &skipped)) tsl_log_warnx("... (%llu more)", skipped);
 * Lock-free; any thread. A zero-initialised struct is ready.
 */
#ifndef TSL_RATELIMIT_H
#define TSL_RATELIMIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct tsl_ratelimit {
    _Atomic int64_t next_s;      /* CLOCK_MONOTONIC second from which a line may go out */
    _Atomic uint64_t suppressed; /* events since the last line */
} tsl_ratelimit_t;

/* True at most once per interval_s; *skipped: events suppressed since the last true. */
bool tsl_ratelimit_ok(tsl_ratelimit_t *rl, int interval_s, uint64_t *skipped);

#endif
