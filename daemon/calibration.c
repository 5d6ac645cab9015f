/*
 * calibration.c — per-hardware corrections fitted from trials (calibration.h).
 */
#include <jansson.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calibration.h"
#include "cost.h"
#include "profile_json.h"
#include "store_registry.h"
#include "store_trials.h"

#define MAX_SAMPLES 10000u

typedef struct samples {
    tsl_calib_sample_t *v;
    size_t n, cap;
    bool nomem;
} samples_t;

static void take_sample(void *ud, const tsl_calib_sample_t *sample)
{
    samples_t *s = ud;
    if (s->nomem || s->n == MAX_SAMPLES)
        return;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 32;
        tsl_calib_sample_t *v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            s->nomem = true;
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = *sample;
}

static int db_fail(tsl_store_t *s, sqlite3 *db, sqlite3_stmt *st, const char *what, tsl_err_t *err)
{
    tsl_err_setc(err, TSL_E_INTERNAL, "calibration: %s: %s", what, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    tsl_store_unlock_db(s);
    return -1;
}

/* Every key holds to the profile files' bounds: a simulated key's figures are
 * GPU figures too (a sim worker's device file), and a row stored before cpu
 * trials were kept out (a x48,677 compute factor) is ignored when read. */
static double max_factor(bool simulated)
{
    (void)simulated;
    return TSL_PROFILE_CALIB_MAX;
}

static int store_calib(tsl_store_t *s, const char *gpu_model, bool simulated, const tsl_calib_t *c,
                       tsl_err_t *err)
{
    json_t *o = tsl_profile_json_calib(c);
    tsl_calib_t back;
    if (o && tsl_profile_json_calib_from(o, max_factor(simulated), gpu_model, &back, err) != 0) {
        json_decref(o);
        return -1; /* a broken fit (a factor far outside what hardware does): not stored */
    }
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    if (!text)
        return tsl_err_setc(err, TSL_E_NOMEM, "calibration: out of memory");
    sqlite3 *db = tsl_store_lock_db(s);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "INSERT INTO calibrations (gpu_model, simulated, calib_json, "
                                "n_trials, updated_unix, cost_model_version) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
                                "ON CONFLICT (gpu_model, simulated) DO UPDATE SET "
                                "calib_json = ?3, n_trials = ?4, updated_unix = ?5, "
                                "cost_model_version = ?6",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, gpu_model, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, simulated);
        sqlite3_bind_text(st, 3, text, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, c->n_samples);
        sqlite3_bind_int64(st, 5, (sqlite3_int64)time(NULL));
        sqlite3_bind_int64(st, 6, TSL_COST_MODEL_VERSION);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    if (rc != SQLITE_OK)
        tsl_err_setc(err, TSL_E_INTERNAL, "calibration: storing %s: %s", gpu_model,
                     sqlite3_errmsg(db));
    sqlite3_finalize(st);
    tsl_store_unlock_db(s);
    free(text);
    return rc == SQLITE_OK ? 0 : -1;
}

int tsl_calibration_refit(tsl_store_t *s, const char *gpu_model, bool simulated, tsl_calib_t *out,
                          tsl_err_t *err)
{
    samples_t smp = {0};
    tsl_calib_identity(out);
    int rc = tsl_trials_calib_samples(s, gpu_model, simulated, take_sample, &smp, err);
    if (rc == 0 && smp.nomem)
        rc = tsl_err_setc(err, TSL_E_NOMEM, "calibration: out of memory collecting trials");
    if (rc == 0 && smp.n > 0) {
        char why[200];
        tsl_calib_fit(smp.v, smp.n, out);
        if (out->n_samples > 0 && tsl_calib_check(out, why, sizeof why) != 0) {
            tsl_err_setc(err, TSL_E_PRECONDITION, "fit of %u trial(s) refused, not applied: %s",
                         out->n_samples, why);
            rc = 1;
        } else if (out->n_samples > 0)
            rc = store_calib(s, gpu_model, simulated, out, err);
    }
    free(smp.v);
    return rc;
}

/* One row's JSON into c; false when it does not read. */
static bool parse_row(const unsigned char *text, bool simulated, tsl_calib_t *c)
{
    json_t *o = json_loads(text ? (const char *)text : "", 0, NULL);
    tsl_err_t why = {0};
    bool ok =
        o && tsl_profile_json_calib_from(o, max_factor(simulated), "calibrations", c, &why) == 0;
    json_decref(o);
    return ok;
}

int tsl_calibration_list(tsl_store_t *s, const char *gpu_model, tsl_calibration_fn fn, void *ud,
                         tsl_err_t *err)
{
    sqlite3 *db = tsl_store_lock_db(s);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT gpu_model, simulated, calib_json, updated_unix FROM "
                           "calibrations WHERE (?1 = '' OR gpu_model = ?1) "
                           "AND cost_model_version = ?2 ORDER BY gpu_model, simulated",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, db, st, "listing", err);
    sqlite3_bind_text(st, 1, gpu_model ? gpu_model : "", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, TSL_COST_MODEL_VERSION);
    /* Rows are copied out first: fn runs without the store's lock. */
    typedef struct row {
        char model[160];
        bool sim;
        tsl_calib_t c;
        int64_t updated;
    } row_t;
    row_t *rows = NULL;
    size_t n = 0;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        row_t r = {.sim = sqlite3_column_int(st, 1) != 0, .updated = sqlite3_column_int64(st, 3)};
        snprintf(r.model, sizeof r.model, "%s", (const char *)sqlite3_column_text(st, 0));
        if (!parse_row(sqlite3_column_text(st, 2), r.sim, &r.c))
            continue;
        row_t *grown = realloc(rows, (n + 1) * sizeof *rows);
        if (!grown) {
            step = SQLITE_NOMEM;
            break;
        }
        rows = grown;
        rows[n++] = r;
    }
    if (step != SQLITE_DONE) {
        free(rows);
        return db_fail(s, db, st, "listing", err);
    }
    sqlite3_finalize(st);
    tsl_store_unlock_db(s);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = fn(ud, rows[i].model, rows[i].sim, &rows[i].c, rows[i].updated);
    free(rows);
    return rc ? -1 : 0;
}

typedef struct find {
    bool simulated, found;
    tsl_calib_t *out;
} find_t;

static int find_one(void *ud, const char *gpu_model, bool simulated, const tsl_calib_t *c,
                    int64_t updated_unix)
{
    (void)gpu_model;
    (void)updated_unix;
    find_t *f = ud;
    if (simulated == f->simulated) {
        *f->out = *c;
        f->found = true;
    }
    return 0;
}

int tsl_calibration_get(tsl_store_t *s, const char *gpu_model, bool simulated, tsl_calib_t *out,
                        tsl_err_t *err)
{
    find_t f = {.simulated = simulated, .out = out};
    if (!gpu_model || !gpu_model[0])
        return 0;
    if (tsl_calibration_list(s, gpu_model, find_one, &f, err) != 0)
        return -1;
    return f.found ? 1 : 0;
}
