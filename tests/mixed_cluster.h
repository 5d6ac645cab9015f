/*
 * mixed_cluster.h — a heterogeneous cluster for the walks' fast-vs-plain tests
 * (test_cluster.c's dimension walks, test_relayout.c's layout moves): twelve nodes
 * of 8, 4 and 2 GPUs, A100 boxes and 2-GPU T4 boxes, NVLink domains of two nodes,
 * a 20 GB/s default link and, optionally, a table of pair links. Each test gives
 * its own per-node links and pairs, so the shapes it covers stay its own.
 * Header-only so that its CHECKs count in the including test (check.h).
 */
#ifndef TSL_TEST_MIXED_CLUSTER_H
#define TSL_TEST_MIXED_CLUSTER_H

#include "check.h"
#include "cluster.h"

#define MIXED_NODES 12

/* One node's links: its GPUs' NVLink/PCIe figure, its NICs and their rate. */
typedef struct mixed_links {
    double intra_bw, nic_bw;
    uint32_t n_nics;
} mixed_links_t;

/* A link between two nodes, set when the test asks for the pair table. */
typedef struct mixed_pair {
    uint32_t a, b;
    double bw;
} mixed_pair_t;

/* The GPUs of node i: 8 and 4 are A100-80G, 2 are T4. */
static inline uint32_t mixed_gpus(uint32_t i)
{
    static const uint32_t gpus[MIXED_NODES] = {8, 4, 4, 8, 2, 2, 8, 4, 4, 8, 8, 4};
    return gpus[i];
}

static inline void mixed_cluster_build(tsl_cluster_t *c, const mixed_links_t links[MIXED_NODES],
                                       const mixed_pair_t *pairs, uint32_t n_pairs)
{
    tsl_err_t err = {0};
    uint32_t a100, t4;
    tsl_cluster_init(c);
    CHECK(tsl_cluster_add_gpu_type(c, tsl_gpu_find("A100-80G"), &a100, &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_add_gpu_type(c, tsl_gpu_find("T4"), &t4, &err) == 0, "%s", err.msg);
    for (uint32_t i = 0; i < MIXED_NODES; i++) {
        tsl_node_t nd = {.n_gpus = mixed_gpus(i),
                         .gpu_type = mixed_gpus(i) == 2 ? t4 : a100,
                         .intra_bw = links[i].intra_bw,
                         .n_nics = links[i].n_nics,
                         .nic_bw = links[i].nic_bw};
        CHECK(tsl_cluster_add_node(c, &nd, &err) == 0, "%s", err.msg);
    }
    c->inter_bw = 20e9;
    c->nvl_domain_nodes = 2;
    for (uint32_t p = 0; p < n_pairs; p++)
        CHECK(tsl_cluster_set_pair_bw(c, pairs[p].a, pairs[p].b, pairs[p].bw, &err) == 0, "%s",
              err.msg);
    CHECK(tsl_cluster_finish(c, &err) == 0, "%s", err.msg);
}

#endif
