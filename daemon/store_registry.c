/*
 * store_registry.c — workers, liveness and profiles in the store (see
 * store_registry.h). Every function takes the store's lock for its whole
 * transaction; writes run in BEGIN IMMEDIATE like store.c's.
 */
#include "store_registry.h"
#include "store_sql.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- statement helpers (store_sql.h, with this file's error prefix) ----------------------- */

#define SCOPE "store"

/* Runs sql (no rows expected) with the binds given by a format, as tsl_sql_vprep. */
static int run(sqlite3 *db, const char *sql, const char *fmt, tsl_err_t *err, ...)
{
    va_list ap;
    va_start(ap, err);
    sqlite3_stmt *st = tsl_sql_vprep(db, SCOPE, sql, fmt, ap, err);
    va_end(ap);
    return tsl_sql_done(db, SCOPE, st, err);
}

/* Ends the transaction of a call about one worker; 1 (an unknown worker) commits
 * what little it did (reads) and names the id. */
static int end_for_worker(sqlite3 *db, int rc, const char *worker_id, tsl_err_t *err)
{
    if (rc != 1)
        return tsl_sql_end(db, SCOPE, rc, err);
    tsl_sql_end(db, SCOPE, 0, err);
    tsl_err_setc(err, TSL_E_NOTFOUND, "worker_id: %s is not registered; register first", worker_id);
    return 1;
}

/* ---- identity ---------------------------------------------------------------------------- */

static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    h ^= 0xff; /* a separator, so ("ab","c") and ("a","bc") differ */
    return h * 1099511628211ull;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void tsl_registry_worker_id(const char *hostname, const tsl_reg_device_t *devs, size_t n,
                            char out[TSL_WORKER_ID_LEN + 1])
{
    char keys[TSL_REGISTRY_MAX_DEVICES][160];
    char *order[TSL_REGISTRY_MAX_DEVICES];
    uint64_t h = fnv1a(14695981039346656037ull, hostname);
    if (n > TSL_REGISTRY_MAX_DEVICES)
        n = TSL_REGISTRY_MAX_DEVICES;
    /* Sorted, so that the order a backend enumerates GPUs in does not matter. */
    for (size_t i = 0; i < n; i++) {
        if (devs[i].uuid && devs[i].uuid[0])
            snprintf(keys[i], sizeof keys[i], "uuid:%s", devs[i].uuid);
        else
            snprintf(keys[i], sizeof keys[i], "dev:%u:%s", devs[i].index, devs[i].model);
        order[i] = keys[i];
    }
    qsort(order, n, sizeof order[0], cmp_str);
    for (size_t i = 0; i < n; i++)
        h = fnv1a(h, order[i]);
    snprintf(out, TSL_WORKER_ID_LEN + 1, "w-%016llx", (unsigned long long)h);
}

void tsl_registry_profile_key(const char *gpu_model, bool simulated, char *buf, size_t cap)
{
    snprintf(buf, cap, "profile:%s|%s", gpu_model, simulated ? "simulated" : "measured");
}

/* ---- register, heartbeat, sweep ---------------------------------------------------------- */

static int upsert_worker(sqlite3 *db, const tsl_reg_worker_t *w, int64_t now, tsl_err_t *err)
{
    static const char sql[] =
        "INSERT INTO workers (worker_id, hostname, driver_version, cuda_version, nccl_version, "
        "simulated, registered_unix, last_seen_unix, state, heartbeat_s, version) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, 'online', ?8, ?9) "
        "ON CONFLICT (worker_id) DO UPDATE SET hostname = excluded.hostname, "
        "driver_version = excluded.driver_version, cuda_version = excluded.cuda_version, "
        "nccl_version = excluded.nccl_version, simulated = excluded.simulated, "
        "last_seen_unix = excluded.last_seen_unix, state = 'online', "
        "heartbeat_s = excluded.heartbeat_s, version = excluded.version";
    int rc = run(db, sql, "tttttiiit", err, w->worker_id, w->hostname, w->driver_version,
                 w->cuda_version, w->nccl_version, (int64_t)w->simulated, now,
                 (int64_t)w->heartbeat_s, w->version);
    /* The first credential binds the id; check_owner refused any other before. */
    if (rc == 0 && w->owner && w->owner[0])
        rc = run(db,
                 "INSERT INTO worker_owners (worker_id, owner) VALUES (?1, ?2) "
                 "ON CONFLICT (worker_id) DO NOTHING",
                 "tt", err, w->worker_id, w->owner);
    return rc;
}

