/*
 * proto_json.c — a protobuf-c message as JSON by its descriptor (proto_json.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_num.h"
#include "proto_json.h"

static json_t *value_json(const ProtobufCFieldDescriptor *f, const void *p);

static json_t *bytes_json(const ProtobufCBinaryData *b)
{
    static const char hex[] = "0123456789abcdef";
    char *s = malloc(2 * b->len + 1);
    if (s == NULL)
        return NULL;
    for (size_t i = 0; i < b->len; i++) {
        s[2 * i] = hex[b->data[i] >> 4];
        s[2 * i + 1] = hex[b->data[i] & 15];
    }
    s[2 * b->len] = '\0';
    json_t *v = json_string(s);
    free(s);
    return v;
}

static json_t *enum_json(const ProtobufCFieldDescriptor *f, int v)
{
    const ProtobufCEnumValue *ev =
        protobuf_c_enum_descriptor_get_value((const ProtobufCEnumDescriptor *)f->descriptor, v);
    return ev ? json_string(ev->name) : json_integer(v);
}

static json_t *value_json(const ProtobufCFieldDescriptor *f, const void *p)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32: return json_integer(*(const int32_t *)p);
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32: return json_integer(*(const uint32_t *)p);
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64: return json_integer(*(const int64_t *)p);
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64: return json_integer((json_int_t) * (const uint64_t *)p);
    case PROTOBUF_C_TYPE_FLOAT: return json_real(*(const float *)p);
    case PROTOBUF_C_TYPE_DOUBLE: return json_real(*(const double *)p);
    case PROTOBUF_C_TYPE_BOOL: return json_boolean(*(const protobuf_c_boolean *)p);
    case PROTOBUF_C_TYPE_ENUM: return enum_json(f, *(const int *)p);
    case PROTOBUF_C_TYPE_STRING: return json_string(*(char *const *)p ? *(char *const *)p : "");
    case PROTOBUF_C_TYPE_BYTES: return bytes_json((const ProtobufCBinaryData *)p);
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *m = *(const ProtobufCMessage *const *)p;
        return m ? tsl_proto_to_json(m) : json_null();
    }
    }
    return json_null();
}

static size_t elem_size(const ProtobufCFieldDescriptor *f)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE: return 8;
    case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_ENUM: return sizeof(int);
    default: return 4;
    }
}

/* A map field's entry message: its "key" and "value" fields, by name. */
static bool is_map_entry(const ProtobufCFieldDescriptor *f)
{
    if (f->type != PROTOBUF_C_TYPE_MESSAGE)
        return false;
    const ProtobufCMessageDescriptor *d = f->descriptor;
    return d->n_fields == 2 && strcmp(d->fields[0].name, "key") == 0 &&
           strcmp(d->fields[1].name, "value") == 0 && strstr(d->name, "Entry") != NULL;
}

static json_t *repeated_json(const ProtobufCFieldDescriptor *f, const char *base)
{
    size_t n = *(const size_t *)(base + f->quantifier_offset);
    const char *arr = *(char *const *)(base + f->offset);
    bool map = is_map_entry(f);
    json_t *out = map ? json_object() : json_array();
    for (size_t i = 0; out && i < n; i++) {
        const char *p = arr + i * elem_size(f);
        if (!map) {
            json_array_append_new(out, value_json(f, p));
            continue;
        }
        const ProtobufCMessage *e = *(const ProtobufCMessage *const *)p;
        const ProtobufCFieldDescriptor *kf = &e->descriptor->fields[0];
        json_t *k = value_json(kf, (const char *)e + kf->offset);
        char key[64];
        if (json_is_string(k))
            snprintf(key, sizeof key, "%s", json_string_value(k));
        else
            snprintf(key, sizeof key, "%" JSON_INTEGER_FORMAT, json_integer_value(k));
        json_decref(k);
        const ProtobufCFieldDescriptor *vf = &e->descriptor->fields[1];
        json_object_set_new(out, key, value_json(vf, (const char *)e + vf->offset));
    }
    return out;
}

json_t *tsl_proto_to_json(const ProtobufCMessage *msg)
{
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    const char *base = (const char *)msg;
    json_t *o = json_object();
    for (unsigned i = 0; o && i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        json_t *v;
        if (f->label == PROTOBUF_C_LABEL_REPEATED)
            v = repeated_json(f, base);
        else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF &&
                 *(const uint32_t *)(base + f->quantifier_offset) != f->id)
            continue; /* the oneof's other member */
        else
            v = value_json(f, base + f->offset);
        json_object_set_new(o, f->name, v);
    }
    return o;
}

/* ==== JSON → message ============================================================ */

static int from_json(const json_t *o, const ProtobufCMessageDescriptor *d, tsl_arena_t *a,
                     ProtobufCMessage **out);

