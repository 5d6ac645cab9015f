/*
 * handlers_cache.c — stored plans as packed tessel.v1.Plan bytes, kept in
 * memory so that GetPlan and Plan cache hits do not parse the stored JSON
 * (which costs far more than the store read) on every call.
 *
 * A slot holds the packed Plan of one stored row without its per-answer
 * fields (cached, stale, created_unix — zero, so proto3 packing leaves them
 * out); an answer is that slice followed by a few bytes encoding those three
 * fields (a protobuf parser takes concatenated encodings as one message), and
 * for Plan it is wrapped as PlanEvent.plan. Slots are keyed by fingerprint and
 * the row's created_unix and are forgotten when the daemon stores or deletes
 * that fingerprint; the store row's head (tsl_store_plan_head: the summary
 * columns, a prepared statement, no JSON) is still read on every call, so a
 * plan deleted, replaced or marked stale elsewhere is never answered from here.
 * Only a miss reads and converts the stored JSON.
 *
 * Direct-mapped (the fingerprint is a hash already), bounded in bytes; slices
 * are reference-counted, so an answer in flight keeps its bytes alive after an
 * eviction. Thread-safe: the completion-queue thread and the search threads
 * both use it.
 */
#include <grpc/slice.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "handlers.h"
#include "plan_proto.h"

#define CACHE_SLOTS     1024u
#define CACHE_MAX_BYTES (16u << 20)
#define CACHE_MAX_ONE   (1u << 20)

typedef struct slot {
    char fp[17];
    int64_t created_unix;
    bool used;
    grpc_slice packed;
} slot_t;

struct tsl_plan_cache {
    pthread_mutex_t lock;
    size_t bytes;
    slot_t slots[CACHE_SLOTS];
};

