/*
 * prof.h — what tessel-worker measures on its GPUs, and the backends that
 * measure it (DESIGN.md "Profiles"; docs/profile-format.md is the JSON form).
 *
 * A backend fills a tsl_prof_t: `cuda` (the executor's cuda device ops and nccl
 * comm ops, worker/exec; built where meson finds CUDA, cuBLAS, NCCL and nvcc; the
 * measuring code is prof_dev.h's, written on the device ops so that the profile
 * times the blocks trials run) or `sim` (a device description file, every figure
 * computed from it and marked simulated). Both fill the same fields, so the JSON
 * they print has one schema.
 *
 * Units: seconds (_s), bytes (_bytes), GB/s = 1e9 bytes per second (_gbps),
 * FLOPs per operation (_flops; TFLOP/s = 1e12 FLOP/s). Every time is the median
 * of `iters` runs after `warmup` runs, timed with the device ops' events (cuda
 * backend: CUDA events).
 *
 * Ownership: tsl_prof_t is one fixed-size struct (no pointers); the caller
 * allocates it (it is large: put it on the heap) and zeroes it.
 * Depends on planner/ and (for the cuda backend) CUDA alone: no gRPC, no jansson.
 */
#ifndef TSL_PROF_H
#define TSL_PROF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

#define TSL_PROF_MAX_SHAPES  8u
#define TSL_PROF_MAX_AXIS    8u /* micro-batch sizes, TP splits */
#define TSL_PROF_MAX_BLOCKS  256u
#define TSL_PROF_MAX_GEMMS   128u
#define TSL_PROF_MAX_COLLS   512u
#define TSL_PROF_MAX_OVERLAP 4u
#define TSL_PROF_MAX_GPUS    64u

/* A Transformer layer shape: the attention block and the FFN block of it. */
typedef struct tsl_prof_shape {
    uint32_t hidden;     /* h */
    uint32_t seq_len;    /* s */
    uint32_t heads;      /* a */
    uint32_t head_dim;   /* h / a when 0 */
    uint32_t ffn_hidden; /* f; 4h when 0 */
    bool gated;          /* SwiGLU (two up projections) instead of GELU */
} tsl_prof_shape_t;

/* What to measure. tsl_prof_opts_default fills the defaults (docs/profile-format.md). */
typedef struct tsl_prof_opts {
    uint32_t n_shapes;
    tsl_prof_shape_t shapes[TSL_PROF_MAX_SHAPES];
    uint32_t n_mb;
    uint32_t mb[TSL_PROF_MAX_AXIS]; /* micro-batch sizes (samples per device) */
    uint32_t n_tp;
    uint32_t tp[TSL_PROF_MAX_AXIS]; /* TP splits the block is divided by */
    uint32_t warmup, iters;
    bool quick; /* fewer sizes, shorter loops */
    int device; /* CUDA device for one-device figures */
    /* blocks: the executor's unfused attention (the model's unfused_attn: the s×s
     * softmax stashed until backward) instead of its fused one (the default) */
    bool unfused_attn;
    const char *device_file; /* sim backend: the description file */
    /* the soak before the GEMM table (tsl_prof_soak): at most this many seconds of
     * back-to-back large GEMMs until the rate settles; 0: none (the table then runs
     * at whatever clock the GPU is at, near boost). Default TSL_PROF_SOAK_FULL_S,
     * TSL_PROF_SOAK_QUICK_S under quick. */
    double soak_max_s;
} tsl_prof_opts_t;

typedef enum { TSL_PROF_ATTENTION = 0, TSL_PROF_FFN = 1 } tsl_prof_block_kind_t;

/* One block (attention or FFN) of one shape at one micro-batch and TP split,
 * as one device of the TP group runs it (its 1/tp share of heads and FFN). */
typedef struct tsl_prof_block {
    tsl_prof_block_kind_t kind;
    tsl_prof_shape_t shape;
    uint32_t mb, tp;
    double fwd_s, bwd_s;
    double fwd_flops;   /* the GEMM FLOPs of the forward on this device */
    uint64_t mem_bytes; /* device memory the block's buffers held */
} tsl_prof_block_t;

/* One GEMM alone (bf16 in and out, fp32 accumulate), C[m×n] = A[m×k]·B[k×n] × batch. */
typedef struct tsl_prof_gemm {
    char what[40];
    uint32_t m, n, k, batch;
    double time_s;
    double flops; /* 2·m·n·k·batch */
} tsl_prof_gemm_t;

typedef enum {
    TSL_COLL_ALL_REDUCE = 0,
    TSL_COLL_ALL_GATHER,
    TSL_COLL_REDUCE_SCATTER,
    TSL_COLL_SEND_RECV,
    TSL_COLL_COUNT
} tsl_coll_t;

typedef struct tsl_prof_coll {
    tsl_coll_t op;
    uint32_t group; /* ranks */
    uint64_t bytes; /* nccl-tests' size: the full buffer */
    double time_s;
    double algbw_gbps, busbw_gbps;
} tsl_prof_coll_t;

