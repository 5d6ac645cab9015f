/*
 * store_trials.c — trials and their ranks in the store (store_trials.h). Every
 * function takes the store's lock for its whole transaction; writes run in
 * BEGIN IMMEDIATE like store.c's. Calibration samples: store_trials_calib.c.
 */
#include "store_trials.h"
#include "store_sql.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- statement helpers (store_sql.h, with this file's error prefix) ----------------------- */

#define SCOPE "store: trials"

/* Prepares and binds, as tsl_sql_vprep. */
static sqlite3_stmt *prep(sqlite3 *db, const char *sql, const char *fmt, tsl_err_t *err, ...)
{
    va_list ap;
    va_start(ap, err);
    sqlite3_stmt *st = tsl_sql_vprep(db, SCOPE, sql, fmt, ap, err);
    va_end(ap);
    return st;
}

void tsl_trial_clear(tsl_trial_t *t)
{
    free(t->ranks);
    free(t->plan_json);
    t->ranks = NULL;
    t->plan_json = NULL;
    t->n_ranks = 0;
}

bool tsl_trial_over(const tsl_trial_t *t)
{
    return strcmp(t->status, "done") == 0 || strcmp(t->status, "failed") == 0 ||
           strcmp(t->status, "cancelled") == 0 || strcmp(t->status, "skipped") == 0;
}

