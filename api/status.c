/*
 * status.c — error code → gRPC status → tesselctl exit status (status.h).
 */
#include "status.h"

#include <stddef.h>

typedef struct row {
    tsl_errcode_t code;
    grpc_status_code status;
    int exit;
} row_t;

/* Order matters for tsl_status_exit: a status takes the exit of its first row. */
static const row_t rows[] = {
    {TSL_E_NONE, GRPC_STATUS_OK, TSL_EXIT_OK},
    {TSL_E_INVALID, GRPC_STATUS_INVALID_ARGUMENT, TSL_EXIT_USAGE},
    {TSL_E_NOTFOUND, GRPC_STATUS_NOT_FOUND, TSL_EXIT_NOT_FOUND},
    {TSL_E_PRECONDITION, GRPC_STATUS_FAILED_PRECONDITION, TSL_EXIT_SERVER},
    {TSL_E_NOFIT, GRPC_STATUS_OUT_OF_RANGE, TSL_EXIT_USAGE},
    {TSL_E_CANCELLED, GRPC_STATUS_DEADLINE_EXCEEDED, TSL_EXIT_UNAVAILABLE},
    {TSL_E_EXHAUSTED, GRPC_STATUS_RESOURCE_EXHAUSTED, TSL_EXIT_SERVER},
    {TSL_E_NOMEM, GRPC_STATUS_RESOURCE_EXHAUSTED, TSL_EXIT_SERVER},
    {TSL_E_UNAVAILABLE, GRPC_STATUS_UNAVAILABLE, TSL_EXIT_UNAVAILABLE},
    {TSL_E_UNSUPPORTED, GRPC_STATUS_UNIMPLEMENTED, TSL_EXIT_SERVER},
    {TSL_E_DEVICE, GRPC_STATUS_INTERNAL, TSL_EXIT_SERVER},
    {TSL_E_INTERNAL, GRPC_STATUS_INTERNAL, TSL_EXIT_SERVER},
};

#define N_ROWS (sizeof rows / sizeof rows[0])

static const row_t *row_of(tsl_errcode_t code)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (rows[i].code == code)
            return &rows[i];
    return NULL;
}

grpc_status_code tsl_errcode_status(tsl_errcode_t code)
{
    const row_t *r = row_of(code);
    return r ? r->status : GRPC_STATUS_INTERNAL;
}

int tsl_errcode_exit(tsl_errcode_t code)
{
    const row_t *r = row_of(code);
    return r ? r->exit : TSL_EXIT_SERVER;
}

int tsl_status_exit(grpc_status_code status)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (rows[i].status == status)
            return rows[i].exit;
    return TSL_EXIT_SERVER;
}

const char *tsl_status_name(grpc_status_code status)
{
    static const char *const names[] = {
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    };
    if ((unsigned)status < sizeof names / sizeof names[0])
        return names[status];
    return "UNKNOWN";
}