/* A GEMM loop and a communication (or copy) loop, alone and together. */
typedef struct tsl_prof_overlap {
    char comm[64]; /* "nccl-all-reduce", "d2d-copy", "h2d-copy" */
    bool stand_in; /* a copy standing in for NCCL (one GPU) */
    uint32_t gemm_m, gemm_n, gemm_k;
    uint64_t comm_bytes; /* per comm iteration */
    double gemm_alone_s, comm_alone_s, gemm_together_s, comm_together_s;
    double gemm_slowdown, comm_slowdown; /* together / alone, ≥ ~1 */
} tsl_prof_overlap_t;

/* The soak: what ran before the GEMM table so that it is timed at the clock a
 * training step sustains under the power limit, not the boost clock of a short burst
 * (docs/profile-format.md "Soak"; docs/cost-model.md "Sustained clocks"). Windows of
 * window_s seconds of back-to-back gemm³ GEMMs; settled when the last
 * TSL_PROF_SOAK_STABLE windows' rates lie within TSL_PROF_SOAK_TOL of each other
 * (max/min − 1), or stopped at max_s unsettled. */
#define TSL_PROF_SOAK_FULL_S  60.0
#define TSL_PROF_SOAK_QUICK_S 15.0
#define TSL_PROF_SOAK_TOL     0.01
#define TSL_PROF_SOAK_STABLE  5u
typedef struct tsl_prof_soak {
    double max_s;                     /* the cap asked for; 0: no soak ran */
    double window_s;                  /* each window's length */
    double keep_warm_s;               /* filler GEMMs before each table entry and block (0: none) */
    uint32_t gemm;                    /* the soak GEMM's m = n = k */
    uint32_t windows;                 /* windows run */
    double seconds;                   /* device seconds the windows took */
    bool settled;                     /* false: stopped at max_s first */
    double first_tflops, last_tflops; /* the first window's (near boost) and the last's */
    double settled_tflops;            /* median of the last (up to) TSL_PROF_SOAK_STABLE windows */
    double spread;                    /* their max/min − 1 */
} tsl_prof_soak_t;

/* One soak window: run about want_s seconds of work, say how many seconds it took
 * (> 0) and its rate in FLOP/s. 0 / -1 with err. */
typedef int (*tsl_prof_window_fn)(void *ud, double want_s, double *took_s, double *flops_per_s,
                                  tsl_err_t *err);

/* Runs windows of s->window_s (> 0) through fn until the last TSL_PROF_SOAK_STABLE
 * agree within TSL_PROF_SOAK_TOL or their seconds reach s->max_s; fills the rest of s.
 * s->max_s ≤ 0 runs nothing. progress (NULL: silent) gets one line per window and a
 * last line saying settled or stopped at the cap. A drift slower than TOL over STABLE
 * windows reads as settled. -1: fn's error, or a window that took no time. */
int tsl_prof_soak(tsl_prof_window_fn fn, void *ud, tsl_prof_soak_t *s, FILE *progress,
                  tsl_err_t *err);

typedef struct tsl_prof {
    bool simulated;
    char backend[8];
    char created[32]; /* UTC, ISO 8601 */
    char command[256];
    /* hardware key */
    char hw_gpu[32];  /* a built-in GPU name when one matches ("H100-80G") */
    char hw_link[32]; /* "single", "nvlink", "pcie" */
    uint32_t gpus;    /* GPUs on the node */
    /* device */
    char model[96];
    char uuid[48];                         /* GPU 0's, nvidia-smi -L style */
    char gpu_uuids[TSL_PROF_MAX_GPUS][48]; /* every GPU's (cuda; "" elsewhere) */
    uint64_t mem_total_bytes, mem_free_bytes;
    uint32_t sm_count;
    uint32_t cc_major, cc_minor;
    char driver_version[16], runtime_version[16], nccl_version[16], cublas_version[16];
    uint32_t sm_clock_mhz, mem_clock_mhz, power_limit_w; /* 0: not readable */
    /* conditions */
    uint32_t warmup, iters;
    /* measurements */
    uint32_t n_gemms;
    tsl_prof_gemm_t gemms[TSL_PROF_MAX_GEMMS];
    uint32_t n_blocks;
    tsl_prof_block_t blocks[TSL_PROF_MAX_BLOCKS];
    double h2d_gbps, d2h_gbps, dmem_gbps;
    uint64_t h2d_bytes, dmem_bytes; /* transfer sizes */
    uint32_t n_colls;
    tsl_prof_coll_t colls[TSL_PROF_MAX_COLLS];
    uint32_t n_overlap;
    tsl_prof_overlap_t overlap[TSL_PROF_MAX_OVERLAP];
    /* the blocks' attention core: "executor-fused" / "executor-unfused" (cuda, the
     * executor's layers); "" reads as the sim backend's "batched-gemm" */
    char attention_core[24];
    tsl_prof_soak_t soak; /* what ran before the GEMM table (max_s 0: nothing) */
    char notes[1024];
} tsl_prof_t;

