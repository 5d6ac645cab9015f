/*
 * registry_cluster.h — the cluster of a PlanRequest's `registered` member
 * (RegisteredCluster: worker hostnames, none = all), assembled from tesseld's
 * store: a cluster document (docs/cluster-format.md) on the workers' registered
 * GPUs and measured figures, the profiles to price layers by, where each figure
 * came from, and the workers left out.
 *
 * One node per online worker with GPUs (of one model), named or all; the
 * liveness states are swept first, as ListWorkers does. Per GPU model, from the
 * store's aggregate: measured figures when there are any, else simulated ones,
 * never a mix:
 *   efficiency   achieved FLOP/s of the largest gemm_fwd over the built-in peak
 *   intra_gbps   the all-reduce bus bandwidth inside the node (largest message)
 *   pcie_gbps    the slower of pinned host→device and device→host
 *   overlap      the larger overlap_slowdown ratio (cluster-wide)
 *   inter-node   per node pair probed (link probes: rows of link class
 *                "inter-node", labels node and peer), the slower of send/recv and
 *                all-reduce bus bandwidth at the largest message, as a "links"
 *                entry; pairs never probed keep the built-in ib100
 * What was not measured keeps the built-in figure of the matching GPU type
 * (tsl_gpu_match_model), and the sources say so.
 *
 * Errors: a name no worker registered under is TSL_E_INVALID naming
 * "cluster.registered.nodes"; no online worker with GPUs, a GPU model with
 * neither built-in figures nor a usable profile, or more GPU models than
 * TSL_REGISTRY_MAX_PROFILES are TSL_E_PRECONDITION saying what to do.
 *
 * The profiles to price layers by go to tsl_registry_attach_profiles
 * (registry_plan.h); the keys to tsl_plan_request_decode_registered (request.h),
 * which records them in the request JSON that stale-marking searches.
 *
 * Ownership: out owns json and sources; free with tsl_registry_cluster_free
 * (also after a failure).
 */
#ifndef TSL_REGISTRY_CLUSTER_H
#define TSL_REGISTRY_CLUSTER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "registry_plan.h"
#include "store.h"

typedef struct tsl_registry_cluster {
    char *json;      /* the cluster document (malloc'd) */
    json_t *sources; /* strings: where each figure came from */
    tsl_registry_profile_ref_t profiles[TSL_REGISTRY_MAX_PROFILES];
    size_t n_profiles;
    /* the profile keys a newer report of these models changes (store_registry.h):
     * the profiles used, and both kinds of a model planned on built-in figures */
    char keys[2 * TSL_REGISTRY_MAX_PROFILES][300];
    const char *key_ptrs[2 * TSL_REGISTRY_MAX_PROFILES];
    size_t n_keys;
    /* "host (why)": offline, stopped, without GPUs, not named ... */
    char left_out[TSL_REGISTRY_MAX_LEFT_OUT][128];
    size_t n_left_out;
} tsl_registry_cluster_t;

/* Builds out (zeroed here) from the store at time now; worker_timeout_s as the
 * daemon's [registry] worker_timeout_s (0: three heartbeat intervals). */
int tsl_registry_cluster_build(tsl_store_t *s, const char *const *nodes, size_t n_nodes,
                               int64_t now, uint32_t worker_timeout_s, tsl_registry_cluster_t *out,
                               tsl_err_t *err);
void tsl_registry_cluster_free(tsl_registry_cluster_t *rc);

#endif
