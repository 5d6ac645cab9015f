/*
 * store.c — tesseld's SQLite store (see store.h for the contract).
 *
 * One connection per tsl_store_t, serialised by a mutex: store calls take
 * microseconds, so a pool of connections would buy nothing but lock-order
 * questions. Writes use BEGIN IMMEDIATE so that a second process on the same
 * file waits in the busy handler at the start of a transaction instead of
 * failing half-way with SQLITE_BUSY on the upgrade to a write lock.
 */
#include "store.h"
#include "store_natural.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fingerprint.h"
#include "log.h"
#include "migrations.h"
#include "pidlock.h"
#include "ratelimit.h"
#include "store_registry.h"

#define STORE_BUSY_TIMEOUT_MS 5000
#define STORE_PAGE_DEFAULT    50
#define STORE_PAGE_MAX        1000

struct tsl_store {
    sqlite3 *db;
    pthread_mutex_t mu;
    sqlite3_stmt *head; /* tsl_store_plan_head's statement, prepared once */
    char path[512];
};

/* The summary columns, in the order row_to_plan() reads them. */
#define PLAN_COLUMNS                                                                               \
    "fingerprint, model_name, n_devices, global_batch, iter_time_s, samples_per_s, "               \
    "peak_bytes, search_time_s, created_unix, stale, cost_model_version"

/* ---- small helpers ---------------------------------------------------------------- */

static int db_fail(tsl_store_t *s, tsl_err_t *err, const char *what)
{
    /* The two faults an operator must act on get a hint; the write was rolled back. */
    int code = sqlite3_errcode(s->db) & 0xff;
    const char *hint = code == SQLITE_FULL    ? " (free space on its file system; nothing was "
                                                "written, earlier plans are intact)"
                       : code == SQLITE_IOERR ? " (check the disk and the kernel log; the write "
                                                "was rolled back)"
                                              : "";
    return tsl_err_setc(err,
                        code == SQLITE_FULL    ? TSL_E_EXHAUSTED
                        : code == SQLITE_IOERR ? TSL_E_UNAVAILABLE
                                               : TSL_E_INTERNAL,
                        "database %s: %s: %s%s", s->path, what, sqlite3_errmsg(s->db), hint);
}

static int db_exec(tsl_store_t *s, const char *sql, tsl_err_t *err)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(s, err, sql);
    return 0;
}

static int tx_begin(tsl_store_t *s, tsl_err_t *err)
{
    return db_exec(s, "BEGIN IMMEDIATE", err);
}

