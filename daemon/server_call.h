/*
 * server_call.h — one gRPC call on the server: its state machine and batches.
 *
 * A tsl_call_t is created armed (waiting for a call of its method, or of any
 * unregistered method). When a call arrives, on the completion-queue thread,
 * the caller's token is checked against the method's roles (server_auth.h)
 * and the method's handler runs — or the server's fallback handler for a
 * method nobody registered (server_int.h). It is reference-counted: each
 * batch in flight holds a reference, so does anyone that keeps the call past
 * the handler (a search job: tsl_call_ref / tsl_call_unref).
 *
 * Answers: exactly one tsl_call_finish() (or tsl_call_reply / tsl_call_fail)
 * per call; it sends the initial metadata if not yet sent, the last message if
 * any, and the status. Server-streaming calls may send messages before with
 * tsl_call_send(), which drops the message when one is still in flight (only
 * one SEND_MESSAGE may be outstanding) — fine for progress events. A finish
 * that arrives while a send is in flight is started when that send completes.
 * Every function that starts a batch takes the call's lock, so search threads
 * and the completion-queue thread may both use a call.
 *
 * tsl_call_watch_close() arms RECV_CLOSE_ON_SERVER early (streaming calls), so
 * that a client cancel or an expired deadline reaches on_cancel at once (on the
 * completion-queue thread).
 *
 * Ownership: messages given to tsl_call_send/finish are packed at once and stay
 * the caller's; byte buffers are kept alive until their batch completes.
 */
#ifndef TSL_SERVER_CALL_H
#define TSL_SERVER_CALL_H

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "config.h"
#include "err.h"
#include "server_int.h"

typedef void (*tsl_call_cancel_fn)(tsl_call_t *call);

struct tsl_call {
    tsl_server_t *srv;
    const tsl_method_t *method; /* NULL: a method nobody registered */
    size_t method_index;
    grpc_call *call;
    gpr_timespec deadline;
    grpc_metadata_array md;    /* the client's initial metadata */
    grpc_call_details details; /* unregistered calls: method and deadline */
    grpc_byte_buffer *payload; /* registered calls: the request message */

    tsl_tag_t tag_new, tag_send, tag_final, tag_close, tag_recv;
    pthread_mutex_t lock;
    atomic_int refs;
    bool md_sent, close_armed, finished, send_busy, final_pending;
    int cancelled;   /* RECV_CLOSE_ON_SERVER writes it */
    atomic_int gone; /* the client cancelled or its deadline passed */
    grpc_byte_buffer *send_buf, *final_buf;
    grpc_status_code code;
    grpc_slice status_details;

    tsl_role_t role;    /* TSL_ROLE_NONE when no tokens are configured */
    bool trusted;       /* no tokens configured: every caller trusted */
    struct timespec t0; /* CLOCK_MONOTONIC when the call arrived */
    char *peer;         /* grpc_call_get_peer when logged (gpr_free) */
    void *conn;         /* its connection's count of calls (server_gate.c); NULL: none */

    void *ctx; /* the handler's state, freed with the call */
    void (*ctx_free)(void *ctx);
    tsl_call_cancel_fn on_cancel;
    void (*on_recv)(tsl_call_t *call, bool ok); /* tsl_call_start_recv */
};

/* Arms one call for methods[index], or for unregistered methods when index is
 * (size_t)-1. 0 or -1 (logged). */
int tsl_call_arm(tsl_server_t *s, size_t index);

/* Reads the request message into c->payload (methods are registered without
 * a payload, so nothing is read before server_gate.c has checked the caller);
 * then(c, ok) runs on the completion-queue thread once it arrived or failed.
 * 0 or -1 (the batch could not start; then is not called). */
int tsl_call_start_recv(tsl_call_t *c, void (*then)(tsl_call_t *c, bool ok));

/* A new call, before anything is read: auth from metadata, then the message,
 * then tsl_call_dispatch (server_gate.c). */
void tsl_gate_admit(tsl_call_t *c);
/* A call is being freed: its connection's count goes down (server_gate.c). */
void tsl_gate_release(tsl_call_t *c);

/* Runs an admitted call: the fallback for methods nobody registered, else auth
 * (fills the role) and the method's handler. */
void tsl_call_dispatch(tsl_call_t *c);

void tsl_call_ref(tsl_call_t *c);
void tsl_call_unref(tsl_call_t *c);

/* The request message, or NULL after failing the call with INVALID_ARGUMENT
 * (malformed bytes, no message, or a string field with a NUL byte). Free
 * with protobuf_c_message_free_unpacked. */
ProtobufCMessage *tsl_call_read(tsl_call_t *c, const ProtobufCMessageDescriptor *desc);

/* Finishes with OK and msg as the one (unary) or last (streaming) message. */
void tsl_call_reply(tsl_call_t *c, const ProtobufCMessage *msg);

/* Finishes with OK and the concatenation of already packed slices as the
 * last message (the byte buffer takes its own references). */
void tsl_call_reply_slices(tsl_call_t *c, grpc_slice *slices, size_t n);

/* Finishes with an error status; the message is one line a person can act on. */
void tsl_call_fail(tsl_call_t *c, grpc_status_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Finishes with the status api/status.h maps err's code to, and its message. */
void tsl_call_fail_err(tsl_call_t *c, const tsl_err_t *err);

/* Sends one message of a streaming answer; false when dropped (a send still in
 * flight, or the call is finished or gone). */
bool tsl_call_send(tsl_call_t *c, const ProtobufCMessage *msg);

/* Arms RECV_CLOSE_ON_SERVER now; on_cancel (may be NULL) runs if the client
 * cancels or its deadline passes. */
void tsl_call_watch_close(tsl_call_t *c, tsl_call_cancel_fn on_cancel);

/* Attaches the handler's state; ctx_free runs when the call is freed. */
void tsl_call_set_ctx(tsl_call_t *c, void *ctx, void (*ctx_free)(void *));

bool tsl_call_deadline_passed(const tsl_call_t *c);
bool tsl_call_gone(const tsl_call_t *c);

#endif
