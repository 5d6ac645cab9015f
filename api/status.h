/*
 * status.h — the one table that turns a failure into an answer: an error code
 * (planner/err.h tsl_errcode_t) becomes a gRPC status on the daemon's side and a
 * tesselctl exit status on the client's; a gRPC status received by a client
 * becomes an exit status by the same table. The daemon's handlers, tesselctl
 * (local and remote) and the worker all decide through it, never on message text.
 *
 * tesselctl exit statuses (docs/tesselctl.md):
 *   0 ok, 2 usage or invalid input (including: no plan fits the memory budget),
 *   3 not found, 4 server error, 5 unavailable (daemon not reachable / deadline).
 *
 * The table (status.c) lists each code once:
 *   code            gRPC status            exit
 *   NONE            OK                     0
 *   INVALID         INVALID_ARGUMENT       2
 *   NOTFOUND        NOT_FOUND              3
 *   PRECONDITION    FAILED_PRECONDITION    4
 *   NOFIT           OUT_OF_RANGE           2   (a well-formed request no plan fits:
 *                                              the memory budget is out of the range
 *                                              this cluster can hold; its own status so
 *                                              that a scheduler tells it from a missing
 *                                              profile, and exit 2 local and remote)
 *   CANCELLED       DEADLINE_EXCEEDED      5   (handlers refine: CANCELLED when the
 *                                              client went away, UNAVAILABLE at shutdown)
 *   EXHAUSTED       RESOURCE_EXHAUSTED     4
 *   NOMEM           RESOURCE_EXHAUSTED     4
 *   UNAVAILABLE     UNAVAILABLE            5
 *   UNSUPPORTED     UNIMPLEMENTED          4
 *   DEVICE          INTERNAL               4
 *   INTERNAL        INTERNAL               4
 * A gRPC status maps to the exit of its first row; statuses in no row exit 4.
 */
#ifndef TSL_API_STATUS_H
#define TSL_API_STATUS_H

#include <grpc/status.h>

#include "err.h"

enum {
    TSL_EXIT_OK = 0,
    TSL_EXIT_USAGE = 2,
    TSL_EXIT_NOT_FOUND = 3,
    TSL_EXIT_SERVER = 4,
    TSL_EXIT_UNAVAILABLE = 5,
};

/* The gRPC status a daemon answers for an error of this code. */
grpc_status_code tsl_errcode_status(tsl_errcode_t code);

/* tesselctl's exit status for an error of this code (local mode). */
int tsl_errcode_exit(tsl_errcode_t code);

/* tesselctl's exit status for a status received from tesseld (remote mode). */
int tsl_status_exit(grpc_status_code status);

/* "OK", "INVALID_ARGUMENT", ...; "UNKNOWN" for values gRPC does not define. */
const char *tsl_status_name(grpc_status_code status);
/* gRPC's codes run 0 .. UNAUTHENTICATED (16); tsl_status_name names each. */
#define TSL_STATUS_COUNT ((int)GRPC_STATUS_UNAUTHENTICATED + 1)

#endif