void tsl_trials_new_id(const char *prefix, char out[TSL_TRIAL_ID_LEN + 1])
{
    static atomic_uint_fast64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t h = 1469598103934665603ull;
    uint64_t parts[4] = {(uint64_t)ts.tv_sec, (uint64_t)ts.tv_nsec, (uint64_t)getpid(),
                         atomic_fetch_add(&counter, 1)};
    for (int i = 0; i < 4; i++) {
        h ^= parts[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    snprintf(out, TSL_TRIAL_ID_LEN + 1, "%s%016llx", prefix, (unsigned long long)h);
}

/* ---- create ------------------------------------------------------------------------------ */

/* A skipped trial is stored "failed" with its error starting SKIPPED_PREFIX, over
 * from the start (finished when made): schema/004's CHECK on status predates it, as
 * it does cancelling (CANCELLED_PREFIX below), and every query that treats "failed"
 * as over (the batch order, polls, recovery) is right for it too. */
static const char SKIPPED_PREFIX[] = "skipped: ";

static bool is_skipped(const char *status, const char *error)
{
    return strcmp(status, "failed") == 0 &&
           strncmp(error, SKIPPED_PREFIX, sizeof SKIPPED_PREFIX - 1) == 0;
}

static int insert_trial(sqlite3 *db, const tsl_trial_t *t, tsl_err_t *err)
{
    static const char sql[] =
        "INSERT INTO trials (trial_id, batch_id, batch_pos, plan_fingerprint, plan_index, "
        "plan_label, status, world_size, iterations, warmup, timeout_s, comm, devops, simulated, "
        "gpu_model, global_batch, predicted_iter_time_s, predicted_peak_bytes, seed, "
        "created_unix, plan_json, kind, error, finished_unix) VALUES (?1, ?2, ?3, NULLIF(?4, ''), "
        "?5, ?6, ?22, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, "
        "?23, ?24)";
    bool skipped = strcmp(t->status, "skipped") == 0;
    char why[TSL_TRIAL_ERROR_LEN] = "";
    if (skipped)
        snprintf(why, sizeof why, "%s%.*s", SKIPPED_PREFIX,
                 (int)(sizeof why - sizeof SKIPPED_PREFIX), t->error);
    sqlite3_stmt *st =
        prep(db, sql, "ttititiiidttitidiiitttti", err, t->trial_id, t->batch_id,
             (int64_t)t->batch_pos, t->plan_fingerprint, (int64_t)t->plan_index, t->plan_label,
             (int64_t)t->world_size, (int64_t)t->iterations, (int64_t)t->warmup, t->timeout_s,
             t->comm, t->devops, (int64_t)t->simulated, t->gpu_model, (int64_t)t->global_batch,
             t->predicted_iter_time_s, (int64_t)t->predicted_peak_bytes, (int64_t)t->seed,
             t->created_unix, t->plan_json ? t->plan_json : "{}", t->kind[0] ? t->kind : "plan",
             skipped ? "failed" : "pending", why, skipped ? t->created_unix : (int64_t)0);
    if (tsl_sql_done(db, SCOPE, st, err) != 0)
        return -1;
    for (uint32_t r = 0; !skipped && r < t->n_ranks; r++) {
        const tsl_trial_rank_t *k = &t->ranks[r];
        st = prep(db,
                  "INSERT INTO trial_ranks (trial_id, rank, worker_id, hostname, device_index) "
                  "VALUES (?1, ?2, ?3, ?4, ?5)",
                  "titti", err, t->trial_id, (int64_t)k->rank, k->worker_id, k->hostname,
                  (int64_t)k->device_index);
        if (tsl_sql_done(db, SCOPE, st, err) != 0)
            return -1;
    }
    return 0;
}

int tsl_trials_create(tsl_store_t *s, const tsl_trial_t *t, size_t n, tsl_err_t *err)
{
    sqlite3 *db = tsl_store_lock_db(s);
    int rc = tsl_sql_begin(db, SCOPE, err);
    if (rc == 0) {
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = insert_trial(db, &t[i], err);
        rc = tsl_sql_end(db, SCOPE, rc, err);
    }
    tsl_store_unlock_db(s);
    return rc;
}

/* ---- reading ----------------------------------------------------------------------------- */

#define TRIAL_COLS                                                                                 \
    "trial_id, batch_id, batch_pos, plan_fingerprint, plan_index, plan_label, status, "            \
    "world_size, iterations, warmup, timeout_s, comm, devops, simulated, gpu_model, "              \
    "global_batch, predicted_iter_time_s, predicted_peak_bytes, measured_iter_time_s, "            \
    "measured_peak_bytes, measured_samples_per_s, time_error, memory_error, any_oom, chosen, "     \
    "error, ready, rendezvous, nccl_id, seed, created_unix, started_unix, finished_unix, kind, "   \
    "(SELECT stale FROM plans WHERE plans.fingerprint = trials.plan_fingerprint)"

/* A cancelled trial is stored "failed" with its error starting CANCELLED_PREFIX:
 * schema/004's CHECK on status predates cancelling, and this keeps every query
 * that treats "failed" as over (polls, recovery, the tick) right for it too. */
static const char CANCELLED_PREFIX[] = "cancelled: ";

static bool is_cancelled(const char *status, const char *error)
{
    return strcmp(status, "failed") == 0 &&
           strncmp(error, CANCELLED_PREFIX, sizeof CANCELLED_PREFIX - 1) == 0;
}

/* The status a trial reads as: the stored one, or "cancelled" / "skipped" for a
 * failed row whose error says so. */
static const char *read_status(const char *status, const char *error)
{
    return is_cancelled(status, error) ? "cancelled"
           : is_skipped(status, error) ? "skipped"
                                       : status;
}

static void row_to_trial(sqlite3_stmt *st, tsl_trial_t *t)
{
    memset(t, 0, sizeof *t);
    snprintf(t->trial_id, sizeof t->trial_id, "%s", tsl_sql_text(st, 0));
    snprintf(t->batch_id, sizeof t->batch_id, "%s", tsl_sql_text(st, 1));
    t->batch_pos = (uint32_t)sqlite3_column_int64(st, 2);
    snprintf(t->plan_fingerprint, sizeof t->plan_fingerprint, "%s", tsl_sql_text(st, 3));
    t->plan_index = (uint32_t)sqlite3_column_int64(st, 4);
    snprintf(t->plan_label, sizeof t->plan_label, "%s", tsl_sql_text(st, 5));
    snprintf(t->status, sizeof t->status, "%s",
             read_status(tsl_sql_text(st, 6), tsl_sql_text(st, 25)));
    t->world_size = (uint32_t)sqlite3_column_int64(st, 7);
    t->iterations = (uint32_t)sqlite3_column_int64(st, 8);
    t->warmup = (uint32_t)sqlite3_column_int64(st, 9);
    t->timeout_s = sqlite3_column_double(st, 10);
    snprintf(t->comm, sizeof t->comm, "%s", tsl_sql_text(st, 11));
    snprintf(t->devops, sizeof t->devops, "%s", tsl_sql_text(st, 12));
    t->simulated = sqlite3_column_int(st, 13) != 0;
    snprintf(t->gpu_model, sizeof t->gpu_model, "%s", tsl_sql_text(st, 14));
    t->global_batch = (uint32_t)sqlite3_column_int64(st, 15);
    t->predicted_iter_time_s = sqlite3_column_double(st, 16);
    t->predicted_peak_bytes = (uint64_t)sqlite3_column_int64(st, 17);
    t->measured_iter_time_s = sqlite3_column_double(st, 18);
    t->measured_peak_bytes = (uint64_t)sqlite3_column_int64(st, 19);
    t->measured_samples_per_s = sqlite3_column_double(st, 20);
    t->time_error = sqlite3_column_double(st, 21);
    t->memory_error = sqlite3_column_double(st, 22);
    t->any_oom = sqlite3_column_int(st, 23) != 0;
    t->chosen = sqlite3_column_int(st, 24) != 0;
    snprintf(t->error, sizeof t->error, "%s", tsl_sql_text(st, 25));
    t->ready = sqlite3_column_int(st, 26) != 0;
    snprintf(t->rendezvous, sizeof t->rendezvous, "%s", tsl_sql_text(st, 27));
    int nb = sqlite3_column_bytes(st, 28);
    const void *blob = sqlite3_column_blob(st, 28);
    if (blob && nb > 0) {
        t->nccl_id_len = (size_t)nb > sizeof t->nccl_id ? sizeof t->nccl_id : (size_t)nb;
        memcpy(t->nccl_id, blob, t->nccl_id_len);
    }
    t->seed = (uint64_t)sqlite3_column_int64(st, 29);
    t->created_unix = sqlite3_column_int64(st, 30);
    t->started_unix = sqlite3_column_int64(st, 31);
    t->finished_unix = sqlite3_column_int64(st, 32);
    snprintf(t->kind, sizeof t->kind, "%s", tsl_sql_text(st, 33));
    t->plan_stale = sqlite3_column_int(st, 34) != 0; /* NULL (no such plan): 0 */
}

static void row_to_rank(sqlite3_stmt *st, tsl_trial_rank_t *r)
{
    memset(r, 0, sizeof *r);
    r->rank = (uint32_t)sqlite3_column_int64(st, 0);
    snprintf(r->worker_id, sizeof r->worker_id, "%s", tsl_sql_text(st, 1));
    snprintf(r->hostname, sizeof r->hostname, "%s", tsl_sql_text(st, 2));
    r->device_index = (uint32_t)sqlite3_column_int64(st, 3);
    snprintf(r->state, sizeof r->state, "%s", tsl_sql_text(st, 4));
    r->delivered = sqlite3_column_int(st, 5) != 0;
    r->cancel_pending = sqlite3_column_int(st, 6) != 0;
    r->iter_time_s = sqlite3_column_double(st, 7);
    r->iter_min_s = sqlite3_column_double(st, 8);
    r->iter_max_s = sqlite3_column_double(st, 9);
    r->peak_bytes = (uint64_t)sqlite3_column_int64(st, 10);
    snprintf(r->phase_json, sizeof r->phase_json, "%s", tsl_sql_text(st, 11));
    r->oom = sqlite3_column_int(st, 12) != 0;
    r->loss = sqlite3_column_double(st, 13);
    snprintf(r->error, sizeof r->error, "%s", tsl_sql_text(st, 14));
    r->reported_unix = sqlite3_column_int64(st, 15);
}

/* Reads the ranks of t (by rank). */
static int read_ranks(sqlite3 *db, tsl_trial_t *t, tsl_err_t *err)
{
    sqlite3_stmt *st = prep(db,
                            "SELECT rank, worker_id, hostname, device_index, state, delivered, "
                            "cancel_pending, iter_time_s, iter_min_s, iter_max_s, peak_bytes, "
                            "phase_json, oom, loss, error, reported_unix FROM trial_ranks "
                            "WHERE trial_id = ?1 ORDER BY rank",
                            "t", err, t->trial_id);
    if (!st)
        return -1;
    size_t cap = t->world_size ? t->world_size : 1;
    t->ranks = calloc(cap, sizeof *t->ranks);
    if (!t->ranks) {
        sqlite3_finalize(st);
        return tsl_err_setc(err, TSL_E_NOMEM, "trials: out of memory");
    }
    while (t->n_ranks < cap && sqlite3_step(st) == SQLITE_ROW)
        row_to_rank(st, &t->ranks[t->n_ranks++]);
    sqlite3_finalize(st);
    return 0;
}

static int get_locked(sqlite3 *db, const char *id, tsl_trial_t *out, tsl_err_t *err)
{
    sqlite3_stmt *st =
        prep(db, "SELECT " TRIAL_COLS " FROM trials WHERE trial_id = ?1", "t", err, id);
    if (!st)
        return -1;
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW)
        row_to_trial(st, out);
    sqlite3_finalize(st);
    if (step == SQLITE_DONE) {
        memset(out, 0, sizeof *out);
        tsl_err_setc(err, TSL_E_NOTFOUND, "trial_id: no trial '%.60s'", id);
        return 1;
    }
    if (step != SQLITE_ROW)
        return tsl_sql_fail(db, SCOPE, "reading a trial", err);
    return read_ranks(db, out, err);
}

int tsl_trials_get(tsl_store_t *s, const char *trial_id, tsl_trial_t *out, tsl_err_t *err)
{
    sqlite3 *db = tsl_store_lock_db(s);
    int rc = get_locked(db, trial_id, out, err);
    tsl_store_unlock_db(s);
    if (rc != 0)
        tsl_trial_clear(out);
    return rc;
}

/* The ids a query names (one text column), then each trial read and handed to
 * fn without the lock. */
static int walk_ids(tsl_store_t *s, sqlite3_stmt *st, size_t limit, tsl_trials_fn fn, void *ud,
                    tsl_err_t *err)
{
    char(*ids)[TSL_TRIAL_ID_LEN + 1] = calloc(limit ? limit : 1, sizeof *ids);
    size_t n = 0;
    if (!ids) {
        sqlite3_finalize(st);
        tsl_store_unlock_db(s);
        return tsl_err_setc(err, TSL_E_NOMEM, "trials: out of memory");
    }
    while (n < limit && sqlite3_step(st) == SQLITE_ROW)
        snprintf(ids[n++], sizeof ids[0], "%s", tsl_sql_text(st, 0));
    sqlite3_finalize(st);
    tsl_store_unlock_db(s);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        tsl_trial_t t;
        int got = tsl_trials_get(s, ids[i], &t, err);
        if (got < 0)
            rc = -1;
        else if (got == 0 && fn(ud, &t) != 0)
            rc = tsl_err_setc(err, TSL_E_NOMEM, "trials: stopped by the caller");
        if (got == 0)
            tsl_trial_clear(&t);
    }
    free(ids);
    return rc;
}

