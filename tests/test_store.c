/*
 * test_store.c — the SQLite store: open/migrate/reopen, plan CRUD, listing with
 * every filter and paging, the summary-only head read, stale marking, refusal of a newer schema (file left
 * byte for byte), integrity check, concurrent writers from threads.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "store.h"

static char tmpdir[256];

static void db_path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", tmpdir, name);
}

static tsl_stored_plan_t make_plan(const char *fp, const char *model, uint32_t dev, int64_t created)
{
    tsl_stored_plan_t p;
    memset(&p, 0, sizeof(p));
    snprintf(p.fingerprint, sizeof(p.fingerprint), "%s", fp);
    snprintf(p.model_name, sizeof(p.model_name), "%s", model);
    p.n_devices = dev;
    p.global_batch = 64;
    p.iter_time_s = 1.25;
    p.samples_per_s = 51.2;
    p.peak_bytes = 70ULL << 30;
    p.search_time_s = 0.5;
    p.created_unix = created;
    p.request_json = (char *)"{\"model\":\"x\"}";
    p.result_json = (char *)"{\"plan\":{}}";
    return p;
}

static int exec_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = malloc(1 << 20);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

static void test_open_migrate(void)
{
    char path[300];
    tsl_err_t err = {0};
    tsl_store_t *s = NULL;
    db_path(path, sizeof(path), "open.db");
    CHECK(tsl_store_schema_version() >= 1, "binary knows a schema");
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    CHECK(tsl_store_db_version(s) == tsl_store_schema_version(), "migrated to %d",
          tsl_store_db_version(s));
    CHECK(tsl_store_count_plans(s) == 0, "empty");
    CHECK(tsl_store_check(s, &err) == 0, "integrity: %s", err.msg);
    tsl_store_close(s);
    /* Reopen: nothing to migrate, same version, WAL persisted. */
    CHECK(tsl_store_open(path, &s, &err) == 0, "reopen: %s", err.msg);
    CHECK(tsl_store_db_version(s) == tsl_store_schema_version(), "version kept");
    tsl_store_close(s);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    sqlite3_open(path, &db);
    sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL);
    CHECK(sqlite3_step(st) == SQLITE_ROW &&
              strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0,
          "journal_mode is wal");
    sqlite3_finalize(st);
    const char *tables[] = {"plans", "workers", "devices", "profiles", "hardware", "trials"};
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1", -1,
                           &st, NULL);
        sqlite3_bind_text(st, 1, tables[i], -1, SQLITE_STATIC);
        CHECK(sqlite3_step(st) == SQLITE_ROW, "table %s exists", tables[i]);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    /* Errors: no path; a file that is not a database. */
    CHECK(tsl_store_open("", &s, &err) == -1 && strstr(err.msg, "database") != NULL, "%s", err.msg);
    db_path(path, sizeof(path), "garbage.db");
    FILE *f = fopen(path, "w");
    fputs("this is not an SQLite database, just some text that is long enough............"
          "................................................................................",
          f);
    fclose(f);
    CHECK(tsl_store_open(path, &s, &err) == -1 && strstr(err.msg, "garbage.db") != NULL,
          "garbage refused: %s", err.msg);
    CHECK(s == NULL, "no handle on failure");
}

