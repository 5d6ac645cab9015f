/*
 * clock.h — the daemon's clocks for durations.
 *
 * Liveness (a worker's last heartbeat against its timeout) and trial deadlines
 * are durations: they must not move when the wall clock is stepped (NTP, an
 * operator's date -s). tsl_clock_unix_s() is the wall clock read once, at the
 * first call, advanced by CLOCK_MONOTONIC since: seconds since the epoch that
 * are stored (last_seen_unix, started_unix) and shown as dates, and whose
 * differences are true elapsed seconds within one daemon's life. After a step
 * the dates it gives are off by the step until the daemon restarts.
 *
 * Across a restart the stored times come from the previous run's anchor; the
 * registry sweep clamps a time in the future to "now" (a worker then gets one
 * full timeout, never the size of a backward step), and a time far in the past
 * only marks a worker offline until its next heartbeat. Running trials are
 * failed at restart anyway.
 *
 * Thread-safe. Tests replace the source with tsl_clock_set_source().
 */
#ifndef TSL_CLOCK_H
#define TSL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Seconds since the epoch for durations and stored dates (see above). */
int64_t tsl_clock_unix_s(void);
/* CLOCK_MONOTONIC in seconds. */
double tsl_clock_mono_s(void);

/* Tests only: read both clocks through fn (clock_gettime's signature; NULL
 * restores clock_gettime) and re-anchor. Not to be called while other threads
 * read the clock. */
typedef int (*tsl_clock_source_fn)(clockid_t id, struct timespec *ts);
void tsl_clock_set_source(tsl_clock_source_fn fn);

#endif
