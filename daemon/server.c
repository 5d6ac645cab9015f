/*
 * server.c — the gRPC server: creation, the completion-queue thread and the
 * graceful stop (server.h).
 */
#include "server.h"

#include <grpc/compression.h>
#include <grpc/grpc.h>
#include <grpc/support/log.h>
#include <grpc/support/time.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "ratelimit.h"
#include "handlers.h"
#include "server_call.h"
#include "server_int.h"
#include "trial_run.h"

/* Profile reports (handlers_registry.c): one writer is what SQLite allows
 * anyway; a worker retries a report refused while this many wait. */
#define STORE_POOL_THREADS 1
#define STORE_POOL_QUEUE   32

#define ARMED_PER_METHOD 2     /* calls waiting per method (and for unknown methods) */
#define SETTLE_S         5.0   /* after the grace period: how long calls get to end */
#define STORE_DRAIN_S    600.0 /* at stop: how long accepted profile reports get to be stored */

/* gRPC logs some client-caused events at ERROR (a refused compression, a
 * failed accept): at most one such line per interval, so a client cannot flood
 * the log. */
#define GRPC_ERROR_LOG_INTERVAL_S 10

static void grpc_log(gpr_log_func_args *a)
{
    static tsl_ratelimit_t rl;
    uint64_t skipped;
    if (a->severity == GPR_LOG_SEVERITY_ERROR) {
        if (tsl_ratelimit_ok(&rl, GRPC_ERROR_LOG_INTERVAL_S, &skipped))
            tsl_log_error("grpc: %s (%s:%d) [%llu more gRPC errors in the last %d s not logged]",
                          a->message, a->file, a->line, (unsigned long long)skipped,
                          GRPC_ERROR_LOG_INTERVAL_S);
    } else
        tsl_log_debug("grpc: %s (%s:%d)", a->message, a->file, a->line);
}

void tsl_server_route_grpc_log(void)
{
    gpr_set_log_function(grpc_log);
}

static void on_shutdown(tsl_tag_t *tag, bool ok)
{
    (void)ok;
    tsl_server_t *s = (tsl_server_t *)((char *)tag - offsetof(tsl_server_t, shutdown_tag));
    atomic_store(&s->shutdown_done, 1);
}

static void *cq_main(void *arg)
{
    tsl_server_t *s = arg;
    for (;;) {
        grpc_event ev =
            grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.type != GRPC_OP_COMPLETE)
            continue;
        tsl_tag_t *tag = ev.tag;
        tag->fn(tag, ev.success != 0);
    }
    return NULL;
}

/* The housekeeping thread: a tick a second until tick_stop (server_int.h). */
static void *tick_main(void *arg)
{
    tsl_server_t *s = arg;
    pthread_mutex_lock(&s->tick_mu);
    while (!s->tick_stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        pthread_cond_timedwait(&s->tick_cv, &s->tick_mu, &until);
        if (s->tick_stop)
            break;
        pthread_mutex_unlock(&s->tick_mu);
        tsl_trial_run_tick(s);
        pthread_mutex_lock(&s->tick_mu);
    }
    pthread_mutex_unlock(&s->tick_mu);
    return NULL;
}

static void stop_tick(tsl_server_t *s)
{
    if (!s->tick_started)
        return;
    pthread_mutex_lock(&s->tick_mu);
    s->tick_stop = true;
    pthread_cond_signal(&s->tick_cv);
    pthread_mutex_unlock(&s->tick_mu);
    pthread_join(s->tick_thread, NULL);
    s->tick_started = false;
}

static void on_pool_change(void *ud, uint32_t queued, uint32_t running)
{
    tsl_server_t *s = ud;
    if (s->metrics)
        tsl_metrics_set_queue(s->metrics, queued, running);
}

/* What one client can make the server hold: streams per connection
 * (server_int.h), and a memory quota over all transports (reads are what the
 * quota governs in 1.51). */
#define QUOTA_BASE_BYTES     (64u << 20)
#define HANDSHAKE_TIMEOUT_MS 10000

static void int_arg(grpc_arg *a, const char *key, long v)
{
    a->type = GRPC_ARG_INTEGER;
    a->key = (char *)key;
    a->value.integer = v > INT_MAX ? INT_MAX : (int)v;
}

