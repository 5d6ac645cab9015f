/*
 * handlers_health.c — grpc.health.v1.Health/Check, the standard protocol.
 *
 * service "" (the whole server), "tessel.v1.Planner" and "grpc.health.v1.Health"
 * are known: SERVING while the daemon accepts calls, NOT_SERVING once it is
 * shutting down. Any other service name answers NOT_FOUND, as the protocol asks.
 * Always allowed, with or without a token.
 */
#include <string.h>

#include "grpc/health/v1/health.pb-c.h"
#include "handlers.h"

static bool known_service(const char *name)
{
    return name[0] == '\0' || strcmp(name, "tessel.v1.Planner") == 0 ||
           strcmp(name, "grpc.health.v1.Health") == 0;
}

void tsl_handle_health_check(tsl_call_t *call)
{
    Grpc__Health__V1__HealthCheckRequest *req =
        (Grpc__Health__V1__HealthCheckRequest *)tsl_call_read(
            call, &grpc__health__v1__health_check_request__descriptor);
    if (!req)
        return;
    if (!known_service(req->service)) {
        tsl_call_fail(call, GRPC_STATUS_NOT_FOUND,
                      "service '%.100s' is not served here; try \"\" or tessel.v1.Planner",
                      req->service);
    } else {
        Grpc__Health__V1__HealthCheckResponse resp = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
        resp.status = tsl_server_serving(call->srv)
                          ? GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
                          : GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING;
        tsl_call_reply(call, &resp.base);
    }
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
