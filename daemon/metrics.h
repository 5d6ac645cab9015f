/*
 * metrics.h — tesseld's counters for /metrics (Prometheus text format 0.0.4).
 *
 * All functions are thread-safe and cheap (atomics or one short mutex). Methods
 * are the short gRPC method names ("Plan", "GetPlan", ...); codes are gRPC status
 * codes (0 = OK). The rendering also carries tessel_build_info{version} and the
 * process_* gauges of the running process (tsl_proc_stats).
 */
#ifndef TSL_METRICS_H
#define TSL_METRICS_H

#include <stddef.h>
#include <stdint.h>

typedef struct tsl_metrics tsl_metrics_t;

tsl_metrics_t *tsl_metrics_new(void);
void tsl_metrics_free(tsl_metrics_t *m);

/* tessel_requests_total{method,code} */
void tsl_metrics_request(tsl_metrics_t *m, const char *method, int grpc_code);
/* tessel_search_seconds histogram (buckets 0.01 … 600 s) */
void tsl_metrics_search_time(tsl_metrics_t *m, double seconds);
/* tessel_plan_cache_hits_total / _misses_total */
void tsl_metrics_cache(tsl_metrics_t *m, int hit);
/* gauges: tessel_search_queue_depth, tessel_searches_running, tessel_plans_stored */
void tsl_metrics_set_queue(tsl_metrics_t *m, int64_t queued, int64_t running);
void tsl_metrics_set_plans(tsl_metrics_t *m, int64_t stored);

/* tessel_trials_total{event}: event "started", "done", "failed", "cancelled" or
 * "skipped" (a plan of a batch the executor cannot run or no online workers fit;
 * others ignored). */
void tsl_metrics_trial(tsl_metrics_t *m, const char *event);
/* gauges tessel_trials_pending / tessel_trials_running: trials in those states now
 * (the HTTP thread re-counts them from the store on each scrape). */
void tsl_metrics_set_trials(tsl_metrics_t *m, int64_t pending, int64_t running);
/* gauge tessel_workers{state}: registered workers online, offline, stopped (the
 * housekeeping tick re-counts them after each liveness sweep); absent from the
 * text until first set. */
void tsl_metrics_set_workers(tsl_metrics_t *m, int64_t online, int64_t offline, int64_t stopped);

/* Refused before any handler ran: tessel_refused_total{reason}. Reasons are
 * the fixed set below; the counters are atomics, callable from any thread. */
typedef enum {
    TSL_REFUSED_UNAUTHENTICATED = 0, /* no or unknown token, checked before the message is read */
    TSL_REFUSED_PERMISSION,          /* a known token whose role may not call the method */
    TSL_REFUSED_UNREADABLE,          /* the message never arrived (too large, compressed, gone) */
    TSL_REFUSED_CONNECTION,          /* a connection closed at accept: descriptors reserved */
    TSL_REFUSED_ACCEPT_ERROR,        /* accept() failed (EMFILE, ENFILE, ENOMEM, ...) */
    TSL_REFUSED_HTTP_ACCEPT,         /* the HTTP listener's accept() failed */
    TSL_REFUSED_STREAMS,             /* over the calls in flight one connection may have */
    TSL_REFUSED_N
} tsl_refused_t;
void tsl_metrics_refused(tsl_metrics_t *m, tsl_refused_t reason);
uint64_t tsl_metrics_refused_count(tsl_metrics_t *m, tsl_refused_t reason);

/* The gauges set above, for the status page. */
void tsl_metrics_get_queue(tsl_metrics_t *m, int64_t *queued, int64_t *running, int64_t *plans);

/* This process, read from /proc/self (Linux): the standard process_* metrics.
 * Fields that cannot be read are left at -1. */
typedef struct tsl_proc_stats {
    double start_time_s; /* Unix time the process started */
    double cpu_s;        /* user + system CPU time */
    int64_t rss_bytes;
    int64_t open_fds;
} tsl_proc_stats_t;
void tsl_proc_stats(tsl_proc_stats_t *out);

/* Renders the exposition text into a malloc'd NUL-terminated string. */
char *tsl_metrics_render(tsl_metrics_t *m);

#endif
