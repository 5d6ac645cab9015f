/*
 * server_call.c — the per-call state machine: arming, batches, finish (server_call.h).
 */
#include "server_call.h"

#include <grpc/byte_buffer.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "server_auth.h"
#include "status.h"
#include "wire.h"

#define CALL_OF(tag, member) ((tsl_call_t *)((char *)(tag)-offsetof(tsl_call_t, member)))

static void on_new(tsl_tag_t *tag, bool ok);
static void on_send(tsl_tag_t *tag, bool ok);
static void on_final(tsl_tag_t *tag, bool ok);
static void on_close(tsl_tag_t *tag, bool ok);
static void on_recv(tsl_tag_t *tag, bool ok);

static tsl_call_t *call_new(tsl_server_t *s, size_t index)
{
    tsl_call_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->srv = s;
    c->method_index = index;
    c->method = index == (size_t)-1 ? NULL : &s->methods[index];
    grpc_metadata_array_init(&c->md);
    grpc_call_details_init(&c->details);
    c->tag_new.fn = on_new;
    c->tag_send.fn = on_send;
    c->tag_final.fn = on_final;
    c->tag_close.fn = on_close;
    c->tag_recv.fn = on_recv;
    pthread_mutex_init(&c->lock, NULL);
    atomic_init(&c->refs, 1);
    atomic_fetch_add(&s->live_calls, 1);
    return c;
}

static void call_free(tsl_call_t *c)
{
    tsl_server_t *s = c->srv;
    if (c->conn)
        s->release(c); /* server_gate.c, held by the server: no call back into it */
    if (c->ctx_free)
        c->ctx_free(c->ctx);
    gpr_free(c->peer);
    if (c->call)
        grpc_call_unref(c->call);
    grpc_metadata_array_destroy(&c->md);
    grpc_call_details_destroy(&c->details);
    if (c->payload)
        grpc_byte_buffer_destroy(c->payload);
    if (c->send_buf)
        grpc_byte_buffer_destroy(c->send_buf);
    if (c->final_buf)
        grpc_byte_buffer_destroy(c->final_buf);
    if (c->finished)
        grpc_slice_unref(c->status_details);
    pthread_mutex_destroy(&c->lock);
    free(c);
    atomic_fetch_sub(&s->live_calls, 1);
}

void tsl_call_ref(tsl_call_t *c)
{
    atomic_fetch_add(&c->refs, 1);
}

void tsl_call_unref(tsl_call_t *c)
{
    if (atomic_fetch_sub(&c->refs, 1) == 1)
        call_free(c);
}

int tsl_call_arm(tsl_server_t *s, size_t index)
{
    tsl_call_t *c = call_new(s, index);
    if (!c) {
        tsl_log_error("rpc: out of memory arming a call");
        return -1;
    }
    grpc_call_error e;
    if (c->method)
        e = grpc_server_request_registered_call(s->server, s->registered[index], &c->call,
                                                &c->deadline, &c->md, NULL /* server_gate.c */,
                                                s->cq, s->cq, &c->tag_new);
    else
        e = grpc_server_request_call(s->server, &c->call, &c->details, &c->md, s->cq, s->cq,
                                     &c->tag_new);
    if (e != GRPC_CALL_OK) {
        tsl_log_error("rpc: cannot arm a call for %s (grpc_call_error %d)",
                      c->method ? c->method->rpc->path : "unknown methods", (int)e);
        call_free(c);
        return -1;
    }
    return 0;
}

/* Runs a new call: the fallback for methods nobody registered; otherwise the
 * caller's token against the method's roles, then its handler. */
void tsl_call_dispatch(tsl_call_t *c)
{
    if (!c->method) {
        c->srv->fallback(c);
        return;
    }
    char msg[512];
    tsl_auth_t who;
    grpc_status_code code = tsl_auth_check(c->srv->cfg, &c->md, c->method->roles,
                                           c->method->rpc->name, &who, msg, sizeof msg);
    c->role = who.role;
    c->trusted = who.trusted;
    if (code != GRPC_STATUS_OK) {
        tsl_call_fail(c, code, "%s", msg);
        return;
    }
    c->method->handle(c);
}