static int upsert_device(sqlite3 *db, const char *id, const tsl_reg_device_t *d, tsl_err_t *err)
{
    static const char sql[] =
        "INSERT INTO devices (worker_id, device_index, model, memory_bytes, sm_count, uuid) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (worker_id, device_index) DO UPDATE SET "
        "model = excluded.model, memory_bytes = excluded.memory_bytes, "
        "sm_count = excluded.sm_count, uuid = excluded.uuid";
    return run(db, sql, "titiit", err, id, (int64_t)d->index, d->model, (int64_t)d->memory_bytes,
               (int64_t)d->sm_count, d->uuid ? d->uuid : "");
}

static int exists(sqlite3 *db, const char *sql, const char *id)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int step = sqlite3_step(st);
    found = step == SQLITE_ROW ? 1 : step == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return found;
}

/* The owner of worker_id into buf: 0, 1 unknown id, -1 error. */
static int owner_of(sqlite3 *db, const char *worker_id, char *buf, size_t cap)
{
    sqlite3_stmt *st = NULL;
    static const char sql[] = "SELECT coalesce(o.owner, '') FROM workers w LEFT JOIN "
                              "worker_owners o USING (worker_id) WHERE w.worker_id = ?1";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, worker_id, -1, SQLITE_STATIC);
    int step = sqlite3_step(st), rc = step == SQLITE_ROW ? 0 : step == SQLITE_DONE ? 1 : -1;
    if (rc == 0)
        snprintf(buf, cap, "%s", tsl_sql_text(st, 0));
    sqlite3_finalize(st);
    return rc;
}

int tsl_registry_owner(tsl_store_t *s, const char *worker_id, char *owner, size_t cap,
                       tsl_err_t *err)
{
    sqlite3 *db = tsl_store_lock_db(s);
    int rc = owner_of(db, worker_id, owner, cap);
    if (rc < 0)
        tsl_sql_fail(db, SCOPE, "reading workers", err);
    tsl_store_unlock_db(s);
    return rc;
}

/* The host's bound workers: how many are owner's (*mine), how many others'. */
static int host_owners(sqlite3 *db, const char *hostname, const char *owner, int *mine, int *others)
{
    sqlite3_stmt *st = NULL;
    static const char sql[] =
        "SELECT coalesce(sum(o.owner = ?2), 0), coalesce(sum(o.owner <> ?2), 0) "
        "FROM workers w JOIN worker_owners o USING (worker_id) "
        "WHERE w.hostname = ?1";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, hostname, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, owner, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : -1;
    if (rc == 0) {
        *mine = sqlite3_column_int(st, 0);
        *others = sqlite3_column_int(st, 1);
    }
    sqlite3_finalize(st);
    return rc;
}

int tsl_registry_host_readable(tsl_store_t *s, const char *hostname, const char *owner,
                               tsl_err_t *err)
{
    int mine = 0, others = 0;
    sqlite3 *db = tsl_store_lock_db(s);
    int rc = host_owners(db, hostname, owner, &mine, &others);
    if (rc < 0)
        tsl_sql_fail(db, SCOPE, "reading workers", err);
    tsl_store_unlock_db(s);
    return rc < 0 ? -1 : mine > 0 || others == 0;
}

/* 0, or 2 when w's id is bound to another owner than w->owner. */
static int check_owner(sqlite3 *db, const tsl_reg_worker_t *w, tsl_err_t *err)
{
    char owner[TSL_REGISTRY_OWNER_MAX];
    int rc = owner_of(db, w->worker_id, owner, sizeof owner);
    if (rc < 0)
        return tsl_sql_fail(db, SCOPE, "reading workers", err);
    if (rc == 0 && owner[0] && w->owner && w->owner[0] && strcmp(owner, w->owner) != 0)
        return 2;
    return 0;
}