tsl_plan_cache_t *tsl_plan_cache_new(void)
{
    tsl_plan_cache_t *c = calloc(1, sizeof *c);
    if (c)
        pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void slot_clear(tsl_plan_cache_t *c, slot_t *s)
{
    if (!s->used)
        return;
    c->bytes -= GRPC_SLICE_LENGTH(s->packed);
    grpc_slice_unref(s->packed);
    s->used = false;
}

void tsl_plan_cache_free(tsl_plan_cache_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < CACHE_SLOTS; i++)
        slot_clear(c, &c->slots[i]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static slot_t *slot_of(tsl_plan_cache_t *c, const char *fp)
{
    return &c->slots[strtoull(fp, NULL, 16) % CACHE_SLOTS];
}

void tsl_plan_cache_forget(tsl_plan_cache_t *c, const char *fp)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    slot_t *s = slot_of(c, fp);
    if (s->used && strcmp(s->fp, fp) == 0)
        slot_clear(c, s);
    pthread_mutex_unlock(&c->lock);
}

static bool lookup(tsl_plan_cache_t *c, const char *fp, int64_t created, grpc_slice *out)
{
    pthread_mutex_lock(&c->lock);
    slot_t *s = slot_of(c, fp);
    bool hit = s->used && s->created_unix == created && strcmp(s->fp, fp) == 0;
    if (hit)
        *out = grpc_slice_ref(s->packed);
    pthread_mutex_unlock(&c->lock);
    return hit;
}

static void insert(tsl_plan_cache_t *c, const char *fp, int64_t created, grpc_slice packed)
{
    size_t n = GRPC_SLICE_LENGTH(packed);
    if (n > CACHE_MAX_ONE)
        return;
    pthread_mutex_lock(&c->lock);
    slot_t *s = slot_of(c, fp);
    slot_clear(c, s);
    if (c->bytes + n <= CACHE_MAX_BYTES) {
        snprintf(s->fp, sizeof s->fp, "%s", fp);
        s->created_unix = created;
        s->packed = grpc_slice_ref(packed);
        s->used = true;
        c->bytes += n;
    }
    pthread_mutex_unlock(&c->lock);
}

/* Converts and packs a row's result JSON, and caches the bytes. */
static int convert_row(tsl_server_t *srv, const tsl_stored_plan_t *row, grpc_slice *out,
                       tsl_err_t *err)
{
    tsl_arena_t a = {0};
    Tessel__V1__Plan *p = NULL;
    if (tsl_plan_proto_from_json(row->result_json, &a, &p, err) != 0) {
        tsl_arena_free(&a);
        return -1;
    }
    size_t n = tessel__v1__plan__get_packed_size(p);
    *out = grpc_slice_malloc(n);
    tessel__v1__plan__pack(p, GRPC_SLICE_START_PTR(*out));
    tsl_arena_free(&a);
    if (srv->plans)
        insert(srv->plans, row->fingerprint, row->created_unix, *out);
    return 0;
}

/* The packed Plan of a stored row: from the cache, or converted and cached. A
 * row read with tsl_store_plan_head (no result_json) is read whole on a miss;
 * *row then takes that read's created_unix and stale, which go with its bytes. */
static int plan_bytes(tsl_server_t *srv, tsl_stored_plan_t *row, grpc_slice *out, tsl_err_t *err)
{
    if (srv->plans && lookup(srv->plans, row->fingerprint, row->created_unix, out))
        return 0;
    if (row->result_json)
        return convert_row(srv, row, out, err);
    tsl_stored_plan_t full;
    memset(&full, 0, sizeof full);
    int rc = tsl_store_get_plan(srv->store, row->fingerprint, &full, err);
    if (rc == 1)
        tsl_err_set(err, "deleted while it was being read");
    if (rc != 0)
        return -1;
    rc = convert_row(srv, &full, out, err);
    row->created_unix = full.created_unix;
    row->stale = full.stale;
    tsl_stored_plan_clear(&full);
    return rc;
}

static size_t put_varint(uint8_t *b, uint64_t v)
{
    size_t n = 0;
    do {
        b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* The field number of a message's field, from the generated descriptor (so
 * that a renumbering in the .proto cannot leave this file behind). */
static uint32_t field_number(const ProtobufCMessageDescriptor *d, const char *name)
{
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, name);
    return f ? f->id : 0;
}

/* A field's key: number and wire type (0 varint, 2 length-delimited). */
static size_t put_key(uint8_t *b, const ProtobufCMessageDescriptor *d, const char *name,
                      unsigned wire_type)
{
    return put_varint(b, ((uint64_t)field_number(d, name) << 3) | wire_type);
}

/* Plan.cached, Plan.stale, Plan.created_unix, as varints. */
static grpc_slice answer_fields(bool cached, bool stale, int64_t created_unix)
{
    const ProtobufCMessageDescriptor *d = &tessel__v1__plan__descriptor;
    uint8_t b[48];
    size_t n = 0;
    n += put_key(b + n, d, "cached", 0);
    b[n++] = cached ? 1 : 0;
    n += put_key(b + n, d, "stale", 0);
    b[n++] = stale ? 1 : 0;
    n += put_key(b + n, d, "created_unix", 0);
    n += put_varint(b + n, (uint64_t)created_unix);
    return grpc_slice_from_copied_buffer((const char *)b, n);
}

void tsl_handlers_answer_plan(tsl_call_t *call, const tsl_stored_plan_t *row_in, bool cached,
                              bool as_event)
{
    grpc_slice parts[3];
    tsl_err_t err = {0};
    size_t n = 0;
    grpc_slice body;
    tsl_stored_plan_t row = *row_in; /* the head fields; the JSON stays row_in's */
    if (plan_bytes(call->srv, &row, &body, &err) != 0) {
        tsl_call_fail(call, GRPC_STATUS_INTERNAL, "plan %s: %s", row.fingerprint, err.msg);
        return;
    }
    grpc_slice tail = answer_fields(cached, row.stale, row.created_unix);
    if (as_event) { /* PlanEvent.plan, length-delimited */
        uint8_t hdr[16];
        size_t h = put_key(hdr, &tessel__v1__plan_event__descriptor, "plan", 2);
        h += put_varint(hdr + h, GRPC_SLICE_LENGTH(body) + GRPC_SLICE_LENGTH(tail));
        parts[n++] = grpc_slice_from_copied_buffer((const char *)hdr, h);
    }
    parts[n++] = body;
    parts[n++] = tail;
    tsl_call_reply_slices(call, parts, n);
    for (size_t i = 0; i < n; i++)
        grpc_slice_unref(parts[i]);
}