static int create_server(tsl_server_t *s)
{
    uint64_t max_rx = s->cfg->max_request_bytes;
    uint64_t quota = QUOTA_BASE_BYTES + 2 * max_rx;
    s->quota = grpc_resource_quota_create("tesseld");
    grpc_resource_quota_resize(s->quota, quota > SIZE_MAX ? SIZE_MAX : (size_t)quota);
    grpc_arg args[8];
    memset(args, 0, sizeof args);
    int_arg(&args[0], GRPC_ARG_ALLOW_REUSEPORT, 0);
    int_arg(&args[1], GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
            (long)(max_rx > INT_MAX ? INT_MAX : max_rx));
    /* Identity only: a compressed request is refused (UNIMPLEMENTED) before it is inflated. */
    int_arg(&args[2], GRPC_COMPRESSION_CHANNEL_ENABLED_ALGORITHMS_BITSET, 1);
    int_arg(&args[3], GRPC_ARG_MAX_CONCURRENT_STREAMS, TSL_STREAMS_PER_CONNECTION);
    int_arg(&args[4], GRPC_ARG_MAX_CONNECTION_IDLE_MS, (long)s->cfg->idle_connection_s * 1000);
    int_arg(&args[5], GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, HANDSHAKE_TIMEOUT_MS);
    args[6].type = GRPC_ARG_POINTER;
    args[6].key = (char *)GRPC_ARG_RESOURCE_QUOTA;
    args[6].value.pointer.p = s->quota;
    args[6].value.pointer.vtable = grpc_resource_quota_arg_vtable();
    tsl_accept_acceptor_arg(s, &args[7]); /* the TLS listener's hand-off (server_accept.c) */
    grpc_channel_args ch = {.num_args = 8, .args = args};
    s->server = grpc_server_create(&ch, NULL);
    s->cq = grpc_completion_queue_create_for_next(NULL);
    if (!s->server || !s->cq)
        return -1;
    grpc_server_register_completion_queue(s->server, s->cq, NULL);
    s->methods = tsl_handlers_methods(&s->n_methods, &s->fallback);
    s->admit = tsl_gate_admit;
    s->release = tsl_gate_release;
    pthread_mutex_init(&s->conn_lock, NULL);
    s->registered = calloc(s->n_methods, sizeof *s->registered);
    if (!s->registered)
        return -1;
    for (size_t i = 0; i < s->n_methods; i++) {
        s->registered[i] =
            grpc_server_register_method(s->server, s->methods[i].rpc->path, NULL,
                                        GRPC_SRM_PAYLOAD_NONE /* server_gate.c reads it */, 0);
        if (!s->registered[i])
            return -1;
    }
    return 0;
}

static int arm_all(tsl_server_t *s)
{
    for (int k = 0; k < ARMED_PER_METHOD; k++) {
        for (size_t i = 0; i < s->n_methods; i++)
            if (tsl_call_arm(s, i) != 0)
                return -1;
        if (tsl_call_arm(s, (size_t)-1) != 0)
            return -1;
    }
    return 0;
}

int tsl_server_start(const tsl_config_t *cfg, tsl_store_t *store, tsl_metrics_t *metrics,
                     tsl_server_t **out, tsl_err_t *err)
{
    *out = NULL;
    tsl_server_t *s = calloc(1, sizeof *s);
    if (!s)
        return tsl_err_set(err, "server: out of memory");
    s->cfg = cfg;
    s->store = store;
    s->metrics = metrics;
    s->shutdown_tag.fn = on_shutdown;
    s->plans = tsl_plan_cache_new();
    pthread_mutex_init(&s->tick_mu, NULL);
    pthread_cond_init(&s->tick_cv, NULL);
    if (!(s->trials = tsl_trial_run_new(s))) {
        tsl_err_set(err, "server: out of memory");
        goto fail;
    }
    if (tsl_pool_start(cfg->pool_size, cfg->queue_size, cfg->search_nice, on_pool_change, s,
                       &s->pool, err) != 0)
        goto fail;
    /* Its own thread: a report waits for the store, never behind searches. */
    if (tsl_pool_start(STORE_POOL_THREADS, STORE_POOL_QUEUE, 0, NULL, NULL, &s->store_pool, err) !=
        0)
        goto fail;
    if (create_server(s) != 0) {
        tsl_err_set(err, "server: cannot create the gRPC server");
        goto fail;
    }
    if (tsl_server_listen(s, err) != 0)
        goto fail;
    grpc_server_start(s->server);
    if (tsl_accept_start(s, err) != 0)
        goto fail;
    if (pthread_create(&s->cq_thread, NULL, cq_main, s) != 0) {
        tsl_err_set(err, "server: cannot start the completion-queue thread");
        goto fail;
    }
    s->cq_thread_started = true;
    if (arm_all(s) != 0) {
        tsl_err_set(err, "server: cannot arm the gRPC calls");
        goto fail;
    }
    if (pthread_create(&s->tick_thread, NULL, tick_main, s) != 0) {
        tsl_err_set(err, "server: cannot start the housekeeping thread");
        goto fail;
    }
    s->tick_started = true;
    atomic_store(&s->serving, 1);
    *out = s;
    return 0;
fail:
    tsl_server_stop(s, 0);
    tsl_server_free(s);
    return -1;
}