int tsl_registry_register(tsl_store_t *s, tsl_reg_worker_t *w, int64_t now, bool *known,
                          tsl_err_t *err)
{
    tsl_registry_worker_id(w->hostname, w->devices, w->n_devices, w->worker_id);
    sqlite3 *db = tsl_store_lock_db(s);
    int rc = tsl_sql_begin(db, SCOPE, err);
    if (rc == 0) {
        int found = exists(db, "SELECT 1 FROM workers WHERE worker_id = ?1", w->worker_id);
        *known = found == 1;
        rc = found < 0 ? tsl_sql_fail(db, SCOPE, "reading workers", err) : check_owner(db, w, err);
        if (rc == 0)
            rc = upsert_worker(db, w, now, err);
        for (uint32_t i = 0; rc == 0 && i < w->n_devices; i++)
            rc = upsert_device(db, w->worker_id, &w->devices[i], err);
        rc = tsl_sql_end(db, SCOPE, rc, err);
    }
    tsl_store_unlock_db(s);
    return rc;
}

int tsl_registry_heartbeat(tsl_store_t *s, const char *worker_id, bool deregister, int64_t now,
                           bool *came_back, tsl_err_t *err)
{
    sqlite3 *db = tsl_store_lock_db(s);
    int rc = tsl_sql_begin(db, SCOPE, err);
    *came_back = false;
    if (rc == 0) {
        int online = exists(db, "SELECT 1 FROM workers WHERE worker_id = ?1 AND state = 'online'",
                            worker_id);
        int found = exists(db, "SELECT 1 FROM workers WHERE worker_id = ?1", worker_id);
        if (online < 0 || found < 0)
            rc = tsl_sql_fail(db, SCOPE, "reading workers", err);
        else if (found == 0)
            rc = 1;
        else
            rc = run(db, "UPDATE workers SET last_seen_unix = ?2, state = ?3 WHERE worker_id = ?1",
                     "tit", err, worker_id, now, deregister ? "stopped" : "online");
        *came_back = rc == 0 && online == 0 && !deregister;
        rc = end_for_worker(db, rc, worker_id, err);
    }
    tsl_store_unlock_db(s);
    return rc;
}

/* Online workers past their timeout: timeout_s, or three announced heartbeats. */
#define SILENT_WHERE                                                                               \
    "state = 'online' AND last_seen_unix < ?1 - (CASE WHEN ?2 > 0 THEN ?2 ELSE 3 * heartbeat_s "   \
    "END)"

static int sweep_locked(sqlite3 *db, int64_t now, uint32_t timeout_s, tsl_registry_offline_fn fn,
                        void *ud, tsl_err_t *err)
{
    sqlite3_stmt *st = NULL;
    /* A time after now was stored under a wall clock that was ahead (an earlier
     * run's, before a backward step): count the timeout from now, never from
     * the future, so that a stopped worker cannot stay online for the step. */
    if (run(db, "UPDATE workers SET last_seen_unix = ?1 WHERE last_seen_unix > ?1", "i", err,
            now) != 0)
        return -1;
    if (sqlite3_prepare_v2(db, "SELECT worker_id, hostname FROM workers WHERE " SILENT_WHERE, -1,
                           &st, NULL) != SQLITE_OK)
        return tsl_sql_fail(db, SCOPE, "prepare", err);
    sqlite3_bind_int64(st, 1, now);
    sqlite3_bind_int64(st, 2, timeout_s);
    while (sqlite3_step(st) == SQLITE_ROW)
        if (fn)
            fn(ud, tsl_sql_text(st, 0), tsl_sql_text(st, 1));
    sqlite3_finalize(st);
    return run(db, "UPDATE workers SET state = 'offline' WHERE " SILENT_WHERE, "ii", err, now,
               (int64_t)timeout_s);
}