static void test_crud(void)
{
    char path[300];
    tsl_err_t err = {0};
    tsl_store_t *s = NULL;
    db_path(path, sizeof(path), "crud.db");
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    tsl_stored_plan_t p = make_plan("00112233aabbccdd", "GPT3-15B", 8, 0);
    CHECK(tsl_store_put_plan(s, &p, &err) == 0, "put: %s", err.msg);
    tsl_stored_plan_t got;
    CHECK(tsl_store_get_plan(s, "00112233aabbccdd", &got, &err) == 0, "get: %s", err.msg);
    CHECK(strcmp(got.model_name, "GPT3-15B") == 0, "model %s", got.model_name);
    CHECK(got.n_devices == 8 && got.global_batch == 64, "counts");
    CHECK(got.iter_time_s == 1.25 && got.samples_per_s == 51.2 && got.search_time_s == 0.5,
          "doubles");
    CHECK(got.peak_bytes == 70ULL << 30, "peak %llu", (unsigned long long)got.peak_bytes);
    CHECK(got.created_unix > 1600000000, "created set by put: %lld", (long long)got.created_unix);
    CHECK(!got.stale, "fresh");
    CHECK(got.request_json && strcmp(got.request_json, "{\"model\":\"x\"}") == 0, "request kept");
    CHECK(got.result_json && strcmp(got.result_json, "{\"plan\":{}}") == 0, "result kept");
    tsl_stored_plan_clear(&got);
    CHECK(got.request_json == NULL && got.result_json == NULL, "clear nulls");

    /* Replace: same fingerprint, new figures; stale cleared by a re-plan. */
    CHECK(tsl_store_mark_stale(s, "00112233aabbccdd", true, &err) == 0, "mark: %s", err.msg);
    CHECK(tsl_store_get_plan(s, "00112233aabbccdd", &got, &err) == 0 && got.stale, "now stale");
    tsl_stored_plan_clear(&got);
    p.iter_time_s = 0.75;
    p.result_json = (char *)"{\"plan\":{\"v\":2}}";
    CHECK(tsl_store_put_plan(s, &p, &err) == 0, "replace: %s", err.msg);
    CHECK(tsl_store_count_plans(s) == 1, "still one row");
    CHECK(tsl_store_get_plan(s, "00112233aabbccdd", &got, &err) == 0, "get after replace");
    CHECK(got.iter_time_s == 0.75 && !got.stale && strstr(got.result_json, "\"v\":2"), "replaced");
    tsl_stored_plan_clear(&got);
    CHECK(tsl_store_mark_stale(s, "00112233aabbccdd", false, &err) == 0, "unmark");

    /* Not found, delete, bad fingerprints. */
    CHECK(tsl_store_get_plan(s, "ffffffffffffffff", &got, &err) == 1, "get missing → 1");
    CHECK(tsl_store_mark_stale(s, "ffffffffffffffff", true, &err) == 1, "mark missing → 1");
    CHECK(tsl_store_delete_plan(s, "00112233aabbccdd", &err) == 0, "delete");
    CHECK(tsl_store_delete_plan(s, "00112233aabbccdd", &err) == 1, "delete again → 1");
    CHECK(tsl_store_get_plan(s, "00112233aabbccdd", &got, &err) == 1, "gone");
    CHECK(tsl_store_get_plan(s, "bad'; DROP", &got, &err) == -1 && strstr(err.msg, "fingerprint"),
          "bad fingerprint named: %s", err.msg);
    CHECK(tsl_store_get_plan(s, "0123456789abcdef0", &got, &err) == -1, "17 chars refused");
    tsl_stored_plan_t bad = make_plan("", "m", 1, 0);
    CHECK(tsl_store_put_plan(s, &bad, &err) == -1 && strstr(err.msg, "fingerprint"), "%s", err.msg);
    bad = make_plan("00000000000000ab", "m", 1, 0);
    bad.result_json = NULL;
    CHECK(tsl_store_put_plan(s, &bad, &err) == -1 && strstr(err.msg, "result_json"), "%s", err.msg);
    bad = make_plan("00000000000000ab", "m", 1, 0);
    bad.iter_time_s = 0.0 / 0.0;
    CHECK(tsl_store_put_plan(s, &bad, &err) == -1 && strstr(err.msg, "iter_time_s"), "%s", err.msg);
    CHECK(tsl_store_count_plans(s) == 0, "nothing stored by bad puts");
    tsl_store_close(s);
}

/* The head: the summary columns of one row, never its JSON; follows replace,
 * stale marking and delete like a full read; the statement is reused. */
static void test_head(void)
{
    char path[300];
    tsl_err_t err = {0};
    tsl_store_t *s = NULL;
    db_path(path, sizeof(path), "head.db");
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    tsl_stored_plan_t p = make_plan("0123456789abcdef", "GPT2-345M", 4, 1700000000);
    CHECK(tsl_store_put_plan(s, &p, &err) == 0, "put: %s", err.msg);
    tsl_stored_plan_t h;
    memset(&h, 0x5a, sizeof(h));
    CHECK(tsl_store_plan_head(s, "0123456789abcdef", &h, &err) == 0, "head: %s", err.msg);
    CHECK(strcmp(h.fingerprint, "0123456789abcdef") == 0 && strcmp(h.model_name, "GPT2-345M") == 0,
          "head names: %s %s", h.fingerprint, h.model_name);
    CHECK(h.n_devices == 4 && h.global_batch == 64 && h.peak_bytes == 70ULL << 30 &&
              h.iter_time_s == 1.25 && h.created_unix == 1700000000 && !h.stale,
          "head figures");
    CHECK(h.request_json == NULL && h.result_json == NULL, "a head carries no JSON");
    for (int i = 0; i < 100; i++)
        if (tsl_store_plan_head(s, "0123456789abcdef", &h, &err) != 0)
            break;
    CHECK(h.created_unix == 1700000000, "the reused statement reads the same row");
    CHECK(tsl_store_mark_stale(s, "0123456789abcdef", true, &err) == 0, "mark: %s", err.msg);
    CHECK(tsl_store_plan_head(s, "0123456789abcdef", &h, &err) == 0 && h.stale, "head sees stale");
    p.created_unix = 1700000100;
    CHECK(tsl_store_put_plan(s, &p, &err) == 0, "replace: %s", err.msg);
    CHECK(tsl_store_plan_head(s, "0123456789abcdef", &h, &err) == 0 && !h.stale &&
              h.created_unix == 1700000100,
          "head sees the replacement (created %lld)", (long long)h.created_unix);
    CHECK(tsl_store_plan_head(s, "ffffffffffffffff", &h, &err) == 1 && strstr(err.msg, "no plan"),
          "head of a missing plan → 1: %s", err.msg);
    CHECK(tsl_store_delete_plan(s, "0123456789abcdef", &err) == 0, "delete");
    CHECK(tsl_store_plan_head(s, "0123456789abcdef", &h, &err) == 1, "head after delete → 1");
    CHECK(tsl_store_plan_head(s, "bad'; DROP", &h, &err) == -1 && strstr(err.msg, "fingerprint"),
          "bad fingerprint named: %s", err.msg);
    tsl_store_close(s); /* finalizes the statement (else the connection leaks) */
    CHECK(tsl_store_open(path, &s, &err) == 0, "reopen after close: %s", err.msg);
    tsl_store_close(s);
}