/* A backend: fills p (zeroed by the caller) or returns -1 with err set
 * (TSL_E_DEVICE for a CUDA/cuBLAS/NCCL failure, naming the call). */
typedef int (*tsl_prof_run_fn)(const tsl_prof_opts_t *o, tsl_prof_t *p, tsl_err_t *err);

typedef struct tsl_prof_backend {
    const char *name;
    tsl_prof_run_fn run; /* NULL: not built into this binary */
    const char *why_absent;
} tsl_prof_backend_t;

const tsl_prof_backend_t *tsl_prof_backend_find(const char *name);

void tsl_prof_opts_default(tsl_prof_opts_t *o, bool quick);
/* "h=1024,s=1024,a=16[,d=64][,f=4096][,gated]" */
int tsl_prof_parse_shape(const char *text, tsl_prof_shape_t *out, tsl_err_t *err);
/* "1,2,4,8" into at most TSL_PROF_MAX_AXIS positive values */
int tsl_prof_parse_list(const char *text, uint32_t *out, uint32_t *n, const char *what,
                        tsl_err_t *err);
/* The lists as a whole, after parsing: no micro-batch size or TP split twice (each
 * would be measured and reported twice), and every TP split dividing the heads and
 * FFN width of at least one shape (the profilers skip a block whose split does not:
 * a split that divides none measured nothing, and a profile of no block is refused
 * by the planner). mb_what / tp_what name the option in the message. */
int tsl_prof_opts_check(const tsl_prof_opts_t *o, const char *mb_what, const char *tp_what,
                        tsl_err_t *err);
/* head_dim and ffn_hidden resolved (h/a, 4h) */
tsl_prof_shape_t tsl_prof_shape_resolved(const tsl_prof_shape_t *s);

/* Forward GEMM FLOPs of one block on one device of a TP group of tp:
 * attention 2·T·h·3h/t (QKV) + 4·T·s·h/t (QKᵀ, PV) + 2·T·h·h/t (out); FFN
 * 2·(g+1)·T·h·f/t, with T = mb·s tokens and the attention width a·d for h. */
double tsl_prof_block_flops(tsl_prof_block_kind_t kind, const tsl_prof_shape_t *s, uint32_t mb,
                            uint32_t tp);

/* Bytes of one block's buffers as the sim backend counts them (bf16): its input,
 * output and their gradients, weights and weight gradients, the stashed
 * intermediates of an unfused attention and their gradients (docs/profile-format.md;
 * the cuda backend reports what the executor's block held instead). */
uint64_t tsl_prof_block_bytes(tsl_prof_block_kind_t kind, const tsl_prof_shape_t *s, uint32_t mb,
                              uint32_t tp);

/* The built-in GPU name a device model matches ("NVIDIA H100 80GB HBM3", 80 GiB
 * → "H100-80G"); the model itself when none does. */
void tsl_prof_hw_name(const char *model, uint64_t mem_bytes, char *out, size_t cap);

/* Why the cuda backend found no GPU, in an operator's words, into out (cap bytes):
 * the runtime's own text `raw` kept in parentheses. driver_too_old: the runtime said
 * cudaErrorInsufficientDriver; driver_cuda: cudaDriverGetVersion's figure (0: no
 * driver loaded, else the newest CUDA the driver runs, 12040 = 12.4); runtime_cuda:
 * CUDART_VERSION (13000 = 13.0). Otherwise none is visible. */
void tsl_prof_no_gpu_reason(bool driver_too_old, int driver_cuda, int runtime_cuda, const char *raw,
                            char *out, size_t cap);

/* Median of v[0..n) (sorts v in place); 0 for n == 0. */
double tsl_prof_median(double *v, uint32_t n);
/* Bytes over seconds, in GB/s (1e9 bytes/s); 0 when t_s ≤ 0. */
double tsl_prof_gbps(double bytes, double t_s);
/* nccl-tests' bus bandwidth factor: all-reduce 2(n−1)/n, all-gather and
 * reduce-scatter (n−1)/n, send/recv 1. */
double tsl_prof_busbw_factor(tsl_coll_t op, uint32_t n);
const char *tsl_prof_coll_name(tsl_coll_t op);            /* "all_reduce", ... */
const char *tsl_prof_block_name(tsl_prof_block_kind_t k); /* "attention", "ffn" */

/* Output: the JSON document of docs/profile-format.md, or a human table. */
int tsl_prof_write_json(FILE *f, const tsl_prof_t *p);
void tsl_prof_print_table(FILE *f, const tsl_prof_t *p);

/* Backends (NULL-safe to reference only where built). */
int tsl_prof_run_sim(const tsl_prof_opts_t *o, tsl_prof_t *p, tsl_err_t *err);
int tsl_prof_run_cuda(const tsl_prof_opts_t *o, tsl_prof_t *p, tsl_err_t *err);

#endif