int tsl_registry_sweep(tsl_store_t *s, int64_t now, uint32_t timeout_s, tsl_registry_offline_fn fn,
                       void *ud, tsl_err_t *err)
{
    sqlite3 *db = tsl_store_lock_db(s);
    int rc = tsl_sql_begin(db, SCOPE, err);
    if (rc == 0)
        rc = tsl_sql_end(db, SCOPE, sweep_locked(db, now, timeout_s, fn, ud, err), err);
    tsl_store_unlock_db(s);
    return rc;
}

/* ---- listing ------------------------------------------------------------------------------ */

/* A worker's profile age and size: its newest report that is not a link probe's. */
static const char LIST_SQL[] =
    "SELECT w.worker_id, w.hostname, w.driver_version, w.cuda_version, w.nccl_version, "
    "w.simulated, w.heartbeat_s, w.version, w.state, w.registered_unix, w.last_seen_unix, "
    "COALESCE(r.measured_unix, 0), COALESCE(r.n_measurements, 0) FROM workers w "
    "LEFT JOIN profile_reports r ON r.report_id = (SELECT report_id FROM profile_reports "
    "  WHERE worker_id = w.worker_id AND report_id NOT LIKE 'link:%' "
    "  ORDER BY received_unix DESC, rowid DESC LIMIT 1) "
    "ORDER BY w.hostname, w.worker_id";

static const char DEVICES_SQL[] =
    "SELECT device_index, model, memory_bytes, sm_count, uuid FROM devices "
    "WHERE worker_id = ?1 ORDER BY device_index";

/* Reads the devices of one worker into devs (at most TSL_REGISTRY_MAX_DEVICES);
 * the strings point into `text`, which the caller frees. */
static int read_devices(sqlite3 *db, const char *id, tsl_reg_device_t *devs, uint32_t *n,
                        char (*text)[2][160], tsl_err_t *err)
{
    sqlite3_stmt *st = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(db, DEVICES_SQL, -1, &st, NULL) != SQLITE_OK)
        return tsl_sql_fail(db, SCOPE, "prepare", err);
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    while (*n < TSL_REGISTRY_MAX_DEVICES && sqlite3_step(st) == SQLITE_ROW) {
        tsl_reg_device_t *d = &devs[*n];
        snprintf(text[*n][0], sizeof text[*n][0], "%s", tsl_sql_text(st, 1));
        snprintf(text[*n][1], sizeof text[*n][1], "%s", tsl_sql_text(st, 4));
        d->index = (uint32_t)sqlite3_column_int64(st, 0);
        d->model = text[*n][0];
        d->memory_bytes = (uint64_t)sqlite3_column_int64(st, 2);
        d->sm_count = (uint32_t)sqlite3_column_int64(st, 3);
        d->uuid = text[*n][1];
        (*n)++;
    }
    sqlite3_finalize(st);
    return 0;
}

static void row_to_worker(sqlite3_stmt *st, tsl_reg_worker_t *w)
{
    memset(w, 0, sizeof *w);
    snprintf(w->worker_id, sizeof w->worker_id, "%s", tsl_sql_text(st, 0));
    w->hostname = tsl_sql_text(st, 1);
    w->driver_version = tsl_sql_text(st, 2);
    w->cuda_version = tsl_sql_text(st, 3);
    w->nccl_version = tsl_sql_text(st, 4);
    w->simulated = sqlite3_column_int(st, 5) != 0;
    w->heartbeat_s = (uint32_t)sqlite3_column_int64(st, 6);
    w->version = tsl_sql_text(st, 7);
    w->state = tsl_sql_text(st, 8);
    w->registered_unix = sqlite3_column_int64(st, 9);
    w->last_seen_unix = sqlite3_column_int64(st, 10);
    w->profile_unix = sqlite3_column_int64(st, 11);
    w->n_measurements = (uint32_t)sqlite3_column_int64(st, 12);
}

