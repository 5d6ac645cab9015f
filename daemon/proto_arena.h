/*
 * proto_arena.h — filling protobuf answers whose parts live in one arena
 * (common/arena.h): several strings copied at once, and a map field built from
 * the JSON object text the store keeps (labels, per-phase times). Used by
 * handlers_registry.c and trial_proto.c.
 */
#ifndef TSL_DAEMON_PROTO_ARENA_H
#define TSL_DAEMON_PROTO_ARENA_H

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>

#include "arena.h"

/* One string to copy: *dst becomes an arena copy of src (NULL copies as ""). */
typedef struct tsl_str_copy {
    char **dst;
    const char *src;
} tsl_str_copy_t;

/* Copies all n; false when the arena ran out (some *dst are then NULL). */
bool tsl_proto_copy_strs(tsl_arena_t *a, const tsl_str_copy_t *c, size_t n);

/* Sets one map entry's key and value from a JSON member; false when out of memory. */
typedef bool (*tsl_proto_entry_fn)(tsl_arena_t *a, ProtobufCMessage *entry, const char *key,
                                   json_t *value);

/* The entries of a map field from a JSON object's text (anything else has none):
 * one desc message per member, initialised, then set. *n_members is the object's
 * size, *n_out the entries made (fewer when out of memory: it stops at the first
 * failure). NULL only when even the array could not be allocated. */
void **tsl_proto_map_from_json(tsl_arena_t *a, const char *text,
                               const ProtobufCMessageDescriptor *desc, tsl_proto_entry_fn set,
                               size_t *n_members, size_t *n_out);

#endif
