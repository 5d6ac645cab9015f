/*
 * cluster_hw.c — the built-in hardware table: what the daemon assumes about a GPU
 * or a link before any worker has measured it.
 *
 * How the figures were chosen (docs/cluster-format.md repeats this):
 *
 * peak_flops   dense fp16/bf16 tensor-core peak with fp32 accumulation (what mixed
 *              precision training uses), from the vendor datasheet.
 * efficiency   e_max: the fraction of that peak a large, deep GEMM sustains;
 *              planner/gemm_eff.h scales it down by the GEMM's shape (grid
 *              occupancy of the SMs, per-tile fixed cost against k). The curve was
 *              fitted, with a burst e_max of 0.777, to this project's measured cuBLAS
 *              table (deploy/profiles/h100-80g.json, 38 bf16 shapes of 10-iteration
 *              medians, short bursts, SM 1980 MHz at start: median residual 5 %).
 *              The Maximum Achievable Matmul FLOPS table (Bekman, ml-engineering,
 *              compute/accelerator: A100 SXM bf16 267.9 TFLOPS = 85.9 %, H100 SXM
 *              792.1 = 80.1 %, best shape of a sweep, a boost-clock burst) sets the
 *              rest. A100 0.82: its A100 row taken through the H100's ratio of fitted
 *              curve to that table at its best shape (0.90); Megatron-LM's 57 %
 *              end-to-end HFU (530B, 1T on A100, README; Korthikanti et al. 2022) sits
 *              below it as it must. GPUs with a published MAMF figure (the same table,
 *              bf16, current edition) take it times the H100's burst-fit / MAMF ratio
 *              0.777 / 0.801 = 0.97: MI325X 60.4 % -> 0.586, MI300X 51.4 % -> 0.499.
 *              A GPU with a published sustained figure takes that instead, times the
 *              same 0.97 (MSMF; Blackwell since cost model 56, Hopper since 130): a
 *              dense training step holds the GPU at its power limit, where the SM
 *              clock settles far below the boost clock MAMF's short bursts run at
 *              (ml-engineering branch fast-mamf, 082816f, 2026-08-10, torch
 *              2.13.0+cu130, one GPU with its siblings idle). B200 MSMF 1456.3/2250 =
 *              64.7 % -> 0.628 (~994 W at 1339 against 1965 MHz; its MAMF 1770.9);
 *              GB200 has no published MSMF: its MAMF 72.9 % times the B200's MSMF /
 *              MAMF 1456.3 / 1770.9 = 0.822 (the same die; assumed) -> 0.581. GH100
 *              (EFF_GH100): the H200's MSMF 708.5/989 = 71.6 % (8192 x 8448 x 20480,
 *              ~693 W at 1465 against 1980 MHz; its MAMF 841.9; 698.6 with all 8 GPUs
 *              of the node busy at once, 1405-1527 MHz, the branch's
 *              benchmarks/README.md) -> 0.695, for every GH100 part: H200, H100 SXM
 *              and H800 (the same die, SMs, boost clock and 700 W limit; no H100 MSMF
 *              is published: assumed — its HBM3 draws less than the H200's HBM3e,
 *              which leaves the SMs as much power or more). The 500 W Grand Teton
 *              H100-96G takes these times what a training step on the HBM2e H100
 *              keeps at a 500 W limit of its 700 W rate, 0.915 (Mayr et al. 2026,
 *              arXiv:2603.16164, Table 4; gemm_eff.h TSL_GH100_500W_SETTLED, cost
 *              model 143): 0.636, FP8 0.578, its attention shares likewise. The
 *              burst fit priced 8192 x 8448 x 20480 at 762 TFLOP/s, 8 % above the
 *              sustained 708.5, and 8192^3 at 749 where the table measured 715 after
 *              half a second of warm-up GEMMs (667-726 over four H100s,
 *              bench/results/README.md); 0.695 prices them 683 (H200) and 670 (H100)
 *              (docs/cost-model.md "Sustained clocks").
 *              Other GPUs keep an assumed constant as e_max (no data): 0.5, T4 and
 *              L4 0.4 because their 70 W-class cap throttles clocks under sustained
 *              tensor load.
 * intra_bw     effective bus bandwidth of NCCL's Simple ring inside one NVLink domain
 *              (what Tessel's tuner prices, docs/cost-model.md "Collectives"; NVLS is not
 *              modelled). A100: Galvatron's fixture measured 138–159 GB/s (154 GB/s over
 *              8 GPUs), taken as 150 (the figure Galvatron's search prices with).
 *              Galvatron's hardware profiler, in its default nccl mode, runs nccl-tests'
 *              all_reduce_perf from --start_mb 16 to --end_mb 512 and records its "Avg bus
 *              bandwidth", the mean over that sweep of training-sized messages on its own
 *              node (the fixture does not say which mode or sizes produced it). NVIDIA's
 *              best-case large-message figure runs higher: its GTC25 talk S72583 (slide
 *              12, "NCCL Tests Allreduce Bus Bandwidth in GB/s", 8 GPUs in one node,
 *              NVLink SHARP off;
 *              a slide read off its bar chart, reproduced in ml-engineering
 *              network/README.md at 744d01e, no text gives the A100 figure) has A100
 *              232, H100 370, B200 700, GB200 NVL72 680 over 32 GPUs. The rule: every
 *              NVLink GPU with a published nccl-tests ring busbw gets it x the A100's
 *              150 / 232 = 0.6466 (the one GPU where both Galvatron's figure and NVIDIA's
 *              are measured), so the parts keep the A100's ratio of effective to
 *              best-case bandwidth; the raw figures made an H100 2.47x an
 *              A100 against ~1.6x on the hardware (bench/published/README.md, "NVLink
 *              figures"). H100 370 (also NCCL's maintainer in NVIDIA/nccl-tests#212 and
 *              NVIDIA/nccl#1442: "370GB/s ... BusBw when running non-allreduce
 *              operations, or when running with NCCL_ALGO=RING"; users measured 365–370
 *              with NCCL_ALGO=RING, NVIDIA/nccl#1455, 368.8 with NVLS off,
 *              NVIDIA/nccl-tests#309) -> 55500 / 232 = 239.2 -> 239 for H100, H100-96G
 *              and H200 (the same NVLink4: ml-engineering measured 367.2 ring
 *              all-reduce, 361.4 all-gather, 362.9 reduce-scatter on 8 H200 at 16 GiB);
 *              B200 700 (ml-engineering's p6-b200 node: 682.2 with NVLS off) -> 105000 /
 *              232 = 452.6 -> 453; GB200 680 -> 102000 / 232 = 439.7 -> 440 (the rack's
 *              domain, spec ':nvl72'). No published nccl-tests ring busbw was found for
 *              the H800, V100 or MI300X/MI325X, so they keep assumed figures, the A100
 *              fixture's 154 / 300 = 0.51 of the per-direction link rate (cost model 30):
 *              H800 (NVLink cut to 200 GB/s/direction) 102 — DeepSeek measured 160 GB/s
 *              unidirectional on its H800s (DeepSeek-V3 report Sec. 3.2.2; DeepEP's
 *              README, intranode 153–158 GB/s), a point-to-point rate, not an
 *              nccl-tests busbw; the one 8xH800 busbw published, 215 GB/s all-reduce at
 *              NCCL's defaults (NVIDIA/nccl#1374), is above the wire, so NVLS, not the
 *              ring. V100 NVLink2 150 GB/s → 75; MI300X/MI325X Infinity Fabric 448 GB/s
 *              per direction → 228 (ml-engineering's all_reduce_bench.py measured 312.9
 *              GB/s busbw on 8 MI300X, a torch.distributed all-reduce with RCCL's own
 *              algorithm choice, not an rccl-tests ring figure: not taken). PCIe-only
 *              nodes: T4 6.25 GB/s
 *              as AMP measured on g4dn.12xlarge (50 Gb/s, AMP Sec. 4.3); RTX TITAN
 *              4.87 GB/s, Galvatron-BMW's testbed as Galvatron's profiler measured it
 *              (8-GPU NCCL all-reduce, 0.2153 ms per MiB of ring bus traffic: cost
 *              model 59); other PCIe 3.0 boxes without NVLink (2080 Ti) 10 GB/s, ~63%
 *              of the 15.75 GB/s x16 line rate since rings cross PCIe switches and the
 *              inter-socket link (assumed; the TITAN box reached 31 %); PCIe 4.0
 *              boxes (L40S, L4, A10G) 20 GB/s, the same 63 % of 31.5 GB/s.
 * a2a_ratio    NCCL's all-to-all inside an NVLink domain over its ring (cost model 48,
 *              docs/cost-model.md "All-to-all"): the same talk's slide 13 ("NCCL Tests
 *              Alltoall Bus Bandwidth", 8 GPUs; read off its bar chart in
 *              ml-engineering network/images/all-to-all-bw-2025.png at 744d01e) over
 *              slide 12's ring all-reduce: A100 210 / 232, H100 320 / 370 (also H100-96G
 *              and H200, the same NVLink4), B200 640 / 700, GB200 NVL72 640 / 680 (32
 *              GPUs). A ratio, so a measured ring figure (a worker's profile) keeps it.
 *              No published all-to-all figure for the H800, V100, MI300X/MI325X or the
 *              PCIe boxes (slide 13's PCIe bars are 2 × 4 GPUs, with no ring pair): 0,
 *              the ring's figure.
 * pcie_bw      host<->device copy bandwidth: ~78% of the x16 line rate, as pinned
 *              cudaMemcpy typically reaches: gen3 12 GB/s, gen4 24, gen5 48.
 * mem_bw       device-memory bandwidth from the datasheet (the roofline of
 *              planner/roofline.h takes a sustained fraction of it): A100-40G HBM2
 *              1555 GB/s, A100-80G SXM HBM2e 2039, H100 SXM5 HBM3 3350, H100 SXM
 *              96 GB HBM2e 2400 (torchtitan docs/performance.md, Grand Teton), TITAN RTX
 *              GDDR6 672, V100 SXM2 HBM2 900, T4 GDDR6 320, 2080 Ti GDDR6 616.
 * fp8_peak     dense FP8 tensor-core peak (E4M3/E5M2 inputs, fp32 accumulate), from the
 *              same datasheets: twice the bf16 peak on Hopper, Blackwell and Ada
 *              (H100/H200 SXM 1979 TFLOPS, HGX B200 72 PFLOPS sparse / 8 / 2 = 4500,
 *              GB200 NVL72 720 PFLOPS sparse / 72 / 2 = 5000, L40S 733, L4 242.5),
 *              MI300X/MI325X 2614.9 (AMD datasheets). 0 on Ampere and older (A100,
 *              A10G, V100, T4, Turing): no FP8 tensor cores, FP8 plans refused.
 * fp8_eff      e_max of the FP8 GEMMs: the FP8 (float8_e4m3fn, torch._scaled_mm with
 *              per-tensor scales, i.e. cuBLASLt's FP8 GEMM) rows of the same table,
 *              the sustained figure where one is published, each taken through the
 *              H100's bf16 ratio 0.97 as the bf16 rows are. GH100 (FP8_EFF_GH100: H100
 *              SXM, H200, H800; the 500 W H100-96G x 0.915, above): the H200's MSMF FP8 1288.7/1979 = 65.1 %
 *              (8448 x 8192 x 16384, ~693 W at 1374 MHz; its MAMF 1491.9) -> 0.632
 *              (until cost model 137 the burst rows of the table at 744d01e: H100
 *              1402.6 = 70.9 % -> 0.688, H200 1453.4 = 73.4 % -> 0.712). Blackwell
 *              likewise: B200 MSMF FP8 2795.7/4500 = 62.1 % -> 0.603, GB200
 *              MAMF 3615.6/5000 = 72.3 % x the B200's FP8 MSMF / MAMF 2795.7 / 3435.2 =
 *              0.814 (assumed) -> 0.571. MI300X/MI325X (the table's
 *              MI300X FP8 row is empty), L40S and L4 have no published figure: 0, the
 *              bf16 e_max (assumed). The shape curve (occupancy, depth) is the bf16 one,
 *              its tile's fixed cost scaled by the FP8 rate (gemm_eff.h
 *              tsl_gemm_tile_cost; docs/cost-model.md "The tile's fixed cost under FP8").
 * fp4_peak     dense FP4 tensor-core peak (NVFP4: E2M1 with E4M3 block scales), from the
 *              same datasheets: twice the FP8 peak on Blackwell (HGX B200 144 PFLOPS
 *              sparse / 8 / 2 = 9000, GB200 NVL72 1440 PFLOPS sparse / 72 / 2 = 10000;
 *              ml-engineering's TFLOPS table at 744d01e, fp4 column: 9000 and 10000).
 *              0 elsewhere (Hopper, Ada, Ampere, MI300): no FP4 tensor cores, nvfp4
 *              plans refused. Its e_max is the FP8 one (no FP4 MAMF is published:
 *              assumed; docs/cost-model.md "NVFP4").
 * fp32_peak    non-tensor fp32 FMA peak, and tf32_peak the dense TF32 tensor-core peak
 *              (half the datasheet's "with sparsity" figure), each from the vendor
 *              datasheet: A100 19.5 / 156, H100 SXM5, H100-96G, H800 and H200 67 / 494.5,
 *              TITAN RTX 16.3, V100 SXM2 15.7, T4 8.1, 2080 Ti 13.4 (Volta and Turing have
 *              no TF32: 0); Blackwell from the individual-GPU rows of NVIDIA's Blackwell
 *              datasheet, HGX B200 75 / 1100 (2.2 PFLOPS sparse), GB200 80 / 1250; L40S 91.6
 *              / 183, L4 30.3 / 60; A10G 31.52 / 35 (Baseten's A10G table, as its bf16);
 *              MI300X and MI325X 163.4 FP32 matrix (= vector) and TF32 0: their datasheets'
 *              653.7 dense TF32 is not what PyTorch runs (ROCm: TF32 only with
 *              HIPBLASLT_ALLOW_TF32=1 beside allow_tf32, pytorch/pytorch#130600; a cluster
 *              file's tf32_tflops sets it for a run that opts in).
 *              What an fp32 training step (knobs.fp32, cost model 63) runs its GEMMs at:
 *              TF32 where the GPU has it, as torch 1.7–1.11 did by default
 *              (torch.backends.cuda.matmul.allow_tf32 True until 1.12), else fp32; × the
 *              GPU's bf16 e_max and shape curve (assumed: no fp32/TF32 matmul sweep is
 *              published beside the MAMF table's bf16 rows). Every built-in type has a
 *              figure; a custom type without one (cluster file) refuses fp32 plans.
 * no_bf16      no bf16 tensor cores: compute capability 7.0 (V100, Volta) and 7.5 (T4,
 *              TITAN RTX, 2080 Ti: Turing), whose tensor cores take fp16 alone (Volta and
 *              Turing whitepapers: FP16 and INT8/INT4 tensor operations); bf16 came with
 *              compute capability 8.0 (NVIDIA A100 whitepaper, "BF16 Tensor Core
 *              instructions"; CUDA C++ Programming Guide, __nv_bfloat16 arithmetic needs
 *              sm_80), so every Ampere, Ada, Hopper and Blackwell part here has it, and so do
 *              MI300X and MI325X (their datasheets' BF16 1307.4 TFLOPS). PyTorch's
 *              torch.cuda.is_bf16_supported() is false below 8.0 (torch/cuda/__init__.py:
 *              compute capability >= 8 for native support), and the stacks train these
 *              parts in fp16 with a loss scaler (docs/cost-model.md "fp16 mixed
 *              precision").
 * host_scale   host CPU time per eager PyTorch op of the system a part ships in, over the
 *              x86 host of TSL_ROOFLINE_HOST_OP_S (roofline.h): GB200's Grace 2.75
 *              (HOST_SCALE_GRACE below, a published pair of host times of one op); every
 *              other part 0 = 1 (DGX/HGX x86 hosts). Scales the built-in host op on every
 *              use, the floor of each eager pass included (cost.c tsl_cost_env_init; cost
 *              model 171; docs/cost-model.md "CUDA-graphed modules"): the graphed modules'
 *              ops leave that floor, so the factor prices the eager ops that remain.
 * hybridep_nvl_bw  HybridEP's own dispatch / combine kernels inside one NVLink domain
 *              (TMA copies, one-shot, not NCCL's sends): bus bandwidth with
 *              TSL_HYBRIDEP_PEER_S per peer (cost.h), t = B·(n−1)/n / bw + (n−1)·α for B
 *              the rows a rank receives. Fitted to deepseek-ai/DeepEP hybrid-ep
 *              docs/README_Hybrid-EP.md (94a9f8f; the same table since 6ad6896,
 *              Hybrid-EP_Intra-node_Implementation.md), "GB200 Platform", Kernel Only, 32
 *              SMs (Megatron-Bridge's perf overrides set moe_hybridep_num_sms 32), BF16
 *              (Megatron-LM's HybridEP dispatch is bf16): 4096 tokens of h 7168, top-8 of
 *              8 local experts a rank, uniform routing; dispatch / combine algorithm
 *              bandwidth 764.03 / 737.13 GB/s at 8 ranks, 706.95 / 666.26 at 16, 665.97 /
 *              639.80 at 24, 642.23 / 605.15 at 32, 632.31 / 596.99 at 36. Each pass runs
 *              one of each, so their mean time, least squares over the five: 691.9 GB/s
 *              and 2.751 µs a peer, within 0.6 % of every point (cost model 199). B200:
 *              the same NVLink5 and die, its one published point (8 ranks, 16 SMs, kernel
 *              only 734.95 / 673.84) within 2 % of GB200's at 16 SMs (750.15 / 684.27):
 *              taken as GB200's (assumed at 32 SMs). Every other part 0: NCCL's
 *              all-to-all figure (no HybridEP sweep inside its domain published).
 * memory       the datasheet capacity, in GiB as the datasheets mean it (an
 *              "80 GB" A100 reports 81920 MiB). 2080Ti-10G is H3T's setting (10 GB
 *              usable of 11; H3T Sec. 4.1).
 *
 * Links: bus bandwidth of ONE NIC between two nodes, two figures each. bw is NCCL's
 * ring: InfiniBand as NCCL's maintainers measure it over one card (EDR 12.2, HDR 24,
 * NDR 46-48 GB/s: 96-98 % of the data rate, the Gb/s being counted after encoding;
 * XDR assumed at NDR's share), Ethernet at 80% of line rate (TCP/RoCE overhead),
 * AWS's "10 Gigabit" ENA instance network at its measured sustained rate (ENA10_GBITS),
 * Omni-Path measured. a2a_bw is what a card carries of NCCL's all-to-all (cost model
 * 129): 74.3 % of the data rate on HDR and NDR (NVIDIA GTC25 S72583), assumed alike
 * on EDR and XDR; the ring's where none is published (Ethernet, Omni-Path). flex_bw is
 * what a card carries of a flex MoE dispatcher's own RDMA kernels (DeepEP, HybridEP; cost
 * model 136): 87.3 % of the data rate on NDR (DeepEP's and HybridEP's published
 * internode tables, IB_FLEX_NDR), assumed alike on EDR, HDR and XDR; the ring's where
 * none is published (Ethernet, Omni-Path). A node's
 * NIC count is the cluster's (tsl_node_t.n_nics, "4x8xA100-80G:8xib200"), not folded
 * into these figures; NCCL's latencies and protocol factors are in cluster.h /
 * cluster_topo.c.
 */