int tsl_registry_list(tsl_store_t *s, tsl_registry_worker_fn fn, void *ud, tsl_err_t *err)
{
    tsl_reg_device_t devs[TSL_REGISTRY_MAX_DEVICES];
    char(*text)[2][160] = malloc(TSL_REGISTRY_MAX_DEVICES * sizeof *text);
    sqlite3_stmt *st = NULL;
    int rc = 0, step;
    if (!text)
        return tsl_err_setc(err, TSL_E_NOMEM, "ListWorkers: out of memory");
    sqlite3 *db = tsl_store_lock_db(s);
    if (sqlite3_prepare_v2(db, LIST_SQL, -1, &st, NULL) != SQLITE_OK)
        rc = tsl_sql_fail(db, SCOPE, "prepare", err);
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        tsl_reg_worker_t w;
        row_to_worker(st, &w);
        rc = read_devices(db, w.worker_id, devs, &w.n_devices, text, err);
        w.devices = devs;
        if (rc == 0 && fn(ud, &w) != 0)
            rc = tsl_err_setc(err, TSL_E_NOMEM, "ListWorkers: stopped by the caller");
    }
    sqlite3_finalize(st);
    tsl_store_unlock_db(s);
    free(text);
    return rc;
}

/* ---- reports, the hardware aggregate, stale plans ------------------------------------------- */

static int insert_measurement(sqlite3 *db, sqlite3_stmt *st, const char *worker_id,
                              const char *report_id, const tsl_reg_measurement_t *m, bool sim,
                              int64_t when, tsl_err_t *err)
{
    sqlite3_reset(st);
    sqlite3_bind_text(st, 1, worker_id, -1, SQLITE_STATIC);
    if (m->per_device)
        sqlite3_bind_int64(st, 2, m->device_index);
    else
        sqlite3_bind_null(st, 2);
    sqlite3_bind_text(st, 3, m->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, m->unit, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 5, m->value);
    sqlite3_bind_text(st, 6, m->labels_json ? m->labels_json : "{}", -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 7, sim);
    sqlite3_bind_int64(st, 8, when);
    sqlite3_bind_text(st, 9, report_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 10, m->link_class ? m->link_class : "", -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_DONE)
        return 0;
    if (sqlite3_extended_errcode(db) == SQLITE_CONSTRAINT_FOREIGNKEY)
        return tsl_err_setc(err, TSL_E_INVALID,
                            "measurements: '%s' names device %u, which this "
                            "worker did not register",
                            m->name, m->device_index);
    return tsl_sql_fail(db, SCOPE, "storing a measurement", err);
}

static int insert_measurements(sqlite3 *db, const char *worker_id, const char *report_id,
                               const tsl_reg_measurement_t *m, size_t n, bool sim, int64_t when,
                               tsl_err_t *err)
{
    static const char sql[] =
        "INSERT INTO profiles (worker_id, device_index, name, unit, value, labels_json, "
        "simulated, measured_unix, report_id, link_class) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return tsl_sql_fail(db, SCOPE, "prepare", err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = insert_measurement(db, st, worker_id, report_id, &m[i], sim, when, err);
    sqlite3_finalize(st);
    return rc;
}

/* The hardware rows of (model, sim) from each worker's newest report of that
 * kind: per-device rows of that model's GPUs, node rows of workers holding one.
 * A link probe's report (report_id "link:<trial>", agent_trial_link.c) holds
 * only inter-node figures: the newest of those is taken beside the newest
 * profile, so neither hides the other. */
static const char REBUILD_SQL[] =
    "INSERT OR REPLACE INTO hardware (gpu_model, link_class, name, labels_json, unit, value, "
    "n_samples, simulated, updated_unix) "
    "SELECT ?1, p.link_class, p.name, p.labels_json, p.unit, avg(p.value), count(*), ?2, ?3 "
    "FROM profiles p WHERE p.simulated = ?2 AND p.report_id IN ("
    "  SELECT (SELECT r.report_id FROM profile_reports r WHERE r.worker_id = w.worker_id "
    "          AND r.simulated = ?2 AND (r.report_id LIKE 'link:%') = (k.link = 1) "
    "          ORDER BY r.received_unix DESC, r.rowid DESC LIMIT 1) "
    "  FROM workers w, (SELECT 0 AS link UNION ALL SELECT 1) k "
    "  WHERE EXISTS (SELECT 1 FROM devices d WHERE d.worker_id = w.worker_id "
    "                AND d.model = ?1)) "
    "AND (p.device_index IS NULL OR EXISTS (SELECT 1 FROM devices d WHERE "
    "     d.worker_id = p.worker_id AND d.device_index = p.device_index AND d.model = ?1)) "
    "GROUP BY p.link_class, p.name, p.labels_json, p.unit";

