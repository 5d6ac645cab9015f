/*
 * prof_dev.h — the profiler's measuring code, written on the executor's device and
 * comm ops (worker/exec devops.h, commops.h): one GPU stack for trials and profiles.
 * The cuda backend (prof_cuda.c) runs it on the cuda device ops and the nccl comm
 * ops; the tests run it on the cpu device ops and loopback comm ops, so that every
 * path below runs without a GPU (the figures are then the CPU's, and meaningless).
 *
 * What each figure is (docs/profile-format.md): GEMMs alone through devops gemm;
 * blocks are the executor's own layer forward and backward (exec_block.h: fused
 * attention by query chunks unless opts.unfused_attn); PCIe and device-memory
 * bandwidth through copy_bytes; collectives through commops, one rank per GPU, each
 * rank a thread of this process with its own device and comm ops; overlap: a GEMM
 * loop on the compute stream against an all-reduce (or a copy standing in for it) on
 * the comm stream. Every time is the median of opts.iters runs after opts.warmup,
 * timed with the devops' events; a collective's run is the slowest rank's.
 *
 * Errors: 0 / -1 with tsl_err_t (the devops' and commops' own: TSL_E_DEVICE naming
 * the CUDA, cuBLAS or NCCL call). Nothing is left allocated after a call returns.
 */
#ifndef TSL_PROF_DEV_H
#define TSL_PROF_DEV_H

#include "commops.h"
#include "devops.h"
#include "prof.h"

/* The ranks of a world for the collectives and the multi-GPU overlap figure: open
 * makes what the ranks share (the cuda backend: the ncclUniqueId), rank makes rank
 * r's device and comm ops (called on rank r's own thread), close ends the world after
 * every rank destroyed its ops. */
typedef struct tsl_prof_ranks {
    int (*open)(void *ud, int size, void **world, tsl_err_t *err);
    int (*rank)(void *ud, void *world, int rank, int size, tsl_devops_t **dev, tsl_commops_t **comm,
                tsl_err_t *err);
    void (*close)(void *ud, void *world);
    void *ud;
} tsl_prof_ranks_t;

/* Sizes of the one-device figures and of the collectives (bytes, GEMM m = n = k). */
typedef struct tsl_prof_sizes {
    uint32_t warm_gemm;        /* the soak's GEMM (m = n = k; 0: no soak, no warm-up) */
    double soak_window_s;      /* the soak's window (prof.h tsl_prof_soak) */
    double keep_warm_s;        /* filler GEMMs before each table GEMM and block */
    uint32_t ref_gemm[2];      /* the two reference GEMMs */
    uint64_t h2d_bytes;        /* H2D and D2H copies */
    uint64_t dmem_bytes;       /* the device-to-device copy */
    uint64_t coll_max_bytes;   /* collectives from 1 KiB, ×4, up to this */
    uint32_t overlap_gemm;     /* the overlap figure's GEMM */
    uint64_t overlap_bytes[3]; /* its all-reduce, D2D copy, H2D copy */
    double overlap_loop_s;     /* the length of each side's loop */
} tsl_prof_sizes_t;

/* The cuda backend's: an 8192³ soak in 1 s windows, 50 ms of filler before each
 * figure (20 ms quick), references 8192³ and 4096³, 256 MiB H2D (64
 * quick), 1 GiB D2D (256 MiB quick), collectives to 1 GiB (256 MiB quick), overlap an
 * 8192³ GEMM against 256 MiB all-reduces, 512 MiB D2D or 256 MiB H2D copies, 0.2 s. */
void tsl_prof_sizes_default(tsl_prof_sizes_t *s, bool quick);

typedef struct tsl_prof_dev {
    const tsl_prof_opts_t *o;
    tsl_prof_t *p;
    tsl_prof_sizes_t sz;
    tsl_devops_t *dev; /* the one-device figures' (opts.device) */
    tsl_event_t *e0, *e1;
    uint64_t seed;
    /* the soak's GEMM and buffers, held from the soak to the end of the blocks */
    tsl_gemm_t fill;
    double fill_gemm_s; /* one fill GEMM's last measured time */
    uint32_t fill_n;    /* fill GEMMs before each figure (0: none) */
} tsl_prof_dev_t;

/* dev stays the caller's; p gets the figures appended (zeroed by the caller). */
int tsl_prof_dev_open(tsl_prof_dev_t *c, const tsl_prof_opts_t *o, const tsl_prof_sizes_t *sz,
                      tsl_devops_t *dev, tsl_prof_t *p, tsl_err_t *err);
void tsl_prof_dev_close(tsl_prof_dev_t *c);

/* One GEMM C[m×n] = A[m×k]·B[k×n] × batch on its own seeded buffers (p->gemms). */
int tsl_prof_dev_gemm(tsl_prof_dev_t *c, const char *what, uint32_t m, uint32_t n, uint32_t k,
                      uint32_t batch, tsl_err_t *err);
/* The executor's block of one shape at (mb, tp) (p->blocks; a split the shape's
 * heads or FFN do not divide, or a head width other than h/a, is skipped). */
int tsl_prof_dev_block(tsl_prof_dev_t *c, tsl_prof_block_kind_t kind, const tsl_prof_shape_t *s,
                       uint32_t mb, uint32_t tp, tsl_err_t *err);
int tsl_prof_dev_bandwidth(tsl_prof_dev_t *c, tsl_err_t *err);
/* Every collective over worlds of 2..n ranks (1 when n is 1). */
int tsl_prof_dev_collectives(tsl_prof_dev_t *c, const tsl_prof_ranks_t *r, int n, tsl_err_t *err);
/* n > 1: GEMMs against an all-reduce over n ranks (rank 0's figure); else against a
 * D2D copy; then against an H2D copy. */
int tsl_prof_dev_overlap(tsl_prof_dev_t *c, const tsl_prof_ranks_t *r, int n, tsl_err_t *err);

/* The soak (o->soak_max_s; p->soak): windows of sz.warm_gemm³ GEMMs until the rate
 * settles or the cap, progress on stderr; then keeps its buffers for the filler GEMMs
 * that run before each GEMM and block figure until tsl_prof_dev_soak_end (or close).
 * soak_max_s 0: the old half-second warm-up only, no filler. */
int tsl_prof_dev_soak(tsl_prof_dev_t *c, tsl_err_t *err);
void tsl_prof_dev_soak_end(tsl_prof_dev_t *c);

/* Everything, in the cuda backend's order: the soak, GEMMs, blocks, bandwidth,
 * collectives, overlap, the notes. */
int tsl_prof_dev_run(tsl_prof_dev_t *c, const tsl_prof_ranks_t *r, int n, tsl_err_t *err);

#endif
