/*
 * handlers_own.c — the worker-identity check the registry and assignment
 * handlers share (handlers.h): a file of its own, below both and above
 * server_auth.c and server_call.c, so that no call circle forms.
 */
#include "handlers.h"
#include "server_auth.h"

bool tsl_handlers_own_worker(tsl_call_t *call, const char *worker_id)
{
    char why[512];
    grpc_status_code code = tsl_auth_worker(call, worker_id, why, sizeof why);
    if (code != GRPC_STATUS_OK)
        tsl_call_fail(call, code, "%s", why);
    return code == GRPC_STATUS_OK;
}
