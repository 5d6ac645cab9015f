/*
 * store.h — tesseld's SQLite store: plans now; workers, profiles and trials
 * later (the schema already has their tables).
 *
 * Migrations are schema/NNN_name.sql, embedded in the binary at build time and
 * applied in order inside one transaction each, tracked by PRAGMA user_version.
 * A database whose user_version is newer than the binary knows is refused with a
 * clear message and never altered. Connections use WAL, synchronous=NORMAL,
 * foreign_keys=ON and a busy timeout; every write runs in a transaction.
 *
 * Thread-safety: one tsl_store_t may be used from any number of threads; calls
 * are serialised internally (searches take seconds, store calls microseconds).
 * Ownership: tsl_stored_plan_t strings are heap copies owned by the struct; free
 * them with tsl_stored_plan_clear().
 */
#ifndef TSL_STORE_H
#define TSL_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef struct tsl_store tsl_store_t;

/* Opens (creating if needed, mode 0600: plans and requests are the operator's
 * business) and migrates. */
int tsl_store_open(const char *path, tsl_store_t **out, tsl_err_t *err);
/* A read-only connection to a database tsl_store_open has prepared: for the
 * HTTP thread, so that a slow scraper holds its own lock, never the writer's
 * (WAL readers do not block the writer, nor it them). Writes fail. */
int tsl_store_open_reader(const char *path, tsl_store_t **out, tsl_err_t *err);
void tsl_store_close(tsl_store_t *s);
/* One daemon per database: an exclusive flock on "<path>.lock" holding our pid,
 * kept until *fd_out is closed (or the process ends). A second daemon gets -1
 * and a message naming the holder's pid. SQLite's own locks only serialise
 * transactions; two daemons would each run the other's trials and sweeps. */
int tsl_store_lock(const char *path, int *fd_out, tsl_err_t *err);
/* Schema version the binary knows, and the database's. */
int tsl_store_schema_version(void);
int tsl_store_db_version(tsl_store_t *s);
/* PRAGMA integrity_check == "ok" → 0. */
int tsl_store_check(tsl_store_t *s, tsl_err_t *err);

#define TSL_STORE_REQUEST_MAX 65536

typedef struct tsl_stored_plan {
    char fingerprint[17];
    char model_name[64];
    uint32_t n_devices;
    uint32_t global_batch;
    double iter_time_s;
    double samples_per_s;
    uint64_t peak_bytes;
    double search_time_s;
    int64_t created_unix; /* set by put when 0 */
    bool stale;
    /* TSL_COST_MODEL_VERSION of the binary that priced it; 0 = unknown (stored
     * before schema 8). put stores it as given. */
    uint32_t cost_model_version;
    char *request_json; /* the request as received (canonical JSON); put keeps at
                                 most TSL_STORE_REQUEST_MAX bytes of it, else a stub
                                 {"omitted": ..., "bytes": N} */
    char *result_json;  /* the whole search result (plan_json.h) */
} tsl_stored_plan_t;

void tsl_stored_plan_clear(tsl_stored_plan_t *p);

/* Insert or replace by fingerprint (a re-plan clears stale: p->stale is ignored and
 * the row is stored fresh). Fingerprints are 1–16 letters or digits. */
int tsl_store_put_plan(tsl_store_t *s, const tsl_stored_plan_t *p, tsl_err_t *err);
/* 0 found (out filled, caller clears), 1 not found, -1 error. */
int tsl_store_get_plan(tsl_store_t *s, const char *fingerprint, tsl_stored_plan_t *out,
                       tsl_err_t *err);
/* The summary fields only (request_json / result_json stay NULL: nothing to
 * clear): 0 found, 1 not found, -1 error. Microseconds and no allocation — for
 * answers whose plan bytes are cached elsewhere. */
int tsl_store_plan_head(tsl_store_t *s, const char *fingerprint, tsl_stored_plan_t *out,
                        tsl_err_t *err);
/* 0 deleted, 1 not found, -1 error. */
int tsl_store_delete_plan(tsl_store_t *s, const char *fingerprint, tsl_err_t *err);
/* 0 updated, 1 not found, -1 error (not found also fills err). */
int tsl_store_mark_stale(tsl_store_t *s, const char *fingerprint, bool stale, tsl_err_t *err);
int64_t tsl_store_count_plans(tsl_store_t *s);
/* Marks stale every fresh plan not priced by cost model `version` (the running
 * binary's TSL_COST_MODEL_VERSION): its figures are not what this binary would
 * answer, and no request of this binary can reach it by fingerprint (the version
 * is hashed into it). Called once at start. Returns the number of plans marked,
 * or -1 (err filled). */
int64_t tsl_store_mark_cost_model(tsl_store_t *s, uint32_t version, tsl_err_t *err);

typedef struct tsl_plan_filter {
    const char *model_name; /* NULL: any; exact, case-insensitive */
    uint32_t n_devices;     /* 0: any */
    int stale;              /* -1 any, 0 fresh only, 1 stale only */
    uint32_t page_size;     /* 0 → 50; capped at 1000 */
    const char *page_token; /* NULL/"" → first page; else the token a previous page returned */
} tsl_plan_filter_t;

/*
 * Lists plans newest first (created desc, fingerprint asc as tie-break). fn gets
 * each row (summary fields filled; request_json/result_json NULL). next_token
 * (cap ≥ 64) receives the token of the next page or "" at the end. Page tokens are
 * opaque; a malformed one is an error naming page_token. A non-zero return
 * from fn stops the walk and the call returns -1. fn runs without the store lock,
 * so it may call the store. model_name "" means any, like NULL.
 */
typedef int (*tsl_store_plan_fn)(void *ud, const tsl_stored_plan_t *p);
int tsl_store_list_plans(tsl_store_t *s, const tsl_plan_filter_t *f, tsl_store_plan_fn fn, void *ud,
                         char *next_token, size_t cap, tsl_err_t *err);

#endif