/* A call arrived (ok) or the server is shutting down (!ok). */
static void on_new(tsl_tag_t *tag, bool ok)
{
    tsl_call_t *c = CALL_OF(tag, tag_new);
    if (!ok) {
        tsl_call_unref(c);
        return;
    }
    if (!atomic_load(&c->srv->shutting_down))
        tsl_call_arm(c->srv, c->method_index);
    if (!c->method)
        c->deadline = c->details.deadline;
    clock_gettime(CLOCK_MONOTONIC, &c->t0);
    c->srv->admit(c); /* server_gate.c, held by the server: no call back into it */
    tsl_call_unref(c);
}

static int start_locked(tsl_call_t *c, const grpc_op *ops, size_t n, tsl_tag_t *tag)
{
    tsl_call_ref(c);
    grpc_call_error e = grpc_call_start_batch(c->call, ops, n, tag, NULL);
    if (e != GRPC_CALL_OK) {
        tsl_log_error("rpc: grpc_call_start_batch failed (grpc_call_error %d)", (int)e);
        atomic_fetch_sub(&c->refs, 1); /* the caller still holds one */
        return -1;
    }
    return 0;
}

int tsl_call_start_recv(tsl_call_t *c, void (*then)(tsl_call_t *c, bool ok))
{
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->payload;
    c->on_recv = then;
    pthread_mutex_lock(&c->lock);
    int rc = start_locked(c, &op, 1, &c->tag_recv);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

static void on_recv(tsl_tag_t *tag, bool ok)
{
    tsl_call_t *c = CALL_OF(tag, tag_recv);
    c->on_recv(c, ok);
    tsl_call_unref(c);
}

static void start_final_locked(tsl_call_t *c)
{
    grpc_op ops[4];
    size_t n = 0;
    memset(ops, 0, sizeof ops);
    if (!c->md_sent) {
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        c->md_sent = true;
    }
    if (c->final_buf) {
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = c->final_buf;
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = c->code;
    ops[n++].data.send_status_from_server.status_details = &c->status_details;
    if (!c->close_armed) {
        ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
        c->close_armed = true;
    }
    start_locked(c, ops, n, &c->tag_final);
}

static double elapsed_ms(const tsl_call_t *c)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - c->t0.tv_sec) * 1e3 + (double)(now.tv_nsec - c->t0.tv_nsec) / 1e6;
}

static void log_request(tsl_call_t *c, grpc_status_code code, const char *msg)
{
    const char *name = c->method ? c->method->rpc->name : "unknown";
    if (c->srv->metrics)
        tsl_metrics_request(c->srv->metrics, name, (int)code);
    if (tsl_log_get_level() < TSL_LOG_INFO)
        return; /* no line to write: spare the peer string and the formatting */
    const char *role = !c->method ? "-" : c->trusted ? "trusted" : tsl_role_name(c->role);
    if (!c->peer)
        c->peer = tsl_accept_peer(c->srv, c->call);
    const char *peer = c->peer ? c->peer : "?";
    if (code == GRPC_STATUS_OK)
        tsl_log_info("rpc %s peer=%s role=%s code=OK %.1f ms", name, peer, role, elapsed_ms(c));
    else
        tsl_log_info("rpc %s peer=%s role=%s code=%s %.1f ms: %s", name, peer, role,
                     tsl_status_name(code), elapsed_ms(c), msg);
}

static void finish(tsl_call_t *c, grpc_status_code code, const char *msg, grpc_byte_buffer *buf)
{
    pthread_mutex_lock(&c->lock);
    if (c->finished) {
        pthread_mutex_unlock(&c->lock);
        if (buf)
            grpc_byte_buffer_destroy(buf);
        return;
    }
    c->finished = true;
    c->code = code;
    c->status_details = grpc_slice_from_copied_string(msg);
    c->final_buf = buf;
    if (c->send_busy)
        c->final_pending = true;
    else
        start_final_locked(c);
    pthread_mutex_unlock(&c->lock);
    log_request(c, code, msg);
}

void tsl_call_reply(tsl_call_t *c, const ProtobufCMessage *msg)
{
    finish(c, GRPC_STATUS_OK, "", msg ? tsl_wire_pack(msg) : NULL);
}

void tsl_call_reply_slices(tsl_call_t *c, grpc_slice *slices, size_t n)
{
    finish(c, GRPC_STATUS_OK, "", grpc_raw_byte_buffer_create(slices, n));
}

void tsl_call_fail(tsl_call_t *c, grpc_status_code code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    finish(c, code, msg, NULL);
}

