/*
 * server_auth.h — bearer-token authentication and role checks for tesseld.
 *
 * Callers send "authorization: Bearer <token>" metadata; the config maps tokens
 * to roles (config.h). With no tokens configured the daemon only listens on its
 * unix socket (config validation refuses TCP without tokens) and every caller
 * is trusted. With tokens configured every caller needs one, on any transport.
 *
 * Answers: no token → UNAUTHENTICATED; a token that is not configured →
 * UNAUTHENTICATED; a known token whose role the method does not accept →
 * PERMISSION_DENIED. A method with roles == 0 (Health/Check) is always allowed.
 * Tokens are compared in constant time (tsl_config_token_role).
 */
#ifndef TSL_SERVER_AUTH_H
#define TSL_SERVER_AUTH_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"

typedef struct tsl_auth {
    tsl_role_t role; /* the caller's role, TSL_ROLE_NONE when unknown */
    bool trusted;    /* no tokens configured */
} tsl_auth_t;

/* GRPC_STATUS_OK, or the code to answer with and a message in msg. */
grpc_status_code tsl_auth_check(const tsl_config_t *cfg, const grpc_metadata_array *md,
                                unsigned roles, const char *method, tsl_auth_t *out, char *msg,
                                size_t cap);

/* tsl_auth_check for a registered call's method and metadata; fills the call's
 * role and trusted flag. (handlers.c's dispatch can use it too.) */
struct tsl_call;
grpc_status_code tsl_auth_call(struct tsl_call *call, char *msg, size_t cap);

/* Worker identity. The credential a caller acts with: "cert:<subject>" when it
 * presented a client certificate (mutual TLS: gRPC verified it against
 * tls_client_ca), else "token:<16 hex digits of SHA-256(token)>" (the token itself
 * is never stored); "" for a trusted caller (no [tokens]), which may act as any
 * worker. A worker id is bound to the identity that registered it
 * (store_registry.h); the node certificate of a worker therefore names its node. */
void tsl_auth_identity(struct tsl_call *call, char *out, size_t cap);

/* GRPC_STATUS_OK when the caller may act as worker_id: the id is unknown (the
 * handler answers NOT_FOUND as before), not bound, or bound to the caller's
 * identity. Otherwise PERMISSION_DENIED with both identities named in msg (or
 * INTERNAL with the store's error): the handler answers it and changes nothing. */
grpc_status_code tsl_auth_worker(struct tsl_call *call, const char *worker_id, char *msg,
                                 size_t cap);

/* "scheduler or ops" for a role mask, into buf. */
const char *tsl_auth_roles_text(unsigned roles, char *buf, size_t cap);

#endif
