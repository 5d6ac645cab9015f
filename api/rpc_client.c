/*
 * rpc_client.c — synchronous unary and server-streaming calls over gRPC C core,
 * with protobuf-c messages in byte buffers (wire.h). See rpc_client.h.
 */
#include "rpc_client.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/grpc_security.h>
#include <grpc/support/log.h>
#include <grpc/support/time.h>

#include "wire.h"

struct tsl_rpc_client {
    grpc_channel *channel;
    grpc_completion_queue *cq;
    double timeout_s;
    bool has_auth;
    bool tls;           /* a failed handshake gets a hint about the CA */
    char ca_name[32];   /* "--ca", "ca_file": named in that hint */
    char cert_name[32]; /* "--cert", "cert_file" */
    char auth[320];     /* "Bearer <token>" */
    char target[512];
};

struct tsl_rpc_stream {
    tsl_rpc_client_t *c;
    grpc_call *call;
    grpc_metadata_array initial_md;
    bool md_pending; /* the server's initial metadata not asked for yet */
    bool failed;     /* a reply did not unpack: keep that status */
    tsl_rpc_status_t fail_st;
};

/* ---- addresses ---------------------------------------------------------- */

/* A host:port's port: decimal 1..65535. gRPC reads a larger one modulo 2^16
 * (127.0.0.1:99999 dialled port 34463) and an empty or named one as a DNS
 * failure; a target with a gRPC scheme ("dns:", "ipv4:", ...) is gRPC's to read. */
static int check_port(const char *s, char *errbuf, size_t errlen)
{
    static const char *const schemes[] = {"dns:", "ipv4:", "ipv6:", "unix-abstract:", "vsock:"};
    for (size_t i = 0; i < sizeof schemes / sizeof *schemes; i++)
        if (strncmp(s, schemes[i], strlen(schemes[i])) == 0)
            return 0;
    const char *port = strrchr(s, ':') + 1;
    char *end;
    errno = 0;
    unsigned long v = strtoul(port, &end, 10);
    if (!isdigit((unsigned char)port[0]) || *end != '\0' || errno != 0 || v < 1 || v > 65535) {
        snprintf(errbuf, errlen, "server: port '%s' in '%s' is not a number in 1..65535", port, s);
        return -1;
    }
    return 0;
}

static int normalise_target(const char *server, char *out, size_t outlen, char *errbuf,
                            size_t errlen)
{
    const char *s = (server && *server) ? server : TSL_DEFAULT_SERVER;
    int n;

    if (strncmp(s, "unix:///", 8) == 0)
        n = snprintf(out, outlen, "unix:%s", s + 7);
    else if (s[0] == '/')
        n = snprintf(out, outlen, "unix:%s", s);
    else if (strncmp(s, "unix:", 5) == 0 && s[5] != '\0')
        n = snprintf(out, outlen, "%s", s);
    else if (strncmp(s, "unix:", 5) != 0 && strchr(s, ':') && s[strlen(s) - 1] != ':') {
        if (check_port(s, errbuf, errlen) != 0)
            return -1;
        n = snprintf(out, outlen, "%s", s);
    } else {
        snprintf(errbuf, errlen,
                 "server: '%s' is not an address; give unix:/path/to/socket or host:port", s);
        return -1;
    }
    if (n < 0 || (size_t)n >= outlen) {
        snprintf(errbuf, errlen, "server: address longer than %zu bytes", outlen - 1);
        return -1;
    }
    return 0;
}

int tsl_rpc_target_check(const char *server, char *errbuf, size_t errlen)
{
    char target[512];
    return normalise_target(server, target, sizeof target, errbuf, errlen);
}

/* ---- client -------------------------------------------------------------- */

static void drop_log(gpr_log_func_args *args)
{
    (void)args;
}

/* gRPC writes its own lines on stderr (a failed TLS handshake, twice): the
 * call's status already carries the reason, and our callers print one line.
 * GRPC_VERBOSITY set in the environment keeps gRPC's logging for debugging. */
static void quiet_grpc_log(void)
{
    if (!getenv("GRPC_VERBOSITY"))
        gpr_set_log_function(drop_log);
}

/* ---- TLS ------------------------------------------------------------------ */

#define PEM_MAX_BYTES (1u << 20)

