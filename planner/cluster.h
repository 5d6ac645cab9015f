/*
 * cluster.h — the GPUs a plan runs on: nodes ("islands"), devices, links.
 *
 * Devices are numbered node-major: node 0's GPUs are 0 .. n0-1, node 1's follow,
 * and so on. Every device of a node has that node's GPU type. Links come in two
 * classes: intra-node (NVLink/PCIe, one bandwidth per node) and inter-node (one
 * bandwidth for every node pair, or a full per-pair matrix for heterogeneous
 * networks). A collective over a group of devices runs at the bandwidth of the
 * slowest link the group spans (AMP Eq. 3) in the paper's cost mode.
 *
 * Topology (cluster_topo.c, docs/cost-model.md "Collectives"): each node has
 * n_nics network interfaces; the inter-node figure (inter_bw or a matrix pair) is
 * the bus bandwidth of ONE NIC's path between two nodes. An NVLink domain is a run
 * of nvl_domain_nodes consecutive nodes whose GPUs reach each other over NVLink
 * (default 1: the node; an NVL72 rack is 18 nodes of 4). Collectives of the default
 * cost mode run NCCL's ring/tree over that topology, the NICs of a node shared by
 * every group crossing them at the same time.
 *
 * Units: bandwidths are bytes per second of *bus bandwidth* as nccl-tests report
 * it, so a ring all-reduce of M bytes over n devices takes 2(n−1)/n · M / bw;
 * memory in bytes; compute in FLOP/s.
 *
 * The built-in hardware table (tsl_gpu_find / tsl_link_find) is what the daemon
 * falls back to before any worker has reported measured profiles; each entry
 * names its source.
 */
#ifndef TSL_CLUSTER_H
#define TSL_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* 32768 nodes of 4 (GB200 trays) or 12,500+ of 8 reach 131072 devices: a
 * 100,000-GPU cluster fits either way. Node indices travel as uint16_t
 * (tsl_cluster_permute, plan.h node_order), so the node limit stays <= 65536. */
#define TSL_CLUSTER_MAX_NODES     32768u
#define TSL_CLUSTER_MAX_DEVICES   131072u
#define TSL_CLUSTER_MAX_GPU_TYPES 8u
/* A per-pair bandwidth matrix is n_nodes² doubles: allowed up to this many nodes
 * (32 MiB); larger clusters give one inter-node figure (plus NICs, domains). */
#define TSL_CLUSTER_MAX_MATRIX_NODES 2048u

typedef struct tsl_gpu_spec {
    char name[32];         /* "A100-80G" */
    uint64_t mem_bytes;    /* device memory */
    double peak_flops;     /* dense fp16/bf16 tensor-core peak, FLOP/s */
    double efficiency;     /* achieved fraction of peak on Transformer GEMMs, (0, 1] */
    double intra_bw;       /* default intra-node bus bandwidth, bytes/s */
    double pcie_bw;        /* host<->device bandwidth, bytes/s */
    const char *source;    /* where the figures come from */
    double mem_bw;         /* datasheet device-memory bandwidth, bytes/s; 0 = unknown (the
                                 cost model then counts FLOPs only: docs/cost-model.md) */
    double fp8_peak_flops; /* dense FP8 (E4M3/E5M2) tensor-core peak, FLOP/s; 0 = no FP8
                              tensor cores (Ampere and older): FP8 plans are refused */
    double fp8_efficiency; /* e_max of its FP8 GEMMs (a published FP8 MAMF scaled as the
                              bf16 one: cluster_hw.c); 0 = unmeasured, the bf16 efficiency */
} tsl_gpu_spec_t;

typedef struct tsl_link_spec {
    const char *name; /* "ib100", "ib400", "eth10", ... */
    double bw;        /* bytes/s, bus bandwidth of one NIC between two nodes */
    const char *source;
} tsl_link_spec_t;

typedef struct tsl_node {
    uint32_t n_gpus;
    uint32_t gpu_type;      /* index into tsl_cluster_t.gpu_types */
    double intra_bw;        /* bytes/s between this node's GPUs */
    uint64_t cpu_mem_bytes; /* host memory (offloading); 0 when added = unknown,
                                 which tsl_cluster_finish() replaces by
                                 TSL_DEFAULT_HOST_MEM_PER_GPU_MEM × the node's GPU memory */
    uint32_t n_nics;        /* network interfaces (rails) of the node; 0 when added = 1,
                        which tsl_cluster_finish() sets */
    double nic_bw;          /* bus bandwidth of one of its NICs, bytes/s; 0 = limited by the
                        inter-node figure of the pair alone (the usual case) */
} tsl_node_t;