const char *tsl_server_listening(const tsl_server_t *s)
{
    return s->listening;
}

static double mono_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Waits (bounded) until no call is alive and, with all_done, the server's
 * shutdown tag came back. */
static bool settle(tsl_server_t *s, double timeout_s, bool all_done)
{
    double until = mono_now() + timeout_s;
    struct timespec tick = {0, 10 * 1000 * 1000};
    while (mono_now() < until) {
        if ((!all_done || atomic_load(&s->shutdown_done)) && atomic_load(&s->live_calls) == 0)
            return true;
        nanosleep(&tick, NULL);
    }
    return false;
}

/* Without a running completion-queue thread: drain the queue here. */
static void drain_cq_here(tsl_server_t *s, double timeout_s)
{
    gpr_timespec until =
        gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                     gpr_time_from_millis((int64_t)(timeout_s * 1e3), GPR_TIMESPAN));
    while (!atomic_load(&s->shutdown_done)) {
        grpc_event ev = grpc_completion_queue_next(s->cq, until, NULL);
        if (ev.type != GRPC_OP_COMPLETE)
            break;
        ((tsl_tag_t *)ev.tag)->fn(ev.tag, ev.success != 0);
    }
}

static void stop_pool(tsl_server_t *s, double grace_s)
{
    if (!s->pool)
        return;
    uint32_t left = tsl_pool_drain(s->pool, grace_s);
    if (left > 0) {
        tsl_log_warnx("cancelling %u search(es) still running after the %.1f s grace period", left,
                      grace_s);
        tsl_pool_cancel_all(s->pool);
    }
    tsl_pool_stop(s->pool);
    s->pool = NULL;
}

/* Profile reports accepted before the stop are stored and answered while the
 * completion queue still runs: a 100,000-figure report takes seconds (32 may
 * wait), and a report answered after the queue shut down aborted the daemon in
 * gRPC (grpc_cq_begin_op). From here on the pool refuses reports (UNAVAILABLE:
 * the worker keeps its spool and sends them to the next daemon). */
static void drain_store_pool(tsl_server_t *s)
{
    if (!s->store_pool)
        return;
    uint32_t left = tsl_pool_drain(s->store_pool, STORE_DRAIN_S);
    if (left > 0)
        tsl_log_error("%u profile report(s) still being stored after %.0f s", left, STORE_DRAIN_S);
}

void tsl_server_stop(tsl_server_t *s, double grace_s)
{
    if (!s || s->stopped)
        return;
    s->stopped = true;
    atomic_store(&s->shutting_down, 1);
    atomic_store(&s->serving, 0);
    tsl_accept_stop(s);
    stop_tick(s);
    /* Held long polls and watches end now, not after the settle timeout. */
    tsl_trial_run_stop(s);
    if (s->server)
        grpc_server_shutdown_and_notify(s->server, s->cq, &s->shutdown_tag);
    stop_pool(s, grace_s);
    drain_store_pool(s);
    if (!s->cq)
        return;
    if (!s->cq_thread_started) {
        drain_cq_here(s, SETTLE_S);
    } else {
        /* Once every call has ended, cancelling "all calls" (none left) is what
         * makes gRPC drop the idle connections: after a GOAWAY alone it waits for
         * each client to hang up (seconds) before the shutdown completes. */
        if (!settle(s, SETTLE_S, false))
            tsl_log_warnx("cancelling %ld call(s) still open after shutdown",
                          (long)atomic_load(&s->live_calls));
        grpc_server_cancel_all_calls(s->server);
        if (!settle(s, SETTLE_S, true))
            tsl_log_error("%ld call(s) did not end; stopping anyway",
                          (long)atomic_load(&s->live_calls));
    }
    grpc_completion_queue_shutdown(s->cq);
    if (s->cq_thread_started)
        pthread_join(s->cq_thread, NULL);
    else
        while (grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type !=
               GRPC_QUEUE_SHUTDOWN)
            ;
    s->cq_thread_started = false;
}

void tsl_server_free(tsl_server_t *s)
{
    if (!s)
        return;
    /* After the CQ thread (no new reports), before the server: the reports
     * accepted were stored and answered by tsl_server_stop (drain_store_pool). */
    tsl_pool_stop(s->store_pool);
    if (s->server)
        grpc_server_destroy(s->server);
    if (s->cq)
        grpc_completion_queue_destroy(s->cq);
    tsl_pool_stop(s->pool);
    tsl_plan_cache_free(s->plans);
    tsl_trial_run_free(s->trials);
    pthread_mutex_destroy(&s->tick_mu);
    pthread_cond_destroy(&s->tick_cv);
    tsl_accept_free(s);
    if (s->quota)
        grpc_resource_quota_unref(s->quota);
    free(s->registered);
    free(s);
}