int tsl_trials_list(tsl_store_t *s, const char *fp, uint32_t limit, tsl_trials_fn fn, void *ud,
                    tsl_err_t *err)
{
    sqlite3 *db = tsl_store_lock_db(s);
    sqlite3_stmt *st = prep(db,
                            "SELECT trial_id FROM trials WHERE (?1 = '' OR plan_fingerprint = ?1) "
                            "ORDER BY created_unix DESC, batch_id DESC, batch_pos DESC LIMIT ?2",
                            "ti", err, fp ? fp : "", (int64_t)limit);
    if (!st) {
        tsl_store_unlock_db(s);
        return -1;
    }
    return walk_ids(s, st, limit, fn, ud, err);
}

int tsl_trials_list_batch(tsl_store_t *s, const char *batch_id, tsl_trials_fn fn, void *ud,
                          tsl_err_t *err)
{
    sqlite3 *db = tsl_store_lock_db(s);
    sqlite3_stmt *st =
        prep(db, "SELECT trial_id FROM trials WHERE batch_id = ?1 ORDER BY batch_pos", "t", err,
             batch_id);
    if (!st) {
        tsl_store_unlock_db(s);
        return -1;
    }
    return walk_ids(s, st, 1000, fn, ud, err);
}

static const char STARTABLE_SQL[] =
    "SELECT t.trial_id FROM trials t WHERE t.status = 'pending' "
    "AND NOT EXISTS (SELECT 1 FROM trials p WHERE p.batch_id = t.batch_id "
    "  AND p.batch_pos < t.batch_pos AND p.status IN ('pending', 'running')) "
    "AND NOT EXISTS (SELECT 1 FROM trial_ranks r JOIN trial_ranks o ON o.worker_id = r.worker_id "
    "  JOIN trials ot ON ot.trial_id = o.trial_id WHERE r.trial_id = t.trial_id "
    "  AND ot.status = 'running') "
    "ORDER BY t.created_unix, t.batch_id, t.batch_pos";