/* The whole PEM file (malloc'd), or NULL with the reason in errbuf. */
static char *read_pem(const char *name, const char *path, char *errbuf, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(errbuf, errlen, "%s: cannot open '%s': %s", name, path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(PEM_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, PEM_MAX_BYTES + 1, f) : 0;
    fclose(f);
    if (buf && n <= PEM_MAX_BYTES)
        buf[n] = '\0';
    if (!buf || n == 0 || n > PEM_MAX_BYTES || !strstr(buf, "-----BEGIN ")) {
        snprintf(errbuf, errlen, "%s: '%s' is empty, unreadable, over %u bytes or not PEM", name,
                 path, PEM_MAX_BYTES);
        free(buf);
        return NULL;
    }
    return buf;
}

static void free_secret(char *p)
{
    if (p)
        memset(p, 0, strlen(p));
    free(p);
}

/* The channel credentials: insecure without tls, else TLS verifying tesseld
 * (and presenting our certificate where one is given). NULL: errbuf says why. */
static grpc_channel_credentials *make_creds(const char *target, const tsl_rpc_tls_t *tls,
                                            char *errbuf, size_t errlen)
{
    if (!tls)
        return grpc_insecure_credentials_create();
    const char *cert_name = tls->cert_name ? tls->cert_name : "cert";
    const char *key_name = tls->key_name ? tls->key_name : "key";
    if (strncmp(target, "unix:", 5) == 0) {
        snprintf(errbuf, errlen, "server: TLS needs a host:port address; '%s' is a unix socket",
                 target);
        return NULL;
    }
    if (!tls->cert_file != !tls->key_file) {
        snprintf(errbuf, errlen, "%s: needs %s too (a client certificate and its key)",
                 tls->cert_file ? cert_name : key_name, tls->cert_file ? key_name : cert_name);
        return NULL;
    }
    char *ca = NULL, *cert = NULL, *key = NULL;
    grpc_channel_credentials *creds = NULL;
    if (tls->ca_file &&
        !(ca = read_pem(tls->ca_name ? tls->ca_name : "ca", tls->ca_file, errbuf, errlen)))
        goto out;
    if (tls->cert_file && (!(cert = read_pem(cert_name, tls->cert_file, errbuf, errlen)) ||
                           !(key = read_pem(key_name, tls->key_file, errbuf, errlen))))
        goto out;
    grpc_ssl_pem_key_cert_pair pair = {.private_key = key, .cert_chain = cert};
    creds = grpc_ssl_credentials_create(ca, cert ? &pair : NULL, NULL, NULL);
    if (!creds)
        snprintf(errbuf, errlen, "tls: gRPC refused the CA, certificate or key");
out:
    free(ca);
    free(cert);
    free_secret(key);
    return creds;
}

static grpc_channel *make_channel(const char *target, grpc_channel_credentials *creds)
{
    grpc_arg args[2];
    grpc_channel_args ca = {.num_args = 2, .args = args};
    grpc_channel *ch;

    args[0].type = GRPC_ARG_INTEGER;
    args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = TSL_RPC_MAX_RECV_BYTES;
    args[1].type = GRPC_ARG_INTEGER;
    args[1].key = (char *)GRPC_ARG_ENABLE_RETRIES;
    args[1].value.integer = 0;
    ch = grpc_channel_create(target, creds, &ca);
    grpc_channel_credentials_release(creds);
    return ch;
}

tsl_rpc_client_t *tsl_rpc_client_open(const char *server, const char *token, double timeout_s,
                                      char *errbuf, size_t errlen)
{
    return tsl_rpc_client_open_tls(server, token, timeout_s, NULL, errbuf, errlen);
}

tsl_rpc_client_t *tsl_rpc_client_open_tls(const char *server, const char *token, double timeout_s,
                                          const tsl_rpc_tls_t *tls, char *errbuf, size_t errlen)
{
    tsl_rpc_client_t *c = calloc(1, sizeof(*c));
    grpc_channel_credentials *creds;

    if (!c) {
        snprintf(errbuf, errlen, "out of memory");
        return NULL;
    }
    if (normalise_target(server, c->target, sizeof(c->target), errbuf, errlen) != 0)
        goto err;
    if (token && *token) {
        /* tesseld's tokens are printable without spaces (docs/operations.md "Tokens"):
         * any other byte can match none, and a control one (a CR from a file written
         * on Windows) made gRPC refuse the metadata as "the call could not be run" */
        for (size_t i = 0; token[i]; i++)
            if (token[i] <= ' ' || token[i] > '~') {
                snprintf(errbuf, errlen,
                         "token: byte %zu is a space or control character (0x%02x); a token is "
                         "printable characters without spaces (a CR or newline from its file?)",
                         i + 1, (unsigned)(unsigned char)token[i]);
                goto err;
            }
        int n = snprintf(c->auth, sizeof(c->auth), "Bearer %s", token);
        if (n < 0 || (size_t)n >= sizeof(c->auth)) {
            snprintf(errbuf, errlen, "token: longer than %zu bytes", sizeof(c->auth) - 8);
            goto err;
        }
        c->has_auth = true;
    }
    c->timeout_s = timeout_s;
    c->tls = tls != NULL;
    if (tls) {
        snprintf(c->ca_name, sizeof c->ca_name, "%s", tls->ca_name ? tls->ca_name : "ca");
        snprintf(c->cert_name, sizeof c->cert_name, "%s", tls->cert_name ? tls->cert_name : "cert");
    }
    quiet_grpc_log();
    grpc_init();
    if (!(creds = make_creds(c->target, tls, errbuf, errlen))) {
        grpc_shutdown();
        goto err;
    }
    c->channel = make_channel(c->target, creds);
    c->cq = grpc_completion_queue_create_for_pluck(NULL);
    return c;
err:
    free(c);
    return NULL;
}

void tsl_rpc_client_close(tsl_rpc_client_t *c)
{
    if (!c)
        return;
    grpc_channel_destroy(c->channel);
    grpc_completion_queue_shutdown(c->cq);
    while (
        grpc_completion_queue_pluck(c->cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
        GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(c->cq);
    free(c);
    grpc_shutdown();
}

const char *tsl_rpc_client_target(const tsl_rpc_client_t *c)
{
    return c->target;
}

/* ---- per-call plumbing ---------------------------------------------------- */

static gpr_timespec call_deadline(const tsl_rpc_client_t *c)
{
    if (c->timeout_s <= 0)
        return gpr_inf_future(GPR_CLOCK_REALTIME);
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                        gpr_time_from_micros((int64_t)(c->timeout_s * 1e6), GPR_TIMESPAN));
}

static grpc_call *new_call(tsl_rpc_client_t *c, const char *method)
{
    grpc_slice m = grpc_slice_from_static_string(method);
    grpc_call *call = grpc_channel_create_call(c->channel, NULL, GRPC_PROPAGATE_DEFAULTS, c->cq, m,
                                               NULL, call_deadline(c), NULL);
    return call;
}

static void set_status(tsl_rpc_status_t *st, grpc_status_code code, const char *fmt, const char *a)
{
    if (!st)
        return;
    st->code = code;
    snprintf(st->message, sizeof(st->message), fmt, a);
}

/* Copies the status details into st as one line (newlines become "; ", any other
 * control byte '?': a server's message is printed on the caller's terminal, where
 * an escape sequence in it would act). */
static void fill_status(tsl_rpc_status_t *st, grpc_status_code code, grpc_slice details)
{
    size_t n = GRPC_SLICE_LENGTH(details), j = 0;
    const char *p = (const char *)GRPC_SLICE_START_PTR(details);

    if (!st)
        return;
    st->code = code;
    for (size_t i = 0; i < n && j + 3 < sizeof(st->message); i++) {
        if (p[i] == '\n' || p[i] == '\r') {
            if (j > 0 && i + 1 < n) {
                st->message[j++] = ';';
                st->message[j++] = ' ';
            }
        } else {
            unsigned char c = (unsigned char)p[i];
            st->message[j++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
        }
    }
    st->message[j] = '\0';
}

/* What a TLS failure most likely means, in the options' words ("" when none). */
static const char *tls_hint(const tsl_rpc_client_t *c, const char *why)
{
    static __thread char hint[128];

    if (!c->tls)
        return "";
    if (strstr(why, "certificate verify failed") || strstr(why, "CERTIFICATE_VERIFY_FAILED"))
        snprintf(hint, sizeof hint, " (TLS: is %s the CA that signed tesseld's certificate?)",
                 c->ca_name);
    else if (strstr(why, "Socket closed"))
        snprintf(hint, sizeof hint,
                 " (TLS: tesseld may require a client certificate: %s and its key)", c->cert_name);
    else
        return "";
    return hint;
}

/* Says which server a transport failure was about. */
static void note_target(const tsl_rpc_client_t *c, tsl_rpc_status_t *st)
{
    char msg[TSL_RPC_MSG_MAX];

    if (st->code == GRPC_STATUS_UNAVAILABLE) {
        snprintf(msg, sizeof(msg), "tesseld at %.120s is unavailable: %.240s%.120s", c->target,
                 st->message[0] ? st->message : "no reason given", tls_hint(c, st->message));
    } else if (st->code == GRPC_STATUS_DEADLINE_EXCEEDED &&
               strcmp(st->message, "Deadline Exceeded") == 0) {
        snprintf(msg, sizeof(msg), "no answer from tesseld at %.200s within %g s (--timeout)",
                 c->target, c->timeout_s);
    } else {
        return;
    }
    memcpy(st->message, msg, sizeof(msg));
}

static void set_op(grpc_op *op, grpc_op_type type)
{
    memset(op, 0, sizeof(*op));
    op->op = type;
}

/* Fills the send-side ops (metadata, message, close) at ops[0..2]. */
static void send_ops(tsl_rpc_client_t *c, grpc_op *ops, grpc_metadata *md, grpc_byte_buffer *bb)
{
    memset(md, 0, sizeof(*md));
    md->key = grpc_slice_from_static_string("authorization");
    md->value = grpc_slice_from_static_string(c->auth);
    set_op(&ops[0], GRPC_OP_SEND_INITIAL_METADATA);
    ops[0].data.send_initial_metadata.count = c->has_auth ? 1 : 0;
    ops[0].data.send_initial_metadata.metadata = c->has_auth ? md : NULL;
    set_op(&ops[1], GRPC_OP_SEND_MESSAGE);
    ops[1].data.send_message.send_message = bb;
    set_op(&ops[2], GRPC_OP_SEND_CLOSE_FROM_CLIENT);
}

static bool run_batch(tsl_rpc_client_t *c, grpc_call *call, grpc_op *ops, size_t n, void *tag)
{
    grpc_event ev;

    if (grpc_call_start_batch(call, ops, n, tag, NULL) != GRPC_CALL_OK)
        return false;
    ev = grpc_completion_queue_pluck(c->cq, tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    return ev.type == GRPC_OP_COMPLETE && ev.success;
}

/* ---- unary ----------------------------------------------------------------- */

int tsl_rpc_unary(tsl_rpc_client_t *c, const char *method, const ProtobufCMessage *req,
                  const ProtobufCMessageDescriptor *reply_desc, ProtobufCMessage **out,
                  tsl_rpc_status_t *st)
{
    grpc_call *call = new_call(c, method);
    grpc_metadata md;
    grpc_metadata_array initial_md, trailing_md;
    grpc_byte_buffer *bb = tsl_wire_pack(req), *reply = NULL;
    grpc_status_code code = GRPC_STATUS_UNKNOWN;
    grpc_slice details = grpc_empty_slice();
    grpc_op ops[6];
    int rc = -1;

    *out = NULL;
    grpc_metadata_array_init(&initial_md);
    grpc_metadata_array_init(&trailing_md);
    send_ops(c, ops, &md, bb);
    set_op(&ops[3], GRPC_OP_RECV_INITIAL_METADATA);
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &initial_md;
    set_op(&ops[4], GRPC_OP_RECV_MESSAGE);
    ops[4].data.recv_message.recv_message = &reply;
    set_op(&ops[5], GRPC_OP_RECV_STATUS_ON_CLIENT);
    ops[5].data.recv_status_on_client.trailing_metadata = &trailing_md;
    ops[5].data.recv_status_on_client.status = &code;
    ops[5].data.recv_status_on_client.status_details = &details;
    if (!run_batch(c, call, ops, 6, call)) {
        set_status(st, GRPC_STATUS_INTERNAL, "%s: the call could not be run", method);
        goto out;
    }
    fill_status(st, code, details);
    if (code != GRPC_STATUS_OK) {
        if (st)
            note_target(c, st);
        goto out;
    }
    if (!reply || !(*out = tsl_wire_unpack(reply, reply_desc, NULL))) {
        set_status(st, GRPC_STATUS_INTERNAL, "%s: the reply is not a valid message", method);
        goto out;
    }
    rc = 0;
out:
    grpc_slice_unref(details);
    grpc_metadata_array_destroy(&initial_md);
    grpc_metadata_array_destroy(&trailing_md);
    grpc_byte_buffer_destroy(bb);
    if (reply)
        grpc_byte_buffer_destroy(reply);
    grpc_call_unref(call);
    return rc;
}

/* ---- server streaming ------------------------------------------------------ */

tsl_rpc_stream_t *tsl_rpc_stream_start(tsl_rpc_client_t *c, const char *method,
                                       const ProtobufCMessage *req, tsl_rpc_status_t *st)
{
    tsl_rpc_stream_t *s = calloc(1, sizeof(*s));
    grpc_byte_buffer *bb;
    grpc_metadata md;
    grpc_op ops[4];

    if (!s) {
        set_status(st, GRPC_STATUS_RESOURCE_EXHAUSTED, "%s: out of memory", method);
        return NULL;
    }
    s->c = c;
    s->call = new_call(c, method);
    grpc_metadata_array_init(&s->initial_md);
    bb = tsl_wire_pack(req);
    send_ops(c, ops, &md, bb);
    /* The server's initial metadata is received with the first message (or the
     * status), not here: a server that holds the call (a long poll) sends none
     * until it answers, and start must return so the call can be cancelled. A
     * failed send shows up in the final status; nothing to decide here. */
    s->md_pending = true;
    (void)run_batch(c, s->call, ops, 3, s);
    grpc_byte_buffer_destroy(bb);
    return s;
}

/* The RECV_INITIAL_METADATA op, the first time only: 1 op written, or 0. */
static size_t take_initial_md(tsl_rpc_stream_t *s, grpc_op *op)
{
    if (!s->md_pending)
        return 0;
    s->md_pending = false;
    set_op(op, GRPC_OP_RECV_INITIAL_METADATA);
    op->data.recv_initial_metadata.recv_initial_metadata = &s->initial_md;
    return 1;
}

int tsl_rpc_stream_next(tsl_rpc_stream_t *s, const ProtobufCMessageDescriptor *desc,
                        ProtobufCMessage **out, tsl_rpc_status_t *st)
{
    grpc_byte_buffer *bb = NULL;
    grpc_op ops[2];

    *out = NULL;
    if (s->failed)
        return -1;
    size_t n = take_initial_md(s, ops);
    set_op(&ops[n], GRPC_OP_RECV_MESSAGE);
    ops[n].data.recv_message.recv_message = &bb;
    if (!run_batch(s->c, s->call, ops, n + 1, s) || !bb)
        return 0;
    *out = tsl_wire_unpack(bb, desc, NULL);
    grpc_byte_buffer_destroy(bb);
    if (*out)
        return 1;
    s->failed = true;
    set_status(&s->fail_st, GRPC_STATUS_INTERNAL, "%s: a streamed reply is not a valid message",
               desc->name);
    if (st)
        *st = s->fail_st;
    grpc_call_cancel(s->call, NULL);
    return -1;
}

void tsl_rpc_stream_cancel(tsl_rpc_stream_t *s)
{
    grpc_call_cancel(s->call, NULL);
}

int tsl_rpc_stream_finish(tsl_rpc_stream_t *s, tsl_rpc_status_t *st)
{
    grpc_metadata_array trailing_md;
    grpc_status_code code = GRPC_STATUS_UNKNOWN;
    grpc_slice details = grpc_empty_slice();
    tsl_rpc_status_t local;
    grpc_op ops[2];

    grpc_metadata_array_init(&trailing_md);
    size_t n = take_initial_md(s, ops);
    set_op(&ops[n], GRPC_OP_RECV_STATUS_ON_CLIENT);
    ops[n].data.recv_status_on_client.trailing_metadata = &trailing_md;
    ops[n].data.recv_status_on_client.status = &code;
    ops[n].data.recv_status_on_client.status_details = &details;
    if (!run_batch(s->c, s->call, ops, n + 1, s))
        set_status(&local, GRPC_STATUS_INTERNAL, "%s", "the call's status could not be read");
    else if (s->failed)
        local = s->fail_st;
    else
        fill_status(&local, code, details);
    note_target(s->c, &local);
    if (st)
        *st = local;
    grpc_slice_unref(details);
    grpc_metadata_array_destroy(&trailing_md);
    grpc_metadata_array_destroy(&s->initial_md);
    grpc_call_unref(s->call);
    free(s);
    return local.code == GRPC_STATUS_OK ? 0 : -1;
}