/* ---- listing ---------------------------------------------------------------------------- */

typedef struct seen {
    char fps[400][17];
    int n;
} seen_t;

static int collect(void *ud, const tsl_stored_plan_t *p)
{
    seen_t *s = ud;
    if (s->n < 400)
        snprintf(s->fps[s->n++], 17, "%s", p->fingerprint);
    return p->request_json != NULL || p->result_json != NULL; /* summaries only */
}

/* Walks every page; returns the number of pages or -1. */
static int walk(tsl_store_t *s, tsl_plan_filter_t f, seen_t *out)
{
    char tok[64] = "";
    int pages = 0;
    tsl_err_t err = {0};
    memset(out, 0, sizeof(*out));
    do {
        char next[64];
        f.page_token = tok;
        if (tsl_store_list_plans(s, &f, collect, out, next, sizeof(next), &err) != 0) {
            fprintf(stderr, "list: %s\n", err.msg);
            return -1;
        }
        snprintf(tok, sizeof(tok), "%s", next);
        pages++;
    } while (tok[0] != '\0' && pages < 1000);
    return pages;
}

static void test_list(void)
{
    char path[300];
    tsl_err_t err = {0};
    tsl_store_t *s = NULL;
    db_path(path, sizeof(path), "list.db");
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    /* 120 plans: 3 models, devices 8/16, many sharing a created second (tie-break). */
    for (int i = 0; i < 120; i++) {
        char fp[17];
        snprintf(fp, sizeof(fp), "%016x", (unsigned)(i * 2654435761u));
        const char *model = i % 3 == 0 ? "BERT-Huge-32" : i % 3 == 1 ? "GPT3-15B" : "ViT-<x>";
        tsl_stored_plan_t p = make_plan(fp, model, i % 2 ? 16 : 8, 1700000000 + i / 7);
        CHECK(tsl_store_put_plan(s, &p, &err) == 0, "put %d: %s", i, err.msg);
        if (i % 5 == 0)
            tsl_store_mark_stale(s, fp, true, &err);
    }
    CHECK(tsl_store_count_plans(s) == 120, "120 stored");
    seen_t all;
    tsl_plan_filter_t f = {.stale = -1, .page_size = 7};
    int pages = walk(s, f, &all);
    CHECK(pages == 18, "120/7 → 18 pages, got %d", pages);
    CHECK(all.n == 120, "every plan once: %d", all.n);
    int dups = 0;
    for (int i = 0; i < all.n; i++)
        for (int j = i + 1; j < all.n; j++)
            dups += strcmp(all.fps[i], all.fps[j]) == 0;
    CHECK(dups == 0, "no duplicates across pages (%d)", dups);

    /* Order: newest first, fingerprint ascending within a second. */
    tsl_stored_plan_t a, b;
    int ordered = 1;
    for (int i = 0; i + 1 < all.n; i++) {
        tsl_store_get_plan(s, all.fps[i], &a, NULL);
        tsl_store_get_plan(s, all.fps[i + 1], &b, NULL);
        if (a.created_unix < b.created_unix ||
            (a.created_unix == b.created_unix && strcmp(a.fingerprint, b.fingerprint) >= 0))
            ordered = 0;
        tsl_stored_plan_clear(&a);
        tsl_stored_plan_clear(&b);
    }
    CHECK(ordered, "created desc, fingerprint asc");

    seen_t got;
    f = (tsl_plan_filter_t){.stale = -1, .model_name = "gpt3-15b", .page_size = 9};
    CHECK(walk(s, f, &got) > 0 && got.n == 40, "model filter, case-insensitive: %d", got.n);
    f = (tsl_plan_filter_t){.stale = -1, .model_name = "ViT-<x>", .n_devices = 16, .page_size = 5};
    CHECK(walk(s, f, &got) > 0 && got.n == 20, "model + devices: %d", got.n);
    f = (tsl_plan_filter_t){.stale = 1};
    CHECK(walk(s, f, &got) == 1 && got.n == 24, "stale only: %d", got.n);
    f = (tsl_plan_filter_t){.stale = 0, .page_size = 1000};
    CHECK(walk(s, f, &got) == 1 && got.n == 96, "fresh only: %d", got.n);
    f = (tsl_plan_filter_t){.stale = -1, .n_devices = 8, .page_size = 0};
    CHECK(walk(s, f, &got) == 2 && got.n == 60, "devices 8, default page 50: %d", got.n);
    f = (tsl_plan_filter_t){.stale = -1, .model_name = "nope"};
    CHECK(walk(s, f, &got) == 1 && got.n == 0, "no match: %d", got.n);

    /* An insert between pages neither duplicates nor hides older rows. */
    char next[64];
    memset(&got, 0, sizeof(got));
    f = (tsl_plan_filter_t){.stale = -1, .page_size = 10};
    tsl_store_list_plans(s, &f, collect, &got, next, sizeof(next), &err);
    tsl_stored_plan_t newer = make_plan("ffff000000000000", "GPT3-15B", 8, 1800000000);
    tsl_store_put_plan(s, &newer, &err);
    f.page_token = next;
    f.page_size = 1000;
    tsl_store_list_plans(s, &f, collect, &got, next, sizeof(next), &err);
    CHECK(got.n == 120 && next[0] == '\0', "rest after insert: %d", got.n);

    /* Malformed tokens name page_token. */
    const char *bad[] = {"!!!", "abc", "MTIzNDU", "MTIzfGJhZCc=", "fHx8", "x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        f.page_token = bad[i];
        err.msg[0] = '\0';
        CHECK(tsl_store_list_plans(s, &f, collect, &got, next, sizeof(next), &err) == -1 &&
                  strstr(err.msg, "page_token") != NULL,
              "token '%s' refused: %s", bad[i], err.msg);
    }
    /* A callback may stop the walk. */
    f = (tsl_plan_filter_t){.stale = -1};
    CHECK(tsl_store_list_plans(s, &f, collect, &got, next, sizeof(next), &err) == 0, "ok");
    tsl_store_close(s);
}