/* Steps st (trial ids in column 0; NULL when its prepare failed) into ids[cap],
 * finalizes it and unlocks the store; 0 or -1. */
static int read_ids(tsl_store_t *s, sqlite3_stmt *st, char (*ids)[TSL_TRIAL_ID_LEN + 1], size_t cap,
                    size_t *n)
{
    while (st && *n < cap && sqlite3_step(st) == SQLITE_ROW)
        snprintf(ids[(*n)++], TSL_TRIAL_ID_LEN + 1, "%s", tsl_sql_text(st, 0));
    if (st)
        sqlite3_finalize(st);
    tsl_store_unlock_db(s);
    return st ? 0 : -1;
}

int tsl_trials_ids(tsl_store_t *s, const char *which, char (*ids)[TSL_TRIAL_ID_LEN + 1], size_t cap,
                   size_t *n, tsl_err_t *err)
{
    *n = 0;
    sqlite3 *db = tsl_store_lock_db(s);
    sqlite3_stmt *st =
        strcmp(which, "startable") == 0
            ? prep(db, STARTABLE_SQL, "", err)
            : prep(db, "SELECT trial_id FROM trials WHERE status = ?1 ORDER BY created_unix", "t",
                   err, which);
    return read_ids(s, st, ids, cap, n);
}