typedef struct tsl_cluster {
    uint32_t n_nodes;
    tsl_node_t *nodes; /* owned, n_nodes entries */
    uint32_t n_gpu_types;
    tsl_gpu_spec_t gpu_types[TSL_CLUSTER_MAX_GPU_TYPES];
    double inter_bw;           /* bytes/s for every node pair ... */
    double *inter_bw_matrix;   /* ... unless this n_nodes² matrix is set (owned) */
    double overlap_slowdown;   /* compute/comm contention factor, ≥ 1 (Galvatron V) */
    uint32_t nvl_domain_nodes; /* nodes per NVLink domain, consecutive from node 0
                                  (the last domain may be short); 0 when built = 1 */
    uint32_t n_devices;        /* Σ n_gpus, kept by tsl_cluster_add_node */
    uint32_t *device_node;     /* derived, owned: device → node */
    uint32_t *node_first;      /* derived, owned: node → its first device */
    /* measured figures per GPU type (planner/profile.h), borrowed, NULL =
     * built-in; set by tsl_profile_attach, copied as pointers by tsl_cluster_copy */
    const struct tsl_profile *gpu_profile[TSL_CLUSTER_MAX_GPU_TYPES];
    /* corrections fitted from trials per GPU type (planner/calibrate.h),
     * borrowed, NULL = none; applied by cost.c to built-in and profiled figures alike.
     * Set by tsl_cluster_set_calib (or tsl_profile_attach of a profile that carries
     * one), copied as pointers by tsl_cluster_copy and tsl_cluster_permute. */
    const struct tsl_calib *gpu_calib[TSL_CLUSTER_MAX_GPU_TYPES];
} tsl_cluster_t;

/* Built-in hardware table. Lookups are case-insensitive; NULL if unknown. */
size_t tsl_gpu_count(void);
const tsl_gpu_spec_t *tsl_gpu_at(size_t i);
const tsl_gpu_spec_t *tsl_gpu_find(const char *name);
/* Whether a GPU as a driver names it ("NVIDIA H100 80GB HBM3", memory in
 * bytes) is of built-in type `type`: the type's family (its name without the
 * memory suffix: "H100", "RTX-TITAN") appears in the model, case-insensitively,
 * and the memory is within 15 % of the type's. tsl_gpu_match_model: the
 * matching type with the longest family, or NULL. */
bool tsl_gpu_model_matches(const char *model, uint64_t mem_bytes, const tsl_gpu_spec_t *type);
const tsl_gpu_spec_t *tsl_gpu_match_model(const char *model, uint64_t mem_bytes);
size_t tsl_link_count(void);
const tsl_link_spec_t *tsl_link_at(size_t i);
const tsl_link_spec_t *tsl_link_find(const char *name);

#define TSL_DEFAULT_OVERLAP_SLOWDOWN     1.3 /* Galvatron-BMW Sec. V */
#define TSL_DEFAULT_HOST_MEM_PER_GPU_MEM 2u

/* Homogeneous cluster: n_nodes × gpus_per_node of one GPU type; inter_bw is
 * ignored when n_nodes == 1. */
int tsl_cluster_homogeneous(tsl_cluster_t *c, uint32_t n_nodes, uint32_t gpus_per_node,
                            const tsl_gpu_spec_t *gpu, double inter_bw, tsl_err_t *err);

/*
 * Short spec: "[NODES x]GPUSxTYPE[:[NICS x]LINK][:nvlN]", e.g. "8xA100-80G",
 * "2x8xA100-40G:ib100", "4x8xA100-80G:8xib200" (eight HDR NICs per node),
 * "36x4xGB200:nvl72:4xib800" (two NVL72 racks). TYPE is a built-in GPU name, LINK
 * a built-in link name (default ib100 when more than one node), NICS the NICs per
 * node, each of LINK's bandwidth (default 1); nvlN makes runs of N GPUs (N a
 * multiple of GPUS) one NVLink domain (nvl_domain_nodes = N / GPUS, at most the
 * node count). The parts after ':' come in any order. Errors name the part of the
 * spec that is wrong.
 */
int tsl_cluster_parse_spec(tsl_cluster_t *c, const char *spec, tsl_err_t *err);

/* Adds a node; the cluster is usable after tsl_cluster_finish(). Used by the JSON
 * loader and heterogeneous descriptions. A node's intra_bw of 0 means "the GPU
 * type's intra_bw". A GPU type added twice under one name (case-insensitive) with
 * the same figures gets the same index; different figures are an error.
 * tsl_cluster_homogeneous, tsl_cluster_parse_spec and tsl_cluster_copy initialise
 * their output themselves and leave it empty (freed) on failure. */