static int stop_at_once(void *ud, const tsl_stored_plan_t *p)
{
    (void)ud;
    (void)p;
    return 3;
}

static void test_callback_stop(void)
{
    char path[300], next[64];
    tsl_err_t err = {0};
    tsl_store_t *s = NULL;
    db_path(path, sizeof(path), "list.db");
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    tsl_plan_filter_t f = {.stale = -1};
    CHECK(tsl_store_list_plans(s, &f, stop_at_once, NULL, next, sizeof(next), &err) == -1,
          "stopped walk is -1");
    seen_t got;
    memset(&got, 0, sizeof(got));
    CHECK(tsl_store_list_plans(s, &f, collect, &got, next, 10, &err) == -1 &&
              strstr(err.msg, "next_token"),
          "small token buffer: %s", err.msg);
    tsl_store_close(s);
}

/* ---- newer schema, integrity ------------------------------------------------------------- */

static void test_newer_schema(void)
{
    char path[300];
    tsl_err_t err = {0};
    tsl_store_t *s = NULL;
    db_path(path, sizeof(path), "newer.db");
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    tsl_stored_plan_t p = make_plan("abcdef0123456789", "m", 4, 0);
    tsl_store_put_plan(s, &p, &err);
    tsl_store_close(s);
    /* Leave WAL mode (checkpointing everything into the main file) so that the
     * file alone is the database, then set a version from the future. */
    CHECK(exec_sql(path, "PRAGMA journal_mode=DELETE; PRAGMA user_version = 99;") == SQLITE_OK,
          "set user_version 99");
    size_t len0 = 0, len1 = 0;
    char *before = read_file(path, &len0);
    struct stat st0, st1;
    stat(path, &st0);
    CHECK(tsl_store_open(path, &s, &err) == -1, "newer refused");
    CHECK(strstr(err.msg, "newer tesseld") && strstr(err.msg, "schema 99") &&
              strstr(err.msg, "refusing to touch it") && strstr(err.msg, "newer.db"),
          "clear message: %s", err.msg);
    char want[64];
    snprintf(want, sizeof(want), "this binary knows %d", tsl_store_schema_version());
    CHECK(strstr(err.msg, want) != NULL, "names our version: %s", err.msg);
    char *after = read_file(path, &len1);
    stat(path, &st1);
    CHECK(before && after && len0 == len1 && memcmp(before, after, len0) == 0,
          "file bytes unchanged (%zu vs %zu)", len0, len1);
    CHECK(st0.st_mtime == st1.st_mtime, "mtime unchanged");
    char wal[320];
    snprintf(wal, sizeof(wal), "%s-wal", path);
    CHECK(access(wal, F_OK) != 0, "no WAL file created");
    free(before);
    free(after);
}

