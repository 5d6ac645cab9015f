/*
 * rpc_client.h — a thin synchronous layer over the gRPC C core client, for
 * tesselctl, the benchmarks and the worker.
 *
 * One tsl_rpc_client_t owns one channel and one pluck completion queue; it is used
 * by one thread at a time (the benchmark opens one per thread). Requests and
 * replies are protobuf-c messages; the layer serialises them into byte buffers,
 * adds `authorization: Bearer <token>` as plain metadata (call credentials are
 * refused on insecure channels) and applies one deadline per call.
 *
 * Addresses: "unix:/path", "unix:///path" (normalised to "unix:/path"), a bare
 * absolute path "/path" (taken as a unix socket), or "host:port" (TCP: plaintext, or
 * TLS with tsl_rpc_client_open_tls).
 *
 * TLS: tesseld's certificate is verified against the CA file (gRPC's default roots
 * when none is given) and the host part of "host:port" must be among its names
 * (a DNS or IP subject alternative name). A client certificate and key, when
 * given, are presented for mutual TLS (a tesseld with tls_client_ca requires one).
 *
 * Errors: every call fills a tsl_rpc_status_t — the gRPC status code and the
 * server's message (or the transport's); status.h names it and maps it onto
 * tesselctl's exit statuses.
 *
 * Ownership: replies returned through `out` belong to the caller and are freed
 * with protobuf_c_message_free_unpacked(msg, NULL).
 */
#ifndef TSL_RPC_CLIENT_H
#define TSL_RPC_CLIENT_H

#include <stdio.h>

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>

#include "methods.h"
#include "status.h"

#define TSL_RPC_MSG_MAX        512
#define TSL_RPC_MAX_RECV_BYTES (64 * 1024 * 1024)

typedef struct tsl_rpc_client tsl_rpc_client_t;
typedef struct tsl_rpc_stream tsl_rpc_stream_t;

typedef struct tsl_rpc_status {
    grpc_status_code code;
    char message[TSL_RPC_MSG_MAX]; /* one line; "" when the server sent none */
} tsl_rpc_status_t;

/* tesseld's default address (its default unix_socket, daemon/config.h). */
#define TSL_DEFAULT_SERVER "unix:/run/tessel/tesseld.sock"

/* Whether `server` is an address tsl_rpc_client_open takes (the forms above; a
 * host:port's port 1..65535): 0, or -1 with the reason in errbuf. For checking a
 * configuration before anything is opened (tessel-worker --check-config). */
int tsl_rpc_target_check(const char *server, char *errbuf, size_t errlen);

/*
 * Opens a channel to `server` (see the address forms above). `token` may be NULL
 * or "" (no authorization metadata). `timeout_s` <= 0 means no deadline.
 * Connecting is lazy: an unreachable server shows up as UNAVAILABLE on the first
 * call. Returns NULL only for a malformed address (message in errbuf).
 */
tsl_rpc_client_t *tsl_rpc_client_open(const char *server, const char *token, double timeout_s,
                                      char *errbuf, size_t errlen);

/* TLS settings: PEM file paths, read when the client opens. The *_name fields
 * name the option in messages ("--ca", "daemon.ca_file"); NULL: "ca", "cert", "key". */
typedef struct tsl_rpc_tls {
    const char *ca_file;   /* roots tesseld's certificate must chain to; NULL: gRPC's */
    const char *cert_file; /* client certificate chain (mutual TLS), with key_file */
    const char *key_file;
    const char *ca_name, *cert_name, *key_name;
} tsl_rpc_tls_t;

/* tsl_rpc_client_open over TLS when tls is not NULL (then server must be
 * host:port: tesseld's unix socket is plaintext). NULL on a malformed address,
 * an unreadable PEM file or a certificate without its key (message in errbuf). */
tsl_rpc_client_t *tsl_rpc_client_open_tls(const char *server, const char *token, double timeout_s,
                                          const tsl_rpc_tls_t *tls, char *errbuf, size_t errlen);
void tsl_rpc_client_close(tsl_rpc_client_t *c);
/* The normalised target the channel was created with. */
const char *tsl_rpc_client_target(const tsl_rpc_client_t *c);

/* Unary call: sends req, unpacks the reply with reply_desc into *out.
 * Returns 0 on OK, -1 otherwise (status in st; *out NULL). */
int tsl_rpc_unary(tsl_rpc_client_t *c, const char *method, const ProtobufCMessage *req,
                  const ProtobufCMessageDescriptor *reply_desc, ProtobufCMessage **out,
                  tsl_rpc_status_t *st);

/* Server-streaming call: starts it (request sent, half-closed). */
tsl_rpc_stream_t *tsl_rpc_stream_start(tsl_rpc_client_t *c, const char *method,
                                       const ProtobufCMessage *req, tsl_rpc_status_t *st);
/* Next message: 1 with *out set, 0 at the end of the stream, -1 on a message that
 * does not unpack (st says so; the call is cancelled). */
int tsl_rpc_stream_next(tsl_rpc_stream_t *s, const ProtobufCMessageDescriptor *desc,
                        ProtobufCMessage **out, tsl_rpc_status_t *st);
/* Cancels the call; safe from another thread while one is blocked in
 * tsl_rpc_stream_next (which then returns 0). Finish it as usual. */
void tsl_rpc_stream_cancel(tsl_rpc_stream_t *s);
/* Receives the final status (after next returned 0 or -1), frees the stream.
 * Returns 0 on OK, -1 otherwise. */
int tsl_rpc_stream_finish(tsl_rpc_stream_t *s, tsl_rpc_status_t *st);

#endif