void tsl_cluster_init(tsl_cluster_t *c);
int tsl_cluster_add_gpu_type(tsl_cluster_t *c, const tsl_gpu_spec_t *gpu, uint32_t *idx,
                             tsl_err_t *err);
int tsl_cluster_add_node(tsl_cluster_t *c, const tsl_node_t *node, tsl_err_t *err);
/* Sets inter-node bandwidth for one pair (allocates the matrix on first use).
 * Pairs never set get inter_bw in tsl_cluster_finish(); after it the matrix is
 * complete and symmetric, its diagonal 0 (unused), and inter_bw is the slowest
 * pair when it was not given. */
int tsl_cluster_set_pair_bw(tsl_cluster_t *c, uint32_t a, uint32_t b, double bw, tsl_err_t *err);
int tsl_cluster_finish(tsl_cluster_t *c, tsl_err_t *err); /* derives, validates */
void tsl_cluster_free(tsl_cluster_t *c);
int tsl_cluster_copy(tsl_cluster_t *dst, const tsl_cluster_t *src, tsl_err_t *err);

/* Lookups (device ids must be < n_devices). */
const tsl_gpu_spec_t *tsl_cluster_device_gpu(const tsl_cluster_t *c, uint32_t dev);
double tsl_cluster_device_flops(const tsl_cluster_t *c, uint32_t dev); /* peak × efficiency */
/* A GPU's sustained FP8 GEMM rate: fp8_peak_flops × fp8_efficiency (× efficiency where
 * no FP8 figure is known); 0 without FP8 tensor cores. */
double tsl_gpu_fp8_flops(const tsl_gpu_spec_t *g);
uint64_t tsl_cluster_device_mem(const tsl_cluster_t *c, uint32_t dev);
uint64_t tsl_cluster_min_device_mem(const tsl_cluster_t *c);
uint64_t tsl_cluster_max_device_mem(const tsl_cluster_t *c);
/* The link between two devices: +INF for one device, the intra-node bandwidth
 * inside a node, the slower node's inside an NVLink domain, else the pair's
 * inter-node figure (one NIC's path). */
double tsl_cluster_link_bw(const tsl_cluster_t *c, uint32_t dev_a, uint32_t dev_b);
/* NVLink domain of a node (node / nvl_domain_nodes). */
uint32_t tsl_cluster_node_domain(const tsl_cluster_t *c, uint32_t node);
/* Inter-node figure between distinct nodes a and b (matrix pair or inter_bw). */
double tsl_cluster_node_pair_bw(const tsl_cluster_t *c, uint32_t a, uint32_t b);

/* ---- topology-aware figures (cluster_topo.c; docs/cost-model.md "Collectives") ---- */

/* NCCL's latency figures (µs in NCCL, seconds here), from NCCL's own tuning model,
 * src/graph/tuning.cc (baseLat / hwLat, LL protocol — what NCCL picks for the small
 * messages where latency matters): a collective's base cost, one ring step over
 * NVLink (× 1.8 when the communicator spans nodes, as NCCL does), one step over the
 * network, one tree level over the network. */
#define TSL_NCCL_RING_BASE_S   3.6e-6
#define TSL_NCCL_TREE_BASE_S   4.4e-6
#define TSL_NCCL_NVL_RING_S    0.47e-6
#define TSL_NCCL_NVL_TREE_S    0.52e-6
#define TSL_NCCL_NVL_MULTINODE 1.8
#define TSL_NCCL_NET_RING_S    2.7e-6
#define TSL_NCCL_NET_TREE_S    5.0e-6

/* Fixed time of one collective (its α), added to the bandwidth term. */
typedef struct tsl_coll_lat {
    double ar_s; /* all-reduce: min(ring, tree) as NCCL chooses */
    double ag_s; /* all-gather or reduce-scatter: ring */
} tsl_coll_lat_t;

/* α of NCCL's collectives over n ranks on k NVLink domains (n ≥ 2, 1 ≤ k ≤ n):
 *   ring all-reduce   base + (2(n−1) − 2(k−1))·nvl + 2(k−1)·net
 *   tree all-reduce   base + 2·((n/k − 1)·nvl + ⌊log2 k⌋·net)
 *   ring all-gather   base + ((n−1) − (k−1))·nvl + (k−1)·net
 * (nvl × 1.8 when k > 1). n ≤ 1 gives zeros. */
void tsl_cluster_coll_lat(uint32_t n, uint32_t k, tsl_coll_lat_t *out);

