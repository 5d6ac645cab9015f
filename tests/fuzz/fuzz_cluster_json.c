/*
 * fuzz_cluster_json.c — the cluster description parser (common/cluster_json.c):
 * what a client sends as cluster_json and tesselctl reads from --cluster FILE.
 */
#include <stdlib.h>

#include "cluster_json.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = tsl_fuzz_cstr(data, size);
    tsl_cluster_t *c = calloc(1, sizeof *c);
    tsl_err_t err = {0};
    if (c) {
        tsl_cluster_json_parse(text, c, &err);
        tsl_cluster_free(c); /* safe after a failure too (cluster.h) */
    }
    free(c);
    free(text);
    return 0;
}
