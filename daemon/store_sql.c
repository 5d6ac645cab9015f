/*
 * store_sql.c — sqlite statement helpers shared by the store's files (store_sql.h).
 */
#include "store_sql.h"

int tsl_sql_fail(sqlite3 *db, const char *scope, const char *what, tsl_err_t *err)
{
    return tsl_err_setc(err, TSL_E_INTERNAL, "%s: %s: %s", scope, what, sqlite3_errmsg(db));
}

sqlite3_stmt *tsl_sql_vprep(sqlite3 *db, const char *scope, const char *sql, const char *fmt,
                            va_list ap, tsl_err_t *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        tsl_sql_fail(db, scope, "prepare", err);
        return NULL;
    }
    for (int i = 0; fmt[i]; i++) {
        switch (fmt[i]) {
        case 't': sqlite3_bind_text(st, i + 1, va_arg(ap, const char *), -1, SQLITE_STATIC); break;
        case 'i': sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t)); break;
        case 'd': sqlite3_bind_double(st, i + 1, va_arg(ap, double)); break;
        case 'b': {
            const void *p = va_arg(ap, const void *);
            size_t n = va_arg(ap, size_t);
            if (n)
                sqlite3_bind_blob(st, i + 1, p, (int)n, SQLITE_STATIC);
            else
                sqlite3_bind_null(st, i + 1);
            break;
        }
        default: sqlite3_bind_null(st, i + 1); break;
        }
    }
    return st;
}

int tsl_sql_done(sqlite3 *db, const char *scope, sqlite3_stmt *st, tsl_err_t *err)
{
    if (!st)
        return -1;
    int step = sqlite3_step(st);
    sqlite3_finalize(st);
    return step == SQLITE_DONE || step == SQLITE_ROW ? 0 : tsl_sql_fail(db, scope, "write", err);
}

static int exec_one(sqlite3 *db, const char *scope, const char *sql, tsl_err_t *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return tsl_sql_fail(db, scope, "prepare", err);
    return tsl_sql_done(db, scope, st, err);
}

int tsl_sql_begin(sqlite3 *db, const char *scope, tsl_err_t *err)
{
    return exec_one(db, scope, "BEGIN IMMEDIATE", err);
}

int tsl_sql_end(sqlite3 *db, const char *scope, int rc, tsl_err_t *err)
{
    if (rc >= 0 && exec_one(db, scope, "COMMIT", err) == 0)
        return rc;
    if (!sqlite3_get_autocommit(db))
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

const char *tsl_sql_text(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    return t ? (const char *)t : "";
}