void tsl_call_fail_err(tsl_call_t *c, const tsl_err_t *err)
{
    finish(c, tsl_errcode_status(tsl_err_code(err)), err->msg, NULL);
}

ProtobufCMessage *tsl_call_read(tsl_call_t *c, const ProtobufCMessageDescriptor *desc)
{
    if (!c->payload) {
        tsl_call_fail(c, GRPC_STATUS_INVALID_ARGUMENT, "request: no %s message received",
                      desc->name);
        return NULL;
    }
    /* A C string stops at the first NUL: "GPT2-345M\0evil" must not pass as
     * GPT2-345M, so every string field is checked in the bytes. */
    size_t len = 0;
    tsl_err_t err = {0};
    ProtobufCMessage *m = tsl_wire_unpack_checked(c->payload, desc, &len, &err);
    if (!m && err.msg[0])
        tsl_call_fail_err(c, &err);
    else if (!m)
        tsl_call_fail(c, GRPC_STATUS_INVALID_ARGUMENT,
                      "request: %zu bytes are not a valid %s.%s message", len, desc->package_name,
                      desc->short_name);
    return m;
}

bool tsl_call_send(tsl_call_t *c, const ProtobufCMessage *msg)
{
    pthread_mutex_lock(&c->lock);
    if (c->finished || c->send_busy || atomic_load(&c->gone)) {
        pthread_mutex_unlock(&c->lock);
        return false;
    }
    grpc_op ops[2];
    size_t n = 0;
    memset(ops, 0, sizeof ops);
    if (!c->md_sent) {
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        c->md_sent = true;
    }
    c->send_buf = tsl_wire_pack(msg);
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n++].data.send_message.send_message = c->send_buf;
    c->send_busy = true;
    bool ok = start_locked(c, ops, n, &c->tag_send) == 0;
    if (!ok) {
        grpc_byte_buffer_destroy(c->send_buf);
        c->send_buf = NULL;
        c->send_busy = false;
    }
    pthread_mutex_unlock(&c->lock);
    return ok;
}

static void on_send(tsl_tag_t *tag, bool ok)
{
    (void)ok;
    tsl_call_t *c = CALL_OF(tag, tag_send);
    pthread_mutex_lock(&c->lock);
    grpc_byte_buffer_destroy(c->send_buf);
    c->send_buf = NULL;
    c->send_busy = false;
    if (c->final_pending) {
        c->final_pending = false;
        start_final_locked(c);
    }
    pthread_mutex_unlock(&c->lock);
    tsl_call_unref(c);
}

static void on_final(tsl_tag_t *tag, bool ok)
{
    (void)ok;
    tsl_call_t *c = CALL_OF(tag, tag_final);
    pthread_mutex_lock(&c->lock);
    if (c->final_buf)
        grpc_byte_buffer_destroy(c->final_buf);
    c->final_buf = NULL;
    pthread_mutex_unlock(&c->lock);
    tsl_call_unref(c);
}

void tsl_call_watch_close(tsl_call_t *c, tsl_call_cancel_fn on_cancel)
{
    pthread_mutex_lock(&c->lock);
    if (!c->close_armed) {
        grpc_op op;
        memset(&op, 0, sizeof op);
        op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        op.data.recv_close_on_server.cancelled = &c->cancelled;
        c->on_cancel = on_cancel;
        if (start_locked(c, &op, 1, &c->tag_close) == 0)
            c->close_armed = true;
    }
    pthread_mutex_unlock(&c->lock);
}

static void on_close(tsl_tag_t *tag, bool ok)
{
    tsl_call_t *c = CALL_OF(tag, tag_close);
    if (ok && c->cancelled) {
        atomic_store(&c->gone, 1);
        if (c->on_cancel)
            c->on_cancel(c);
    }
    tsl_call_unref(c);
}

void tsl_call_set_ctx(tsl_call_t *c, void *ctx, void (*ctx_free)(void *))
{
    c->ctx = ctx;
    c->ctx_free = ctx_free;
}

bool tsl_call_deadline_passed(const tsl_call_t *c)
{
    gpr_timespec d = gpr_convert_clock_type(c->deadline, GPR_CLOCK_MONOTONIC);
    return gpr_time_cmp(gpr_now(GPR_CLOCK_MONOTONIC), d) >= 0;
}

bool tsl_call_gone(const tsl_call_t *c)
{
    return atomic_load(&c->gone) != 0;
}
