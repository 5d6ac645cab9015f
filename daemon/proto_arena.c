/*
 * proto_arena.c — protobuf answers filled in an arena (proto_arena.h).
 */
#include "proto_arena.h"

bool tsl_proto_copy_strs(tsl_arena_t *a, const tsl_str_copy_t *c, size_t n)
{
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        ok = (*c[i].dst = tsl_arena_strdup(a, c[i].src)) != NULL && ok;
    return ok;
}

void **tsl_proto_map_from_json(tsl_arena_t *a, const char *text,
                               const ProtobufCMessageDescriptor *desc, tsl_proto_entry_fn set,
                               size_t *n_members, size_t *n_out)
{
    json_t *o = json_loads(text, 0, NULL);
    size_t n = json_is_object(o) ? json_object_size(o) : 0;
    void **v = tsl_arena_alloc(a, (n ? n : 1) * sizeof *v);
    const char *k;
    json_t *val;
    *n_members = n;
    *n_out = 0;
    if (v && n)
        json_object_foreach(o, k, val)
        {
            ProtobufCMessage *e = tsl_arena_alloc(a, desc->sizeof_message);
            if (!e)
                break;
            protobuf_c_message_init(desc, e);
            if (!set(a, e, k, val))
                break;
            v[(*n_out)++] = e;
        }
    json_decref(o);
    return v;
}
