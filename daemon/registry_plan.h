/*
 * registry_plan.h — a plan on registered workers prices its layers by their
 * measured block times.
 *
 * A `registered` cluster (registry_cluster.h) names the profiles it was built
 * from: a GPU model, the kind of its rows (measured or simulated) and the GPU
 * type it became in the cluster. For each, the store's aggregate becomes a
 * planner profile (planner/profile.h) attached to that GPU type, so the search
 * interpolates block times over micro-batch size and TP split instead of peak ×
 * efficiency. A profile without usable block times is skipped (logged): the
 * cluster's derived figures stand.
 *
 * Ownership: the profiles are borrowed by in->cluster (and its copies); free them
 * with tsl_registry_profiles_free after the search, never before.
 */
#ifndef TSL_REGISTRY_PLAN_H
#define TSL_REGISTRY_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "profile.h"
#include "request.h"
#include "store.h"

#define TSL_REGISTRY_MAX_PROFILES 8u
#define TSL_REGISTRY_MAX_LEFT_OUT 64u

typedef struct tsl_registry_profiles {
    tsl_profile_t *p[TSL_REGISTRY_MAX_PROFILES];
    tsl_profile_use_t use[TSL_REGISTRY_MAX_PROFILES]; /* what attaching p[i] replaced */
    size_t n;
    /* what the plan says about its figures: each attached profile's
     * tsl_profile_describe line (with its calibration), "; "-separated */
    char line[1024];
    /* the registered workers the cluster left out (offline, stopped, no GPUs):
     * "host (why)" each, for the plan's figures.workers_left_out */
    char left_out[TSL_REGISTRY_MAX_LEFT_OUT][128];
    size_t n_left_out;
} tsl_registry_profiles_t;

/* A GPU model whose aggregated profile a registered cluster used. */
typedef struct tsl_registry_profile_ref {
    char model[128]; /* as registered: "NVIDIA H100 80GB HBM3" */
    bool simulated;  /* the kind of its rows used (never mixed) */
    char type[32];   /* its GPU type in the cluster: "H100-80G-sim" */
} tsl_registry_profile_ref_t;

/* Attaches the profiles of used[0 .. n_used) to in->cluster. 0 (out filled,
 * maybe empty; left_out zeroed), -1 only when out of memory. */
int tsl_registry_attach_profiles(tsl_store_t *s, tsl_plan_input_t *in,
                                 const tsl_registry_profile_ref_t *used, size_t n_used,
                                 tsl_registry_profiles_t *out, tsl_err_t *err);
void tsl_registry_profiles_free(tsl_registry_profiles_t *ps);

#endif