/* Migration 006: plans stored before the figures object was whole get it, their
 * sources read back from the line; the rest of the document is kept. */
static void test_migrate_figures(void)
{
    char path[300];
    tsl_err_t err = {0};
    tsl_store_t *s = NULL;
    db_path(path, sizeof(path), "figures.db");
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    tsl_stored_plan_t old = make_plan("00000000000000a1", "m", 4, 1234);
    old.result_json = (char *)"{\"plan\":{\"pp\":2},\"figures\":{\"line\":\"figures: compute "
                              "measured (registered, H100-80G / nvlink), host<->device measured, "
                              "intra-node built-in, overlap simulated\"}}";
    CHECK(tsl_store_put_plan(s, &old, &err) == 0, "put: %s", err.msg);
    tsl_stored_plan_t builtin = make_plan("00000000000000a2", "m", 4, 99);
    builtin.result_json = (char *)"{\"plan\":{\"pp\":1}}";
    CHECK(tsl_store_put_plan(s, &builtin, &err) == 0, "put: %s", err.msg);
    tsl_store_close(s);
    /* 008's column goes too: a schema-5 database has none */
    CHECK(exec_sql(path, "ALTER TABLE plans DROP COLUMN cost_model_version; "
                         "ALTER TABLE calibrations DROP COLUMN cost_model_version; "
                         "PRAGMA user_version = 5;") == SQLITE_OK,
          "back to schema 5");
    CHECK(tsl_store_open(path, &s, &err) == 0, "migrate: %s", err.msg);
    tsl_stored_plan_t got;
    memset(&got, 0, sizeof got);
    CHECK(tsl_store_get_plan(s, "00000000000000a1", &got, &err) == 0, "get: %s", err.msg);
    json_t *doc = json_loads(got.result_json ? got.result_json : "", 0, NULL);
    json_t *f = json_object_get(doc, "figures");
    CHECK(json_integer_value(json_object_get(json_object_get(doc, "plan"), "pp")) == 2 &&
              strcmp(json_string_value(json_object_get(f, "compute")), "measured") == 0 &&
              strcmp(json_string_value(json_object_get(f, "host_device")), "measured") == 0 &&
              strcmp(json_string_value(json_object_get(f, "intra_node")), "built-in") == 0 &&
              strcmp(json_string_value(json_object_get(f, "overlap")), "simulated") == 0 &&
              strcmp(json_string_value(json_object_get(f, "profile")), "registered") == 0 &&
              json_array_size(json_object_get(f, "workers_left_out")) == 0 &&
              json_integer_value(json_object_get(doc, "created_unix")) == 1234,
          "a registered plan's sources from its line: %s", got.result_json);
    json_decref(doc);
    tsl_stored_plan_clear(&got);
    CHECK(tsl_store_get_plan(s, "00000000000000a2", &got, &err) == 0, "get: %s", err.msg);
    doc = json_loads(got.result_json ? got.result_json : "", 0, NULL);
    f = json_object_get(doc, "figures");
    CHECK(strcmp(json_string_value(json_object_get(f, "compute")), "built-in") == 0 &&
              strncmp(json_string_value(json_object_get(f, "line")), "figures: built-in", 17) ==
                  0 &&
              strcmp(json_string_value(json_object_get(f, "profile")), "") == 0 &&
              json_is_false(json_object_get(doc, "cached")),
          "a plan without figures was priced on the built-in ones: %s", got.result_json);
    json_decref(doc);
    tsl_stored_plan_clear(&got);
    tsl_store_close(s);
}

/* Migration 008 and tsl_store_mark_cost_model: a plan stored before schema 8
 * (version unknown) or priced by another cost model is marked stale once; the
 * current one is left fresh; a re-plan stores it fresh under the new version. */
