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
#include "methods.h"
#include "metrics.h"
#include "pool.h"
#include "server.h"
#include "store.h"

typedef struct tsl_call tsl_call_t;
typedef struct tsl_plan_cache tsl_plan_cache_t;   /* handlers_cache.c */

/* Role bits a method accepts (1u << tsl_role_t); 0 = anyone, even without a token. */
#define TSL_ROLE_BIT(r) (1u << (unsigned)(r))

typedef void (*tsl_call_handler_fn)(tsl_call_t *call);

typedef struct tsl_method {
    const tsl_rpc_method_t *rpc;  /* path and name (api/methods.h) */
    unsigned roles;               /* TSL_ROLE_BIT(...) | ...; 0 = always allowed */
    tsl_call_handler_fn handle;
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
    tsl_call_handler_fn fallback;     /* answers methods nobody registered */

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

/* The method table (handlers.c) and, in *fallback, the handler for methods
 * nobody registered. The server holds both; server_call.c dispatches a new
 * call through them (auth first), so the call layer never calls back into
 * the handlers' files. */
const tsl_method_t *tsl_handlers_methods(size_t *count, tsl_call_handler_fn *fallback);

#endif
