/*
 * handlers.c — the method table: which roles may call each method of
 * api/methods.h and which handler answers it. server_call.c checks the
 * caller's token against the roles before a handler runs.
 */
#include "handlers.h"

#define SCHED   TSL_ROLE_BIT(TSL_ROLE_SCHEDULER)
#define OPS     TSL_ROLE_BIT(TSL_ROLE_OPS)
#define WORKER  TSL_ROLE_BIT(TSL_ROLE_WORKER)
#define RPC(id) (&tsl_rpc_methods[TSL_RPC_ID_##id])

static const tsl_method_t methods[] = {
    {RPC(PLAN), SCHED, tsl_handle_plan},
    {RPC(GET_PLAN), SCHED | OPS, tsl_handle_get_plan},
    {RPC(LIST_PLANS), SCHED | OPS, tsl_handle_list_plans},
    {RPC(DELETE_PLAN), SCHED, tsl_handle_delete_plan},
    {RPC(EXPORT_PLAN), SCHED | OPS, tsl_handle_export_plan},
    {RPC(EVALUATE_PLAN), SCHED | OPS, tsl_handle_evaluate_plan},
    {RPC(GET_REGISTERED_CLUSTER), SCHED | OPS, tsl_handle_get_registered_cluster},
    {RPC(HEALTH_CHECK), 0, tsl_handle_health_check},
    {RPC(REGISTER_WORKER), WORKER, tsl_handle_register_worker},
    {RPC(REPORT_PROFILE), WORKER, tsl_handle_report_profile},
    {RPC(HEARTBEAT), WORKER, tsl_handle_heartbeat},
    {RPC(ASSIGNMENTS), WORKER, tsl_handle_assignments},
    {RPC(REPORT_TRIAL), WORKER, tsl_handle_report_trial},
    {RPC(LIST_WORKERS), WORKER | OPS | SCHED, tsl_handle_list_workers},
    {RPC(GET_PROFILE), WORKER | OPS | SCHED, tsl_handle_get_profile},
    {RPC(START_TRIAL), SCHED, tsl_handle_start_trial},
    {RPC(GET_TRIAL), SCHED | OPS, tsl_handle_get_trial},
    {RPC(WATCH_TRIAL), SCHED | OPS, tsl_handle_watch_trial},
    {RPC(LIST_TRIALS), SCHED | OPS, tsl_handle_list_trials},
    {RPC(CANCEL_TRIAL), SCHED, tsl_handle_cancel_trial},
};

const tsl_method_t *tsl_handlers_methods(size_t *count, tsl_call_handler_fn *fallback)
{
    *count = sizeof methods / sizeof methods[0];
    *fallback = tsl_handle_unimplemented;
    return methods;
}