#include "cluster.h"
#include "gemm_eff.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define GIB    (1024.0 * 1024.0 * 1024.0)
#define GBPS   1e9
#define TFLOPS 1e12

#define SRC_A100                                                                                   \
    "peak: NVIDIA A100 datasheet (312 TFLOPS bf16 dense); efficiency: e_max 0.82 of a GEMM "       \
    "shape curve (108 SMs), from the published A100 bf16 max achievable matmul 267.9 TFLOPS "      \
    "(ml-engineering MAMF table) scaled as the H100 fit; intra: Galvatron A100 allreduce "         \
    "fixture (154 GB/s, 8 GPUs, NVLink3), all-reduces inside a node by size at the same node's "   \
    "measured sweep (Galvatron sp_time: 99.8 GB/s at 16 MiB to 231 at 1 GiB, cost model 139); "    \
    "pcie: gen4 x16 ~78% of line rate; a2a: 210/232 of "                                           \
    "the ring (NCCL tests alltoall / ring allreduce busbw, 8 GPUs, NVIDIA GTC25 S72583); "         \
    "fp32: FP32 19.5 TFLOPS, TF32 tensor 156 dense (312 with sparsity), same datasheet"

/* e_max of the GH100 parts (H100 SXM, its 96 GB variant, H200, H800) at the sustained
 * clock of a dense step at the 700 W limit: the H200's published MSMF, bf16 71.6 % and
 * FP8 65.1 % of the datasheet peaks, x 0.97 (cost model 137; the header's efficiency) */
