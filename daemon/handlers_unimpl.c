/*
 * handlers_unimpl.c — what this tesseld does not serve yet.
 *
 * Planner.EvaluatePlan is declared in proto/ so that clients can be written
 * against it; until its issue lands it answers UNIMPLEMENTED — after the
 * token check, so a caller learns about a wrong role first. A method nobody
 * registered (a typo, another service) answers UNIMPLEMENTED naming the path:
 * without this generic handler such a call would hang until its deadline.
 */
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <stdlib.h>

#include "handlers.h"

void tsl_handle_unimplemented(tsl_call_t *call)
{
    if (call->method) {
        tsl_call_fail(call, GRPC_STATUS_UNIMPLEMENTED,
                      "%s is declared in the API but not implemented by this tesseld yet",
                      call->method->rpc->path);
        return;
    }
    char *path = grpc_slice_to_c_string(call->details.method);
    tsl_call_fail(call, GRPC_STATUS_UNIMPLEMENTED,
                  "unknown method '%.200s'; tesseld serves tessel.v1.Planner, "
                  "tessel.v1.Registry and grpc.health.v1.Health",
                  path ? path : "?");
    gpr_free(path);
}