static void test_cost_model_stale(void)
{
    char path[300];
    tsl_err_t err = {0};
    tsl_store_t *s = NULL;
    db_path(path, sizeof(path), "costmodel.db");
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    tsl_stored_plan_t before8 = make_plan("00000000000000c1", "m", 8, 10);
    CHECK(tsl_store_put_plan(s, &before8, &err) == 0, "put: %s", err.msg);
    tsl_store_close(s);
    /* as a schema-7 tesseld left it: no cost_model_version column */
    CHECK(exec_sql(path, "ALTER TABLE plans DROP COLUMN cost_model_version; "
                         "ALTER TABLE calibrations DROP COLUMN cost_model_version; "
                         "PRAGMA user_version = 7;") == SQLITE_OK,
          "back to schema 7");
    CHECK(tsl_store_open(path, &s, &err) == 0, "migrate: %s", err.msg);
    CHECK(tsl_store_db_version(s) == tsl_store_schema_version(), "migrated to %d",
          tsl_store_db_version(s));
    tsl_stored_plan_t older = make_plan("00000000000000c2", "m", 8, 20);
    older.cost_model_version = 62;
    tsl_stored_plan_t current = make_plan("00000000000000c3", "m", 8, 30);
    current.cost_model_version = 63;
    CHECK(tsl_store_put_plan(s, &older, &err) == 0 && tsl_store_put_plan(s, &current, &err) == 0,
          "put: %s", err.msg);
    tsl_stored_plan_t got;
    memset(&got, 0, sizeof got);
    CHECK(tsl_store_plan_head(s, "00000000000000c1", &got, &err) == 0 &&
              got.cost_model_version == 0 && !got.stale,
          "a pre-008 plan reads version 0 (unknown): %u", got.cost_model_version);
    CHECK(tsl_store_mark_cost_model(s, 63, &err) == 2, "the unknown and the older one marked: %s",
          err.msg);
    CHECK(tsl_store_plan_head(s, "00000000000000c1", &got, &err) == 0 && got.stale, "c1 stale");
    CHECK(tsl_store_plan_head(s, "00000000000000c2", &got, &err) == 0 && got.stale &&
              got.cost_model_version == 62,
          "c2 stale, version kept");
    CHECK(tsl_store_plan_head(s, "00000000000000c3", &got, &err) == 0 && !got.stale &&
              got.cost_model_version == 63,
          "c3 (this cost model) fresh");
    CHECK(tsl_store_mark_cost_model(s, 63, &err) == 0, "a second start marks nothing new");
    seen_t *seen = calloc(1, sizeof *seen);
    CHECK(seen && walk(s, (tsl_plan_filter_t){.stale = 0}, seen) == 1 && seen->n == 1 &&
              strcmp(seen->fps[0], "00000000000000c3") == 0,
          "fresh-only lists the current plan alone: %d", seen ? seen->n : -1);
    free(seen);
    older.cost_model_version = 63; /* searched again by this binary */
    CHECK(tsl_store_put_plan(s, &older, &err) == 0, "re-plan: %s", err.msg);
    CHECK(tsl_store_plan_head(s, "00000000000000c2", &got, &err) == 0 && !got.stale &&
              got.cost_model_version == 63,
          "the re-planned one is fresh under the new version");
    tsl_store_close(s);
}

static void test_integrity(void)
{
    char path[300];
    tsl_err_t err = {0};
    tsl_store_t *s = NULL;
    db_path(path, sizeof(path), "fk.db");
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    CHECK(tsl_store_check(s, &err) == 0, "fresh db ok: %s", err.msg);
    tsl_store_close(s);
    /* A dangling reference written behind the store's back (foreign keys off). */
    CHECK(exec_sql(path, "PRAGMA foreign_keys=OFF; INSERT INTO trials (trial_id, plan_fingerprint, "
                         "created_unix) VALUES ('t1', 'nosuchplan', 1);") == SQLITE_OK,
          "inject");
    CHECK(tsl_store_open(path, &s, &err) == 0, "reopen: %s", err.msg);
    CHECK(tsl_store_check(s, &err) == -1 && strstr(err.msg, "foreign_key_check") &&
              strstr(err.msg, "trials"),
          "dangling found: %s", err.msg);
    tsl_store_close(s);
    /* Foreign keys are on for the store's own connection. */
    CHECK(exec_sql(path, "DELETE FROM trials") == SQLITE_OK, "clean");
    CHECK(tsl_store_open(path, &s, &err) == 0, "reopen");
    tsl_stored_plan_t p = make_plan("0000000000001234", "m", 1, 0);
    tsl_store_put_plan(s, &p, &err);
    tsl_store_close(s);
    CHECK(exec_sql(path, "PRAGMA foreign_keys=ON; INSERT INTO trials (trial_id, plan_fingerprint, "
                         "created_unix) VALUES ('t2', '0000000000001234', 1);") == SQLITE_OK,
          "trial of a plan");
    CHECK(tsl_store_open(path, &s, &err) == 0, "reopen");
    CHECK(tsl_store_delete_plan(s, "0000000000001234", &err) == 0, "delete cascades: %s", err.msg);
    CHECK(tsl_store_check(s, &err) == 0, "still consistent: %s", err.msg);
    tsl_store_close(s);
    /* The schema holds the fingerprint rule too (002_fingerprint_hex.sql). */
    static const char row[] =
        "INSERT INTO plans (fingerprint, model_name, n_devices, global_batch, "
        "iter_time_s, samples_per_s, peak_bytes, search_time_s, created_unix, "
        "request_json, result_json) VALUES ('%s', 'm', 1, 1, 1, 1, 1, 1, 1, '{}', '{}')";
    char sql[512];
    snprintf(sql, sizeof sql, row, "abc");
    CHECK(exec_sql(path, sql) != SQLITE_OK, "the schema refuses a 3-character fingerprint");
    snprintf(sql, sizeof sql, row, "000000000000zzzz");
    CHECK(exec_sql(path, sql) != SQLITE_OK, "the schema refuses non-hex digits");
    snprintf(sql, sizeof sql, row, "00000000000000AB");
    CHECK(exec_sql(path, sql) == SQLITE_OK, "the schema takes 16 hex digits");
}