int tsl_trials_plan_json(tsl_store_t *s, const char *trial_id, char **json, tsl_err_t *err)
{
    *json = NULL;
    sqlite3 *db = tsl_store_lock_db(s);
    sqlite3_stmt *st =
        prep(db, "SELECT plan_json FROM trials WHERE trial_id = ?1", "t", err, trial_id);
    int rc = st ? 1 : -1;
    if (st && sqlite3_step(st) == SQLITE_ROW) {
        *json = strdup(tsl_sql_text(st, 0));
        rc = *json ? 0 : tsl_err_setc(err, TSL_E_NOMEM, "trials: out of memory");
    }
    if (st)
        sqlite3_finalize(st);
    tsl_store_unlock_db(s);
    return rc;
}

int tsl_trials_done_ids(tsl_store_t *s, const char *gpu_model, bool simulated,
                        char (*ids)[TSL_TRIAL_ID_LEN + 1], size_t cap, size_t *n, tsl_err_t *err)
{
    *n = 0;
    sqlite3 *db = tsl_store_lock_db(s);
    sqlite3_stmt *st = prep(db,
                            "SELECT trial_id FROM trials WHERE status = 'done' AND any_oom = 0 "
                            "AND kind = 'plan' AND devops = 'cuda' AND gpu_model = ?1 "
                            "AND simulated = ?2 "
                            "ORDER BY created_unix, trial_id",
                            "ti", err, gpu_model ? gpu_model : "", (int64_t)simulated);
    return read_ids(s, st, ids, cap, n);
}

/* ---- transitions ------------------------------------------------------------------------- */

/* Runs one UPDATE (binds as prep) in its own transaction: 0 changed a row, 1 none. */
static int update1(tsl_store_t *s, tsl_err_t *err, const char *sql, const char *fmt, ...)
{
    sqlite3 *db = tsl_store_lock_db(s);
    int rc = tsl_sql_begin(db, SCOPE, err);
    if (rc == 0) {
        va_list ap;
        va_start(ap, fmt);
        rc = tsl_sql_done(db, SCOPE, tsl_sql_vprep(db, SCOPE, sql, fmt, ap, err), err);
        va_end(ap);
        if (rc == 0 && sqlite3_changes(db) == 0)
            rc = 1;
        rc = tsl_sql_end(db, SCOPE, rc, err);
    }
    tsl_store_unlock_db(s);
    return rc;
}

int tsl_trials_start(tsl_store_t *s, const char *trial_id, int64_t now, tsl_err_t *err)
{
    return update1(s, err,
                   "UPDATE trials SET status = 'running', started_unix = ?2 "
                   "WHERE trial_id = ?1 AND status = 'pending'",
                   "ti", trial_id, now);
}

int tsl_trials_ready(tsl_store_t *s, const char *trial_id, const char *rendezvous,
                     const uint8_t *nccl_id, size_t nccl_len, tsl_err_t *err)
{
    return update1(s, err,
                   "UPDATE trials SET ready = 1, rendezvous = ?2, nccl_id = ?3 "
                   "WHERE trial_id = ?1 AND status = 'running'",
                   "ttb", trial_id, rendezvous ? rendezvous : "", (const void *)nccl_id, nccl_len);
}

