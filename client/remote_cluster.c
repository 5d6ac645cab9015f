/*
 * remote_cluster.c — `tesselctl plan --cluster registered [--nodes a,b]`: the
 * request's RegisteredCluster, the names --nodes gives (none: every online
 * worker). tesseld assembles the cluster from its registry — the workers, their
 * GPUs, profiles, link probes and calibrations (daemon/registry_cluster.h) —
 * refuses a name no worker registered under (INVALID_ARGUMENT naming
 * cluster.registered.nodes) and names the workers it left out.
 */
#include <stdlib.h>
#include <string.h>

#include "remote.h"

/* The names of "a,b,c" (plan_opts.c refuses empty ones; skipped here all the same). */
static int split_nodes(const char *list, Tessel__V1__RegisteredCluster *r)
{
    size_t n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    if (!(r->nodes = calloc(n, sizeof *r->nodes)))
        return -1;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len && !(r->nodes[r->n_nodes++] = strndup(p, len)))
            return -1;
        p += len + (p[len] == ',');
    }
    return 0;
}

void tsl_remote_registered_free(Tessel__V1__RegisteredCluster *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_nodes; i++)
        free(r->nodes[i]);
    free(r->nodes);
    free(r);
}

int tsl_remote_registered_cluster(const char *nodes, Tessel__V1__PlanRequest *req)
{
    Tessel__V1__RegisteredCluster *r = malloc(sizeof *r);
    if (r)
        tessel__v1__registered_cluster__init(r);
    req->cluster_case = TESSEL__V1__PLAN_REQUEST__CLUSTER_REGISTERED;
    req->registered = r;
    if (!r || (nodes && split_nodes(nodes, r) != 0))
        return tsl_remote_fail(TSL_EXIT_SERVER, "out of memory");
    return 0;
}