#define EFF_GH100     0.695
#define FP8_EFF_GH100 0.632
#define SRC_EFF_GH100                                                                              \
    "efficiency: e_max 0.695 of a GEMM shape curve (132 SMs) = the H200's published MSMF, the "    \
    "rate a GEMM sustains at the 700 W limit (708.5/989 = 71.6% at ~693 W, 1465 MHz; "             \
    "ml-engineering fast-mamf 082816f) x 0.97 (the H100's burst-fitted e_max 0.777 / its MAMF)"
#define SRC_FP8_GH100 "fp8: e_max 0.632 = the H200's MSMF FP8 1288.7/1979 = 65.1% (1374 MHz) x 0.97"
/* the 500 W H100-96G: the same figures at its cap (gemm_eff.h, cost model 143) */
#define EFF_GH100_500W     (EFF_GH100 * TSL_GH100_500W_SETTLED)
#define FP8_EFF_GH100_500W (FP8_EFF_GH100 * TSL_GH100_500W_SETTLED)

/* Host time per eager op on a Grace CPU over the x86 hosts of DGX H100 / B200 (host_scale):
 * NVIDIA/TransformerEngine#2053 (2025-08-11) times one torch.nn.Linear forward, bf16, hidden
 * 2048, 8192 tokens, on the host: 37.08 us on GB200 (Grace, Neoverse V2), 33.17 on GH200,
 * 13.48 on a DGX H100 (Xeon Platinum 8480C); 37.08 / 13.48 = 2.75. One op of PyTorch's
 * dispatch, measured on both hosts with the same code: taken for every eager op (assumed;
 * TE's own modules ran 99.66 us there, no x86 figure beside it). DGX B200's Xeon 8570 is
 * taken as the 8480C (the same core generation). */
#define HOST_SCALE_GRACE 2.75
/* HybridEP's NVLink5 kernels (hybridep_nvl_bw above): GB200's sweep, B200 taken as it */
#define HYBRIDEP_NVL5_BW (691.9 * GBPS)
#define SRC_HYBRIDEP_NVL5                                                                          \
    "; hybridep: 691.9 GB/s bus + 2.751 us a peer, HybridEP's GB200 kernel-only sweep (DeepEP "    \
    "hybrid-ep 94a9f8f docs/README_Hybrid-EP.md, 32 SMs, BF16, 8-36 ranks)"
#define SRC_HOST_GRACE                                                                             \
    "host_scale 2.75 = torch.nn.Linear forward's host time on GB200 (Grace) over a DGX H100's "    \
    "Xeon 8480C, 37.08 / 13.48 us (NVIDIA/TransformerEngine#2053)"

/* NCCL's all-to-all over its ring inside an NVLink domain, NVIDIA GTC25 S72583 slide 13
 * ("NCCL Tests Alltoall Bus Bandwidth", 8 GPUs) over slide 12 (its ring all-reduce):
 * NVLink3 210 / 232, NVLink4 320 / 370 (H100, H100-96G, H200), NVLink5 640 / 700 (B200),
 * GB200 NVL72 640 / 680 over 32 GPUs */
#define A2A_A100 (210.0 / 232.0)
#define A2A_H100 (320.0 / 370.0)
#define SRC_A2A_H100                                                                               \
    "a2a: 320/370 of the ring (NCCL tests alltoall / ring allreduce busbw, 8 "                     \
    "GPUs, NVIDIA GTC25 S72583)"
#define SRC_NO_A2A "; a2a: the ring's (no published all-to-all figure)"
/* CDNA3's fp32 GEMM rate: the datasheet's FP32 matrix peak (= its FP32 vector peak). Its
 * TF32 (XF32) matrix peak is not taken: PyTorch on ROCm runs fp32 matmuls in fp32 unless a
 * script opts in through HIPBLASLT_ALLOW_TF32=1 as well as allow_tf32 (pytorch/pytorch#130600,
 * ROCm/pytorch#1803), and no torch release of the allow_tf32-by-default years ran on it. */