int tsl_trials_delivered(tsl_store_t *s, const char *trial_id, uint32_t rank, bool cancel,
                         tsl_err_t *err)
{
    const char *sql =
        cancel ? "UPDATE trial_ranks SET cancel_pending = 0 WHERE trial_id = ?1 AND rank = ?2"
               : "UPDATE trial_ranks SET delivered = 1, state = 'running' "
                 "WHERE trial_id = ?1 AND rank = ?2 AND state = 'assigned'";
    return update1(s, err, sql, "ti", trial_id, (int64_t)rank) < 0 ? -1 : 0;
}

int tsl_trials_set_chosen(tsl_store_t *s, const char *trial_id, tsl_err_t *err)
{
    return update1(s, err, "UPDATE trials SET chosen = 1 WHERE trial_id = ?1", "t", trial_id) < 0
               ? -1
               : 0;
}

/* In a transaction: 1 when the trial is over (or unknown). */
static int over_locked(sqlite3 *db, const char *id, tsl_err_t *err)
{
    sqlite3_stmt *st = prep(
        db, "SELECT status IN ('done', 'failed') FROM trials WHERE trial_id = ?1", "t", err, id);
    if (!st)
        return -1;
    int step = sqlite3_step(st), over = step == SQLITE_ROW ? sqlite3_column_int(st, 0) : 1;
    sqlite3_finalize(st);
    return over;
}

static int rank_result_locked(sqlite3 *db, const char *id, const tsl_trial_rank_t *r, int64_t now,
                              bool *all_done, tsl_err_t *err)
{
    int over = over_locked(db, id, err);
    if (over != 0)
        return over;
    sqlite3_stmt *st = prep(
        db,
        "UPDATE trial_ranks SET state = ?3, iter_time_s = ?4, iter_min_s = ?5, iter_max_s = ?6, "
        "peak_bytes = ?7, phase_json = ?8, oom = ?9, loss = ?10, error = ?11, "
        "reported_unix = ?12, delivered = 1 WHERE trial_id = ?1 AND rank = ?2",
        "titddditidti", err, id, (int64_t)r->rank, r->error[0] ? "failed" : "done", r->iter_time_s,
        r->iter_min_s, r->iter_max_s, (int64_t)r->peak_bytes,
        r->phase_json[0] ? r->phase_json : "{}", (int64_t)r->oom, r->loss, r->error, now);
    if (tsl_sql_done(db, SCOPE, st, err) != 0)
        return -1;
    st = prep(db, "SELECT COUNT(*) FROM trial_ranks WHERE trial_id = ?1 AND state <> 'done'", "t",
              err, id);
    if (!st)
        return -1;
    *all_done = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) == 0;
    sqlite3_finalize(st);
    return 0;
}

int tsl_trials_rank_result(tsl_store_t *s, const char *trial_id, const tsl_trial_rank_t *r,
                           int64_t now, bool *all_done, tsl_err_t *err)
{
    *all_done = false;
    sqlite3 *db = tsl_store_lock_db(s);
    int rc = tsl_sql_begin(db, SCOPE, err);
    if (rc == 0)
        rc = tsl_sql_end(db, SCOPE, rank_result_locked(db, trial_id, r, now, all_done, err), err);
    tsl_store_unlock_db(s);
    return rc;
}

int tsl_trials_finish_done(tsl_store_t *s, const tsl_trial_t *t, int64_t now, tsl_err_t *err)
{
    return update1(s, err,
                   "UPDATE trials SET status = 'done', measured_iter_time_s = ?2, "
                   "measured_peak_bytes = ?3, measured_samples_per_s = ?4, time_error = ?5, "
                   "memory_error = ?6, any_oom = ?7, finished_unix = ?8 "
                   "WHERE trial_id = ?1 AND status = 'running'",
                   "tdidddii", t->trial_id, t->measured_iter_time_s,
                   (int64_t)t->measured_peak_bytes, t->measured_samples_per_s, t->time_error,
                   t->memory_error, (int64_t)t->any_oom, now);
}