/* ---- concurrency ----------------------------------------------------------------------------- */

#define N_THREADS  8
#define PER_THREAD 60

typedef struct worker_arg {
    tsl_store_t *shared;
    const char *path;
    int id;
    int failures;
} worker_arg_t;

static void *writer(void *arg)
{
    worker_arg_t *w = arg;
    tsl_err_t err = {0};
    tsl_store_t *own = NULL;
    /* Odd threads use a connection of their own: that exercises WAL + busy_timeout
     * across connections, the even ones the store's internal mutex. */
    if (w->id % 2 && tsl_store_open(w->path, &own, &err) != 0) {
        fprintf(stderr, "thread %d open: %s\n", w->id, err.msg);
        w->failures++;
        return NULL;
    }
    tsl_store_t *s = own ? own : w->shared;
    for (int i = 0; i < PER_THREAD; i++) {
        char fp[17];
        snprintf(fp, sizeof(fp), "%02x%014x", w->id, i);
        tsl_stored_plan_t p = make_plan(fp, "GPT3-15B", 8, 0);
        tsl_stored_plan_t got;
        if (tsl_store_put_plan(s, &p, &err) != 0 || tsl_store_get_plan(s, fp, &got, &err) != 0) {
            fprintf(stderr, "thread %d: %s\n", w->id, err.msg);
            w->failures++;
            continue;
        }
        tsl_stored_plan_clear(&got);
        if (i % 3 == 0 && tsl_store_mark_stale(s, fp, true, &err) != 0)
            w->failures++;
        if (i % 4 == 0 && tsl_store_delete_plan(s, fp, &err) != 0)
            w->failures++;
    }
    tsl_store_close(own);
    return NULL;
}

static void test_concurrent(void)
{
    char path[300];
    tsl_err_t err = {0};
    tsl_store_t *s = NULL;
    db_path(path, sizeof(path), "threads.db");
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    pthread_t th[N_THREADS];
    worker_arg_t args[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        args[i] = (worker_arg_t){.shared = s, .path = path, .id = i};
        pthread_create(&th[i], NULL, writer, &args[i]);
    }
    int failures = 0;
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(th[i], NULL);
        failures += args[i].failures;
    }
    CHECK(failures == 0, "no failed operation (%d)", failures);
    int64_t want = N_THREADS * (PER_THREAD - (PER_THREAD + 3) / 4);
    CHECK(tsl_store_count_plans(s) == want, "count %lld, want %lld",
          (long long)tsl_store_count_plans(s), (long long)want);
    CHECK(tsl_store_check(s, &err) == 0, "integrity after threads: %s", err.msg);
    tsl_store_close(s);
}

/* The HTTP thread's connection: while it walks a listing (a slow scraper holds
 * its lock for the whole walk), the writer's reads and writes go on. */
typedef struct reader_walk {
    tsl_store_t *writer;
    int rows, inner_ok;
} reader_walk_t;

static int during_walk(void *ud, const tsl_stored_plan_t *p)
{
    reader_walk_t *w = ud;
    tsl_stored_plan_t head, extra = make_plan("feed000000000000", "during", 1, 5);
    tsl_err_t err = {0};
    memset(&head, 0, sizeof(head));
    w->rows++;
    w->inner_ok += tsl_store_plan_head(w->writer, p->fingerprint, &head, &err) == 0;
    w->inner_ok += tsl_store_put_plan(w->writer, &extra, &err) == 0;
    return 0;
}

