/*
 * proto_json.c — a protobuf-c message as JSON by its descriptor (proto_json.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
