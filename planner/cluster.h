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
    char name[32];          /* "A100-80G" */
    uint64_t mem_bytes;     /* device memory */
    double peak_flops;      /* dense fp16/bf16 tensor-core peak, FLOP/s */
    double efficiency;      /* achieved fraction of peak on Transformer GEMMs, (0, 1] */
    double intra_bw;        /* default intra-node bus bandwidth, bytes/s */
    double pcie_bw;         /* host<->device bandwidth, bytes/s */
    const char *source;     /* where the figures come from */
    double mem_bw;          /* datasheet device-memory bandwidth, bytes/s; 0 = unknown (the
                                 cost model then counts FLOPs only: docs/cost-model.md) */
    double fp8_peak_flops;  /* dense FP8 (E4M3/E5M2) tensor-core peak, FLOP/s; 0 = no FP8
                              tensor cores (Ampere and older): FP8 plans are refused */
    double fp8_efficiency;  /* e_max of its FP8 GEMMs (a published FP8 MAMF scaled as the
                              bf16 one: cluster_hw.c); 0 = unmeasured, the bf16 efficiency */
    double fp4_peak_flops;  /* dense FP4 (NVFP4, E2M1) tensor-core peak, FLOP/s; 0 = no FP4
                              tensor cores (Hopper and older): nvfp4 plans are refused */
    double a2a_ratio;       /* NCCL's all-to-all bus bandwidth over its ring's inside one
                              NVLink domain, a published pair on the same part (cluster_hw.c);
                              0 = none published: priced at the ring's (tsl_gpu_a2a_ratio) */
    double fp32_peak_flops; /* non-tensor fp32 FMA peak, FLOP/s (datasheet); 0 = not known */
    double tf32_peak_flops; /* dense TF32 tensor-core peak, FLOP/s (datasheet); 0 = no TF32
                               (Volta, Turing and older) or not known */
    bool no_bf16;           /* no bf16 tensor cores (compute capability 7.x: Volta, Turing),
                               where the stacks train 16-bit mixed precision in fp16 with a
                               loss scaler (cost.h knobs.fp16); false: bf16 runs at
                               peak_flops, as on every part from Ampere and CDNA3 on */
    double host_scale;      /* host CPU time per eager PyTorch op of the system this part ships
                               in, over the x86 host TSL_ROOFLINE_HOST_OP_S was measured on (a
                               published pair: cluster_hw.c; a cluster file's gpu_types
                               may give one, docs/cluster-format.md); 0 = 1, an x86 host.
                               Priced where the built-in host op is used (cost.c
                               tsl_cost_env_init; cost model 171, before only the MoE
                               stretch after the sync) */
    double hybridep_nvl_bw; /* HybridEP's dispatch / combine kernels inside one NVLink domain,
                               bus bytes/s (with TSL_HYBRIDEP_PEER_S per peer): a published
                               kernel-only sweep of the part's domain (cluster_hw.c); 0 =
                               none published: priced as NCCL's all-to-all there (cost.c
                               ep_a2a_s; cost model 199) */
} tsl_gpu_spec_t;

typedef struct tsl_link_spec {
    const char *name;   /* "ib100", "ib400", "eth10", ... */
    double bw;          /* bytes/s, bus bandwidth of one NIC between two nodes: NCCL's ring */
    double a2a_bw;      /* bytes/s, what one NIC carries of NCCL's all-to-all (its sends to
                         every peer, measured below the ring's: cluster_hw.c); 0 = none
                         published, the ring's (tsl_link_a2a_ratio) */
    double flex_bw;     /* bytes/s, what one NIC carries of a flex MoE dispatcher's RDMA
                         (DeepEP's, HybridEP's own kernels: one copy per token and
                         destination domain, cluster_hw.c); 0 = none published, the
                         ring's (tsl_link_flex_ratio) */
    const char *source; /* the figures' */
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
    bool nics_stated;       /* n_nics was given (a spec's NICSx, a file's "nics"), not left
                               to the one-NIC default: read by tsl_cluster_nic_warning only,
                               never priced */
} tsl_node_t;

