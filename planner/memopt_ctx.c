/*
 * memopt_ctx.c — the per-device context of a device group, read off a cluster.
 */
#include "memopt.h"

#include <math.h>

int tsl_memopt_ctx_from_cluster(tsl_memopt_ctx_t *ctx, const tsl_cluster_t *c, uint32_t first,
                                uint32_t n, uint64_t mem_limit_bytes, tsl_err_t *err)
{
    if (ctx == NULL || c == NULL)
        return tsl_err_set(err, "memopt: no context or cluster given");
    if (n == 0 || first >= c->n_devices || n > c->n_devices - first)
        return tsl_err_set(err, "devices: [%u, %u) is not inside the cluster's %u devices", first,
                           first + n, c->n_devices);
    double flops = INFINITY, pcie = INFINITY;
    uint64_t mem = UINT64_MAX, cpu = UINT64_MAX;
    uint32_t per_node = 1;
    bool nvlink = true;
    for (uint32_t d = first; d < first + n; d++) {
        const tsl_gpu_spec_t *g = tsl_cluster_device_gpu(c, d);
        double f = tsl_cluster_device_flops(c, d);
        if (f < flops)
            flops = f;
        if (g->pcie_bw < pcie)
            pcie = g->pcie_bw;
        uint64_t dm = tsl_cluster_device_mem(c, d);
        if (dm < mem)
            mem = dm;
        const tsl_node_t *node = &c->nodes[c->device_node[d]];
        if (node->cpu_mem_bytes < cpu)
            cpu = node->cpu_mem_bytes;
        if (node->n_gpus > per_node)
            per_node = node->n_gpus;
        double intra = node->intra_bw > 0.0 ? node->intra_bw : g->intra_bw;
        if (intra <= g->pcie_bw)
            nvlink = false;
    }
    double bw = tsl_cluster_group_bw(c, first, 1, n);
    ctx->zero_degree = n;
    ctx->flops_per_s = flops;
    ctx->pcie_bytes_per_s = pcie;
    ctx->coll_bytes_per_s = n > 1 ? bw : pcie;
    /* No NVLink (a node's GPU-GPU link no faster than PCIe): the collectives use
     * the same PCIe links as the host copies. */
    ctx->coll_shares_pcie = n > 1 && !nvlink;
    ctx->gpu_mem_limit_bytes = mem_limit_bytes ? mem_limit_bytes : mem;
    ctx->cpu_mem_bytes = cpu;
    ctx->devices_per_node = per_node;
    ctx->overlap_slowdown = c->overlap_slowdown >= 1.0 ? c->overlap_slowdown : 1.0;
    return tsl_memopt_ctx_validate(ctx, err);
}

int tsl_memopt_ctx_fp32(tsl_memopt_ctx_t *ctx, const tsl_cluster_t *c, uint32_t first, uint32_t n,
                        bool tf32_off, tsl_err_t *err)
{
    double flops = tsl_cluster_block_fp32_flops(c, first, n, tf32_off);
    if (!(flops > 0))
        return tsl_err_set(err, "memopt: a device of [%u, %u) has no fp32 or TF32 figure", first,
                           first + n);
    ctx->flops_per_s = flops;
    ctx->param_bytes = 4;
    return 0;
}