static int fail_locked(sqlite3 *db, const char *id, const char *reason, int64_t now, tsl_err_t *err)
{
    sqlite3_stmt *st = prep(db,
                            "UPDATE trials SET status = 'failed', error = ?2, finished_unix = ?3 "
                            "WHERE trial_id = ?1 AND status IN ('pending', 'running')",
                            "tti", err, id, reason, now);
    if (tsl_sql_done(db, SCOPE, st, err) != 0)
        return -1;
    if (sqlite3_changes(db) == 0)
        return 1;
    st = prep(db,
              "UPDATE trial_ranks SET cancel_pending = delivered, state = 'failed' "
              "WHERE trial_id = ?1 AND state IN ('assigned', 'running')",
              "t", err, id);
    return tsl_sql_done(db, SCOPE, st, err);
}

/* In a transaction: the trial's status and error, 1 when it is unknown. */
static int status_locked(sqlite3 *db, const char *id, char status[16], tsl_err_t *err)
{
    sqlite3_stmt *st =
        prep(db, "SELECT status, error FROM trials WHERE trial_id = ?1", "t", err, id);
    if (!st)
        return -1;
    int rc = 1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *stat = tsl_sql_text(st, 0);
        snprintf(status, 16, "%s", read_status(stat, tsl_sql_text(st, 1)));
        rc = 0;
    }
    sqlite3_finalize(st);
    if (rc == 1)
        tsl_err_setc(err, TSL_E_NOTFOUND, "trial_id: no trial '%.60s'", id);
    return rc;
}

static int cancel_locked(sqlite3 *db, const char *id, const char *reason, int64_t now,
                         tsl_err_t *err)
{
    char status[16] = "", why[TSL_TRIAL_ERROR_LEN];
    int rc = status_locked(db, id, status, err);
    if (rc != 0)
        return rc;
    if (strcmp(status, "cancelled") == 0)
        return 2;
    if (strcmp(status, "pending") != 0 && strcmp(status, "running") != 0) {
        tsl_err_setc(err, TSL_E_PRECONDITION,
                     "trial %.60s is %s already: only a pending or "
                     "running trial can be cancelled",
                     id, status);
        return 3;
    }
    snprintf(why, sizeof why, "%s%.*s", CANCELLED_PREFIX,
             (int)(sizeof why - sizeof CANCELLED_PREFIX),
             reason && reason[0] ? reason : "by request");
    return fail_locked(db, id, why, now, err);
}

int tsl_trials_cancel(tsl_store_t *s, const char *trial_id, const char *reason, int64_t now,
                      tsl_err_t *err)
{
    sqlite3 *db = tsl_store_lock_db(s);
    int rc = tsl_sql_begin(db, SCOPE, err);
    if (rc == 0) {
        rc = tsl_sql_end(db, SCOPE, cancel_locked(db, trial_id, reason, now, err), err);
    }
    tsl_store_unlock_db(s);
    return rc;
}

int tsl_trials_fail(tsl_store_t *s, const char *trial_id, const char *reason, int64_t now,
                    tsl_err_t *err)
{
    sqlite3 *db = tsl_store_lock_db(s);
    int rc = tsl_sql_begin(db, SCOPE, err);
    if (rc == 0)
        rc = tsl_sql_end(db, SCOPE, fail_locked(db, trial_id, reason, now, err), err);
    tsl_store_unlock_db(s);
    return rc;
}

/* ---- polls, workers, start-up ------------------------------------------------------------ */

static const char NEXT_SQL[] =
    "SELECT r.trial_id, r.rank, r.cancel_pending FROM trial_ranks r "
    "JOIN trials t ON t.trial_id = r.trial_id WHERE r.worker_id = ?1 AND "
    "(r.cancel_pending = 1 OR (t.status = 'running' AND r.state = 'assigned' "
    " AND (r.rank = 0 OR t.ready = 1))) "
    "ORDER BY r.cancel_pending DESC, t.started_unix, t.trial_id, r.rank LIMIT 1";

int tsl_trials_next_for(tsl_store_t *s, const char *worker_id, char trial_id[TSL_TRIAL_ID_LEN + 1],
                        uint32_t *rank, bool *cancel, tsl_err_t *err)
{
    sqlite3 *db = tsl_store_lock_db(s);
    sqlite3_stmt *st = prep(db, NEXT_SQL, "t", err, worker_id);
    int rc = st ? 1 : -1;
    if (st && sqlite3_step(st) == SQLITE_ROW) {
        snprintf(trial_id, TSL_TRIAL_ID_LEN + 1, "%s", tsl_sql_text(st, 0));
        *rank = (uint32_t)sqlite3_column_int64(st, 1);
        *cancel = sqlite3_column_int(st, 2) != 0;
        rc = 0;
    }
    if (st)
        sqlite3_finalize(st);
    tsl_store_unlock_db(s);
    return rc;
}

