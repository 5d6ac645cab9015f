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
typedef struct tsl_plan_cache tsl_plan_cache_t; /* handlers_cache.c */
typedef struct tsl_trial_run tsl_trial_run_t;   /* trial_run.c */

/* Role bits a method accepts (1u << tsl_role_t); 0 = anyone, even without a token. */
#define TSL_ROLE_BIT(r) (1u << (unsigned)(r))

typedef void (*tsl_call_handler_fn)(tsl_call_t *call);

typedef struct tsl_method {
    const tsl_rpc_method_t *rpc; /* path and name (api/methods.h) */
    unsigned roles;              /* TSL_ROLE_BIT(...) | ...; 0 = always allowed */
    tsl_call_handler_fn handle;
} tsl_method_t;

/* The completion-queue thread's tags all point at one of these. */
typedef struct tsl_tag {
    void (*fn)(struct tsl_tag *tag, bool ok);
} tsl_tag_t;

struct tsl_server {
    const tsl_config_t *cfg;
    tsl_store_t *store;
    tsl_metrics_t *metrics; /* may be NULL */
    tsl_pool_t *pool;
    tsl_pool_t *store_pool;  /* profile reports: decode, check and store off the CQ thread */
    tsl_plan_cache_t *plans; /* packed Plan answers; NULL: no cache */
    tsl_trial_run_t *trials; /* held trial calls (trial_run.h) */

    /* The housekeeping thread: once a second, the registry's liveness sweep
     * and the trials' timeouts (tsl_trial_run_tick); stopped first at stop. */
    pthread_t tick_thread;
    bool tick_started;
    pthread_mutex_t tick_mu;
    pthread_cond_t tick_cv;
    bool tick_stop;

    grpc_server *server;
    grpc_resource_quota *quota;
    grpc_completion_queue *cq;
    void **registered; /* per method: grpc_server_register_method handle */
    size_t n_methods;
    const tsl_method_t *methods;
    tsl_call_handler_fn fallback; /* answers methods nobody registered */
    tsl_call_handler_fn admit;    /* a new call before anything is read (server_gate.c) */
    tsl_call_handler_fn release;  /* a call freed: its connection's count (server_gate.c) */

    /* Calls in flight per connection (server_gate.c), keyed by gRPC's peer. */
#define TSL_CONN_BUCKETS 256
    pthread_mutex_t conn_lock;
    struct tsl_conn *conns[TSL_CONN_BUCKETS];

    pthread_t cq_thread;
    bool cq_thread_started;
    tsl_tag_t shutdown_tag; /* grpc_server_shutdown_and_notify */
    atomic_int shutdown_done;
    atomic_int shutting_down; /* no re-arming, health NOT_SERVING */
    atomic_int serving;
    atomic_long live_calls; /* tsl_call_t objects alive (armed ones too) */
    bool stopped;

    char listening[512];

    /* Our accept loop for the plaintext listeners (server_accept.c). */
#define TSL_MAX_LISTEN_FDS 8
    int listen_fds[TSL_MAX_LISTEN_FDS];
    bool listen_tls[TSL_MAX_LISTEN_FDS]; /* handed to tls_acceptor, not as plaintext */
    size_t n_listen;
    void *tls_acceptor; /* gRPC's TcpServerFdHandler for TSL_TLS_ACCEPTOR; NULL: none */
    bool unix_bound;    /* we made the socket file: unlink it at stop */
    int wake[2];
    pthread_t accept_thread;
    bool accept_started;
    long fd_limit, fd_reserve;
    grpc_server_credentials *insecure_creds;
    char (*peer_names)[64];             /* per accepted fd: "unix:...", "ipv4:a.b.c.d:port" */
    _Atomic int64_t saturated_until_ms; /* CLOCK_MONOTONIC ms; health NOT_SERVING before */
};

/* What one client can make the server hold: HTTP/2 MAX_CONCURRENT_STREAMS,
 * which gRPC enforces only once the client has acknowledged it, and the calls
 * in flight on one connection tesseld itself allows (server_gate.c). The latter
 * is twice the former: a call counts until tesseld lets go of it, a little
 * after its client saw the answer and may already have opened the next. */
#define TSL_STREAMS_PER_CONNECTION 16
#define TSL_CALLS_PER_CONNECTION   (2 * TSL_STREAMS_PER_CONNECTION)

/* Listeners (server_listen.c). */
int tsl_server_listen(tsl_server_t *s, tsl_err_t *err);

/* The accept loop (server_accept.c): bind adds a listening socket; start runs
 * the thread once the gRPC server is started; stop closes the listeners and
 * removes the unix socket file. Saturated: a listener refused or failed to
 * accept within the last second (health NOT_SERVING). */
int tsl_accept_bind_unix(tsl_server_t *s, const char *path, unsigned mode, tsl_err_t *err);
int tsl_accept_bind_tcp(tsl_server_t *s, const char *addr, bool tls, tsl_err_t *err);
/* The TLS listener's connections go through gRPC's "external connection"
 * acceptor (the one grpc++'s ExternalConnectionAcceptor uses): the server is
 * created with the channel arg tsl_accept_acceptor_arg fills (named
 * TSL_TLS_ACCEPTOR), then grpc_server_add_http2_port(TSL_TLS_ACCEPTOR, TLS
 * credentials) makes gRPC store its handler in s->tls_acceptor. */
#define TSL_TLS_ACCEPTOR "external:tesseld-tls"
void tsl_accept_acceptor_arg(tsl_server_t *s, grpc_arg *arg);
int tsl_accept_start(tsl_server_t *s, tsl_err_t *err);
void tsl_accept_stop(tsl_server_t *s);
bool tsl_accept_saturated(const tsl_server_t *s);
void tsl_accept_free(tsl_server_t *s);
/* grpc_call_get_peer, with "fd:N" replaced by the address accepted (gpr_free). */
char *tsl_accept_peer(const tsl_server_t *s, grpc_call *call);

/* The method table (handlers.c) and, in *fallback, the handler for methods
 * nobody registered. The server holds both; server_call.c dispatches a new
 * call through them (auth first), so the call layer never calls back into
 * the handlers' files. */
const tsl_method_t *tsl_handlers_methods(size_t *count, tsl_call_handler_fn *fallback);

#endif
