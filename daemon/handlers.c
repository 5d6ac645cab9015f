/*
 * handlers.c — the method table and the dispatch: auth first, then the handler.
 */
#include "handlers.h"

#include <ctype.h>
#include <string.h>

#include "server_auth.h"

#define SCHED TSL_ROLE_BIT(TSL_ROLE_SCHEDULER)
#define OPS TSL_ROLE_BIT(TSL_ROLE_OPS)
#define WORKER TSL_ROLE_BIT(TSL_ROLE_WORKER)

static const tsl_method_t methods[] = {
    {"/tessel.v1.Planner/Plan", "Plan", SCHED, tsl_handle_plan},
    {"/tessel.v1.Planner/GetPlan", "GetPlan", SCHED | OPS, tsl_handle_get_plan},
    {"/tessel.v1.Planner/ListPlans", "ListPlans", SCHED | OPS, tsl_handle_list_plans},
    {"/tessel.v1.Planner/DeletePlan", "DeletePlan", SCHED, tsl_handle_delete_plan},
    {"/tessel.v1.Planner/ExportPlan", "ExportPlan", SCHED | OPS, tsl_handle_export_plan},
    {"/grpc.health.v1.Health/Check", "Health.Check", 0, tsl_handle_health_check},
    {"/tessel.v1.Registry/RegisterWorker", "Registry.RegisterWorker", WORKER, tsl_handle_register_worker},
    {"/tessel.v1.Registry/ReportProfile", "Registry.ReportProfile", WORKER, tsl_handle_report_profile},
    {"/tessel.v1.Registry/Heartbeat", "Registry.Heartbeat", WORKER, tsl_handle_heartbeat},
    {"/tessel.v1.Registry/Assignments", "Registry.Assignments", WORKER, tsl_handle_unimplemented},
    {"/tessel.v1.Registry/ReportTrial", "Registry.ReportTrial", WORKER, tsl_handle_unimplemented},
    {"/tessel.v1.Registry/ListWorkers", "Registry.ListWorkers", WORKER | OPS | SCHED, tsl_handle_list_workers},
    {"/tessel.v1.Registry/GetProfile", "Registry.GetProfile", WORKER | OPS | SCHED, tsl_handle_get_profile},
    {"/tessel.v1.Trials/StartTrial", "Trials.StartTrial", SCHED, tsl_handle_unimplemented},
    {"/tessel.v1.Trials/GetTrial", "Trials.GetTrial", SCHED | OPS, tsl_handle_unimplemented},
};

const tsl_method_t *tsl_handlers_methods(size_t *count)
{
    *count = sizeof methods / sizeof methods[0];
    return methods;
}

void tsl_handlers_dispatch(tsl_call_t *call)
{
    if (!call->method) {
        tsl_handle_unimplemented(call);
        return;
    }
    char msg[512];
    tsl_auth_t who;
    grpc_status_code code = tsl_auth_check(call->srv->cfg, &call->md, call->method->roles,
                                           call->method->name, &who, msg, sizeof msg);
    call->role = who.role;
    call->trusted = who.trusted;
    if (code != GRPC_STATUS_OK) {
        tsl_call_fail(call, code, "%s", msg);
        return;
    }
    call->method->handle(call);
}

bool tsl_handlers_fingerprint(tsl_call_t *call, const char *fp, char out[17])
{
    size_t n = strlen(fp);
    bool ok = n == 16;
    for (size_t i = 0; ok && i < n; i++)
        ok = isxdigit((unsigned char)fp[i]) != 0;
    if (!ok) {
        tsl_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT,
                      "fingerprint: '%.40s%s' is not 16 hex digits (as ListPlans shows them)",
                      fp, n > 40 ? "..." : "");
        return false;
    }
    for (size_t i = 0; i < 16; i++)
        out[i] = (char)tolower((unsigned char)fp[i]);
    out[16] = '\0';
    return true;
}
