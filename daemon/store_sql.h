/*
 * store_sql.h — the small sqlite statement helpers that store_registry.c and
 * store_trials.c share: prepare-and-bind by a format, step a write to its end,
 * BEGIN IMMEDIATE / COMMIT-or-ROLLBACK, and a column as text. Callers hold the
 * store's lock (tsl_store_lock_db). Errors are TSL_E_INTERNAL, worded
 * "SCOPE: WHAT: sqlite's message" so each file keeps its own prefix.
 */
#ifndef TSL_DAEMON_STORE_SQL_H
#define TSL_DAEMON_STORE_SQL_H

#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Sets err from db's last error; returns -1. */
int tsl_sql_fail(sqlite3 *db, const char *scope, const char *what, tsl_err_t *err);

/* Prepares sql and binds ap by fmt: 't' text, 'i' int64, 'd' double, 'b' blob
 * (pointer, size_t; NULL when empty), anything else NULL. NULL on failure (err set). */
sqlite3_stmt *tsl_sql_vprep(sqlite3 *db, const char *scope, const char *sql, const char *fmt,
                            va_list ap, tsl_err_t *err);

/* Steps a prepared write (NULL: a failed prepare) to its end and finalizes it; 0 or -1. */
int tsl_sql_done(sqlite3 *db, const char *scope, sqlite3_stmt *st, tsl_err_t *err);

/* BEGIN IMMEDIATE; 0 or -1. */
int tsl_sql_begin(sqlite3 *db, const char *scope, tsl_err_t *err);

/* Commits when rc is 0 or 1 (1: nothing to do, not an error) and returns rc;
 * otherwise, or when COMMIT fails, rolls back and returns -1. */
int tsl_sql_end(sqlite3 *db, const char *scope, int rc, tsl_err_t *err);

/* Column col as text, "" for NULL. */
const char *tsl_sql_text(sqlite3_stmt *st, int col);

#endif
