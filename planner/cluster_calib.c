/*
 * cluster_calib.c — which GPU type of a cluster a calibration (calibrate.h)
 * belongs to, and which one a block of devices uses. The calibration hangs on
 * the GPU type, not on a measured profile, so that built-in and profiled
 * figures are corrected the same way (docs/cost-model.md, "Calibration").
 */
#include "cluster.h"

#include <strings.h>

int tsl_cluster_gpu_index(const tsl_cluster_t *c, const char *name)
{
    const tsl_gpu_spec_t *bi = tsl_gpu_find(name);
    const char *want = bi != NULL ? bi->name : name;
    for (uint32_t i = 0; i < c->n_gpu_types; i++)
        if (strcasecmp(c->gpu_types[i].name, want) == 0 ||
            strcasecmp(c->gpu_types[i].name, name) == 0)
            return (int)i;
    return -1;
}

int tsl_cluster_set_calib(tsl_cluster_t *c, const char *gpu, const struct tsl_calib *cal,
                          tsl_err_t *err)
{
    int idx = tsl_cluster_gpu_index(c, gpu);
    if (idx < 0)
        return tsl_err_setc(err, TSL_E_PRECONDITION,
                            "calibration: it is for %s, the cluster has no such GPU type (%s%s)",
                            gpu, c->n_gpu_types ? c->gpu_types[0].name : "none",
                            c->n_gpu_types > 1 ? ", ..." : "");
    c->gpu_calib[idx] = cal;
    return 0;
}

const struct tsl_calib *tsl_cluster_block_calib(const tsl_cluster_t *c, uint32_t first,
                                                uint32_t size)
{
    if (c->n_devices == 0 || size == 0 || (uint64_t)first + size > c->n_devices)
        return NULL;
    const struct tsl_calib *cal = c->gpu_calib[c->nodes[c->device_node[first]].gpu_type];
    for (uint32_t dev = first; cal != NULL && dev < first + size;) {
        uint32_t node = c->device_node[dev];
        if (c->gpu_calib[c->nodes[node].gpu_type] != cal)
            return NULL;
        dev = c->node_first[node] + c->nodes[node].n_gpus;
    }
    return cal;
}