#define SRC_FP32_CDNA3                                                                             \
    "fp32: FP32 matrix 163.4 TFLOPS (= FP32 vector); its TF32 matrix 653.7 dense is not taken: "   \
    "PyTorch on ROCm runs fp32 matmuls in fp32 unless HIPBLASLT_ALLOW_TF32=1 (pytorch/pytorch"     \
    "#130600, ROCm/pytorch#1803)"
#define SRC_FP32_2080TI                                                                            \
    "fp32: 13.4 TFLOPS at the reference boost clock (Turing whitepaper; the Founders Edition's "   \
    "14.2), no TF32 (Turing)"
#define SRC_FP32_H100                                                                              \
    "fp32: H100 SXM5 datasheet FP32 67 TFLOPS, TF32 tensor 989 with sparsity = 494.5 dense"

/*
 * The A100's all-reduce by message size (cost model 139). Galvatron's profiler on its A100
 * node — the node whose all-reduce fixture gives the A100 its flat 150 GB/s — times a
 * torch.distributed all-reduce of a bf16 buffer of 1 MiB … 1 GiB over 2, 4 and 8 GPUs
 * (mean of 100 after 10 warm-ups, CUDA events: `sp_time_1nodes_8gpus_per_node.json`,
 * PKU-DAIR/Hetu-Galvatron cea12ffb `galvatron/profile_hardware/hardware_configs/`, in
 * this tree's shared fixtures). Bus bandwidth 2(n−1)/n · M / t at 8 GPUs: 99.8 GB/s at
 * 16 MiB, 141 at 32, 180 at 64, 183 at 128, 199 at 256, 201 at 512, 231 at 1 GiB — the
 * last at NVIDIA's own 232 (GTC25 S72583), the sweep's mean near the flat 150/154 the
 * A100 prices every size at. The curve starts at 16 MiB, where Galvatron's sweep and a
 * training step's TP and DP buffers start; the times below it are a torch call's
 * (launch included), left to NCCL's tuner. Times in ms.
 */
#define AR_SIZES 7
struct tsl_ar_curve {
    double ref_bw;          /* the part's built-in intra_bw the shape is over */
    double mib[AR_SIZES];   /* buffer sizes, MiB */
    uint32_t n[3];          /* group sizes measured */
    double ms[3][AR_SIZES]; /* all-reduce time of each, ms */
};

static const struct tsl_ar_curve a100_ar_curve = {
    150 * GBPS,
    {16, 32, 64, 128, 256, 512, 1024},
    {2, 4, 8},
    {{0.1434, 0.2281, 0.3924, 0.7417, 1.3887, 2.6886, 5.1594},
     {0.2183, 0.3205, 0.5848, 1.0725, 2.0709, 3.7352, 7.1874},
     {0.2941, 0.4157, 0.6519, 1.2826, 2.3584, 4.6768, 8.1409}},
};

static double ar_busbw(const struct tsl_ar_curve *c, int g, int i)
{
    double n = c->n[g], bytes = c->mib[i] * 1024.0 * 1024.0;
    return 2.0 * (n - 1) / n * bytes / (c->ms[g][i] * 1e-3);
}

double tsl_ar_curve_shape(const tsl_ar_curve_t *c, uint32_t n, double bytes)
{
    int g = 0;
    for (int j = 1; j < 3; j++)
        if (c->n[j] <= n)
            g = j;
    double lg = log2(bytes / (1024.0 * 1024.0));
    if (lg <= log2(c->mib[0]))
        return ar_busbw(c, g, 0) / c->ref_bw;
    for (int i = 1; i < AR_SIZES; i++) {
        double hi = log2(c->mib[i]);
        if (lg <= hi) {
            double lo = log2(c->mib[i - 1]), f = (lg - lo) / (hi - lo);
            return ((1 - f) * ar_busbw(c, g, i - 1) + f * ar_busbw(c, g, i)) / c->ref_bw;
        }
    }
    return ar_busbw(c, g, AR_SIZES - 1) / c->ref_bw;
}

double tsl_ar_curve_min_bytes(const tsl_ar_curve_t *c)
{
    return c->mib[0] * 1024.0 * 1024.0;
}

/* By family (A100-40G and A100-80G: the same NVLink3 node; the fixture's memory is not
 * stated, as for the flat figure). */
const tsl_ar_curve_t *tsl_gpu_ar_curve(const tsl_gpu_spec_t *g)
{
    return g != NULL && strncasecmp(g->name, "A100-", 5) == 0 ? &a100_ar_curve : NULL;
}

