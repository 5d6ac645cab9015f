/*
 * metrics.h — tesseld's counters for /metrics (Prometheus text format 0.0.4).
 *
 * All functions are thread-safe and cheap (atomics or one short mutex). Methods
 * are the short gRPC method names ("Plan", "GetPlan", ...); codes are gRPC status
 * codes (0 = OK).
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

/* Renders the exposition text into a malloc'd NUL-terminated string. */
char *tsl_metrics_render(tsl_metrics_t *m);

#endif
