/*
 * fuzz_rpc_plan.c — a Plan call's request bytes as the daemon handles them:
 * protobuf unpack → tsl_plan_request_decode (api/request.c: every field
 * checked against the limits) → the planner, with tiny limits so that a search
 * stays short.
 */
#include <stdio.h>
#include <stdlib.h>

#include "request.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Tiny limits, so that every input that passes validation searches fast. */
    static const tsl_request_limits_t lim = {.max_batch = 32, .max_layers = 6, .max_devices = 8};
    static int ready, verbose;
    if (!ready) {
        verbose = getenv("TSL_FUZZ_VERBOSE") != NULL; /* what happened to each input */
        ready = 1;
    }
    Tessel__V1__PlanRequest *req = tessel__v1__plan_request__unpack(NULL, size, data);
    if (!req)
        return 0;
    tsl_plan_input_t in = {0};
    tsl_err_t err = {0};
    int rc = tsl_plan_request_decode(req, &lim, &in, &err);
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
