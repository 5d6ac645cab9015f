/*
 * handlers_cache.c — stored plans as tessel.v1.Plan messages, kept in memory so
 * that GetPlan and Plan cache hits do not parse the stored document (which costs
 * far more than the store read) on every call.
 *
 * An entry holds the Plan of one stored row (api/plan_proto.h: made from the
 * document in memory when the daemon has just searched it, or from the stored
 * text on a miss), in its own arena, never changed once made. An answer is a
 * shallow copy of it with its per-answer fields set (cached, stale and
 * created_unix from the row), alone or as a PlanEvent, packed by protobuf-c like
 * every other message (no byte is encoded by hand). The answers that repeat — a
 * GetPlan and a cache hit of Plan, both cached and fresh, with the stored notes
 * and name — are packed once and kept in the entry, sent as reference-counted
 * slices, so they pack nothing; the rest (the first answer of a search, a stale
 * plan's GetPlan, a Plan cache hit whose request has other notes or another
 * model name than the stored one's) are packed per call. Entries are keyed by fingerprint and the row's
 * created_unix and are forgotten when the daemon stores or deletes that
 * fingerprint; the store row's head (tsl_store_plan_head: the summary columns,
 * a prepared statement, no JSON) is still read on every call, so a plan
 * deleted, replaced or marked stale elsewhere is never answered from here.
 *
 * Direct-mapped (the fingerprint is a hash already), bounded by the entries'
 * sizes (the message counted at its packed size, plus the two kept answers); entries are reference-counted, so an answer in flight keeps its
 * message alive after an eviction. Thread-safe: the completion-queue thread and
 * the search threads both use it.
 */
#include <grpc/slice.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "handlers.h"
#include "plan_proto.h"
#include "request.h"
#include "status.h"

#define CACHE_SLOTS     1024u
#define CACHE_MAX_BYTES (48u << 20)
#define CACHE_MAX_ONE   (3u << 20) /* a plan of 1 MiB packed, with its two answers */

/* The packed answers an entry keeps: cached and fresh, [as_event]. */
#define KEPT 2

typedef struct entry {
    atomic_int refs;
    tsl_arena_t arena;
    Tessel__V1__Plan *plan; /* from arena; read-only once made */
    size_t bytes;           /* what the cache counts: packed size × (1 + KEPT) */
    pthread_mutex_t lock;   /* guards packed[] and have[] */
    grpc_slice packed[KEPT];
    bool have[KEPT];
} entry_t;

typedef struct slot {
    char fp[17];
    int64_t created_unix;
    entry_t *e; /* NULL: empty */
} slot_t;

struct tsl_plan_cache {
    pthread_mutex_t lock;
    size_t bytes;
    slot_t slots[CACHE_SLOTS];
};

static void entry_unref(entry_t *e)
{
    if (e && atomic_fetch_sub(&e->refs, 1) == 1) {
        for (int v = 0; v < KEPT; v++)
            if (e->have[v])
                grpc_slice_unref(e->packed[v]);
        pthread_mutex_destroy(&e->lock);
        tsl_arena_free(&e->arena);
        free(e);
    }
}

