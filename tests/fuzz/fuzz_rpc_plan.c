/*
 * fuzz_rpc_plan.c — a Plan call's request bytes as the daemon handles them:
 * protobuf unpack → tsl_convert_plan_request (every field checked against
 * [limits]) → the planner, with tiny limits so that a search stays short. The
 * conversion lives in daemon/convert.c today and moves to api/ with the wire
 * work; point this harness at the new home then.
 */
#include <stdio.h>
#include <stdlib.h>

#include "convert.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tsl_config_t cfg;
    static int ready, verbose;
    if (!ready) {
        verbose = getenv("TSL_FUZZ_VERBOSE") != NULL;   /* what happened to each input */
        tsl_err_t e = {0};
        tsl_config_defaults(&cfg);
        if (tsl_config_set(&cfg, "max-layers", "6", &e) || tsl_config_set(&cfg, "max-devices", "8", &e) ||
            tsl_config_set(&cfg, "max-batch", "32", &e))
            abort();
        ready = 1;
    }
    Tessel__V1__PlanRequest *req = tessel__v1__plan_request__unpack(NULL, size, data);
    if (!req)
        return 0;
    tsl_plan_input_t in = {0};
    tsl_err_t err = {0};
    int rc = tsl_convert_plan_request(req, &cfg, &in, &err);
    if (rc == 0) {
        tsl_search_result_t *res = calloc(1, sizeof *res);
        tsl_search_hooks_t hooks = {0};
        rc = res ? tsl_search(&in.model, &in.cluster, &in.request, &hooks, res, &err) : -1;
        free(res);
        if (verbose)
            fprintf(stderr, "search: %d %s\n", rc, rc ? err.msg : "");
    } else if (verbose) {
        fprintf(stderr, "convert: %s\n", err.msg);
    }
    tsl_plan_input_free(&in);
    tessel__v1__plan_request__free_unpacked(req, NULL);
    return 0;
}