static int tx_commit(tsl_store_t *s, tsl_err_t *err)
{
    if (db_exec(s, "COMMIT", err) == 0)
        return 0;
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

/* Errors of the statement that failed are already in err; a failing ROLLBACK
 * (nothing to roll back after an automatic one) changes nothing for the caller. */
static void tx_rollback(tsl_store_t *s)
{
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

static int prepare(tsl_store_t *s, const char *sql, sqlite3_stmt **st, tsl_err_t *err)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    return 0;
}

/* Fingerprints are the planner's 16 hex digits (common/fingerprint.h), which
 * also keeps '|' (the page-token separator) and SQL oddities out. */
static int check_fingerprint(const char *fp, tsl_err_t *err)
{
    if (!tsl_fingerprint_valid(fp))
        return tsl_err_setc(err, TSL_E_INVALID, "fingerprint: '%.40s' is not 16 hex digits",
                            fp ? fp : "");
    return 0;
}

static char *dup_text(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    int n = sqlite3_column_bytes(st, col);
    char *c = malloc((size_t)n + 1);
    if (c == NULL)
        return NULL;
    if (n > 0)
        memcpy(c, t, (size_t)n);
    c[n] = '\0';
    return c;
}

#define NAME_CAP ((int)sizeof(((tsl_stored_plan_t *)0)->model_name))

static const char *sql_type_name(int t)
{
    return t == SQLITE_INTEGER ? "an integer"
           : t == SQLITE_FLOAT ? "a real"
           : t == SQLITE_TEXT  ? "text"
           : t == SQLITE_BLOB  ? "a blob"
                               : "null";
}

/* What is wrong with a row selected with PLAN_COLUMNS, into buf; NULL when it is as
 * put_locked writes it. SQLite keeps what it is given — text in a REAL column
 * ('abc' read as 0 s an iteration), a negative or an infinite figure, a
 * fingerprint that is no hex — so a row edited behind the daemon's back, damaged
 * on disk or written by a build with other rules would be served as figures it
 * does not hold. Checked before anything of it is read (column_type reports the
 * stored type only before a conversion). */
static const char *row_damage(sqlite3_stmt *st, char *buf, size_t cap)
{
    static const struct {
        const char *name;
        int type; /* SQLITE_FLOAT columns take integers too (1 s stored as 1) */
        double max;
    } cols[] = {
        {"fingerprint", SQLITE_TEXT, 0},
        {"model_name", SQLITE_TEXT, 0},
        {"n_devices", SQLITE_INTEGER, UINT32_MAX},
        {"global_batch", SQLITE_INTEGER, UINT32_MAX},
        {"iter_time_s", SQLITE_FLOAT, HUGE_VAL},
        {"samples_per_s", SQLITE_FLOAT, HUGE_VAL},
        {"peak_bytes", SQLITE_INTEGER, 9.2e18},
        {"search_time_s", SQLITE_FLOAT, HUGE_VAL},
        {"created_unix", SQLITE_INTEGER, 9.2e18},
        {"stale", SQLITE_INTEGER, 1},
        {"cost_model_version", SQLITE_INTEGER, UINT32_MAX},
    };
    for (int c = 0; c < (int)(sizeof cols / sizeof cols[0]); c++) {
        int t = sqlite3_column_type(st, c);
        if (t != cols[c].type && !(cols[c].type == SQLITE_FLOAT && t == SQLITE_INTEGER)) {
            snprintf(buf, cap, "%s is %s, not %s", cols[c].name, sql_type_name(t),
                     sql_type_name(cols[c].type));
            return buf;
        }
        if (t == SQLITE_TEXT)
            continue;
        double v = sqlite3_column_double(st, c);
        if (!isfinite(v) || v < 0 || v > cols[c].max) {
            snprintf(buf, cap, "%s is %g, outside 0..%g", cols[c].name, v, cols[c].max);
            return buf;
        }
    }
    const char *fp = (const char *)sqlite3_column_text(st, 0);
    const char *name = (const char *)sqlite3_column_text(st, 1);
    if (!fp || !tsl_fingerprint_valid(fp)) {
        snprintf(buf, cap, "fingerprint '%.20s' is not 16 hex digits", fp ? fp : "");
        return buf;
    }
    if (!name || name[0] == '\0' || strlen(name) >= (size_t)NAME_CAP) {
        snprintf(buf, cap, "model_name is empty or longer than %d characters", NAME_CAP - 1);
        return buf;
    }
    return NULL;
}

/* Fills the summary fields from a row selected with PLAN_COLUMNS. */
static void row_to_plan(sqlite3_stmt *st, tsl_stored_plan_t *p)
{
    memset(p, 0, sizeof(*p));
    snprintf(p->fingerprint, sizeof(p->fingerprint), "%s",
             (const char *)sqlite3_column_text(st, 0));
    snprintf(p->model_name, sizeof(p->model_name), "%s", (const char *)sqlite3_column_text(st, 1));
    p->n_devices = (uint32_t)sqlite3_column_int64(st, 2);
    p->global_batch = (uint32_t)sqlite3_column_int64(st, 3);
    p->iter_time_s = sqlite3_column_double(st, 4);
    p->samples_per_s = sqlite3_column_double(st, 5);
    p->peak_bytes = (uint64_t)sqlite3_column_int64(st, 6);
    p->search_time_s = sqlite3_column_double(st, 7);
    p->created_unix = sqlite3_column_int64(st, 8);
    p->stale = sqlite3_column_int(st, 9) != 0;
    p->cost_model_version = (uint32_t)sqlite3_column_int64(st, 10);
}

/* ---- open, versions, migrations ------------------------------------------------- */

int tsl_store_schema_version(void)
{
    return (int)tsl_n_migrations;
}

static int read_version(tsl_store_t *s, int *out, tsl_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (prepare(s, "PRAGMA user_version", &st, err) != 0)
        goto out;
    if (sqlite3_step(st) != SQLITE_ROW) {
        db_fail(s, err, "reading PRAGMA user_version");
        goto out;
    }
    *out = sqlite3_column_int(st, 0);
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

static int refuse_newer(tsl_store_t *s, int version, tsl_err_t *err)
{
    if (version <= tsl_store_schema_version())
        return 0;
    return tsl_err_set(err,
                       "database %s was written by a newer tesseld (schema %d, this binary "
                       "knows %d); refusing to touch it",
                       s->path, version, tsl_store_schema_version());
}

/* journal_mode answers with the mode it ended up in; a filesystem without shared
 * memory (some network mounts) silently stays in "delete". */
static int configure(tsl_store_t *s, tsl_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (prepare(s, "PRAGMA journal_mode=WAL", &st, err) != 0)
        goto out;
    if (sqlite3_step(st) != SQLITE_ROW) {
        db_fail(s, err, "PRAGMA journal_mode=WAL");
        goto out;
    }
    const char *mode = (const char *)sqlite3_column_text(st, 0);
    if (mode == NULL || (strcmp(mode, "wal") != 0 && strcmp(mode, "memory") != 0)) {
        tsl_err_set(err,
                    "database %s: cannot use WAL (journal_mode stayed '%s'); put the "
                    "database on a local filesystem",
                    s->path, mode ? mode : "?");
        goto out;
    }
    if (db_exec(s, "PRAGMA synchronous=NORMAL", err) != 0 ||
        db_exec(s, "PRAGMA foreign_keys=ON", err) != 0)
        goto out;
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

/* One transaction per migration; the version is read again inside it because
 * another process may have migrated the same file meanwhile. */
static int apply_migration(tsl_store_t *s, const tsl_migration_t *m, tsl_err_t *err)
{
    int v;
    if (tx_begin(s, err) != 0)
        return -1;
    if (read_version(s, &v, err) != 0 || refuse_newer(s, v, err) != 0)
        goto fail;
    if (v >= m->version)
        return tx_commit(s, err);
    char *msg = NULL;
    if (sqlite3_exec(s->db, m->sql, NULL, NULL, &msg) != SQLITE_OK) {
        tsl_err_set(err, "database %s: migration %s failed: %s", s->path, m->name,
                    msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        goto fail;
    }
    char pragma[64];
    snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", m->version);
    if (db_exec(s, pragma, err) != 0)
        goto fail;
    return tx_commit(s, err);
fail:
    tx_rollback(s);
    return -1;
}

static int migrate(tsl_store_t *s, int current, tsl_err_t *err)
{
    for (size_t i = 0; i < tsl_n_migrations; i++) {
        if (tsl_migrations[i].version <= current)
            continue;
        if (apply_migration(s, &tsl_migrations[i], err) != 0)
            return -1;
    }
    return 0;
}

/* SQLite creates a new database with 0644 under the usual umask; create the
 * file 0600 first (its -wal and -shm files take the database file's mode). */
static int create_private(const char *path, tsl_err_t *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    if (errno == EEXIST)
        return 0;
    return tsl_err_set(err, "database %s: cannot create: %s", path, strerror(errno));
}

/*
 * SQLite opens a file it may not write read-only without a word, and then every
 * write fails for as long as the daemon runs. Refuse at the start instead: the
 * file itself (sqlite3_db_readonly), then a write lock, which also needs the
 * -wal and -shm files beside it (a read-only directory fails here).
 */
static int check_writable(tsl_store_t *s, tsl_err_t *err)
{
    if (sqlite3_db_readonly(s->db, "main") == 1)
        return tsl_err_set(err,
                           "database %s is read-only (file mode, owner or filesystem); "
                           "tesseld must write it: fix its permissions",
                           s->path);
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return tsl_err_set(err,
                           "database %s cannot be written (%s); check the permissions of "
                           "the file and of its directory",
                           s->path, sqlite3_errmsg(s->db));
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return 0;
}

static int store_open(const char *path, bool reader, tsl_store_t **out, tsl_err_t *err)
{
    *out = NULL;
    if (path == NULL || path[0] == '\0')
        return tsl_err_set(err, "database: no path given (set [store] database)");
    if (!reader && create_private(path, err) != 0)
        return -1;
    tsl_store_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return tsl_err_set(err, "database %s: out of memory", path);
    snprintf(s->path, sizeof(s->path), "%s", path);
    pthread_mutex_init(&s->mu, NULL);
    int v = 0;
    int flags = reader ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
                       : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
        tsl_err_set(err, "database %s: cannot open: %s", path,
                    s->db ? sqlite3_errmsg(s->db) : "out of memory");
        goto fail;
    }
    sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);
    /* the registry's listings sort labels by it ("mb": "2" before "16") */
    if (tsl_store_natural_register(s->db) != SQLITE_OK) {
        tsl_err_set(err, "database %s: cannot register a collation: %s", path,
                    sqlite3_errmsg(s->db));
        goto fail;
    }
    if (reader) {
        *out = s;
        return 0;
    }
    /* The version check comes before any PRAGMA that writes (journal_mode does),
     * so a newer database is left byte for byte as it was. */
    if (read_version(s, &v, err) != 0 || refuse_newer(s, v, err) != 0)
        goto fail;
    if (check_writable(s, err) != 0 || configure(s, err) != 0 || migrate(s, v, err) != 0 ||
        check_writable(s, err) != 0)
        goto fail;
    *out = s;
    return 0;
fail:
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return -1;
}

int tsl_store_open(const char *path, tsl_store_t **out, tsl_err_t *err)
{
    return store_open(path, false, out, err);
}

int tsl_store_open_reader(const char *path, tsl_store_t **out, tsl_err_t *err)
{
    return store_open(path, true, out, err);
}

void tsl_store_close(tsl_store_t *s)
{
    if (s == NULL)
        return;
    /* Recommended before closing long-lived connections: refreshes planner stats. */
    sqlite3_finalize(s->head);
    sqlite3_exec(s->db, "PRAGMA optimize", NULL, NULL, NULL);
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

int tsl_store_db_version(tsl_store_t *s)
{
    int v = -1;
    pthread_mutex_lock(&s->mu);
    if (read_version(s, &v, NULL) != 0)
        v = -1;
    pthread_mutex_unlock(&s->mu);
    return v;
}

/* integrity_check answers "ok" or one row per problem; foreign_key_check answers
 * nothing or one row per dangling reference. */
static int check_locked(tsl_store_t *s, tsl_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (prepare(s, "PRAGMA integrity_check", &st, err) != 0)
        goto out;
    if (sqlite3_step(st) != SQLITE_ROW) {
        db_fail(s, err, "PRAGMA integrity_check");
        goto out;
    }
    const char *first = (const char *)sqlite3_column_text(st, 0);
    if (first == NULL || strcmp(first, "ok") != 0) {
        tsl_err_set(err, "database %s: integrity_check failed: %s", s->path, first ? first : "?");
        goto out;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (prepare(s, "PRAGMA foreign_key_check", &st, err) != 0)
        goto out;
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        tsl_err_set(err,
                    "database %s: foreign_key_check failed: table %s has a row whose "
                    "reference into %s is missing",
                    s->path, sqlite3_column_text(st, 0), sqlite3_column_text(st, 2));
        goto out;
    }
    if (step != SQLITE_DONE) {
        db_fail(s, err, "PRAGMA foreign_key_check");
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

int tsl_store_check(tsl_store_t *s, tsl_err_t *err)
{
    pthread_mutex_lock(&s->mu);
    int rc = check_locked(s, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* ---- plans ------------------------------------------------------------------------- */

void tsl_stored_plan_clear(tsl_stored_plan_t *p)
{
    if (p == NULL)
        return;
    free(p->request_json);
    free(p->result_json);
    p->request_json = NULL;
    p->result_json = NULL;
}

static int check_plan(const tsl_stored_plan_t *p, tsl_err_t *err)
{
    if (check_fingerprint(p->fingerprint, err) != 0)
        return -1;
    if (memchr(p->model_name, '\0', sizeof(p->model_name)) == NULL)
        return tsl_err_set(err, "model_name: not terminated within %zu bytes",
                           sizeof(p->model_name));
    if (p->request_json == NULL || p->result_json == NULL)
        return tsl_err_set(err, "%s: missing (a stored plan keeps its request and result)",
                           p->request_json == NULL ? "request_json" : "result_json");
    if (p->peak_bytes > (uint64_t)INT64_MAX)
        return tsl_err_set(err, "peak_bytes: %llu does not fit a signed 64-bit column",
                           (unsigned long long)p->peak_bytes);
    if (!isfinite(p->iter_time_s) || !isfinite(p->samples_per_s) || !isfinite(p->search_time_s))
        return tsl_err_set(err, "%s: not a finite number",
                           !isfinite(p->iter_time_s)     ? "iter_time_s"
                           : !isfinite(p->samples_per_s) ? "samples_per_s"
                                                         : "search_time_s");
    return 0;
}

static int put_locked(tsl_store_t *s, const tsl_stored_plan_t *p, tsl_err_t *err)
{
    static const char sql[] =
        "INSERT INTO plans (fingerprint, model_name, n_devices, global_batch, iter_time_s, "
        "samples_per_s, peak_bytes, search_time_s, created_unix, stale, request_json, result_json, "
        "cost_model_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0, ?10, ?11, ?12) "
        "ON CONFLICT (fingerprint) DO UPDATE SET model_name = excluded.model_name, "
        "n_devices = excluded.n_devices, global_batch = excluded.global_batch, "
        "iter_time_s = excluded.iter_time_s, samples_per_s = excluded.samples_per_s, "
        "peak_bytes = excluded.peak_bytes, search_time_s = excluded.search_time_s, "
        "created_unix = excluded.created_unix, stale = 0, "
        "request_json = excluded.request_json, result_json = excluded.result_json, "
        "cost_model_version = excluded.cost_model_version";
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (tx_begin(s, err) != 0)
        return -1;
    if (prepare(s, sql, &st, err) != 0)
        goto out;
    sqlite3_bind_text(st, 1, p->fingerprint, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, p->model_name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, p->n_devices);
    sqlite3_bind_int64(st, 4, p->global_batch);
    sqlite3_bind_double(st, 5, p->iter_time_s);
    sqlite3_bind_double(st, 6, p->samples_per_s);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)p->peak_bytes);
    sqlite3_bind_double(st, 8, p->search_time_s);
    sqlite3_bind_int64(st, 9, p->created_unix != 0 ? p->created_unix : (int64_t)time(NULL));
    /* A request is kept for people to read; a huge one (a padded hf_config) is not
     * worth a row of its size per distinct request. */
    char stub[128];
    size_t req_len = strlen(p->request_json);
    if (req_len > TSL_STORE_REQUEST_MAX)
        snprintf(stub, sizeof stub, "{\"omitted\": \"larger than %d bytes\", \"bytes\": %zu}",
                 TSL_STORE_REQUEST_MAX, req_len);
    sqlite3_bind_text(st, 10, req_len > TSL_STORE_REQUEST_MAX ? stub : p->request_json, -1,
                      SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 11, p->result_json, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 12, p->cost_model_version);
    if (sqlite3_step(st) != SQLITE_DONE) {
        db_fail(s, err, "storing plan");
        goto out;
    }
    sqlite3_finalize(st);
    st = NULL;
    rc = tx_commit(s, err);
out:
    sqlite3_finalize(st);
    if (rc != 0)
        tx_rollback(s);
    return rc;
}

int tsl_store_put_plan(tsl_store_t *s, const tsl_stored_plan_t *p, tsl_err_t *err)
{
    if (check_plan(p, err) != 0)
        return -1;
    pthread_mutex_lock(&s->mu);
    int rc = put_locked(s, p, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* A damaged row (row_damage): logged, and an error (TSL_E_INTERNAL) naming the plan
 * and what is wrong; the daemon answers it as a plan it cannot read (Plan searches
 * again and replaces it, GetPlan fails, listings leave it out). */
static int damaged(tsl_store_t *s, const char *fp, const char *why, tsl_err_t *err)
{
    static tsl_ratelimit_t rl; /* every listing meets the row again: a line a minute */
    uint64_t skipped = 0;
    char shown[TSL_ERR_SHOWN_MAX(20)];
    tsl_err_shown(fp ? fp : "", 20, shown, sizeof shown);
    if (tsl_ratelimit_ok(&rl, 60, &skipped))
        tsl_log_warnx("database %s: plan %s: the stored row is damaged (%s); not served "
                      "(%llu more such reads in the last minute)",
                      s->path, shown, why, (unsigned long long)skipped);
    return tsl_err_setc(err, TSL_E_INTERNAL, "plan %s: the stored row is damaged (%s)", shown, why);
}

static int get_locked(tsl_store_t *s, const char *fp, tsl_stored_plan_t *out, tsl_err_t *err)
{
    static const char sql[] = "SELECT " PLAN_COLUMNS ", request_json, result_json "
                              "FROM plans WHERE fingerprint = ?1";
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (prepare(s, sql, &st, err) != 0)
        goto out;
    sqlite3_bind_text(st, 1, fp, -1, SQLITE_STATIC);
    int step = sqlite3_step(st);
    if (step == SQLITE_DONE) {
        tsl_err_set(err, "fingerprint: no plan %s in the store", fp);
        rc = 1;
        goto out;
    }
    if (step != SQLITE_ROW) {
        db_fail(s, err, "reading plan");
        goto out;
    }
    char why[160];
    if (row_damage(st, why, sizeof why) != NULL) {
        damaged(s, fp, why, err);
        goto out;
    }
    row_to_plan(st, out);
    out->request_json = dup_text(st, 11);
    out->result_json = dup_text(st, 12);
    if (out->request_json == NULL || out->result_json == NULL) {
        tsl_stored_plan_clear(out);
        tsl_err_set(err, "database %s: out of memory reading plan %s", s->path, fp);
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

int tsl_store_get_plan(tsl_store_t *s, const char *fingerprint, tsl_stored_plan_t *out,
                       tsl_err_t *err)
{
    if (check_fingerprint(fingerprint, err) != 0)
        return -1;
    pthread_mutex_lock(&s->mu);
    int rc = get_locked(s, fingerprint, out, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* The summary columns only: SQLite never touches the JSON columns' overflow
 * pages, and the statement is prepared once (GetPlan's hot path). */
static int head_locked(tsl_store_t *s, const char *fp, tsl_stored_plan_t *out, tsl_err_t *err)
{
    static const char sql[] = "SELECT " PLAN_COLUMNS " FROM plans WHERE fingerprint = ?1";
    if (s->head == NULL &&
        sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->head, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    sqlite3_bind_text(s->head, 1, fp, -1, SQLITE_STATIC);
    int step = sqlite3_step(s->head), rc = -1;
    char why[160];
    if (step == SQLITE_ROW && row_damage(s->head, why, sizeof why) != NULL) {
        damaged(s, fp, why, err);
    } else if (step == SQLITE_ROW) {
        row_to_plan(s->head, out);
        rc = 0;
    } else if (step == SQLITE_DONE) {
        tsl_err_set(err, "fingerprint: no plan %s in the store", fp);
        rc = 1;
    } else {
        db_fail(s, err, "reading plan");
    }
    sqlite3_reset(s->head);
    sqlite3_clear_bindings(s->head);
    return rc;
}

int tsl_store_plan_head(tsl_store_t *s, const char *fingerprint, tsl_stored_plan_t *out,
                        tsl_err_t *err)
{
    if (check_fingerprint(fingerprint, err) != 0)
        return -1;
    pthread_mutex_lock(&s->mu);
    int rc = head_locked(s, fingerprint, out, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* Runs one UPDATE/DELETE keyed by fingerprint in its own transaction:
 * 0 a row changed, 1 no such plan, -1 error. */
static int write_one(tsl_store_t *s, const char *sql, const char *fp, int arg, tsl_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (tx_begin(s, err) != 0)
        return -1;
    if (prepare(s, sql, &st, err) != 0)
        goto out;
    sqlite3_bind_text(st, 1, fp, -1, SQLITE_STATIC);
    if (sqlite3_bind_parameter_count(st) >= 2)
        sqlite3_bind_int(st, 2, arg);
    if (sqlite3_step(st) != SQLITE_DONE) {
        db_fail(s, err, "updating plan");
        goto out;
    }
    int changed = sqlite3_changes(s->db);
    sqlite3_finalize(st);
    st = NULL;
    if (tx_commit(s, err) != 0)
        goto out;
    rc = changed > 0 ? 0 : 1;
    if (rc == 1)
        tsl_err_set(err, "fingerprint: no plan %s in the store", fp);
out:
    sqlite3_finalize(st);
    if (rc < 0)
        tx_rollback(s);
    return rc;
}

int tsl_store_delete_plan(tsl_store_t *s, const char *fingerprint, tsl_err_t *err)
{
    if (check_fingerprint(fingerprint, err) != 0)
        return -1;
    pthread_mutex_lock(&s->mu);
    int rc = write_one(s, "DELETE FROM plans WHERE fingerprint = ?1", fingerprint, 0, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int tsl_store_mark_stale(tsl_store_t *s, const char *fingerprint, bool stale, tsl_err_t *err)
{
    if (check_fingerprint(fingerprint, err) != 0)
        return -1;
    pthread_mutex_lock(&s->mu);
    int rc = write_one(s, "UPDATE plans SET stale = ?2 WHERE fingerprint = ?1", fingerprint,
                       stale ? 1 : 0, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int64_t tsl_store_count_plans(tsl_store_t *s)
{
    sqlite3_stmt *st = NULL;
    int64_t n = -1;
    pthread_mutex_lock(&s->mu);
    if (prepare(s, "SELECT count(*) FROM plans", &st, NULL) == 0 && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* One statement in its own transaction; only fresh rows are counted, so that a
 * restart reports the plans it marked, not those marked before. */
static int64_t mark_cost_model_locked(tsl_store_t *s, uint32_t version, tsl_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int64_t n = -1;
    if (tx_begin(s, err) != 0)
        return -1;
    if (prepare(s, "UPDATE plans SET stale = 1 WHERE stale = 0 AND cost_model_version <> ?1", &st,
                err) != 0)
        goto out;
    sqlite3_bind_int64(st, 1, version);
    if (sqlite3_step(st) != SQLITE_DONE) {
        db_fail(s, err, "marking plans of another cost model stale");
        goto out;
    }
    int64_t changed = sqlite3_changes(s->db);
    sqlite3_finalize(st);
    st = NULL;
    if (tx_commit(s, err) == 0)
        n = changed;
out:
    sqlite3_finalize(st);
    if (n < 0)
        tx_rollback(s);
    return n;
}

int64_t tsl_store_mark_cost_model(tsl_store_t *s, uint32_t version, tsl_err_t *err)
{
    pthread_mutex_lock(&s->mu);
    int64_t n = mark_cost_model_locked(s, version, err);
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* ---- listing and page tokens ----------------------------------------------------------- */

/* Page tokens are base64url (no padding) of "created_unix|fingerprint": opaque to
 * clients, stable across restarts, and naming a position rather than an offset so
 * that inserts between pages neither duplicate nor skip rows. */
static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void b64_encode(const unsigned char *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[o++] = B64[(v >> 18) & 63];
        out[o++] = B64[(v >> 12) & 63];
        if (i + 1 < n)
            out[o++] = B64[(v >> 6) & 63];
        if (i + 2 < n)
            out[o++] = B64[v & 63];
    }
    out[o] = '\0';
}

/* Returns the decoded length or -1; out holds at least cap bytes. */
static int b64_decode(const char *in, unsigned char *out, size_t cap)
{
    size_t n = strlen(in), o = 0;
    uint32_t acc = 0;
    int bits = 0;
    if (n % 4 == 1)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *p = strchr(B64, in[i]);
        if (p == NULL)
            return -1;
        acc = (acc << 6) | (uint32_t)(p - B64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o >= cap)
                return -1;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    return (int)o;
}

static int make_token(int64_t created, const char *fp, char *tok, size_t cap, tsl_err_t *err)
{
    char raw[64];
    int n = snprintf(raw, sizeof(raw), "%lld|%s", (long long)created, fp);
    if ((size_t)(n + 2) / 3 * 4 + 1 > cap)
        return tsl_err_setc(err, TSL_E_INTERNAL,
                            "next_token: buffer of %zu bytes is too small (64 needed)", cap);
    b64_encode((const unsigned char *)raw, (size_t)n, tok);
    return 0;
}

static int parse_token(const char *tok, int64_t *created, char fp[17], tsl_err_t *err)
{
    unsigned char raw[64];
    int n = strlen(tok) < 80 ? b64_decode(tok, raw, sizeof(raw) - 1) : -1;
    if (n > 0) {
        raw[n] = '\0';
        char *bar = memchr(raw, '|', (size_t)n);
        char *end = NULL;
        if (bar != NULL) {
            *bar = '\0';
            long long c = strtoll((char *)raw, &end, 10);
            if (end != (char *)raw && *end == '\0' && check_fingerprint(bar + 1, NULL) == 0) {
                *created = c;
                snprintf(fp, 17, "%s", bar + 1);
                return 0;
            }
        }
    }
    return tsl_err_set(err,
                       "page_token: '%.40s' is not a token this server issued; "
                       "start again with an empty page_token",
                       tok);
}

typedef struct plan_page {
    tsl_stored_plan_t *rows;
    size_t n;
    bool more;
} plan_page_t;

static const char LIST_SQL[] =
    "SELECT " PLAN_COLUMNS " FROM plans "
    "WHERE (?1 IS NULL OR model_name = ?1) AND (?2 = 0 OR n_devices = ?2) "
    "AND (?3 < 0 OR stale = ?3) "
    "AND (?4 IS NULL OR created_unix < ?4 OR (created_unix = ?4 AND fingerprint > ?5)) "
    "ORDER BY created_unix DESC, fingerprint ASC LIMIT ?6";

/* Reads up to limit rows (plus one to learn whether another page follows). */
static int list_locked(tsl_store_t *s, const tsl_plan_filter_t *f, const int64_t *after_created,
                       const char *after_fp, size_t limit, plan_page_t *pg, tsl_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (prepare(s, LIST_SQL, &st, err) != 0)
        goto out;
    if (f->model_name != NULL && f->model_name[0] != '\0')
        sqlite3_bind_text(st, 1, f->model_name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, f->n_devices);
    sqlite3_bind_int(st, 3, f->stale < 0 ? -1 : f->stale > 0 ? 1 : 0);
    if (after_created != NULL) {
        sqlite3_bind_int64(st, 4, *after_created);
        sqlite3_bind_text(st, 5, after_fp, -1, SQLITE_STATIC);
    }
    sqlite3_bind_int64(st, 6, (sqlite3_int64)limit + 1);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (pg->n == limit) {
            pg->more = true;
            break;
        }
        char why[160];
        if (row_damage(st, why, sizeof why) != NULL) { /* left out of every listing */
            tsl_err_t skip = {0};
            damaged(s, (const char *)sqlite3_column_text(st, 0), why, &skip);
            continue;
        }
        row_to_plan(st, &pg->rows[pg->n++]);
    }
    if (step != SQLITE_ROW && step != SQLITE_DONE) {
        db_fail(s, err, "listing plans");
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

int tsl_store_list_plans(tsl_store_t *s, const tsl_plan_filter_t *f, tsl_store_plan_fn fn, void *ud,
                         char *next_token, size_t cap, tsl_err_t *err)
{
    size_t limit = f->page_size == 0               ? STORE_PAGE_DEFAULT
                   : f->page_size > STORE_PAGE_MAX ? STORE_PAGE_MAX
                                                   : f->page_size;
    int64_t after_created = 0;
    char after_fp[17] = "";
    bool paged = f->page_token != NULL && f->page_token[0] != '\0';
    plan_page_t pg = {0};
    int rc = -1;
    /* Parse before clearing next_token: callers may pass the same buffer for both. */
    if (paged && parse_token(f->page_token, &after_created, after_fp, err) != 0)
        return -1;
    if (next_token != NULL && cap > 0)
        next_token[0] = '\0';
    pg.rows = calloc(limit, sizeof(*pg.rows));
    if (pg.rows == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "database %s: out of memory listing plans", s->path);
    pthread_mutex_lock(&s->mu);
    rc = list_locked(s, f, paged ? &after_created : NULL, after_fp, limit, &pg, err);
    pthread_mutex_unlock(&s->mu);
    if (rc != 0)
        goto out;
    /* Callbacks run without the lock so that they may call the store themselves. */
    for (size_t i = 0; i < pg.n; i++) {
        int r = fn ? fn(ud, &pg.rows[i]) : 0;
        if (r != 0) {
            rc = tsl_err_setc(err, TSL_E_INTERNAL, "listing plans: stopped by the caller (%d)", r);
            goto out;
        }
    }
    if (pg.more && next_token != NULL) {
        const tsl_stored_plan_t *last = &pg.rows[pg.n - 1];
        rc = make_token(last->created_unix, last->fingerprint, next_token, cap, err);
    }
out:
    free(pg.rows);
    return rc;
}

/* ---- for the other store modules (store_registry.h) ------------------------------------ */

sqlite3 *tsl_store_lock_db(tsl_store_t *s)
{
    pthread_mutex_lock(&s->mu);
    return s->db;
}

void tsl_store_unlock_db(tsl_store_t *s)
{
    pthread_mutex_unlock(&s->mu);
}

int tsl_store_lock(const char *path, int *fd_out, tsl_err_t *err)
{
    *fd_out = -1;
    char lock[sizeof(((tsl_store_t *)0)->path) + 8], what[sizeof lock + 16], pid[32];
    if (path == NULL || path[0] == '\0')
        return tsl_err_set(err, "database: no path given (set [store] database)");
    if ((size_t)snprintf(lock, sizeof lock, "%s.lock", path) >= sizeof lock)
        return tsl_err_set(err, "database %s: path too long", path);
    snprintf(what, sizeof what, "database %s", path);
    int fd, rc = tsl_pidlock_take(lock, 0600, what, &fd, pid, sizeof pid, err);
    if (rc == 1)
        return tsl_err_set(err,
                           "database %s is in use by another tesseld (pid %s; lock %s is "
                           "held); stop it or choose another database",
                           path, pid[0] ? pid : "?", lock);
    if (rc != 0)
        return -1;
    if (tsl_pidlock_write_pid(fd) != 0) {
        int e = errno;
        close(fd);
        return tsl_err_set(err, "database %s: cannot write the pid into %s: %s", path, lock,
                           strerror(e));
    }
    *fd_out = fd;
    return 0;
}
