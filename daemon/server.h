/*
 * server.h — tesseld's gRPC server on the gRPC C core API.
 *
 * Threads: one completion-queue thread (started here) runs every handler that
 * is cheap — auth, decoding, the store reads, cache hits — and never a search;
 * searches go to the pool (pool.h), whose threads send their progress events
 * and final answer on the call themselves under the call's lock
 * (server_call.h). Nothing here handles signals: main blocks them before
 * grpc_init() so that gRPC's threads inherit the mask.
 *
 * Listening (server_listen.c): the unix socket from the config (created with
 * the config's mode through the umask, then chmod), guarded by an flock()ed
 * "<socket>.lock" file so that a second daemon fails instead of stealing the
 * socket (gRPC unlinks an existing socket path); optionally TCP with
 * GRPC_ARG_ALLOW_REUSEPORT = 0, with TLS when tls_cert and tls_key are set.
 *
 * Lifecycle: tsl_server_lock (before grpc_init, so a second daemon fails
 * early), tsl_server_start, tsl_server_stop (graceful: stop accepting, let
 * searches finish for grace_s, cancel the rest, wait for every call to end),
 * tsl_server_free. The store and metrics are borrowed and must outlive it.
 */
#ifndef TSL_SERVER_H
#define TSL_SERVER_H

#include <stdbool.h>

#include "config.h"
#include "err.h"
#include "metrics.h"
#include "store.h"

typedef struct tsl_server tsl_server_t;

/* Takes "<unix_socket>.lock" with flock (non-blocking) and writes our pid into
 * it; *fd gets the open descriptor (keep it for the life of the process), or
 * -1 when no unix socket is configured. -1 with a message naming the socket
 * and the pid that holds it when another daemon has it. */
int tsl_server_lock(const tsl_config_t *cfg, int *fd, tsl_err_t *err);

/* Loads tls_cert and tls_key (when set) and checks that they are PEM and that
 * the key belongs to the certificate; the error names the file and the fault.
 * For --check-config, and before the TLS listener is made. */
int tsl_server_check_tls(const tsl_config_t *cfg, tsl_err_t *err);

/* Routes gRPC's log lines into common/log.h; call before grpc_init(). */
void tsl_server_route_grpc_log(void);

/* Creates the server, binds every listener, starts the pool and the
 * completion-queue thread. grpc_init() must have been called. */
int tsl_server_start(const tsl_config_t *cfg, tsl_store_t *store, tsl_metrics_t *metrics,
                     tsl_server_t **out, tsl_err_t *err);

/* True while the server accepts calls (for health checks). */
bool tsl_server_serving(const tsl_server_t *s);

/* Graceful stop (see above). Idempotent. */
void tsl_server_stop(tsl_server_t *s, double grace_s);

/* Frees a stopped (or never started) server. */
void tsl_server_free(tsl_server_t *s);

/* One line for the log: "unix:/run/tessel/tesseld.sock, tcp 127.0.0.1:7443 (tls)". */
const char *tsl_server_listening(const tsl_server_t *s);

#endif
