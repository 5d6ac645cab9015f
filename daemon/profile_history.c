/*
 * profile_history.c — the worker's newest stored figures as priors for
 * tsl_profile_check_report (profile_history.h).
 */
#include "profile_history.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile_check.h"
#include "server_call.h"
#include "server_int.h"
#include "store_registry.h"
#include "store_sql.h"

/* The worker's newest profile report and newest link probe, as RAW_SQL in
 * store_registry.c reads a node's: one figure's latest value each. */
static const char PRIOR_SQL[] =
    "SELECT p.name, p.labels_json, COALESCE(p.device_index, -1), p.value FROM profiles p "
    "WHERE p.worker_id = ?1 AND p.report_id IN (SELECT (SELECT report_id FROM profile_reports r "
    "  WHERE r.worker_id = ?1 AND (r.report_id LIKE 'link:%') = (k.link = 1) "
    "  ORDER BY r.received_unix DESC, r.rowid DESC LIMIT 1) "
    "  FROM (SELECT 0 AS link UNION ALL SELECT 1) k)";

typedef struct {
    tsl_profile_prior_t *v;
    size_t n, cap;
} priors_t;

static void priors_free(priors_t *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free((char *)p->v[i].name);
        free((char *)p->v[i].labels_json);
    }
    free(p->v);
}

static int priors_add(priors_t *p, sqlite3_stmt *st)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 256;
        tsl_profile_prior_t *v = realloc(p->v, cap * sizeof *v);
        if (!v)
            return -1;
        p->v = v;
        p->cap = cap;
    }
    tsl_profile_prior_t *o = &p->v[p->n];
    o->name = strdup(tsl_sql_text(st, 0));
    o->labels_json = strdup(tsl_sql_text(st, 1));
    o->device_index = sqlite3_column_int64(st, 2);
    o->value = sqlite3_column_double(st, 3);
    p->n++;
    return o->name && o->labels_json ? 0 : -1;
}

static int load_priors(tsl_store_t *s, const char *worker_id, priors_t *p, tsl_err_t *err)
{
    sqlite3_stmt *st = NULL;
    int rc = 0;
    sqlite3 *db = tsl_store_lock_db(s);
    if (sqlite3_prepare_v2(db, PRIOR_SQL, -1, &st, NULL) != SQLITE_OK)
        rc = tsl_sql_fail(db, "profile history", "prepare", err);
    if (rc == 0)
        sqlite3_bind_text(st, 1, worker_id, -1, SQLITE_STATIC);
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW)
        if (priors_add(p, st) != 0)
            rc = tsl_err_setc(err, TSL_E_NOMEM, "ReportProfile: out of memory");
    sqlite3_finalize(st);
    tsl_store_unlock_db(s);
    return rc;
}

bool tsl_profile_check_call(tsl_call_t *call, const Tessel__V1__ReportProfileRequest *req,
                            const char *const *labels)
{
    priors_t p = {0};
    tsl_err_t err = {0};
    int rc = load_priors(call->srv->store, req->worker_id, &p, &err);
    if (rc == 0)
        rc = tsl_profile_check_report(req, labels, (int64_t)time(NULL), p.v, p.n, &err);
    priors_free(&p);
    if (rc != 0)
        tsl_call_fail_err(call, &err);
    return rc == 0;
}