static void test_reader(void)
{
    char path[300];
    tsl_err_t err = {0};
    tsl_store_t *w = NULL, *r = NULL;
    struct stat st;
    db_path(path, sizeof(path), "reader.db");
    CHECK(tsl_store_open(path, &w, &err) == 0, "open: %s", err.msg);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "created 0600, not %o",
          (unsigned)(st.st_mode & 0777));
    for (int i = 0; i < 5; i++) {
        char fp[17];
        snprintf(fp, sizeof(fp), "beef%012d", i);
        tsl_stored_plan_t p = make_plan(fp, "r", 8, 100 + i);
        tsl_store_put_plan(w, &p, &err);
    }
    CHECK(tsl_store_open_reader(path, &r, &err) == 0, "reader: %s", err.msg);
    if (!r)
        return;
    reader_walk_t walk = {.writer = w};
    tsl_plan_filter_t f = {.stale = -1, .page_size = 100};
    char next[64];
    CHECK(tsl_store_list_plans(r, &f, during_walk, &walk, next, sizeof(next), &err) == 0,
          "reader lists: %s", err.msg);
    CHECK(walk.rows == 5 && walk.inner_ok == 10,
          "the writer reads and writes while the reader walks (%d rows, %d ok)", walk.rows,
          walk.inner_ok);
    tsl_stored_plan_t p = make_plan("beef999900000000", "r", 8, 1);
    CHECK(tsl_store_put_plan(r, &p, &err) == -1, "the reader cannot write");
    /* A huge request is not kept whole. */
    char *big = malloc(TSL_STORE_REQUEST_MAX + 100);
    memset(big, ' ', TSL_STORE_REQUEST_MAX + 99);
    big[0] = '{';
    big[TSL_STORE_REQUEST_MAX + 98] = '}';
    big[TSL_STORE_REQUEST_MAX + 99] = '\0';
    p.request_json = big;
    CHECK(tsl_store_put_plan(w, &p, &err) == 0, "put a big request: %s", err.msg);
    tsl_stored_plan_t got;
    memset(&got, 0, sizeof(got));
    CHECK(tsl_store_get_plan(w, "beef999900000000", &got, &err) == 0 &&
              strlen(got.request_json) < 200 && strstr(got.request_json, "omitted"),
          "a request over %d bytes is stored as a stub", TSL_STORE_REQUEST_MAX);
    tsl_stored_plan_clear(&got);
    free(big);
    tsl_store_close(r);
    tsl_store_close(w);
}

static void cleanup(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* A row edited behind the daemon's back or damaged on disk (SQLite keeps text in a
 * REAL column, a negative or infinite figure, a blob): not served — head and get fail
 * naming the plan and the column, listings leave it out. Before, 'abc' in iter_time_s
 * was served as 0 s an iteration, -1 samples/s as itself. */
static void test_damaged_rows(void)
{
    char path[300];
    tsl_err_t err = {0};
    tsl_store_t *s = NULL;
    db_path(path, sizeof(path), "damaged.db");
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    const char *fps[] = {"00000000000000a1", "00000000000000a2", "00000000000000a3",
                         "00000000000000a4", "00000000000000a5", "00000000000000ff"};
    for (int i = 0; i < 6; i++) {
        tsl_stored_plan_t p = make_plan(fps[i], "GPT2-345M", 4, 1700000000 + i);
        CHECK(tsl_store_put_plan(s, &p, &err) == 0, "put: %s", err.msg);
    }
    static const struct {
        const char *sql, *why;
    } cases[] = {
        {"UPDATE plans SET iter_time_s = 'abc' WHERE fingerprint = '00000000000000a1'",
         "iter_time_s is text, not a real"},
        {"UPDATE plans SET samples_per_s = -1 WHERE fingerprint = '00000000000000a2'",
         "samples_per_s is -1, outside 0..inf"},
        {"UPDATE plans SET peak_bytes = x'00ff' WHERE fingerprint = '00000000000000a3'",
         "peak_bytes is a blob, not an integer"},
        {"UPDATE plans SET model_name = '' WHERE fingerprint = '00000000000000a4'",
         "model_name is empty"},
        {"UPDATE plans SET iter_time_s = 1e999 WHERE fingerprint = '00000000000000a5'",
         "iter_time_s is inf"},
    };
    for (int i = 0; i < 5; i++) {
        CHECK(exec_sql(path, cases[i].sql) == SQLITE_OK, "%s", cases[i].sql);
        tsl_stored_plan_t h;
        memset(&err, 0, sizeof err);
        CHECK(tsl_store_plan_head(s, fps[i], &h, &err) == -1 &&
                  tsl_err_code(&err) == TSL_E_INTERNAL && strstr(err.msg, fps[i]) &&
                  strstr(err.msg, "the stored row is damaged") && strstr(err.msg, cases[i].why),
              "head of %s: %s", fps[i], err.msg);
        memset(&h, 0, sizeof h);
        CHECK(tsl_store_get_plan(s, fps[i], &h, &err) == -1 && strstr(err.msg, cases[i].why),
              "get of %s: %s", fps[i], err.msg);
        tsl_stored_plan_clear(&h);
    }
    seen_t seen;
    tsl_plan_filter_t f = {.stale = -1};
    CHECK(walk(s, f, &seen) >= 1 && seen.n == 1 && strcmp(seen.fps[0], fps[5]) == 0,
          "the listing holds the sound row alone (%d rows, first %s)", seen.n, seen.fps[0]);
    tsl_store_close(s);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/tsl-store-XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL)
        SKIP_ALL("cannot create a temporary directory");
    test_open_migrate();
    test_crud();
    test_head();
    test_list();
    test_callback_stop();
    test_newer_schema();
    test_migrate_figures();
    test_cost_model_stale();
    test_integrity();
    test_concurrent();
    test_reader();
    test_damaged_rows();
    cleanup();
    return CHECK_DONE();
}
