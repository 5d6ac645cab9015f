/*
 * remote_health.c — `tesselctl health`: the standard grpc.health.v1.Health/Check.
 */
#include <string.h>

#include "grpc/health/v1/health.pb-c.h"
#include "remote.h"

static const char health_usage[] =
    "usage: tesselctl health [--service NAME] [--json]\n"
    "\n"
    "Ask tesseld whether it is serving, with the standard gRPC health check\n"
    "(grpc.health.v1.Health/Check) that probes and load balancers use. Prints the\n"
    "serving status: SERVING, NOT_SERVING (e.g. shutting down), SERVICE_UNKNOWN or\n"
    "UNKNOWN. Suitable for scripts and systemd ExecStartPost= / readiness probes:\n"
    "the exit status is 0 only when the daemon answers SERVING.\n"
    "\n"
    "Options:\n"
    "  --service NAME   check one service, e.g. tessel.v1.Planner (default: \"\", the\n"
    "                   daemon as a whole)\n"
    "  --json           print {\"status\": \"SERVING\"}\n"
    "  --server ADDR, --token T, --timeout S   as for every subcommand\n"
    "\n"
    "Exit status: 0 SERVING; 3 SERVICE_UNKNOWN; 4 server error; 5 NOT_SERVING or\n"
    "UNKNOWN, daemon unreachable, or deadline exceeded.\n"
    "\n"
    "Examples:\n"
    "  tesselctl health\n"
    "  tesselctl --server 127.0.0.1:7443 --token \"$TOKEN\" health --timeout 2\n";

enum { OPT_SERVICE = 0x300 };

static const struct option health_longopts[] = {
    {"service", required_argument, NULL, OPT_SERVICE},
    TSL_REMOTE_LONG_OPTS,
    {NULL, 0, NULL, 0},
};

/* -1 on --help (printed), else an exit code. */
static int parse_health(int argc, char **argv, tsl_client_opts_t *co, const char **service)
{
    int opt, rc;

    optind = 0;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":h", health_longopts, NULL)) != -1) {
        if (opt == 'h' || opt == TSL_OPT_HELP) {
            fputs(health_usage, stdout);
            return -1;
        }
        if (opt == OPT_SERVICE)
            *service = optarg;
        else if ((rc = tsl_remote_common_opt(opt, optarg, co)) == -1)
            return tsl_remote_getopt_error("health", opt, argv);
        else if (rc != 0)
            return rc;
    }
    if (optind < argc)
        return tsl_remote_fail(TSL_EXIT_USAGE, "health: unexpected argument '%s'", argv[optind]);
    return 0;
}

static const char *status_name(Grpc__Health__V1__HealthCheckResponse__ServingStatus s)
{
    switch (s) {
    case GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING: return "SERVING";
    case GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING: return "NOT_SERVING";
    case GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN:
        return "SERVICE_UNKNOWN";
    default: return "UNKNOWN";
    }
}

static int status_exit(Grpc__Health__V1__HealthCheckResponse__ServingStatus s)
{
    if (s == GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING)
        return TSL_EXIT_OK;
    if (s == GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN)
        return TSL_EXIT_NOT_FOUND;
    return TSL_EXIT_UNAVAILABLE;
}

int tsl_cmd_health(int argc, char **argv, const tsl_client_opts_t *co_in)
{
    Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    tsl_client_opts_t co = *co_in;
    ProtobufCMessage *reply = NULL;
    const char *service = "";
    int rc = parse_health(argc, argv, &co, &service);

    if (rc != 0)
        return rc < 0 ? TSL_EXIT_OK : rc;
    req.service = (char *)service;
    rc = tsl_remote_call(&co, TSL_RPC_HEALTH_CHECK, &req.base,
                         &grpc__health__v1__health_check_response__descriptor, &reply);
    if (rc != 0)
        return rc;
    Grpc__Health__V1__HealthCheckResponse__ServingStatus s =
        ((Grpc__Health__V1__HealthCheckResponse *)reply)->status;
    protobuf_c_message_free_unpacked(reply, NULL);
    if (co.json)
        tsl_remote_print_json(stdout, json_pack("{s:s}", "status", status_name(s)));
    else
        printf("%s\n", status_name(s));
    return status_exit(s);
}
