/*
 * methods.h — the one table of the API's method paths, "/package.Service/Method",
 * with the short name logs and metrics use: always "Service.Method", so a
 * dashboard can group by service. The daemon registers these paths
 * (with its roles and handlers: daemon/handlers.c), the clients call them.
 *
 * Adding a method: one line in TSL_RPC_METHODS (and the rpc in proto/).
 */
#ifndef TSL_API_METHODS_H
#define TSL_API_METHODS_H

/* X(ID, path, name) */
#define TSL_RPC_METHODS(X)                                                                         \
    X(PLAN, "/tessel.v1.Planner/Plan", "Planner.Plan")                                             \
    X(GET_PLAN, "/tessel.v1.Planner/GetPlan", "Planner.GetPlan")                                   \
    X(LIST_PLANS, "/tessel.v1.Planner/ListPlans", "Planner.ListPlans")                             \
    X(DELETE_PLAN, "/tessel.v1.Planner/DeletePlan", "Planner.DeletePlan")                          \
    X(EXPORT_PLAN, "/tessel.v1.Planner/ExportPlan", "Planner.ExportPlan")                          \
    X(EVALUATE_PLAN, "/tessel.v1.Planner/EvaluatePlan", "Planner.EvaluatePlan")                    \
    X(GET_REGISTERED_CLUSTER, "/tessel.v1.Planner/GetRegisteredCluster",                           \
      "Planner.GetRegisteredCluster")                                                              \
    X(HEALTH_CHECK, "/grpc.health.v1.Health/Check", "Health.Check")                                \
    X(REGISTER_WORKER, "/tessel.v1.Registry/RegisterWorker", "Registry.RegisterWorker")            \
    X(REPORT_PROFILE, "/tessel.v1.Registry/ReportProfile", "Registry.ReportProfile")               \
    X(HEARTBEAT, "/tessel.v1.Registry/Heartbeat", "Registry.Heartbeat")                            \
    X(ASSIGNMENTS, "/tessel.v1.Registry/Assignments", "Registry.Assignments")                      \
    X(REPORT_TRIAL, "/tessel.v1.Registry/ReportTrial", "Registry.ReportTrial")                     \
    X(LIST_WORKERS, "/tessel.v1.Registry/ListWorkers", "Registry.ListWorkers")                     \
    X(GET_PROFILE, "/tessel.v1.Registry/GetProfile", "Registry.GetProfile")                        \
    X(START_TRIAL, "/tessel.v1.Trials/StartTrial", "Trials.StartTrial")                            \
    X(GET_TRIAL, "/tessel.v1.Trials/GetTrial", "Trials.GetTrial")                                  \
    X(WATCH_TRIAL, "/tessel.v1.Trials/WatchTrial", "Trials.WatchTrial")                            \
    X(LIST_TRIALS, "/tessel.v1.Trials/ListTrials", "Trials.ListTrials")                            \
    X(CANCEL_TRIAL, "/tessel.v1.Trials/CancelTrial", "Trials.CancelTrial")

typedef enum tsl_rpc_id {
#define TSL_RPC_ENUM_(id, path, name) TSL_RPC_ID_##id,
    TSL_RPC_METHODS(TSL_RPC_ENUM_)
#undef TSL_RPC_ENUM_
        TSL_RPC_ID_COUNT
} tsl_rpc_id_t;

typedef struct tsl_rpc_method {
    const char *path; /* "/tessel.v1.Planner/GetPlan" */
    const char *name; /* "Planner.GetPlan" */
} tsl_rpc_method_t;

extern const tsl_rpc_method_t tsl_rpc_methods[TSL_RPC_ID_COUNT];

/* The paths the clients call, by name. */
#define TSL_RPC_PLAN         (tsl_rpc_methods[TSL_RPC_ID_PLAN].path)
#define TSL_RPC_GET_PLAN     (tsl_rpc_methods[TSL_RPC_ID_GET_PLAN].path)
#define TSL_RPC_LIST_PLANS   (tsl_rpc_methods[TSL_RPC_ID_LIST_PLANS].path)
#define TSL_RPC_DELETE_PLAN  (tsl_rpc_methods[TSL_RPC_ID_DELETE_PLAN].path)
#define TSL_RPC_EXPORT_PLAN  (tsl_rpc_methods[TSL_RPC_ID_EXPORT_PLAN].path)
#define TSL_RPC_HEALTH_CHECK (tsl_rpc_methods[TSL_RPC_ID_HEALTH_CHECK].path)

#endif