static const tsl_gpu_spec_t gpu_table[] = {
    {"A100-40G", (uint64_t)(40 * GIB), 312 * TFLOPS, 0.82, 150 * GBPS, 24 * GBPS, SRC_A100,
     1555 * GBPS, 0.0, 0.0, 0.0, A2A_A100, 19.5 * TFLOPS, 156 * TFLOPS, false, 0.0, 0.0},
    {"A100-80G", (uint64_t)(80 * GIB), 312 * TFLOPS, 0.82, 150 * GBPS, 24 * GBPS, SRC_A100,
     2039 * GBPS, 0.0, 0.0, 0.0, A2A_A100, 19.5 * TFLOPS, 156 * TFLOPS, false, 0.0, 0.0},
    {"H100-80G", (uint64_t)(80 * GIB), 989 * TFLOPS, EFF_GH100, 239 * GBPS, 48 * GBPS,
     "peak: NVIDIA H100 SXM5 datasheet (989 TFLOPS bf16 dense, 700 W); " SRC_EFF_GH100
     " (no H100 MSMF published: the same GH100 die and limit, assumed; the curve's shape "
     "fitted to tessel-worker's measured cuBLAS table, deploy/profiles/h100-80g.json, 38 "
     "shapes, median residual 5%); " SRC_FP8_GH100 "; "
     "intra: 239 GB/s = NCCL ring busbw 370 on 8 GPUs (NVIDIA GTC25 S72583; NVIDIA/nccl-tests#212) "
     "x 150/232 (the A100's Galvatron-measured / NVIDIA-published ratio); "
     "pcie: gen5 x16 ~78% of line rate; " SRC_A2A_H100 "; " SRC_FP32_H100,
     3350 * GBPS, 1979 * TFLOPS, FP8_EFF_GH100, 0.0, A2A_H100, 67 * TFLOPS, 494.5 * TFLOPS, false,
     0.0, 0.0},
    {"H100-96G", (uint64_t)(96 * GIB), 989 * TFLOPS, EFF_GH100_500W, 239 * GBPS, 48 * GBPS,
     "H100 SXM 96 GB HBM2e (Meta Grand Teton): torchtitan docs/performance.md (96GB HBM2e, "
     "2.4 TB/s peak memory bandwidth, default 500 W power limit); peak, SMs, intra and pcie as "
     "H100-80G (same GH100 SXM5 part); efficiency at the 500 W cap: e_max 0.636 = the 700 W "
     "0.695 x 0.915, what a training step on the HBM2e H100 SXM keeps at 500 W of its 700 W "
     "rate (Mayr et al. 2026, arXiv:2603.16164, Table 4, Pre-training / H100: LLaMA 3 8B, "
     "27705.3 / 30271.0 tokens/s per GPU; the kernels assumed to lose at least the step's "
     "share); fp8: 0.578 = 0.632 x 0.915; attention shares x 0.915; " SRC_A2A_H100
     "; " SRC_FP32_H100,
     2400 * GBPS, 1979 * TFLOPS, FP8_EFF_GH100_500W, 0.0, A2A_H100, 67 * TFLOPS, 494.5 * TFLOPS,
     false, 0.0, 0.0},
    {"H200-141G", (uint64_t)(141 * GIB), 989 * TFLOPS, EFF_GH100, 239 * GBPS, 48 * GBPS,
     "peak: NVIDIA H200 SXM datasheet (141 GB HBM3e, 4.8 TB/s, BF16 1979 TFLOPS with "
     "sparsity = 989 dense, NVLink4 900 GB/s, PCIe gen5); same GH100 part as H100 (132 "
     "SMs): " SRC_EFF_GH100 "; " SRC_FP8_GH100 "; intra: "
     "239 GB/s as H100 (ring busbw measured on H200: 367.2 all-reduce, NVLS off, ml-engineering); "
     "pcie: gen5 x16 ~78%; " SRC_A2A_H100
     " (the same NVLink4); fp32: H200 SXM datasheet FP32 67 TFLOPS, TF32 tensor 989 with "
     "sparsity = 494.5 dense",
     4800 * GBPS, 1979 * TFLOPS, FP8_EFF_GH100, 0.0, A2A_H100, 67 * TFLOPS, 494.5 * TFLOPS, false,
     0.0, 0.0},
    {"H800-80G", (uint64_t)(80 * GIB), 989 * TFLOPS, EFF_GH100, 102 * GBPS, 48 * GBPS,
     "H800 SXM (NVIDIA's export-compliant H100 for China, launched March 2023): the H100 "
     "SXM5 part with NVLink cut to 400 GB/s bidirectional = 200 GB/s/direction (third-party "
     "spec tables, e.g. philisun.com 'NVIDIA H800 vs H100'; Reuters via Tom's Hardware, Mar "
     "2023: about half the H100's chip-to-chip rate; no NVIDIA datasheet found); peak, HBM3 "
     "3.35 TB/s, FP8, SMs, efficiency and pcie as H100-80G; intra: 102 GB/s, assumed: "
     "200 GB/s/direction x 0.51 (cost model 30's rule; no published nccl-tests ring busbw of an "
     "H800 node). DeepSeek-V3 report Sec. 3.2.2 quotes NVLink 160 GB/s (measured, "
     "unidirectional point to point, not an nccl-tests busbw: not taken) and IB 50 GB/s per GPU "
     "on its H800 cluster; a2a: the ring's, no published figure (NVLink cut: the H100's "
     "ratio not taken); fp32 and TF32 as H100-80G (the same part)",
     3350 * GBPS, 1979 * TFLOPS, FP8_EFF_GH100, 0.0, 0.0, 67 * TFLOPS, 494.5 * TFLOPS, false, 0.0,
     0.0},
    {"B200-180G", (uint64_t)(180 * GIB), 2250 * TFLOPS, 0.628, 453 * GBPS, 48 * GBPS,
     "peak: NVIDIA HGX B200 spec (8 GPUs: 1.44 TB HBM3e, FP16/BF16 36 PFLOPS with sparsity = "
     "2.25 PFLOPS dense per GPU, 8 TB/s per GPU, NVLink5 1.8 TB/s per GPU); efficiency: e_max "
     "0.628 = published MSMF (sustained, ~994 W at 1339 MHz) 1456.3/2250 = 64.7% (ml-engineering "
     "fast-mamf 082816f, torch 2.13.0+cu130; MAMF 1770.9) x 0.97 (H100's fitted e_max / its "
     "MAMF), 148 SMs; intra: 453 GB/s = NCCL ring busbw 700 on 8 GPUs (NVIDIA "
     "GTC25 S72583; 682.2 measured with NVLS off, ml-engineering) x 150/232 (the A100's ratio); "
     "pcie: gen5; "
     "fp8: e_max 0.603 = MSMF FP8 2795.7/4500 = 62.1% x 0.97; fp4: HGX B200 FP4 144 PFLOPS "
     "with sparsity = 9 PFLOPS dense per GPU, e_max as FP8 (no FP4 MAMF published); fused "
     "attention: 0.67 / 0.54 of peak forward / backward (MLA's backward 0.42), GB200's "
     "(gemm_eff.h), x 0.822 = MSMF / MAMF 1456.3 / 1770.9 (burst sweeps at the settled clock); "
     "a2a: 640/700 of the ring (NCCL tests alltoall / ring allreduce busbw, 8 "
     "GPUs, NVIDIA GTC25 S72583); fp32: FP32 75 TFLOPS, TF32 tensor 2.2 PFLOPS with sparsity = "
     "1100 dense (NVIDIA Blackwell datasheet, individual GPU of HGX B200)" SRC_HYBRIDEP_NVL5
     " (GB200's, the same NVLink5: B200's one point at 16 SMs within 2 % of GB200's)",
     8000 * GBPS, 4500 * TFLOPS, 0.603, 9000 * TFLOPS, 640.0 / 700.0, 75 * TFLOPS, 1100 * TFLOPS,
     false, 0.0, HYBRIDEP_NVL5_BW},
    {"GB200-186G", (uint64_t)(186 * GIB), 2500 * TFLOPS, 0.581, 440 * GBPS, 350 * GBPS,
     "per GPU of NVIDIA GB200 NVL72 spec (a superchip: 2 GPUs, 372 GB HBM3e, 16 TB/s, "
     "FP16/BF16 10 PFLOPS with sparsity = 2.5 PFLOPS dense per GPU; NVLink5 1.8 TB/s per GPU, "
     "72 GPUs in one domain); efficiency: e_max 0.581 = MAMF 1822/2500 = 72.9% (ml-engineering, "
     "cu130) x the B200's sustained / burst MSMF / MAMF 0.822 (no GB200 MSMF published: "
     "assumed) x 0.97, 148 SMs as B200 (assumed); intra: 440 GB/s = NCCL busbw 680 without NVLink "
     "SHARP over 32 GPUs of an NVL72 (NVIDIA GTC25 S72583) x 150/232 (the A100's ratio), across "
     "the "
     "rack's trays too (spec ':nvl72'); "
     "pcie: NVLink-C2C to Grace 450 GB/s/direction x 0.78; "
     "fp8: e_max 0.571 = MAMF FP8 3615.6/5000 = 72.3% x the B200's FP8 MSMF / MAMF 0.814 "
     "(assumed) x 0.97; fp4: GB200 NVL72 FP4 1440 "
     "PFLOPS with sparsity = 10 PFLOPS dense per GPU, e_max as FP8 (no FP4 MAMF published); "
     "fused attention: 0.67 / 0.54 of peak forward / backward (cudnn-frontend's published "
     "GB200 SDPA sweeps, cuDNN 9.19.1 and 9.22.0, bf16, head dim 128; MLA's 192/128 "
     "backward 0.42, its dsv3 sweep; gemm_eff.h) x the B200's MSMF / MAMF 0.822 (burst "
     "sweeps at the settled clock, assumed the B200's ratio); a2a: 640/680 of the ring (NCCL tests "
     "alltoall / allreduce busbw without NVLink SHARP, 32 GPUs of an NVL72, NVIDIA GTC25 "
     "S72583); fp32: FP32 80 TFLOPS, TF32 tensor 2.5 PFLOPS with sparsity = 1250 dense (NVIDIA "
     "Blackwell datasheet, individual GPU of GB200 NVL72; the NVL72 spec's 5760 TFLOPS FP32 and "
     "180 PFLOPS TF32 / 72); host: Grace (Neoverse V2), " SRC_HOST_GRACE SRC_HYBRIDEP_NVL5,
     8000 * GBPS, 5000 * TFLOPS, 0.571, 10000 * TFLOPS, 640.0 / 680.0, 80 * TFLOPS, 1250 * TFLOPS,
     false, HOST_SCALE_GRACE, HYBRIDEP_NVL5_BW},
    {"MI300X-192G", (uint64_t)(192 * GIB), 1307.4 * TFLOPS, 0.499, 228 * GBPS, 48 * GBPS,
     "peak: AMD Instinct MI300X datasheet (192 GB HBM3, 5.3 TB/s, BF16 1307.4 TFLOPS dense, "
     "304 CUs, Infinity Fabric 7 links x 64 GB/s/direction = 448 GB/s, PCIe gen5 x16); "
     "efficiency: e_max 0.499 = MAMF 668.4/1300 = 51.4% (ml-engineering, ROCm 6.3, tunableop) "
     "x 0.97; intra: RCCL over the fully connected Infinity Fabric, 228 GB/s, assumed: "
     "448 GB/s/direction x 0.51 (cost model 30's rule; no published rccl-tests ring busbw: "
     "ml-engineering's torch all-reduce, 312.9 GB/s on 8 GPUs, is not one); pcie: gen5 x16 "
     "~78%" SRC_NO_A2A "; " SRC_FP32_CDNA3,
     5300 * GBPS, 2614.9 * TFLOPS, 0.0, 0.0, 0.0, 163.4 * TFLOPS, 0.0, false, 0.0, 0.0},
    {"MI325X-256G", (uint64_t)(256 * GIB), 1307.4 * TFLOPS, 0.586, 228 * GBPS, 48 * GBPS,
     "peak: AMD Instinct MI325X datasheet (256 GB HBM3E, 6 TB/s, BF16 1307.4 TFLOPS dense, "
     "304 CUs, Infinity Fabric as MI300X); efficiency: e_max 0.586 = MAMF 784.9/1300 = 60.4% "
     "(ml-engineering, ROCm 6.2.4, 1000 W) x 0.97; intra: as MI300X (assumed ratio); pcie: "
     "gen5" SRC_NO_A2A "; " SRC_FP32_CDNA3 " (MI325X datasheet: the same figures)",
     6000 * GBPS, 2614.9 * TFLOPS, 0.0, 0.0, 0.0, 163.4 * TFLOPS, 0.0, false, 0.0, 0.0},
    {"L40S-48G", (uint64_t)(48 * GIB), 362.05 * TFLOPS, 0.50, 20 * GBPS, 24 * GBPS,
     "peak: NVIDIA L40S datasheet (48 GB GDDR6, 864 GB/s, BF16 362.05 TFLOPS dense / 733 "
     "sparse, PCIe gen4 x16, no NVLink; 142 SMs); efficiency: e_max 0.5 assumed (no published "
     "MAMF), H100 shape curve; intra: PCIe gen4, ~63% of the 31.5 GB/s x16 line rate; pcie: "
     "gen4" SRC_NO_A2A "; fp32: FP32 91.6 TFLOPS, TF32 tensor 183 dense (366 with sparsity), "
     "same datasheet",
     864 * GBPS, 733 * TFLOPS, 0.0, 0.0, 0.0, 91.6 * TFLOPS, 183 * TFLOPS, false, 0.0, 0.0},
    {"L4-24G", (uint64_t)(24 * GIB), 121 * TFLOPS, 0.40, 20 * GBPS, 24 * GBPS,
     "peak: NVIDIA L4 datasheet (24 GB GDDR6, 300 GB/s, BF16 121 TFLOPS dense / 242 sparse, "
     "72 W, PCIe gen4 x16; 58 SMs); efficiency: e_max 0.4 assumed as T4 (a 70 W-class cap "
     "throttles clocks); intra: PCIe gen4 ~63% of line rate; pcie: gen4" SRC_NO_A2A
     "; fp32: FP32 30.3 TFLOPS, TF32 tensor 120 with sparsity = 60 dense, same datasheet",
     300 * GBPS, 242.5 * TFLOPS, 0.0, 0.0, 0.0, 30.3 * TFLOPS, 60 * TFLOPS, false, 0.0, 0.0},
    {"A10G-24G", (uint64_t)(24 * GIB), 70 * TFLOPS, 0.50, 20 * GBPS, 24 * GBPS,
     "AWS G5's A10G (NVIDIA publishes no A10G datasheet): 24 GB GDDR6 600 GB/s (AWS EC2 G5), "
     "tensor BF16 70 TFLOPS dense per Baseten's 'NVIDIA A10 vs A10G' spec table (the A10's is "
     "125); 80 SMs assumed; efficiency: e_max 0.5 assumed; intra: PCIe gen4 ~63% of line rate "
     "(g5.48xlarge, no NVLink); pcie: gen4" SRC_NO_A2A "; fp32: FP32 31.52 TFLOPS, TF32 tensor "
     "35 dense, the same Baseten table (half its BF16, as on every Ampere part)",
     600 * GBPS, 0.0, 0.0, 0.0, 0.0, 31.52 * TFLOPS, 35 * TFLOPS, false, 0.0, 0.0},
    {"RTX-TITAN-24G", (uint64_t)(24 * GIB), 130 * TFLOPS, 0.50, 4.87 * GBPS, 12 * GBPS,
     "peak: NVIDIA TITAN RTX datasheet (130 TFLOPS tensor); efficiency: e_max 0.5 assumed, H100 "
     "shape curve; "
     "intra: PCIe 3.0, no NVLink: Galvatron-BMW's testbed measured, 8-GPU NCCL all-reduce "
     "0.2153 ms per MiB of bus traffic = 4.87 GB/s (PKU-DAIR/Hetu df32daa "
     "tools/Galvatron/env_configs/allreduce_bandwidth_8_gpus.json, 1_8_1); "
     "pcie: gen3 x16 ~78% of line rate; fp32: 16.3 TFLOPS (TITAN RTX datasheet), no TF32 "
     "(Turing)" SRC_NO_A2A,
     672 * GBPS, 0.0, 0.0, 0.0, 0.0, 16.3 * TFLOPS, 0.0, true, 0.0, 0.0},
    {"V100-16G", (uint64_t)(16 * GIB), 125 * TFLOPS, 0.50, 75 * GBPS, 12 * GBPS,
     "peak: NVIDIA V100 SXM2 datasheet (125 TFLOPS tensor); efficiency: e_max 0.5 assumed, H100 "
     "shape curve; "
     "intra: 75 GB/s, assumed: NVLink2 150 GB/s/direction x 0.51 (cost model 30's rule; no "
     "published nccl-tests ring busbw of a V100 node); pcie: gen3; fp32: 15.7 TFLOPS (V100 "
     "SXM2 datasheet), no TF32 (Volta)" SRC_NO_A2A,
     900 * GBPS, 0.0, 0.0, 0.0, 0.0, 15.7 * TFLOPS, 0.0, true, 0.0, 0.0},
    {"V100-32G", (uint64_t)(32 * GIB), 125 * TFLOPS, 0.50, 75 * GBPS, 12 * GBPS,
     "peak: NVIDIA V100 SXM2 datasheet (125 TFLOPS tensor); efficiency: e_max 0.5 assumed, H100 "
     "shape curve; "
     "intra: 75 GB/s, assumed: NVLink2 150 GB/s/direction x 0.51 (cost model 30's rule; no "
     "published nccl-tests ring busbw of a V100 node); pcie: gen3; fp32: 15.7 TFLOPS (V100 "
     "SXM2 datasheet), no TF32 (Volta)" SRC_NO_A2A,
     900 * GBPS, 0.0, 0.0, 0.0, 0.0, 15.7 * TFLOPS, 0.0, true, 0.0, 0.0},
    {"T4-16G", (uint64_t)(16 * GIB), 65 * TFLOPS, 0.38, 6.25 * GBPS, 12 * GBPS,
     "peak: NVIDIA T4 datasheet (65 TFLOPS fp16 mixed); efficiency: e_max 0.38, the 70 W cap "
     "throttles: a sustained 4096^3 fp16 cuBLAS GEMM runs at ~24 TFLOP/s (NVIDIA developer "
     "forums, 'About GPU peak performance', 2023, power capping confirmed by NVIDIA), the H100 "
     "shape curve's 0.966 of X there; "
     "intra: AMP Sec. 4.3 measured 50 Gb/s PCIe on g4dn.12xlarge; pcie: gen3; fp32: 8.1 TFLOPS "
     "(T4 datasheet), no TF32 (Turing)" SRC_NO_A2A,
     320 * GBPS, 0.0, 0.0, 0.0, 0.0, 8.1 * TFLOPS, 0.0, true, 0.0, 0.0},
    {"2080Ti-11G", (uint64_t)(11 * GIB), 53.8 * TFLOPS, 0.50, 10 * GBPS, 12 * GBPS,
     "peak: NVIDIA Turing whitepaper (53.8 TFLOPS fp16, fp32 accumulate); efficiency: e_max 0.5 "
     "assumed, H100 shape curve; intra: PCIe 3.0, no NVLink, ~63% of x16 line rate; pcie: "
     "gen3" SRC_NO_A2A "; " SRC_FP32_2080TI,
     616 * GBPS, 0.0, 0.0, 0.0, 0.0, 13.4 * TFLOPS, 0.0, true, 0.0, 0.0},
    {"2080Ti-10G", (uint64_t)(10 * GIB), 53.8 * TFLOPS, 0.50, 10 * GBPS, 12 * GBPS,
     "as 2080Ti-11G with 10 GB, H3T's 8x2080Ti environment (H3T Sec. 4.1 and its "
     "appendix: PCIe 3.0 at 15.8 GB/s line rate, no NVLink)" SRC_NO_A2A "; " SRC_FP32_2080TI,
     616 * GBPS, 0.0, 0.0, 0.0, 0.0, 13.4 * TFLOPS, 0.0, true, 0.0, 0.0},
};

