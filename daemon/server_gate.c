/*
 * server_gate.c — what happens to a call before its handler: the caller is
 * checked from its metadata alone, and only then is the request message read.
 *
 * Why: gRPC reads (and decompresses) a whole message before the application
 * sees the call when a method is registered with a payload, so an
 * unauthenticated client could make tesseld hold max_request_bytes per stream
 * (or far more through compression) before being told no. Methods are
 * registered with GRPC_SRM_PAYLOAD_NONE (server.c); a refused caller's message
 * is never read. Works the same on every listener (unix, plaintext TCP, TLS),
 * which gRPC's auth metadata processor (secure credentials only) would not.
 *
 * Before even that, the call is counted against its connection: gRPC applies
 * MAX_CONCURRENT_STREAMS only once the client has acknowledged the server's
 * SETTINGS, so a client that never does could open any number of streams.
 * More than TSL_CALLS_PER_CONNECTION calls alive on one connection (gRPC's
 * peer string names the connection: "fd:N" for what server_accept.c hands
 * over, "ipv4:addr:port" for TLS) and the call is answered RESOURCE_EXHAUSTED.
 * A descriptor is not reused while a call of its connection is alive (the
 * call holds the transport), so one "fd:N" is one connection.
 *
 * Refusals are counted (tessel_refused_total) and logged at most once per
 * REFUSE_LOG_INTERVAL_S. tsl_call_dispatch checks auth again (cheap) and
 * fills the call's role for the handler and the log.
 */
#include <grpc/support/alloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers.h"
#include "log.h"
#include "ratelimit.h"
#include "server_auth.h"
#include "server_call.h"

#define REFUSE_LOG_INTERVAL_S 10

static void log_refusal(tsl_call_t *c, const char *why)
{
    static tsl_ratelimit_t rl;
    uint64_t skipped;
    if (!tsl_ratelimit_ok(&rl, REFUSE_LOG_INTERVAL_S, &skipped))
        return;
    char *peer = tsl_accept_peer(c->srv, c->call);
    tsl_log_warnx("rpc %s refused before reading the request (peer=%s): %s [%llu more refusals "
                  "in the last %d s not logged]",
                  c->method ? c->method->rpc->name : "(unregistered method)", peer ? peer : "?",
                  why, (unsigned long long)skipped, REFUSE_LOG_INTERVAL_S);
    gpr_free(peer);
}

struct tsl_conn {
    struct tsl_conn *next;
    unsigned calls;
    char peer[]; /* grpc_call_get_peer */
};

static struct tsl_conn **bucket(tsl_server_t *s, const char *peer)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *p = peer; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return &s->conns[h % TSL_CONN_BUCKETS];
}

/* Counts c on its connection; the count with it, 0 when out of memory. */
static unsigned conn_enter(tsl_call_t *c)
{
    tsl_server_t *s = c->srv;
    char *peer = grpc_call_get_peer(c->call);
    const char *key = peer ? peer : "?";
    pthread_mutex_lock(&s->conn_lock);
    struct tsl_conn **b = bucket(s, key), *n = *b;
    while (n && strcmp(n->peer, key) != 0)
        n = n->next;
    if (!n && (n = malloc(sizeof *n + strlen(key) + 1)) != NULL) {
        *n = (struct tsl_conn){.next = *b};
        strcpy(n->peer, key);
        *b = n;
    }
    unsigned calls = n ? ++n->calls : 0;
    c->conn = n;
    pthread_mutex_unlock(&s->conn_lock);
    gpr_free(peer);
    return calls;
}

void tsl_gate_release(tsl_call_t *c)
{
    tsl_server_t *s = c->srv;
    struct tsl_conn *n = c->conn;
    c->conn = NULL;
    pthread_mutex_lock(&s->conn_lock);
    if (--n->calls == 0) {
        struct tsl_conn **p = bucket(s, n->peer);
        while (*p != n)
            p = &(*p)->next;
        *p = n->next;
        free(n);
    }
    pthread_mutex_unlock(&s->conn_lock);
}

/* false after answering a call over its connection's limit. */
static bool within_conn_limit(tsl_call_t *c)
{
    unsigned calls = conn_enter(c);
    if (calls >= 1 && calls <= TSL_CALLS_PER_CONNECTION)
        return true;
    char msg[256];
    if (calls == 0)
        snprintf(msg, sizeof msg, "server: out of memory counting the calls of a connection");
    else
        snprintf(msg, sizeof msg,
                 "too many calls in flight on one connection: at most %d (HTTP/2 "
                 "MAX_CONCURRENT_STREAMS is %d; acknowledge the server's SETTINGS)",
                 TSL_CALLS_PER_CONNECTION, TSL_STREAMS_PER_CONNECTION);
    tsl_metrics_refused(c->srv->metrics, TSL_REFUSED_STREAMS);
    log_refusal(c, msg);
    tsl_call_fail(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "%s", msg);
    return false;
}

static void on_message(tsl_call_t *c, bool ok)
{
    if (!ok || !c->payload) {
        /* gRPC already told the client why (RESOURCE_EXHAUSTED for a message over
         * max_request_bytes, UNIMPLEMENTED for a refused compression); this status
         * is for our log and metrics. */
        tsl_metrics_refused(c->srv->metrics, TSL_REFUSED_UNREADABLE);
        log_refusal(c, "no request message arrived (too large, compressed, or the client left)");
        tsl_call_fail(c, GRPC_STATUS_INVALID_ARGUMENT, "request: no %s message arrived",
                      c->method->rpc->name);
        return;
    }
    tsl_call_dispatch(c);
}

void tsl_gate_admit(tsl_call_t *c)
{
    if (!within_conn_limit(c))
        return;
    if (!c->method) { /* an unknown method: UNIMPLEMENTED, nothing to read */
        tsl_call_dispatch(c);
        return;
    }
    char msg[512];
    grpc_status_code code = tsl_auth_call(c, msg, sizeof msg);
    if (code != GRPC_STATUS_OK) {
        tsl_metrics_refused(c->srv->metrics, code == GRPC_STATUS_PERMISSION_DENIED
                                                 ? TSL_REFUSED_PERMISSION
                                                 : TSL_REFUSED_UNAUTHENTICATED);
        log_refusal(c, msg);
        tsl_call_fail(c, code, "%s", msg);
        return;
    }
    if (tsl_call_start_recv(c, on_message) != 0)
        tsl_call_fail(c, GRPC_STATUS_INTERNAL, "request: cannot start reading the message");
}
