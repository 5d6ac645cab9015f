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
 * Refusals are counted (tessel_refused_total) and logged at most once per
 * REFUSE_LOG_INTERVAL_S. tsl_call_dispatch checks auth again (cheap) and
 * fills the call's role for the handler and the log.
 */
#include <grpc/support/alloc.h>
#include <stdio.h>

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
                  c->method->rpc->name, peer ? peer : "?", why, (unsigned long long)skipped,
                  REFUSE_LOG_INTERVAL_S);
    gpr_free(peer);
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
