/*
 * store_natural.h — the store's "natural" SQL collation: runs of digits compare
 * as numbers, so `tesselctl profiles` lists {"mb": "2"} before {"mb": "16"}
 * where a text order puts "16" first.
 */
#ifndef TSL_STORE_NATURAL_H
#define TSL_STORE_NATURAL_H

#include <sqlite3.h>
#include <stddef.h>

/* <0, 0, >0 as a sorts before, with or after b: byte by byte, except that where
 * both hold a run of digits the runs compare by value (leading zeros aside; the
 * shorter spelling first at an equal value); the text order breaks a tie. */
int tsl_natural_cmp(const char *a, size_t an, const char *b, size_t bn);

/* Registers tsl_natural_cmp on db as COLLATE tsl_natural: SQLITE_OK or sqlite's code. */
int tsl_store_natural_register(sqlite3 *db);

#endif