static const char STALE_SQL[] =
    "UPDATE plans SET stale = 1 WHERE stale = 0 AND (instr(request_json, ?1) > 0 OR "
    "fingerprint IN (SELECT fingerprint FROM plan_gpus WHERE gpu_model = ?2))";

/* Rebuilds one model's aggregate; adds the plans it marked stale to *stale. */
static int rebuild_model(sqlite3 *db, const char *model, bool sim, int64_t now, uint32_t *stale,
                         tsl_err_t *err)
{
    char key[300];
    if (run(db, "DELETE FROM hardware WHERE gpu_model = ?1 AND simulated = ?2", "ti", err, model,
            (int64_t)sim) != 0 ||
        run(db, REBUILD_SQL, "tii", err, model, (int64_t)sim, now) != 0)
        return -1;
    tsl_registry_profile_key(model, sim, key, sizeof key);
    if (run(db, STALE_SQL, "tt", err, key, model) != 0)
        return -1;
    *stale += (uint32_t)sqlite3_changes(db);
    return 0;
}

static int rebuild_worker_models(sqlite3 *db, const char *worker_id, bool sim, int64_t now,
                                 uint32_t *stale, tsl_err_t *err)
{
    sqlite3_stmt *st = NULL;
    char models[8][128];
    int n = 0, rc = 0;
    if (sqlite3_prepare_v2(db, "SELECT DISTINCT model FROM devices WHERE worker_id = ?1", -1, &st,
                           NULL) != SQLITE_OK)
        return tsl_sql_fail(db, SCOPE, "prepare", err);
    sqlite3_bind_text(st, 1, worker_id, -1, SQLITE_STATIC);
    while (n < 8 && sqlite3_step(st) == SQLITE_ROW)
        snprintf(models[n++], sizeof models[0], "%s", tsl_sql_text(st, 0));
    sqlite3_finalize(st);
    for (int i = 0; rc == 0 && i < n; i++)
        rc = rebuild_model(db, models[i], sim, now, stale, err);
    return rc;
}

