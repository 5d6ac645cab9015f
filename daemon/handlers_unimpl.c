/*
 * handlers_unimpl.c — the answer to what this tesseld does not serve.
 *
 * A method nobody registered (a typo, another service) answers UNIMPLEMENTED
 * naming the path: without this generic handler such a call would hang until
 * its deadline. A registered method given this handler (a method declared in
 * proto/ before it is served) answers UNIMPLEMENTED after the token check, so
 * a caller learns about a wrong role first.
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
                  "tessel.v1.Registry, tessel.v1.Trials and grpc.health.v1.Health",
                  path ? path : "?");
    gpr_free(path);
}
