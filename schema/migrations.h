/*
 * migrations.h — the schema/NNN_name.sql files, embedded in the binary at build
 * time by schema/embed_sql.c (a meson custom_target writes migrations.c).
 *
 * Contract: tsl_migrations[i].version == i + 1 for every i < tsl_n_migrations
 * (the generator refuses gaps and duplicates), so the last entry's version is the
 * schema version this binary knows. The SQL text is NUL-terminated and static.
 */
#ifndef TSL_MIGRATIONS_H
#define TSL_MIGRATIONS_H

#include <stddef.h>

typedef struct tsl_migration {
    int version;      /* NNN of the file name */
    const char *name; /* "001_init" */
    const char *sql;  /* the whole file */
} tsl_migration_t;

extern const tsl_migration_t tsl_migrations[];
extern const size_t tsl_n_migrations;

#endif