/* Short names people type; each maps to the one entry it can only mean. */
static const struct {
    const char *alias, *name;
} gpu_aliases[] = {
    {"TITAN-RTX", "RTX-TITAN-24G"},
    {"RTX-TITAN", "RTX-TITAN-24G"},
    {"TITAN-RTX-24G", "RTX-TITAN-24G"},
    {"2080Ti", "2080Ti-11G"},
    {"H100", "H100-80G"},
    {"H800", "H800-80G"},
    {"T4", "T4-16G"},
    {"H200", "H200-141G"},
    {"B200", "B200-180G"},
    {"GB200", "GB200-186G"},
    {"MI300X", "MI300X-192G"},
    {"MI325X", "MI325X-256G"},
    {"L40S", "L40S-48G"},
    {"L4", "L4-24G"},
    {"A10G", "A10G-24G"},
};

#define SRC_ETH                                                                                    \
    "Ethernet line rate x 0.80 (TCP/RoCE overhead); a2a: the ring's, flex: the ring's (none "      \
    "published)"

/* NCCL's all-to-all over InfiniBand, per NIC: NVIDIA GTC25 S72583 slide 13 measures its
 * busbw at 24 GB/s on 4 DGX A100 (8 HDR cards each) and 48 GB/s on 4 DGX H100 (8 NDR),
 * 32 GPUs. Each node sends 8 · 24/32 of a rank's buffer off itself through 8 cards, so
 * busbw = 31/24 × what a card carries (the bound of docs/cost-model.md "All-to-all"):
 * 24 · 24/31 = 18.6 and 48 · 24/31 = 37.2 GB/s a card, 74.3 % of the 25 and 50 GB/s
 * data rates on both generations (IB's Gb/s is counted after encoding). The same
 * fabrics' rings reach 96 % (24 GB/s a HDR card): the all-to-all's sends to every peer
 * carry less than the ring's one stream per channel. */