/*
 * Bus bandwidth of one parallel dimension's groups (tiled over the block as
 * tsl_cluster_dim_bw tiles them) as NCCL runs them over the topology, all groups
 * communicating at once:
 *   - a group inside one NVLink domain: the slowest intra-node bandwidth of the
 *     nodes holding its members;
 *   - a group spanning domains: a ring whose intra-domain hops run at that intra
 *     bandwidth and whose inter-domain part, in each domain D it touches, has
 *       cap_D = Σ_{X ∈ D} rail · min(m_X, nics_X / crossing_X)
 *     m_X its members on node X, crossing_X the groups of this dimension with a
 *     member on X that span domains (they share X's NICs), rail the slowest
 *     one-NIC path between the domains it touches; the group gets min over D.
 * The dimension's figure is the slowest group's; lat (may be NULL) gets the α of
 * its widest group (most domains). count ≤ 1 gives +INFINITY and zero α; a shape
 * that does not tile the block (see tsl_cluster_dim_bw) gives 0.
 * No allocation; O(block devices × GPUs per node), O(nodes touched²) more per
 * group with a bandwidth matrix.
 */
double tsl_cluster_dim_busbw(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                             uint32_t stride, uint32_t count, tsl_coll_lat_t *lat);

/* Bandwidth each pair gets when device from_first + k sends to to_first + k for
 * every k < count at the same time (a pipeline boundary's ranks): the slowest
 * pair's, where a pair in one domain gets the link's bandwidth and a pair crossing
 * domains gets rail(X, Y) · min(1, nics_X / out_X, nics_Y / in_Y) — out_X the
 * crossing sends leaving node X, in_Y those entering node Y, each send on one NIC
 * (NCCL p2p uses the sender's nearest NIC). count 0 gives +INFINITY. */
double tsl_cluster_pairs_bw(const tsl_cluster_t *c, uint32_t from_first, uint32_t to_first,
                            uint32_t count);
bool tsl_cluster_is_homogeneous(const tsl_cluster_t *c);

/*
 * Slowest link spanned by the device group {first + k·stride : 0 ≤ k < count}
 * (AMP Eq. 3): the intra-node bandwidth of every node holding ≥ 2 of its devices
 * and the inter-node bandwidth of every pair of distinct nodes it touches.
 * count == 1 gives +INFINITY (no communication); a group that leaves the cluster
 * (or stride 0) gives 0, so that any time computed from it is +INFINITY.
 * Cost: O(nodes touched), O(nodes touched²) with a bandwidth matrix.
 */
double tsl_cluster_group_bw(const tsl_cluster_t *c, uint32_t first, uint32_t stride,
                            uint32_t count);

/*
 * Slowest link over ALL groups of one parallel dimension inside a block of
 * devices [block_first, block_first + block_size): groups of `count` devices with
 * `stride`, tiled over the block as a mesh dimension does (e.g. TP=2 inner, DP=4
 * outer in an 8-device block: TP groups {0,1},{2,3},..., DP groups {0,2,4,6},{1,3,5,7}).
 */
double tsl_cluster_dim_bw(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                          uint32_t stride, uint32_t count);
/* (block_size must divide by stride·count and lie inside the cluster, else 0.) */

/* ---- calibrations (cluster_calib.c) ---- */

/* Index of the cluster's GPU type named `name` (case-insensitive; a built-in
 * alias resolves to its table name), or -1. */
int tsl_cluster_gpu_index(const tsl_cluster_t *c, const char *name);

/* Attaches cal (borrowed: it must outlive c and its copies; NULL detaches) to the
 * GPU type named `gpu`. TSL_E_PRECONDITION when the cluster has no such type. */
int tsl_cluster_set_calib(tsl_cluster_t *c, const char *gpu, const struct tsl_calib *cal,
                          tsl_err_t *err);

/* The calibration of the GPU type all devices of [first, first + size) share, or
 * NULL (none, or a block of types with different calibrations). */
const struct tsl_calib *tsl_cluster_block_calib(const tsl_cluster_t *c, uint32_t first,
                                                uint32_t size);

/* One-line description, e.g. "2 nodes x 8 A100-40G (40 GiB), intra 150 GB/s, inter 10.6 GB/s";
 * NICs per node ("8 NICs/node") and the NVLink domain ("NVLink domain 18 nodes")
 * follow when not the default. Returns the length it needed, as snprintf does. */
size_t tsl_cluster_describe(const tsl_cluster_t *c, char *buf, size_t cap);

/* A copy of c into out (initialised here) with its nodes taken in `order` (a
 * permutation of 0 .. n_nodes − 1), pair bandwidths following them; stages laid
 * over the devices in node order are thereby re-placed (AMP 3.6). Returns -1 with
 * err on failure (out is then freed). */
int tsl_cluster_permute(const tsl_cluster_t *c, const uint16_t *order, tsl_cluster_t *out,
                        tsl_err_t *err);

#endif