typedef struct tsl_cluster {
    uint32_t n_nodes;
    tsl_node_t *nodes;  /* owned, n_nodes entries */
    uint32_t nodes_cap; /* entries allocated at nodes: tsl_cluster_add_node doubles it, so
                           that a 100k-node cluster is not 100k reallocations of a growing
                           array (quadratic copying where realloc moves, as under ASan) */
    uint32_t n_gpu_types;
    tsl_gpu_spec_t gpu_types[TSL_CLUSTER_MAX_GPU_TYPES];
    double inter_bw;           /* bytes/s for every node pair ... */
    double *inter_bw_matrix;   /* ... unless this n_nodes² matrix is set (owned) */
    double overlap_slowdown;   /* compute/comm contention factor, ≥ 1 (Galvatron V) */
    uint32_t nvl_domain_nodes; /* nodes per NVLink domain, consecutive from node 0
                                  (the last domain may be short); 0 when built = 1 */
    double inter_a2a_ratio;    /* what a NIC carries of NCCL's all-to-all over its ring
                                  figure (inter_bw, a matrix pair, nic_bw alike), in (0, 1];
                                  0 = 1, the ring's (tsl_cluster_inter_a2a_ratio). The link
                                  table's tsl_link_a2a_ratio where the cluster names a link */
    double inter_flex_ratio;   /* the same for a flex MoE dispatcher's RDMA (DeepEP,
                                  HybridEP: cost model 136), in (0, 1]; 0 = 1, the ring's
                                  (tsl_cluster_inter_flex_ratio); the link table's
                                  tsl_link_flex_ratio where the cluster names a link */
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
/* A link's all-to-all figure over its ring figure: a2a_bw / bw, or 1 where a2a_bw is 0. */
double tsl_link_a2a_ratio(const tsl_link_spec_t *l);
/* The cluster's inter_a2a_ratio, or 1 where it is 0 (a cluster built from bare figures). */
double tsl_cluster_inter_a2a_ratio(const tsl_cluster_t *c);
/* A link's flex-dispatcher figure over its ring figure: flex_bw / bw, or 1 where flex_bw
 * is 0. */
double tsl_link_flex_ratio(const tsl_link_spec_t *l);
/* The cluster's inter_flex_ratio, or 1 where it is 0. */
double tsl_cluster_inter_flex_ratio(const tsl_cluster_t *c);

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

/*
 * The one-NIC trap (docs/cluster-format.md "One NIC or eight"). "16x8xH100-80G:ib400"
 * is ONE 400 Gb/s NIC per node, but NVIDIA's 8-GPU DGX/HGX boards of A100, H100, H200,
 * B200 and B300 carry eight, one per GPU (rail-optimised): a DGX line written so is
 * priced with 1/8 of its network. True, with one line in buf (at most cap bytes)
 * saying what was understood and how to write eight, when c has two or more nodes
 * (one node has no network) and a node of 8 or more GPUs of those families (by
 * name: "H100-80G", "h100-slow") has one NIC that nobody stated (nics_stated false:
 * a spec without NICSx, a file's node entry without "nics"); false and buf "" else.
 * "1xib400" or "nics": 1 says one NIC and keeps it quiet. spec: the short spec c
 * was read from, quoted rewritten in the line; NULL for a cluster file. Pure: the
 * caller prints it (tesselctl on stderr, tesseld in Plan.notes). Never an error:
 * such clusters exist and price as written.
 */
bool tsl_cluster_nic_warning(const tsl_cluster_t *c, const char *spec, char *buf, size_t cap);

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
/* The fp32-training GEMM rate of the block's slowest device (tsl_gpu_fp32_flops_as: TF32
 * or, with tf32_off, the fp32 FMA peak, × e_max); 0 when a device of the block has no
 * figure for it (fp32 plans refused: tsl_fp32_ok). */
double tsl_cluster_block_fp32_flops(const tsl_cluster_t *c, uint32_t first, uint32_t n,
                                    bool tf32_off);
/* The GPU types of devices [*dev, end), a node at a time (a node's GPUs are of one
 * type), each given only where it differs from the node before's — a block's minima
 * read each type once. Start with *seen = UINT32_MAX; NULL past the end. */
const tsl_gpu_spec_t *tsl_cluster_next_type(const tsl_cluster_t *c, uint32_t *dev, uint32_t end,
                                            uint32_t *seen);
/* A GPU's sustained bf16 GEMM rate: peak_flops × efficiency. */
double tsl_gpu_flops(const tsl_gpu_spec_t *g);
/* A GPU's sustained FP8 GEMM rate: fp8_peak_flops × fp8_efficiency (× efficiency where
 * no FP8 figure is known); 0 without FP8 tensor cores. */
double tsl_gpu_fp8_flops(const tsl_gpu_spec_t *g);
/* Its sustained FP4 GEMM rate: fp4_peak_flops × the FP8 e_max (no FP4 matmul
 * sweep is published: docs/cost-model.md "NVFP4"); 0 without FP4 tensor cores. */
double tsl_gpu_fp4_flops(const tsl_gpu_spec_t *g);
/* The peak an fp32 training step's GEMMs run at: the dense TF32 tensor peak where the
 * GPU has one (torch 1.7–1.11's default allow_tf32), else its fp32 FMA peak; 0 when
 * neither is known (fp32 plans refused on it: docs/cost-model.md "fp32 training"). */
double tsl_gpu_fp32_peak(const tsl_gpu_spec_t *g);
/* The peak an fp32 step's GEMMs run at with TF32 off (tf32_off: a stack under PyTorch's
 * default allow_tf32 False since 1.12, cost.h knobs.tf32_off): the fp32 FMA peak, 0 when
 * not known; tsl_gpu_fp32_peak otherwise. */
double tsl_gpu_fp32_peak_as(const tsl_gpu_spec_t *g, bool tf32_off);
/* That peak × the GPU's e_max. */
double tsl_gpu_fp32_flops_as(const tsl_gpu_spec_t *g, bool tf32_off);
/* Whether TF32 prices nothing on c: every node's GPU runs an fp32 step's GEMMs at the same
 * peak with TF32 on and off (tsl_gpu_fp32_peak_as), as a GPU without TF32 tensor cores
 * does (TITAN RTX, V100, T4, 2080 Ti: tf32_peak_flops 0). An fp32 plan on such a cluster
 * is priced as with TF32 off whatever its stack sets (knobs.tf32_off), so it records
 * tf32_off and the stacks' exports take it (docs/cost-model.md "TF32 off under a
 * stack's target"). False where a GPU has no fp32 figure (fp32 refused on it). */
bool tsl_cluster_tf32_moot(const tsl_cluster_t *c);
/* The first GPU type of c without bf16 tensor cores (tsl_gpu_spec_t.no_bf16: V100, T4,
 * TITAN RTX, 2080 Ti), NULL where every one has them. A cluster with one such GPU trains
 * 16-bit mixed precision in fp16 everywhere (cost.h knobs.fp16, docs/cost-model.md "fp16
 * mixed precision"): bf16 there is refused naming it. */
const tsl_gpu_spec_t *tsl_cluster_no_bf16(const tsl_cluster_t *c);
/* The first GPU type of c on which no fused (flash) attention kernel of Megatron-LM's
 * stack runs, NULL where every one runs one: compute capability below 8.0, which
 * no_bf16 marks (V100 sm70; T4, TITAN RTX, 2080 Ti sm75). FlashAttention-2 and cuDNN's
 * fused attention need sm80 (Transformer Engine d0067d0
 * transformer_engine/pytorch/attention/dot_product_attention/utils.py
 * get_attention_backend: both disabled "for compute capability < sm80", leaving its
 * UnfusedDotProductAttention), and Transformer Engine supports Ampere and later
 * (README.rst, System Requirements), so Megatron-LM runs there with
 * --transformer-impl local, whose DotProductAttention is the unfused core
 * (docs/cost-model.md "Attention on GPUs older than Ampere"). */
const tsl_gpu_spec_t *tsl_cluster_no_flash(const tsl_cluster_t *c);
/* Whether it is a data-centre Blackwell part (B200, GB200, ... by name: "B" or "GB"),
 * compute capability 10.x: MX tensor cores (mxfp8), and cuBLASLt FP8 GEMMs that take
 * every operand layout, not Hopper's TN alone (Transformer Engine's
 * nvte_is_non_tn_fp8_gemm_supported: sm 100-119 and 130+, release_v2.16
 * common/transformer_engine.cpp; docs/cost-model.md "FP8"). */
bool tsl_gpu_is_blackwell(const tsl_gpu_spec_t *g);
/* What an all-to-all inside one NVLink domain gets of the ring's bus bandwidth:
 * a2a_ratio, or 1 where none is published. The ratio is the part's, so it holds for
 * a measured ring figure (a profile's intra_bw) as for the built-in one. */
double tsl_gpu_a2a_ratio(const tsl_gpu_spec_t *g);
/*
 * An all-reduce's bus bandwidth inside one NVLink domain by message size, measured
 * (cost model 139): NCCL's ring busbw rises with the buffer — on Galvatron's A100 node
 * from 100 GB/s at 16 MiB to 200 at 256–512 MiB and 231 at 1 GiB over 8 GPUs — where
 * the part's intra_bw is one figure for every size (the A100's 150: that node's mean
 * over a 16–512 MiB sweep). A curve holds, per group size, the measured busbw over
 * the built-in intra_bw of the same node; NULL where a part has none measured (every
 * part but the A100: their intra_bw stays flat). cluster_hw.c has the data.
 */
typedef struct tsl_ar_curve tsl_ar_curve_t;
const tsl_ar_curve_t *tsl_gpu_ar_curve(const tsl_gpu_spec_t *g);
/* The curve's busbw over its reference at n ranks and M = bytes (the whole buffer):
 * the largest measured group size ≤ n (the smallest where n is below it), linear in
 * log2 M between measured sizes, the end figures beyond them. > 0. */
double tsl_ar_curve_shape(const tsl_ar_curve_t *c, uint32_t n, double bytes);
/* The least measured buffer, bytes: below it the curve is a floor under NCCL's tuner
 * (tsl_cluster_coll_allreduce_s), from it on the measured time itself. */
double tsl_ar_curve_min_bytes(const tsl_ar_curve_t *c);
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

/*
 * Collectives as NCCL's own tuner prices them (NVIDIA/nccl v2.30.7-1, commit
 * 73cf112295c3, 2026-06-04: src/graph/tuning.cc, ncclTopoTuneModel and
 * ncclTopoGetAlgoTime; src/enqueue.cc, topoGetAlgoInfo; docs/cost-model.md
 * "Collectives"). For each algorithm a and protocol p NCCL predicts
 *     time(a, p) = α(a, p, n, k) + M / algbw(a, p)
 * and runs the least; Tessel does the same over the choices NCCL has on a
 * DGX/HGX-like topology: all-reduce ring or tree, all-gather and reduce-scatter
 * ring or PAT, each in LL, LL128 or Simple (PAT: Simple only). NVLS, CollNet and
 * PCIe-only nodes (PCI latencies, LL128 off) are not modelled.
 *
 * Bandwidth: Tessel's bus bandwidth bw of the group (the Simple ring's, as
 * nccl-tests reports it; tsl_cluster_dim_busbw) times NCCL's protocol factors:
 *   ring   LL min(bw/2, cap_LL) (8-byte lines with 4 data bytes), LL128 0.92·bw
 *          (120 data bytes of each 128), Simple bw
 *   tree   bw_t = 0.92·bw; LL min(bw_t/3.8, cap_LL), LL128 bw_t·7/9 in one domain,
 *          bw_t·120/128 across domains, Simple bw_t; each × NCCL's tree correction
 *          for the message size (treeCorrectionFactor, 64 B .. 256 MB)
 *   PAT    0.75·bw
 *   cap_LL (llMaxBws) 141 GB/s in one domain (the Hopper row), 39.0 on 2
 *          domains, 20.4 on more (the Intel-host rows)
 * M the full buffer: ring all-reduce 2(n−1)/n · M, tree 2 · M, ring all-gather
 * (n−1)/n · M, PAT M over that bandwidth.
 *
 * Latency, µs in NCCL (seconds here), n ranks on k NVLink domains (NCCL's nodes):
 *   ring all-reduce   base + (2(n−1) − 2(k−1))·intra + 2(k−1)·inter  (× 1.4 Simple, k > 1)
 *   ring all-gather   base + ((n−1) − (k−1))·intra + (k−1)·inter
 *   tree all-reduce   base_t + 2·((⌊n/k⌋ − 1)·nvl_t + ⌊log2 k⌋·net_t)
 *   PAT all-gather    8.0 + ⌊log2 k⌋·14/3.5 + 2.8·n         (only when n = k)
 *             LL    LL128  Simple
 *   base      6.6   14.0   8.4       ring baseLat
 *   base_t    6.8   14.0   8.4       tree baseLat
 *   nvl       0.6   1.9    3.4       ring hwLat NVLink: intra
 *   nvl_t     0.6   1.25   4.0       tree hwLat NVLink
 *   net       2.7   4.0    14.0      ring hwLat NET: inter
 *   net_t     5.0   8.5    14.0      tree hwLat NET; also the ring's inter when n = k
 *   overhead  1.0   1.0    3.0       ring across domains: intra = max(nvl, overhead)
 * (network post overhead, Intel hosts). The constants are the Hopper (sm90)
 * generation's; Ampere's differ only in cap_LL in one domain (87.7 GB/s, which
 * A100's 150 GB/s NVLink figure halved does not reach), Volta's in the ring's 1.4
 * (1.9). Not modelled: per-channel caps (Tessel has no channel count), the
 * 0.85 of a tree whose NIC traffic crosses one GPU, and the size
 * condition of the ring's 1.4 (64 B per channel and rank).
 */
enum { TSL_NCCL_LL, TSL_NCCL_LL128, TSL_NCCL_SIMPLE, TSL_NCCL_PROTOS };
enum { TSL_NCCL_RING, TSL_NCCL_TREE, TSL_NCCL_PAT, TSL_NCCL_ALGOS };

/* NCCL's latency α of each choice for one group shape. +INFINITY where NCCL has
 * no such choice (tree for all-gather, PAT for all-reduce, PAT unless n = k, PAT
 * in LL/LL128). All zero (n = 0): no NCCL model — the bandwidth term alone
 * (PAPER mode, unused dimensions). */
typedef struct tsl_coll_lat {
    uint32_t n, k;                                /* ranks, NVLink domains */
    double ar_s[TSL_NCCL_ALGOS][TSL_NCCL_PROTOS]; /* all-reduce */
    double ag_s[TSL_NCCL_ALGOS][TSL_NCCL_PROTOS]; /* all-gather or reduce-scatter */
    double ll_cap_bw;                             /* cap_LL, bytes/s */
    /* the tree's bus figure over the ring's: > 1 on exactly two NVLink domains whose NICs
     * bind the ring (NCCL's speedIntra raised up to 2 × speedInter); 0 or 1: the ring's */
    double tree_gain;
    const struct tsl_ar_curve *ar_curve; /* the part's measured all-reduce curve inside one
                                            NVLink domain (k = 1; tsl_gpu_ar_curve), or NULL */
} tsl_coll_lat_t;

/* The choice NCCL makes (tsl_cluster_coll_*_s). */
typedef struct tsl_coll_choice {
    uint8_t algo;  /* TSL_NCCL_RING, _TREE, _PAT */
    uint8_t proto; /* TSL_NCCL_LL, _LL128, _SIMPLE */
} tsl_coll_choice_t;

/* "ring", "tree", "pat"; "LL", "LL128", "Simple" (NCCL's names); NULL past the end. */
const char *tsl_nccl_algo_name(unsigned algo);
const char *tsl_nccl_proto_name(unsigned proto);

/* Fills out with the α's of n ranks on k NVLink domains (k clamped to [1, n]);
 * n ≤ 1 gives all zero. */
void tsl_cluster_coll_lat(uint32_t n, uint32_t k, tsl_coll_lat_t *out);
/* NCCL with its tree turned off (NCCL_ALGO=^tree): lat's tree α's +INFINITY, so every
 * all-reduce takes a ring choice (cost.h knobs.nccl_no_tree). No model (n ≤ 1): as is. */
void tsl_cluster_coll_lat_no_tree(tsl_coll_lat_t *lat);

/* NCCL's predicted time of an all-reduce (all-gather, reduce-scatter) of M = bytes
 * over n ranks at bus bandwidth bw (bytes/s): the least over the choices above,
 * which goes to *choice (may be NULL). n ≤ 1 or bytes ≤ 0 gives 0; lat NULL or
 * lat->n ≤ 1 gives the ring's bandwidth term alone, 2(n−1)/n · M / bw
 * ((n−1)/n · M / bw), as Simple ring. An all-reduce inside one NVLink domain whose
 * part has a measured curve (lat->ar_curve) takes the measured time instead,
 * 2(n−1)/n · M / (bw · shape(n, M)), from the curve's least size on, and the larger
 * of the two below it (*choice stays the tuner's). No allocation, a few dozen flops. */
double tsl_cluster_coll_allreduce_s(const tsl_coll_lat_t *lat, double bytes, uint32_t n, double bw,
                                    tsl_coll_choice_t *choice);
double tsl_cluster_coll_allgather_s(const tsl_coll_lat_t *lat, double bytes, uint32_t n, double bw,
                                    tsl_coll_choice_t *choice);

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
 * its widest group (most domains). count ≤ 1 gives +INFINITY and no α; a shape
 * that does not tile the block (see tsl_cluster_dim_bw) gives 0.
 * No allocation (8 KiB of stack); O(block devices) where each node's count of
 * crossing groups is kept for the walk (up to 1024 nodes; past that a node whose
 * slot another took is counted again, up to O(block devices × GPUs per node)), one
 * tile of the block where it repeats; O(nodes touched²) more per group with a
 * bandwidth matrix.
 */
double tsl_cluster_dim_busbw(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                             uint32_t stride, uint32_t count, tsl_coll_lat_t *lat);

/*
 * The same groups' bus bandwidth for an all-to-all (nccl-tests' convention: a rank's
 * buffer B moves (n−1)/n · B, time = (n−1)/n · B / busbw): as tsl_cluster_dim_busbw
 * with each node's intra_bw × its GPU's tsl_gpu_a2a_ratio (NCCL's all-to-all, a send
 * and a receive to every peer, runs below its ring inside an NVLink domain:
 * docs/cost-model.md "All-to-all"). A group spanning domains sends m_D·(n − m_D)/n of
 * a rank's buffer off each domain D of m_D members, so its NICs (the ring's cap_D ×
 * tsl_cluster_inter_a2a_ratio: what a NIC carries of NCCL's all-to-all) bound it at
 * (n − 1)·cap_D / (m_D·(n − m_D)) (NCCL's p2p sends, PXN putting each on the
 * destination's rail). lat as tsl_cluster_dim_busbw's. Same cost.
 */
double tsl_cluster_dim_a2a_busbw(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                                 uint32_t stride, uint32_t count, tsl_coll_lat_t *lat);

/* A token's chance of having one of its routed experts in a domain that holds `share`
 * of them (the caller's routing; docs/cost-model.md "Across NVLink domains"). */
typedef double (*tsl_cluster_hit_fn)(double share, const void *ctx);

/* What a flex MoE dispatcher (HybridEP, DeepEP: one network copy per token and
 * destination domain, forwarded over NVLink there) sees of the same groups: nvl_bw the
 * slowest NVLink all-to-all figure of a domain holding ≥ 2 members (as
 * tsl_cluster_dim_a2a_busbw's inside a domain; +INF where none does); net_s the
 * network's seconds per byte of a rank's token row (one copy), the slowest domain's
 * max(in, out) / cap_D, where a domain D of m_D of the n members receives
 * (n − m_D)·hit(m_D/n) copies per token row of a rank and sends m_D·Σ_{D' ≠ D}
 * hit(m_D'/n) (0 where no group spans domains), cap_D its NICs' share at what a NIC
 * carries of the dispatcher's RDMA (tsl_cluster_inter_flex_ratio of the ring's, cost
 * model 136); domains the most domains one group touches. nvl_bw 0 where the groups
 * do not tile the block. */
typedef struct tsl_cluster_flex_bw {
    double nvl_bw; /* B/s */
    double net_s;  /* s/B */
    uint32_t domains;
} tsl_cluster_flex_bw_t;
void tsl_cluster_dim_flex_bw(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                             uint32_t stride, uint32_t count, tsl_cluster_hit_fn hit,
                             const void *ctx, tsl_cluster_flex_bw_t *out);

/* The same walks without their short-cuts (one tile of a block that repeats it,
 * each node's crossing count kept for the dimension's walk): every group walked,
 * every count counted. The same figures, slower; tests hold the fast walks to these
 * (tests/test_cluster.c). a2a: tsl_cluster_dim_a2a_busbw's figure, else
 * tsl_cluster_dim_busbw's. */
double tsl_cluster_dim_walk_plain(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                                  uint32_t stride, uint32_t count, bool a2a, tsl_coll_lat_t *lat);
void tsl_cluster_dim_flex_plain(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                                uint32_t stride, uint32_t count, tsl_cluster_hit_fn hit,
                                const void *ctx, tsl_cluster_flex_bw_t *out);

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
 * err on failure (out is then freed), naming node_order when `order` is not such a
 * permutation (a plan document's or EvaluatePlan's, read as given). */
int tsl_cluster_permute(const tsl_cluster_t *c, const uint16_t *order, tsl_cluster_t *out,
                        tsl_err_t *err);

#endif