static int enum_of(const ProtobufCFieldDescriptor *f, const json_t *v)
{
    const ProtobufCEnumDescriptor *ed = f->descriptor;
    const ProtobufCEnumValue *ev =
        json_is_string(v) ? protobuf_c_enum_descriptor_get_value_by_name(ed, json_string_value(v))
                          : NULL;
    return ev ? ev->value : (int)tsl_json_i64(v);
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* base-16 text → bytes (bytes_json's inverse); odd or foreign text reads empty. */
static int bytes_of(const json_t *v, tsl_arena_t *a, ProtobufCBinaryData *b)
{
    const char *s = json_string_value(v);
    size_t n = s ? strlen(s) / 2 : 0;
    b->len = 0;
    b->data = tsl_arena_alloc(a, n ? n : 1);
    if (!b->data)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return 0;
        b->data[i] = (uint8_t)(hi << 4 | lo);
    }
    b->len = n;
    return 0;
}

static int value_of(const ProtobufCFieldDescriptor *f, const json_t *v, tsl_arena_t *a, void *p)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32: *(int32_t *)p = (int32_t)tsl_json_i64(v); return 0;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32: {
        uint64_t x = tsl_json_u64(v);
        *(uint32_t *)p = x > UINT32_MAX ? UINT32_MAX : (uint32_t)x;
        return 0;
    }
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64: *(int64_t *)p = tsl_json_i64(v); return 0;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64: *(uint64_t *)p = tsl_json_u64(v); return 0;
    case PROTOBUF_C_TYPE_FLOAT: *(float *)p = (float)json_number_value(v); return 0;
    case PROTOBUF_C_TYPE_DOUBLE: *(double *)p = json_number_value(v); return 0;
    case PROTOBUF_C_TYPE_BOOL: *(protobuf_c_boolean *)p = json_is_true(v); return 0;
    case PROTOBUF_C_TYPE_ENUM: *(int *)p = enum_of(f, v); return 0;
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = json_string_value(v);
        return (*(char **)p = tsl_arena_strdup(a, s ? s : "")) ? 0 : -1;
    }
    case PROTOBUF_C_TYPE_BYTES: return bytes_of(v, a, p);
    case PROTOBUF_C_TYPE_MESSAGE:
        *(ProtobufCMessage **)p = NULL;
        return json_is_object(v) ? from_json(v, f->descriptor, a, (ProtobufCMessage **)p) : 0;
    }
    return 0;
}

/* A map entry message from one key and value of a JSON object. */
static int map_entry_of(const ProtobufCFieldDescriptor *f, const char *key, const json_t *v,
                        tsl_arena_t *a, ProtobufCMessage **out)
{
    const ProtobufCMessageDescriptor *ed = f->descriptor;
    ProtobufCMessage *e = tsl_arena_alloc(a, ed->sizeof_message);
    if (!e)
        return -1;
    ed->message_init(e);
    const ProtobufCFieldDescriptor *kf = &ed->fields[0], *vf = &ed->fields[1];
    json_t *k = kf->type == PROTOBUF_C_TYPE_STRING ? json_string(key)
                                                   : json_integer(strtoll(key, NULL, 10));
    int rc = value_of(kf, k, a, (char *)e + kf->offset);
    json_decref(k);
    if (rc != 0 || value_of(vf, v, a, (char *)e + vf->offset) != 0)
        return -1;
    *out = e;
    return 0;
}

static int repeated_of(const ProtobufCFieldDescriptor *f, const json_t *v, tsl_arena_t *a,
                       char *base)
{
    bool map = is_map_entry(f);
    size_t n = map ? json_object_size(v) : json_array_size(v), i = 0;
    char *arr = tsl_arena_alloc(a, (n ? n : 1) * elem_size(f));
    if (!arr)
        return -1;
    if (map) {
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)v, key, val)
        {
            if (map_entry_of(f, key, val, a, (ProtobufCMessage **)(arr + i++ * elem_size(f))) != 0)
                return -1;
        }
    } else {
        for (; i < n; i++)
            if (value_of(f, json_array_get(v, i), a, arr + i * elem_size(f)) != 0)
                return -1;
    }
    *(size_t *)(base + f->quantifier_offset) = n;
    *(char **)(base + f->offset) = arr;
    return 0;
}

static int from_json(const json_t *o, const ProtobufCMessageDescriptor *d, tsl_arena_t *a,
                     ProtobufCMessage **out)
{
    ProtobufCMessage *msg = tsl_arena_alloc(a, d->sizeof_message);
    if (!msg)
        return -1;
    d->message_init(msg);
    char *base = (char *)msg;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const json_t *v = json_object_get(o, f->name);
        int rc = 0;
        if (v == NULL || json_is_null(v))
            continue; /* the proto3 default */
        if (f->label == PROTOBUF_C_LABEL_REPEATED)
            rc = repeated_of(f, v, a, base);
        else if ((rc = value_of(f, v, a, base + f->offset)) == 0 && f->quantifier_offset)
            *(uint32_t *)(base + f->quantifier_offset) =
                f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF ? f->id : 1;
        if (rc != 0)
            return -1;
    }
    *out = msg;
    return 0;
}

int tsl_proto_from_json(const json_t *o, const ProtobufCMessageDescriptor *d, tsl_arena_t *a,
                        ProtobufCMessage **out)
{
    *out = NULL;
    return json_is_object(o) ? from_json(o, d, a, out) : -1;
}
