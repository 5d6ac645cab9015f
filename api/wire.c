/*
 * wire.c — pack and unpack through gRPC slices (wire.h).
 */
#include "wire.h"

#include <grpc/byte_buffer_reader.h>
#include <stdbool.h>
#include <grpc/slice.h>
#include <string.h>

grpc_byte_buffer *tsl_wire_pack(const ProtobufCMessage *msg)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    grpc_slice sl = grpc_slice_malloc(n);
    protobuf_c_message_pack(msg, GRPC_SLICE_START_PTR(sl));
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&sl, 1);
    grpc_slice_unref(sl);
    return bb;
}

ProtobufCMessage *tsl_wire_unpack(grpc_byte_buffer *bb, const ProtobufCMessageDescriptor *desc,
                                  size_t *len)
{
    grpc_byte_buffer_reader r;
    if (len)
        *len = 0;
    if (!grpc_byte_buffer_reader_init(&r, bb))
        return NULL;
    grpc_slice sl = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
    if (len)
        *len = GRPC_SLICE_LENGTH(sl);
    ProtobufCMessage *m =
        protobuf_c_message_unpack(desc, NULL, GRPC_SLICE_LENGTH(sl), GRPC_SLICE_START_PTR(sl));
    grpc_slice_unref(sl);
    return m;
}

/* Reads a varint at *p (< end); false when malformed. */
static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

/* Offset of the first byte of s[0..n) that is not well-formed UTF-8 (RFC 3629:
 * no overlong forms, no surrogates U+D800..DFFF, nothing above U+10FFFF), or n
 * when all are: strict protobuf clients refuse a whole message over one bad
 * string, so one stored must be valid. */
static size_t utf8_bad_at(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        size_t k = c < 0x80                 ? 0
                   : c >= 0xc2 && c <= 0xdf ? 1
                   : (c & 0xf0) == 0xe0     ? 2
                   : c >= 0xf0 && c <= 0xf4 ? 3
                                            : 9;
        if (k == 9 || k > n - i - 1)
            return i;
        /* The second byte's range is where overlongs, surrogates and > U+10FFFF show. */
        uint8_t lo = 0x80, hi = 0xbf, b1 = k ? s[i + 1] : 0;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
        else if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
        if (k && (b1 < lo || b1 > hi))
            return i;
        for (size_t j = 2; j <= k; j++)
            if ((s[i + j] & 0xc0) != 0x80)
                return i;
        i += k + 1;
    }
    return n;
}

/* Nested messages are walked to this depth; deeper ones are left to protobuf-c. */
#define MAX_DEPTH 16

static int walk(const uint8_t *p, const uint8_t *end, const ProtobufCMessageDescriptor *desc,
                int depth, tsl_err_t *err)
{
    while (p < end) {
        uint64_t key, n = 0;
        if (!varint(&p, end, &key))
            return 0; /* malformed: protobuf-c has judged the bytes already */
        switch (key & 7) {
        case 0:
            if (!varint(&p, end, &n))
                return 0;
            continue;
        case 1: n = 8; break;
        case 5: n = 4; break;
        case 2:
            if (!varint(&p, end, &n))
                return 0;
            break;
        default: return 0;
        }
        if (n > (uint64_t)(end - p))
            return 0;
        const ProtobufCFieldDescriptor *f =
            (key & 7) == 2 ? protobuf_c_message_descriptor_get_field(desc, (unsigned)(key >> 3))
                           : NULL;
        if (f && f->type == PROTOBUF_C_TYPE_STRING && memchr(p, 0, (size_t)n))
            return tsl_err_setc(err, TSL_E_INVALID,
                                "%s: contains a NUL byte; strings must be plain text", f->name);
        size_t bad = f && f->type == PROTOBUF_C_TYPE_STRING ? utf8_bad_at(p, (size_t)n) : n;
        if (bad < n)
            return tsl_err_setc(err, TSL_E_INVALID,
                                "%s: invalid UTF-8 at byte %zu (0x%02x); strings must be UTF-8",
                                f->name, bad, p[bad]);
        if (f && f->type == PROTOBUF_C_TYPE_MESSAGE && depth < MAX_DEPTH &&
            walk(p, p + n, f->descriptor, depth + 1, err) != 0)
            return -1;
        p += n;
    }
    return 0;
}

int tsl_wire_check_string_bytes(const uint8_t *data, size_t len,
                                const ProtobufCMessageDescriptor *desc, tsl_err_t *err)
{
    return walk(data, data + len, desc, 0, err);
}

ProtobufCMessage *tsl_wire_unpack_checked(grpc_byte_buffer *bb,
                                          const ProtobufCMessageDescriptor *desc, size_t *len,
                                          tsl_err_t *err)
{
    grpc_byte_buffer_reader r;
    *len = 0;
    if (err)
        err->msg[0] = '\0';
    if (!grpc_byte_buffer_reader_init(&r, bb))
        return NULL;
    grpc_slice sl = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
    *len = GRPC_SLICE_LENGTH(sl);
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, *len, GRPC_SLICE_START_PTR(sl));
    if (m && tsl_wire_check_string_bytes(GRPC_SLICE_START_PTR(sl), *len, desc, err) != 0) {
        protobuf_c_message_free_unpacked(m, NULL);
        m = NULL;
    }
    grpc_slice_unref(sl);
    return m;
}
