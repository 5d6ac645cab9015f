/*
 * proto_json.h — any protobuf-c message as JSON, by its descriptor: the keys
 * are the proto's field names, in declaration order, every field present
 * (proto3 defaults included, so a reader finds each key); 32- and 64-bit
 * integers are JSON integers, float/double reals, bool true/false, strings
 * strings, bytes base-16 strings, enums their value's name, nested messages
 * objects (null when unset), repeated fields arrays, and map fields (repeated
 * key/value entries) objects keyed by the key's text.
 *
 * What `--json` prints for messages that have no document of their own (the
 * Trials service's, docs/tesselctl.md): the proto as JSON, field for field.
 * Returns a new reference; NULL only when out of memory.
 */
#ifndef TSL_API_PROTO_JSON_H
#define TSL_API_PROTO_JSON_H

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>

#include "arena.h"

json_t *tsl_proto_to_json(const ProtobufCMessage *msg);

/*
 * The inverse: a message of type d from an object in tsl_proto_to_json's
 * shape. Keys are field names; a missing key or null leaves the proto3 default;
 * a value of the wrong JSON type reads as that type's zero (numbers are clamped
 * to the field's range); unknown keys are ignored. The message and all it points
 * to come from the arena (free the arena, not the message). 0, or -1 when o is
 * not an object or memory runs out.
 */
int tsl_proto_from_json(const json_t *o, const ProtobufCMessageDescriptor *d, tsl_arena_t *a,
                        ProtobufCMessage **out);

#endif
