/*
 * server_int.h — what the server loop, the call state machine and the handlers
 * share: the server struct and the method table. Private to daemon/.
 */
#ifndef TSL_SERVER_INT_H
#define TSL_SERVER_INT_H

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "metrics.h"
#include "pool.h"
#include "server.h"
#include "store.h"

typedef struct tsl_call tsl_call_t;
typedef struct tsl_plan_cache tsl_plan_cache_t;   /* handlers_cache.c */

/* Role bits a method accepts (1u << tsl_role_t); 0 = anyone, even without a token. */
#define TSL_ROLE_BIT(r) (1u << (unsigned)(r))

typedef struct tsl_method {
    const char *path;          /* "/tessel.v1.Planner/GetPlan" */
    const char *name;          /* "GetPlan": logs and metrics */
    unsigned roles;            /* TSL_ROLE_BIT(...) | ...; 0 = always allowed */
    void (*handle)(tsl_call_t *call);
} tsl_method_t;

/* The completion-queue thread's tags all point at one of these. */
typedef struct tsl_tag {
    void (*fn)(struct tsl_tag *tag, bool ok);
} tsl_tag_t;

struct tsl_server {
    const tsl_config_t *cfg;
    tsl_store_t *store;
    tsl_metrics_t *metrics;           /* may be NULL */
    tsl_pool_t *pool;
    tsl_plan_cache_t *plans;          /* packed Plan answers; NULL: no cache */

    grpc_server *server;
    grpc_completion_queue *cq;
    void **registered;                /* per method: grpc_server_register_method handle */
    size_t n_methods;
    const tsl_method_t *methods;

    pthread_t cq_thread;
    bool cq_thread_started;
    tsl_tag_t shutdown_tag;           /* grpc_server_shutdown_and_notify */
    atomic_int shutdown_done;
    atomic_int shutting_down;         /* no re-arming, health NOT_SERVING */
    atomic_int serving;
    atomic_long live_calls;           /* tsl_call_t objects alive (armed ones too) */
    bool stopped;

    char listening[512];
};

/* Listeners (server_listen.c). */
int tsl_server_listen(tsl_server_t *s, tsl_err_t *err);

/* The method table (handlers.c) and the generic handler for unknown methods. */
const tsl_method_t *tsl_handlers_methods(size_t *count);
void tsl_handlers_unknown(tsl_call_t *call);

/* Runs a new call: auth, then the method's handler (handlers.c). */
void tsl_handlers_dispatch(tsl_call_t *call);

#endif
