/*
 * http.h — tesseld's small HTTP side door: GET /healthz, GET /metrics
 * (Prometheus text format 0.0.4) and GET / (a plain HTML status page listing the
 * cached plans). libevent's evhttp on a thread of its own, so that neither the
 * gRPC completion-queue loop nor the search pool ever waits on it.
 *
 *   /healthz  200 "ok" when health(ud) returns 1 (or health is NULL), else 503
 *   /metrics  tsl_metrics_render(), after refreshing tessel_plans_stored and the
 *             trials pending/running gauges from store
 *   /         the overview (version, uptime, queue, workers by state, alerts,
 *             recent plans and trials: http_overview.c); then workers, the newest
 *             plans (up to 1000), the newest trials (50), the calibrations and
 *             the profiles (one collapsed <details> per GPU model), every string
 *             HTML-escaped (http_page.c, http_trials.c)
 *   /plan/FP  one plan's stages (layers, devices, strategies, time, memory) with
 *             an inline SVG time/memory chart and its trials; 404 if unknown
 *   anything else 404; methods other than GET and HEAD 405 (with Allow)
 *
 * Ownership: m, store and ud are borrowed; they must outlive tsl_http_stop().
 * store may be NULL (the page then says so). health runs on the http thread and
 * must be thread-safe.
 * Threads: the server thread blocks every signal (signals belong to the daemon's
 * signal thread; SIGPIPE from a vanished client then turns into EPIPE).
 * Uses evthread_use_pthreads(), called once here before any event base exists.
 */
#ifndef TSL_HTTP_H
#define TSL_HTTP_H

#include "err.h"
#include "metrics.h"
#include "store.h"

typedef struct tsl_http tsl_http_t;

/* addr is "HOST:PORT" ("127.0.0.1:9464", "[::1]:9464"); port 0 picks a free port
 * (see tsl_http_port). Listening errors name the address and the reason. */
int tsl_http_start(const char *addr, tsl_metrics_t *m, tsl_store_t *store, int (*health)(void *ud),
                   void *ud, tsl_http_t **out, tsl_err_t *err);
/* The port actually bound (useful after asking for port 0). */
int tsl_http_port(const tsl_http_t *h);
/* Stops the loop, joins the thread, closes the socket. NULL is a no-op. */
void tsl_http_stop(tsl_http_t *h);

#endif
