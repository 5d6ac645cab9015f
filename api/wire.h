/*
 * wire.h — protobuf-c messages in and out of gRPC byte buffers, for both the
 * server (daemon/server_call.c) and the client (rpc_client.c).
 *
 * Ownership: tsl_wire_pack returns a new byte buffer (grpc_byte_buffer_destroy);
 * tsl_wire_unpack returns a new message (protobuf_c_message_free_unpacked) and
 * leaves the buffer to the caller.
 */
#ifndef TSL_API_WIRE_H
#define TSL_API_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <grpc/byte_buffer.h>
#include <protobuf-c/protobuf-c.h>

#include "err.h"

grpc_byte_buffer *tsl_wire_pack(const ProtobufCMessage *msg);

/* The message in bb, or NULL when the bytes are not a valid desc message (or
 * cannot be read). *len (may be NULL) gets the byte count. */
ProtobufCMessage *tsl_wire_unpack(grpc_byte_buffer *bb, const ProtobufCMessageDescriptor *desc,
                                  size_t *len);

/* A request as a server reads it: unpacked, and refused (NULL, TSL_E_INVALID
 * naming the field) when a string field holds a NUL byte or invalid UTF-8 —
 * see below. The bytes
 * are read once for both. *len as for tsl_wire_unpack; NULL with err->msg ""
 * when the bytes are not a valid desc message at all. */
ProtobufCMessage *tsl_wire_unpack_checked(grpc_byte_buffer *bb,
                                          const ProtobufCMessageDescriptor *desc, size_t *len,
                                          tsl_err_t *err);

/* Walks an encoded desc message (already known to unpack) and fails
 * (TSL_E_INVALID, naming the field) when a string field, at any depth, holds a
 * NUL byte (protobuf-c hands strings to C as NUL-terminated, so the rest would
 * be silently cut off) or is not well-formed UTF-8 (RFC 3629: overlong forms,
 * surrogates, code points above U+10FFFF and truncated sequences are refused),
 * which proto3 requires of a string and strict clients enforce on read. */
int tsl_wire_check_string_bytes(const uint8_t *data, size_t len,
                                const ProtobufCMessageDescriptor *desc, tsl_err_t *err);

#endif