#define IB_A2A_HDR        (24.0 * 24.0 / 31.0 * GBPS)
#define IB_A2A_NDR        (48.0 * 24.0 / 31.0 * GBPS)
#define IB_A2A_LINE_SHARE (IB_A2A_HDR / (200 * GBPS / 8)) /* 0.743, NDR's alike */
/* NDR's ring: ConnectX-7 "should see 46-48GB/s per NIC" (NVIDIA/nccl-tests#290), the
 * middle of it; 94 % of the 50 GB/s data rate */
#define IB_RING_NDR (47.0 * GBPS)
#define SRC_IB_A2A_MEASURED                                                                        \
    "a2a: NCCL's all-to-all, 74.3 % of the data rate (NVIDIA GTC25 S72583 slide 13: 24 GB/s "      \
    "busbw on 4 x 8 A100 with 8 HDR cards a node, 48 on 4 x 8 H100 with 8 NDR; x 24/31 a card)"
#define SRC_IB_A2A_ASSUMED                                                                         \
    "a2a: assumed at HDR's and NDR's measured 74.3 % of the data rate (none published for "        \
    "this rate; NVIDIA GTC25 S72583 slide 13)"

/* A flex MoE dispatcher's RDMA over InfiniBand, per NIC (cost model 136): DeepEP's normal
 * kernels on H800 with one ConnectX-7 400 Gb/s each (deepseek-ai/DeepEP docs/legacy.md at
 * dd758ca, the README's table since 3b1045d, 2025-04-22; DeepSeek-V3's routing: 4096
 * tokens, h 7168, top-8 of 256 experts in the best min(nodes, 4) of one group per node,
 * FP8 dispatch, BF16 combine) report dispatch / combine "bottleneck bandwidth" of 58 / 57
 * GB/s at EP 32 (4 nodes) and 51 / 50 at EP 64 (8 nodes). That figure counts a token once
 * per destination node, its own node included (tests/test_internode.py num_rdma_token_sent;
 * DeepEP's V2 README: "logical bandwidth ... contains local rank traffic"), whose copy
 * the kernels write locally, not through the NIC (csrc/kernels/internode.cu: "dst_rdma_rank
 * != rdma_rank"). Of the counted copies 3/4 leave the node at EP 32 (every node reached
 * alike, the own one of 4) and 7/8 at EP 64 (4 of 8 nodes picked at random, the own one
 * among them half the time): 43.5 / 42.75 and 44.6 / 43.75 GB/s off the node a card, the
 * mean 43.66, 87.3 % of the 50 GB/s data rate. EP 16's 43 / 43 (21.5 off the node) is not
 * taken: per token of a rank a card sends 1 row off the node there while each GPU
 * forwards about 6.4 over NVLink (2 arriving rows, its node's own included, to about 3.2
 * of 8 GPUs each), the slower leg at DeepEP's measured 153 GB/s (Tessel prices it apart:
 * a dispatch takes max(network, NVLink)); at EP 32 and 64 a card sends 2.7 and 3.15 rows
 * against about 7.4 forwarded (3.6 rows to about 2.1 GPUs): the NIC's leg.
 * Alike elsewhere: HybridEP's kernels on H100 (deepseek-ai/DeepEP hybrid-ep 94a9f8f
 * docs/README_Hybrid-EP.md, kernel only, 16 SMs, the same counting: tests/utils.py
 * count_rdma_send_from_routing_map keeps the local node "to align with ... DeepEP") 57.7
 * / 57.5 at 32 ranks, 50.0 / 49.8 at 64: 43.3 / 43.1 and 43.7 / 43.5 off the node;
 * DeepEP V2 on CX7 (its README at dd758ca, SM90 EP 8 x 2: 90 / 81, x 4: 61 / 61) 45 /
 * 40.5 and 45.75. No figure for other rates: EDR, HDR and XDR assumed at NDR's share. */
#define IB_FLEX_NDR        ((((58.0 + 57.0) / 2) * 3 / 4 + ((51.0 + 50.0) / 2) * 7 / 8) / 2 * GBPS)
#define IB_FLEX_LINE_SHARE (IB_FLEX_NDR / (400 * GBPS / 8)) /* 0.873 */
#define SRC_IB_FLEX_MEASURED                                                                       \
    "; flex: a flex MoE dispatcher's RDMA, 43.66 GB/s a card, 87.3 % of the data rate "            \
    "(deepseek-ai/DeepEP legacy normal kernels, H800 + CX7: 58/57 GB/s at EP 32, 51/50 at EP "     \
    "64, counted with the node's own copy, x 3/4 and x 7/8 off the node)"
#define SRC_IB_FLEX_ASSUMED                                                                        \
    "; flex: assumed at NDR's measured 87.3 % of the data rate (DeepEP's internode table; none "   \
    "published for this rate)"

/* AWS's "10 Gigabit" instance network (the ENA of p3.8xlarge, m5.12xlarge; cost model
 * 149): an instance rated at a fixed 10 Gigabit sustained 10.04 Gbit/s of TCP goodput,
 * baseline and burst alike, over an hour of iperf3 with 10 parallel streams
 * (cloudonaut.io "EC2 Network Performance Cheat Sheet", 2018-04, us-east-1: m5.12xlarge
 * 10.04 Gbit/s; the fleet's "up to 10 Gigabit" sizes burst to the same 10.04): the
 * allowance is shaped at the rating, and VPC's 9001-byte MTU leaves TCP/IP headers ~0.6 %.
 * NCCL reaches it: its socket transport detects the ENA (PCI vendor 0x1d0f) and opens
 * 2 threads x 8 sockets per connection (NCCL 2.7.8 src/transport/net_socket.cc
 * ncclSocketGetNsockNthread), 16 flows like iperf3's 10, past AWS's 5 Gb/s per-flow cap
 * outside a placement group; and with those sockets it carried 18.4 Gb/s inside a
 * training loop on a p3dn.24xlarge (NVIDIA/nccl#209, NCCL 2.4.7 with the multi-socket
 * transport), above 10, so at this rate the instance's allowance binds, not the
 * transport. Assumed: NCCL's ring keeps iperf3's goodput (no
 * NCCL measurement on a 10 Gigabit instance was found); the all-to-all and a flex
 * dispatcher the ring's, as every Ethernet entry. */