/* In a transaction: 0 stored (or duplicate), 1 unknown worker, -1 error. */
static int report_locked(sqlite3 *db, const char *worker_id, const char *report_id, int64_t when,
                         int64_t now, const tsl_reg_measurement_t *m, size_t n,
                         tsl_reg_report_result_t *res, tsl_err_t *err)
{
    int sim = exists(db, "SELECT 1 FROM workers WHERE worker_id = ?1 AND simulated = 1", worker_id);
    int found = exists(db, "SELECT 1 FROM workers WHERE worker_id = ?1", worker_id);
    int dup = exists(db, "SELECT 1 FROM profile_reports WHERE report_id = ?1", report_id);
    if (sim < 0 || found < 0 || dup < 0)
        return tsl_sql_fail(db, SCOPE, "reading workers", err);
    if (found == 0)
        return 1;
    if (dup == 1) {
        res->duplicate = true;
        return 0;
    }
    /* A simulated worker's figures are simulated whatever the report says. */
    if (run(db,
            "INSERT INTO profile_reports (report_id, worker_id, measured_unix, received_unix, "
            "n_measurements, simulated) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            "ttiiii", err, report_id, worker_id, when, now, (int64_t)n, (int64_t)sim) != 0 ||
        insert_measurements(db, worker_id, report_id, m, n, sim == 1, when, err) != 0)
        return -1;
    res->stored = (uint32_t)n;
    return rebuild_worker_models(db, worker_id, sim == 1, now, &res->plans_marked_stale, err);
}

int tsl_registry_report(tsl_store_t *s, const char *worker_id, const char *report_id,
                        int64_t measured_unix, int64_t now, const tsl_reg_measurement_t *m,
                        size_t n, tsl_reg_report_result_t *res, tsl_err_t *err)
{
    memset(res, 0, sizeof *res);
    sqlite3 *db = tsl_store_lock_db(s);
    int rc = tsl_sql_begin(db, SCOPE, err);
    if (rc == 0) {
        rc = report_locked(db, worker_id, report_id, measured_unix ? measured_unix : now, now, m, n,
                           res, err);
        rc = end_for_worker(db, rc, worker_id, err);
    }
    tsl_store_unlock_db(s);
    return rc;
}

/* ---- reading profiles ------------------------------------------------------------------------ */

static const char AGG_SQL[] =
    "SELECT gpu_model, link_class, name, labels_json, unit, value, n_samples, simulated, "
    "updated_unix FROM hardware WHERE (?1 = '' OR gpu_model = ?1) "
    "ORDER BY gpu_model, simulated, link_class, name, labels_json COLLATE tsl_natural";

/* A node's newest profile and its newest link probe report (neither hides the other). */
static const char RAW_SQL[] =
    "SELECT COALESCE(d.model, ''), p.link_class, p.name, p.labels_json, p.unit, p.value, 1, "
    "p.simulated, p.measured_unix, w.hostname, p.device_index FROM profiles p "
    "JOIN workers w ON w.worker_id = p.worker_id "
    "LEFT JOIN devices d ON d.worker_id = p.worker_id AND d.device_index = p.device_index "
    "WHERE w.hostname = ?2 AND (?1 = '' OR d.model = ?1 OR p.device_index IS NULL) "
    "AND p.report_id IN (SELECT (SELECT report_id FROM profile_reports r "
    "  WHERE r.worker_id = w.worker_id AND (r.report_id LIKE 'link:%') = (k.link = 1) "
    "  ORDER BY r.received_unix DESC, r.rowid DESC LIMIT 1) "
    "  FROM (SELECT 0 AS link UNION ALL SELECT 1) k) "
    "ORDER BY w.worker_id, p.device_index, p.name, p.labels_json COLLATE tsl_natural";

static void row_to_measurement(sqlite3_stmt *st, bool raw, tsl_reg_measurement_t *m)
{
    memset(m, 0, sizeof *m);
    m->gpu_model = tsl_sql_text(st, 0);
    m->link_class = tsl_sql_text(st, 1);
    m->name = tsl_sql_text(st, 2);
    m->labels_json = tsl_sql_text(st, 3);
    m->unit = tsl_sql_text(st, 4);
    m->value = sqlite3_column_double(st, 5);
    m->n_samples = (uint32_t)sqlite3_column_int64(st, 6);
    m->simulated = sqlite3_column_int(st, 7) != 0;
    m->measured_unix = sqlite3_column_int64(st, 8);
    if (raw) {
        m->hostname = tsl_sql_text(st, 9);
        m->per_device = sqlite3_column_type(st, 10) != SQLITE_NULL;
        m->device_index = (uint32_t)sqlite3_column_int64(st, 10);
    }
}

int tsl_registry_profile(tsl_store_t *s, const char *gpu_model, const char *hostname,
                         tsl_registry_measurement_fn fn, void *ud, tsl_err_t *err)
{
    bool raw = hostname && hostname[0];
    sqlite3_stmt *st = NULL;
    int rc = 0;
    sqlite3 *db = tsl_store_lock_db(s);
    if (sqlite3_prepare_v2(db, raw ? RAW_SQL : AGG_SQL, -1, &st, NULL) != SQLITE_OK)
        rc = tsl_sql_fail(db, SCOPE, "prepare", err);
    if (rc == 0) {
        sqlite3_bind_text(st, 1, gpu_model ? gpu_model : "", -1, SQLITE_STATIC);
        if (raw)
            sqlite3_bind_text(st, 2, hostname, -1, SQLITE_STATIC);
    }
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        tsl_reg_measurement_t m;
        row_to_measurement(st, raw, &m);
        if (fn(ud, &m) != 0)
            rc = tsl_err_setc(err, TSL_E_NOMEM, "GetProfile: stopped by the caller");
    }
    sqlite3_finalize(st);
    tsl_store_unlock_db(s);
    return rc;
}