tsl_plan_cache_t *tsl_plan_cache_new(void)
{
    tsl_plan_cache_t *c = calloc(1, sizeof *c);
    if (c)
        pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void slot_clear(tsl_plan_cache_t *c, slot_t *s)
{
    if (!s->e)
        return;
    c->bytes -= s->e->bytes;
    entry_unref(s->e);
    s->e = NULL;
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
    if (s->e && strcmp(s->fp, fp) == 0)
        slot_clear(c, s);
    pthread_mutex_unlock(&c->lock);
}

/* A new reference to the entry of (fp, created), or NULL. */
static entry_t *lookup(tsl_plan_cache_t *c, const char *fp, int64_t created)
{
    entry_t *e = NULL;
    pthread_mutex_lock(&c->lock);
    slot_t *s = slot_of(c, fp);
    if (s->e && s->created_unix == created && strcmp(s->fp, fp) == 0) {
        e = s->e;
        atomic_fetch_add(&e->refs, 1);
    }
    pthread_mutex_unlock(&c->lock);
    return e;
}

static void insert(tsl_plan_cache_t *c, const char *fp, int64_t created, entry_t *e)
{
    if (!c || e->bytes > CACHE_MAX_ONE)
        return;
    pthread_mutex_lock(&c->lock);
    slot_t *s = slot_of(c, fp);
    slot_clear(c, s);
    if (c->bytes + e->bytes <= CACHE_MAX_BYTES) {
        snprintf(s->fp, sizeof s->fp, "%s", fp);
        s->created_unix = created;
        atomic_fetch_add(&e->refs, 1);
        s->e = e;
        c->bytes += e->bytes;
    }
    pthread_mutex_unlock(&c->lock);
}

/* A new entry (one reference, the caller's) for a document, or its text when
 * doc is NULL. */
static entry_t *entry_new(const json_t *doc, const char *text, tsl_err_t *err)
{
    entry_t *e = calloc(1, sizeof *e);
    if (!e) {
        tsl_err_setc(err, TSL_E_NOMEM, "out of memory");
        return NULL;
    }
    atomic_init(&e->refs, 1);
    pthread_mutex_init(&e->lock, NULL);
    int rc = doc ? tsl_plan_proto_from_doc(doc, &e->arena, &e->plan, err)
                 : tsl_plan_proto_from_json(text, &e->arena, &e->plan, err);
    if (rc != 0) {
        entry_unref(e);
        return NULL;
    }
    /* the message in its arena is counted at its packed size (it is larger, but
     * in proportion), and the answers the entry may keep */
    e->bytes = tessel__v1__plan__get_packed_size(e->plan) * (1 + KEPT);
    return e;
}

/* The entry of a stored row: cached, or made from the store's text and cached.
 * A row read with tsl_store_plan_head (no result_json) is read whole on a miss;
 * *row then takes that read's created_unix and stale, which go with its text. */
static entry_t *row_entry(tsl_server_t *srv, tsl_stored_plan_t *row, tsl_err_t *err)
{
    entry_t *e = srv->plans ? lookup(srv->plans, row->fingerprint, row->created_unix) : NULL;
    if (e)
        return e;
    tsl_stored_plan_t full;
    memset(&full, 0, sizeof full);
    const tsl_stored_plan_t *src = row;
    if (!row->result_json) {
        int rc = tsl_store_get_plan(srv->store, row->fingerprint, &full, err);
        if (rc == 1)
            tsl_err_set(err, "deleted while it was being read");
        if (rc != 0)
            return NULL;
        row->created_unix = full.created_unix;
        row->stale = full.stale;
        src = &full;
    }
    if ((e = entry_new(NULL, src->result_json, err)) != NULL)
        insert(srv->plans, row->fingerprint, row->created_unix, e);
    tsl_stored_plan_clear(&full);
    return e;
}

/* Whether an answer is the stored Plan as it is: asked NULL, or the request that
 * asked has the stored notes and model name (handlers.h tsl_plan_asker_t). */
static bool as_stored(const entry_t *e, const tsl_plan_asker_t *asked)
{
    const Tessel__V1__Plan *p = e->plan;
    if (!asked)
        return true;
    const char *name = asked->model_name;
    return tsl_notes_equal(asked->note, p->notes, p->n_notes) &&
           (!name || !name[0] || strcmp(p->model_name, name) == 0);
}

/* The packed answer: the entry's Plan with this answer's fields, alone (GetPlan)
 * or as the stream's last PlanEvent (Plan). A new slice reference. */
static grpc_slice pack_answer(const entry_t *e, bool cached, bool stale, int64_t created,
                              bool as_event, const tsl_plan_asker_t *asked)
{
    Tessel__V1__Plan p = *e->plan;       /* shallow: the entry stays as it is */
    char note[TSL_NOTES_CAP], *notes[8]; /* asked's, a line each (request.h) */
    snprintf(note, sizeof note, "%s", asked && asked->note ? asked->note : "");
    p.cached = cached;
    p.stale = stale;
    p.created_unix = created;
    if (!as_stored(e, asked)) {
        p.notes = notes;
        p.n_notes = tsl_notes_split(note, notes, sizeof notes / sizeof *notes);
        if (asked->model_name && asked->model_name[0])
            p.model_name = (char *)asked->model_name;
    }
    Tessel__V1__PlanEvent ev = TESSEL__V1__PLAN_EVENT__INIT;
    ev.event_case = TESSEL__V1__PLAN_EVENT__EVENT_PLAN;
    ev.plan = &p;
    const ProtobufCMessage *m = as_event ? &ev.base : &p.base;
    grpc_slice out = grpc_slice_malloc(protobuf_c_message_get_packed_size(m));
    protobuf_c_message_pack(m, GRPC_SLICE_START_PTR(out));
    return out;
}

/* The packed answer (a new slice reference): a cached, fresh one with the
 * stored notes and name is packed on first use and kept (the entry's key includes
 * created_unix, so only as_event tells them apart); any other is packed for
 * this call. */
static grpc_slice answer_bytes(entry_t *e, const tsl_stored_plan_t *row, bool cached, bool as_event,
                               const tsl_plan_asker_t *asked)
{
    if (!cached || row->stale || !as_stored(e, asked))
        return pack_answer(e, cached, row->stale, row->created_unix, as_event, asked);
    int v = as_event ? 1 : 0;
    pthread_mutex_lock(&e->lock);
    if (!e->have[v]) {
        e->packed[v] = pack_answer(e, true, false, row->created_unix, as_event, NULL);
        e->have[v] = true;
    }
    grpc_slice out = grpc_slice_ref(e->packed[v]);
    pthread_mutex_unlock(&e->lock);
    return out;
}

static void reply(tsl_call_t *call, entry_t *e, const tsl_stored_plan_t *row, bool cached,
                  bool as_event, const tsl_plan_asker_t *asked)
{
    grpc_slice s = answer_bytes(e, row, cached, as_event, asked);
    tsl_call_reply_slices(call, &s, 1);
    grpc_slice_unref(s);
}

/* 0 answered; -1 the stored plan could not be read (err says why), nothing sent. */
static int answer_row(tsl_call_t *call, const tsl_stored_plan_t *row_in, bool cached, bool as_event,
                      const tsl_plan_asker_t *asked, tsl_err_t *err)
{
    tsl_stored_plan_t row = *row_in; /* the head fields; the JSON stays row_in's */
    entry_t *e = row_entry(call->srv, &row, err);
    if (!e)
        return -1;
    reply(call, e, &row, cached, as_event, asked);
    entry_unref(e);
    return 0;
}

static void answer_row_or_fail(tsl_call_t *call, const tsl_stored_plan_t *row, bool as_event,
                               const tsl_plan_asker_t *asked)
{
    tsl_err_t err = {0};
    if (answer_row(call, row, true, as_event, asked, &err) != 0)
        tsl_call_fail(call, GRPC_STATUS_INTERNAL, "plan %s: %s", row->fingerprint, err.msg);
}

void tsl_handlers_answer_plan(tsl_call_t *call, const tsl_stored_plan_t *row)
{
    answer_row_or_fail(call, row, false, NULL);
}

void tsl_handlers_answer_plan_event(tsl_call_t *call, const tsl_stored_plan_t *row,
                                    const tsl_plan_asker_t *asked)
{
    answer_row_or_fail(call, row, true, asked);
}

int tsl_handlers_try_plan_event(tsl_call_t *call, const tsl_stored_plan_t *row,
                                const tsl_plan_asker_t *asked, tsl_err_t *err)
{
    return answer_row(call, row, true, true, asked, err);
}

void tsl_handlers_answer_new_plan(tsl_call_t *call, const tsl_stored_plan_t *row, const json_t *doc)
{
    tsl_err_t err = {0};
    entry_t *e = entry_new(doc, NULL, &err);
    if (!e) {
        tsl_call_fail(call, tsl_errcode_status(tsl_err_code(&err)), "plan %s: %s", row->fingerprint,
                      err.msg);
        return;
    }
    insert(call->srv->plans, row->fingerprint, row->created_unix, e);
    reply(call, e, row, false, true, NULL);
    entry_unref(e);
}