int tsl_trials_worker_state(tsl_store_t *s, const char *worker_id, char *state, size_t state_cap,
                            char *hostname, size_t host_cap, tsl_err_t *err)
{
    sqlite3 *db = tsl_store_lock_db(s);
    sqlite3_stmt *st =
        prep(db, "SELECT state, hostname FROM workers WHERE worker_id = ?1", "t", err, worker_id);
    int rc = st ? 1 : -1;
    if (st && sqlite3_step(st) == SQLITE_ROW) {
        snprintf(state, state_cap, "%s", tsl_sql_text(st, 0));
        snprintf(hostname, host_cap, "%s", tsl_sql_text(st, 1));
        rc = 0;
    }
    if (st)
        sqlite3_finalize(st);
    tsl_store_unlock_db(s);
    if (rc == 1)
        tsl_err_setc(err, TSL_E_NOTFOUND, "worker_id: %.40s is not registered; register first",
                     worker_id);
    return rc;
}

int tsl_trials_recover(tsl_store_t *s, int64_t now, uint32_t *n_failed, tsl_err_t *err)
{
    char(*ids)[TSL_TRIAL_ID_LEN + 1] = calloc(1000, sizeof *ids);
    size_t n = 0, m = 0;
    *n_failed = 0;
    if (!ids)
        return tsl_err_setc(err, TSL_E_NOMEM, "trials: out of memory");
    int rc = tsl_trials_ids(s, "running", ids, 1000, &n, err);
    if (rc == 0)
        rc = tsl_trials_ids(s, "pending", ids + n, 1000 - n, &m, err);
    for (size_t i = 0; rc == 0 && i < n + m; i++) {
        int f = tsl_trials_fail(s, ids[i], "daemon restarted during the trial", now, err);
        if (f < 0)
            rc = -1;
        else if (f == 0)
            (*n_failed)++;
    }
    free(ids);
    return rc;
}

int tsl_trials_count_workers(tsl_store_t *s, int64_t *online, int64_t *offline, int64_t *stopped,
                             tsl_err_t *err)
{
    sqlite3 *db = tsl_store_lock_db(s);
    sqlite3_stmt *st = prep(db, "SELECT state, COUNT(*) FROM workers GROUP BY state", "", err);
    *online = *offline = *stopped = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        const char *state = tsl_sql_text(st, 0);
        int64_t n = sqlite3_column_int64(st, 1);
        if (strcmp(state, "online") == 0)
            *online = n;
        else if (strcmp(state, "offline") == 0)
            *offline = n;
        else if (strcmp(state, "stopped") == 0)
            *stopped = n;
    }
    if (st)
        sqlite3_finalize(st);
    tsl_store_unlock_db(s);
    return st ? 0 : -1;
}

/* Rows of one status as trials read (read_status): "failed" without the cancelled
 * and skipped ones, which are stored failed. */
static const char COUNT_SQL[] =
    "SELECT COUNT(*) FROM trials WHERE ?1 = '' OR "
    "(?1 = 'cancelled' AND status = 'failed' AND substr(error, 1, ?2) = ?3) OR "
    "(?1 = 'skipped' AND status = 'failed' AND substr(error, 1, ?4) = ?5) OR "
    "(status = ?1 AND NOT (status = 'failed' AND (substr(error, 1, ?2) = ?3 OR "
    "substr(error, 1, ?4) = ?5)))";

int tsl_trials_count(tsl_store_t *s, const char *status, int64_t *n, tsl_err_t *err)
{
    sqlite3 *db = tsl_store_lock_db(s);
    sqlite3_stmt *st = prep(db, COUNT_SQL, "titit", err, status ? status : "",
                            (int64_t)(sizeof CANCELLED_PREFIX - 1), CANCELLED_PREFIX,
                            (int64_t)(sizeof SKIPPED_PREFIX - 1), SKIPPED_PREFIX);
    *n = 0;
    if (st && sqlite3_step(st) == SQLITE_ROW)
        *n = sqlite3_column_int64(st, 0);
    if (st)
        sqlite3_finalize(st);
    tsl_store_unlock_db(s);
    return st ? 0 : -1;
}