#define ENA10_GBITS 10.04

static const tsl_link_spec_t link_table[] = {
    /* Each InfiniBand entry is NCCL's measured ring over one card, not line rate x an
     * efficiency: the Gb/s figure is counted after encoding (64b/66b), so the card's
     * data rate is the Gb/s / 8, and NCCL's ring reaches 94-98 % of it. EDR: 12.2 GB/s
     * busbw, "as good as you can get" (NVIDIA/nccl-tests#29, sjeaugey 2019-12-06;
     * nccl#307: "~12 GB/s with each NIC", DGX-1's four EDR cards 47-48 GB/s; cost model
     * 127: at 0.85 Galvatron-BMW's 2 x 8 A100 moved more bytes than the link could
     * carry). HDR: a DGX A100's eight cards 192 GB/s all-reduce busbw (NVIDIA/nccl#812),
     * "24GB/s is the peak performance per 200G NIC (12 GB/s for 100G NICs)"
     * (NVIDIA/nccl-tests#119, sjeaugey 2022-11-17; nccl#412 "24GB/s inter-node"). NDR:
     * IB_RING_NDR. XDR: none published, assumed at NDR's share (94 %). Each entry's
     * all-to-all figure (a2a_bw) is apart since cost model 129: the cross-node
     * all-to-all bound (cost model 52) reads it, not the ring's (IB_A2A_HDR); its flex
     * dispatcher figure (flex_bw) since cost model 136: a flex dispatcher's network leg
     * reads it (IB_FLEX_NDR). */
    {"ib100", 12.2 * GBPS, 100 * GBPS / 8 * IB_A2A_LINE_SHARE, 100 * GBPS / 8 * IB_FLEX_LINE_SHARE,
     "EDR 100 Gb/s: NCCL's measured ring busbw over one card "
     "(NVIDIA/nccl-tests#29: 12.2 GB/s), one NIC; " SRC_IB_A2A_ASSUMED SRC_IB_FLEX_ASSUMED},
    {"ib200", 24.0 * GBPS, IB_A2A_HDR, 200 * GBPS / 8 * IB_FLEX_LINE_SHARE,
     "HDR 200 Gb/s: NCCL's measured ring busbw over one card (NVIDIA/nccl#812: 192 GB/s over "
     "a DGX A100's 8; nccl-tests#119: 24 GB/s a card), one NIC; " SRC_IB_A2A_MEASURED
         SRC_IB_FLEX_ASSUMED},
    {"ib400", IB_RING_NDR, IB_A2A_NDR, IB_FLEX_NDR,
     "NDR 400 Gb/s: NCCL's measured ring busbw over one ConnectX-7 (NVIDIA/nccl-tests#290: "
     "46-48 GB/s, the middle), one NIC; " SRC_IB_A2A_MEASURED SRC_IB_FLEX_MEASURED},
    {"ib800", 800 * GBPS / 8 * (IB_RING_NDR / (400 * GBPS / 8)), 800 * GBPS / 8 * IB_A2A_LINE_SHARE,
     800 * GBPS / 8 * IB_FLEX_LINE_SHARE,
     "XDR 800 Gb/s (NVIDIA Quantum-X800 InfiniBand, ConnectX-8 SuperNIC): ring assumed at NDR's "
     "measured 94 % of the data rate (none published), one NIC; " SRC_IB_A2A_ASSUMED
         SRC_IB_FLEX_ASSUMED},
    {"roce400", 400 * GBPS / 8 * 0.80, 0, 0,
     "400 GbE RoCE (NVIDIA Spectrum-X / ConnectX-7 400G, AMD Pollara 400): " SRC_ETH},
    {"eth10", 10 * GBPS / 8 * 0.80, 0, 0, "10 GbE: " SRC_ETH},
    {"ena10", (ENA10_GBITS * GBPS) / 8, 0, 0,
     "AWS's 10 Gigabit instance network (ENA: p3.8xlarge, AMP Sec. 4.3): the measured "
     "sustained 10.04 Gbit/s of a 10 Gigabit instance (cloudonaut.io EC2 Network Performance "
     "Cheat Sheet, 2018: iperf3 -P 10, m5.12xlarge), NCCL's sockets 2 threads x 8 on an ENA "
     "(net_socket.cc); a2a: the ring's, flex: the ring's (none published)"},
    {"eth25", 25 * GBPS / 8 * 0.80, 0, 0, "25 GbE: " SRC_ETH},
    {"eth50", 50 * GBPS / 8 * 0.80, 0, 0,
     "50 GbE (AWS g4dn.12xlarge's 50 Gb/s network, AMP Sec. 4.1): " SRC_ETH},
    {"eth100", 100 * GBPS / 8 * 0.80, 0, 0, "100 GbE: " SRC_ETH},
    /* measured, not line rate x an efficiency: NCCL over Omni-Path delivered well
     * under half of it (the same repo's V100 runs: "an issue with nccl that doesn't
     * fully utilize Intel OPA full bandwidth") */
    {"opa100", 40.5 * GBPS / 8, 0, 0,
     "Intel Omni-Path 100 Gb/s as NCCL 2.10.3 drives it (Jean Zay's A100 nodes, 4 per node): "
     "40.5 Gb/s, the median busbw of bigscience-workshop/bigscience "
     "experiments/bandwidth/all_reduce_bench-a100-n4.txt (358e3c8, 2022-01-28; 4 GB fp32 "
     "all-reduce over 4 nodes x 8 A100, 160 samples), whose ring crossed each node through "
     "one NIC each way (NET/IB/3 out, NET/IB/1 in): one NIC; a2a: the ring's, flex: the "
     "ring's (none published)"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

size_t tsl_gpu_count(void)
{
    return COUNT(gpu_table);
}

const tsl_gpu_spec_t *tsl_gpu_at(size_t i)
{
    return i < COUNT(gpu_table) ? &gpu_table[i] : NULL;
}

/* The family of a type: its name without the memory suffix ("A100-80G" → "A100"). */
static size_t family_len(const tsl_gpu_spec_t *type)
{
    const char *dash = strrchr(type->name, '-');
    return dash ? (size_t)(dash - type->name) : strlen(type->name);
}

bool tsl_gpu_model_matches(const char *model, uint64_t mem_bytes, const tsl_gpu_spec_t *type)
{
    char family[32];
    snprintf(family, sizeof family, "%.*s", (int)family_len(type), type->name);
    return family[0] && strcasestr(model, family) &&
           fabs((double)mem_bytes - (double)type->mem_bytes) <= 0.15 * (double)type->mem_bytes;
}

const tsl_gpu_spec_t *tsl_gpu_match_model(const char *model, uint64_t mem_bytes)
{
    const tsl_gpu_spec_t *best = NULL;
    for (size_t i = 0; i < COUNT(gpu_table); i++)
        if (tsl_gpu_model_matches(model, mem_bytes, &gpu_table[i]) &&
            (!best || family_len(&gpu_table[i]) > family_len(best)))
            best = &gpu_table[i];
    return best;
}

const tsl_gpu_spec_t *tsl_gpu_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < COUNT(gpu_aliases); i++)
        if (strcasecmp(name, gpu_aliases[i].alias) == 0)
            name = gpu_aliases[i].name;
    for (size_t i = 0; i < COUNT(gpu_table); i++)
        if (strcasecmp(name, gpu_table[i].name) == 0)
            return &gpu_table[i];
    return NULL;
}

size_t tsl_link_count(void)
{
    return COUNT(link_table);
}

const tsl_link_spec_t *tsl_link_at(size_t i)
{
    return i < COUNT(link_table) ? &link_table[i] : NULL;
}

double tsl_link_a2a_ratio(const tsl_link_spec_t *l)
{
    return l->a2a_bw > 0 ? l->a2a_bw / l->bw : 1.0;
}

double tsl_link_flex_ratio(const tsl_link_spec_t *l)
{
    return l->flex_bw > 0 ? l->flex_bw / l->bw : 1.0;
}

const tsl_link_spec_t *tsl_link_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < COUNT(link_table); i++)
        if (strcasecmp(name, link_table[i].name) == 0)
            return &link_table[i];
    return NULL;
}
