/*
 * test_prof.c — tessel-worker's profiler without a GPU: the pure parts
 * (worker/profile/prof_util.c: nccl-tests' bus-bandwidth factors, bandwidth
 * arithmetic, the median, FLOP and byte counts of the blocks, option parsing,
 * hardware names), and the measuring code (prof_dev.h) run on the executor's cpu
 * device ops and loopback comm ops — the code the cuda backend runs on the cuda and
 * nccl ops: fused attention by default, unfused when asked, every figure filled.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "exec_block.h"
#include "layer_dense.h"
#include "model.h"
#include "prof.h"
#include "prof_dev.h"

static void test_busbw(void)
{
    /* nccl-tests (doc/PERFORMANCE.md): all-reduce 2(n-1)/n, all-gather and
     * reduce-scatter (n-1)/n, send/recv 1 */
    CHECK_NEAR(tsl_prof_busbw_factor(TSL_COLL_ALL_REDUCE, 8), 1.75, 1e-12, "ar 8");
    CHECK_NEAR(tsl_prof_busbw_factor(TSL_COLL_ALL_REDUCE, 2), 1.0, 1e-12, "ar 2");
    CHECK(tsl_prof_busbw_factor(TSL_COLL_ALL_REDUCE, 1) == 0, "ar 1: no bus traffic");
    CHECK_NEAR(tsl_prof_busbw_factor(TSL_COLL_ALL_GATHER, 4), 0.75, 1e-12, "ag 4");
    CHECK_NEAR(tsl_prof_busbw_factor(TSL_COLL_REDUCE_SCATTER, 8), 0.875, 1e-12, "rs 8");
    CHECK(tsl_prof_busbw_factor(TSL_COLL_SEND_RECV, 2) == 1.0, "sendrecv");
    CHECK(tsl_prof_busbw_factor(TSL_COLL_SEND_RECV, 8) == 1.0, "sendrecv 8");
    CHECK(tsl_prof_busbw_factor(TSL_COLL_ALL_REDUCE, 0) == 0, "n 0");
    CHECK(strcmp(tsl_prof_coll_name(TSL_COLL_REDUCE_SCATTER), "reduce_scatter") == 0, "name");
    /* 1 GiB all-reduce over 8 ranks in 10 ms: algbw 107.4 GB/s, busbw 187.9 */
    double alg = tsl_prof_gbps(1073741824.0, 0.010);
    CHECK_NEAR(alg, 107.3741824, 1e-9, "algbw %g", alg);
    CHECK_NEAR(alg * tsl_prof_busbw_factor(TSL_COLL_ALL_REDUCE, 8), 187.9048192, 1e-9, "busbw");
}

static void test_bandwidth(void)
{
    CHECK(tsl_prof_gbps(1e9, 1.0) == 1.0, "1 GB in 1 s");
    CHECK(tsl_prof_gbps(1e9, 0) == 0, "no time: 0, not inf");
    CHECK(tsl_prof_gbps(1e9, -1) == 0, "negative time");
    /* device memory: a D2D copy of 1 GiB in 0.716 ms reads and writes 2 GiB */
    CHECK_NEAR(tsl_prof_gbps(2.0 * 1073741824, 716e-6), 2999.28, 1e-5, "d2d read+write");
}

static void test_median(void)
{
    double a[] = {5, 1, 4, 2, 3};
    CHECK(tsl_prof_median(a, 5) == 3, "odd");
    double b[] = {10, 1, 2, 1000};
    CHECK(tsl_prof_median(b, 4) == 6, "even: mean of the middle two, outliers ignored");
    double c[] = {7};
    CHECK(tsl_prof_median(c, 1) == 7, "one");
    CHECK(tsl_prof_median(NULL, 0) == 0, "none");
}

/* The profiler's FLOPs must be the model's (model.h) so that a measured rate
 * means the same thing in the cost model. */
static void test_flops_match_model(void)
{
    tsl_prof_shape_t s = {.hidden = 1024, .seq_len = 1024, .heads = 16};
    tsl_layer_t l = gpt2_medium(1024);
    tsl_err_t err = {0};
    CHECK(tsl_layer_derive(&l, &err) == 0, "%s", err.msg);
    double a = tsl_prof_block_flops(TSL_PROF_ATTENTION, &s, 1, 1);
    double f = tsl_prof_block_flops(TSL_PROF_FFN, &s, 1, 1);
    CHECK_NEAR(a + f, l.fwd_flops, 1e-12, "attention + ffn = layer (%g + %g vs %g)", a, f,
               l.fwd_flops);
    CHECK_NEAR(tsl_prof_block_flops(TSL_PROF_ATTENTION, &s, 4, 2), 2 * a, 1e-12, "mb 4 tp 2");
    tsl_prof_shape_t g = {
        .hidden = 4096, .seq_len = 2048, .heads = 32, .ffn_hidden = 11008, .gated = true};
    CHECK_NEAR(tsl_prof_block_flops(TSL_PROF_FFN, &g, 1, 1), 6.0 * 2048 * 4096 * 11008, 1e-12,
               "swiglu: three projections");
    /* bytes: FFN mb 1 tp 1 h 1024: 4·T·h + 2·h·f + 2·f·h + 2·T·f + 2·T·f elements */
    uint64_t want = 2ull * (4ull * 1024 * 1024 + 2ull * 1024 * 4096 * 2 + 4ull * 1024 * 4096);
    CHECK(tsl_prof_block_bytes(TSL_PROF_FFN, &s, 1, 1) == want, "ffn bytes");
    CHECK(tsl_prof_block_bytes(TSL_PROF_ATTENTION, &s, 2, 1) >
              tsl_prof_block_bytes(TSL_PROF_ATTENTION, &s, 1, 1),
          "attention bytes grow with mb");
}

static void test_parse(void)
{
    tsl_prof_shape_t s;
    tsl_err_t err = {0};
    CHECK(tsl_prof_parse_shape("h=2048,s=1024,a=32", &s, &err) == 0, "%s", err.msg);
    CHECK(s.hidden == 2048 && s.seq_len == 1024 && s.heads == 32 && !s.gated, "fields");
    tsl_prof_shape_t r = tsl_prof_shape_resolved(&s);
    CHECK(r.head_dim == 64 && r.ffn_hidden == 8192, "resolved d and f");
    CHECK(tsl_prof_parse_shape("h=4096,s=2048,a=32,f=11008,gated", &s, &err) == 0, "%s", err.msg);
    CHECK(s.gated && s.ffn_hidden == 11008, "gated");
    CHECK(tsl_prof_parse_shape("h=1024,s=1024", &s, &err) != 0 && strstr(err.msg, "a") != NULL,
          "missing heads: %s", err.msg);
    CHECK(tsl_prof_parse_shape("h=1000,s=8,a=3", &s, &err) != 0, "h not divisible by a");
    CHECK(tsl_prof_parse_shape("h=1024,s=1024,a=16,x=1", &s, &err) != 0 &&
              strstr(err.msg, "unknown key") != NULL,
          "%s", err.msg);
    CHECK(tsl_prof_parse_shape("h=-1,s=1,a=1", &s, &err) != 0, "negative");
    uint32_t v[TSL_PROF_MAX_AXIS], n;
    CHECK(tsl_prof_parse_list("1,2,4", v, &n, "--mb", &err) == 0 && n == 3 && v[2] == 4, "list");
    CHECK(tsl_prof_parse_list("1,0", v, &n, "--mb", &err) != 0 && strstr(err.msg, "--mb"),
          "zero: %s", err.msg);
    CHECK(tsl_prof_parse_list("1,2,3,4,5,6,7,8,9", v, &n, "--tp", &err) != 0, "too many");
    CHECK(tsl_prof_parse_list("1,,2", v, &n, "--mb", &err) != 0 &&
              strstr(err.msg, "--mb: an empty entry in '1,,2'") != NULL,
          "empty entry: %s", err.msg);
    CHECK(tsl_prof_parse_list("1,2,", v, &n, "--tp", &err) != 0, "trailing comma: %s", err.msg);
    tsl_prof_opts_t o;
    tsl_prof_opts_default(&o, true);
    CHECK(o.n_shapes == 2 && o.n_mb == 3 && o.n_tp == 2 && o.iters > 0, "quick defaults");
    /* the lists as a whole: a split that divides no shape's heads (16, 32) measured
     * nothing and made a profile of no block, which the planner refuses; a value
     * twice made every row twice */
    CHECK(tsl_prof_opts_check(&o, "--mb", "--tp", &err) == 0, "defaults pass: %s", err.msg);
    o.tp[1] = 3;
    CHECK(tsl_prof_opts_check(&o, "--mb", "--tp", &err) != 0 &&
              strstr(err.msg, "--tp: 3 divides the heads and FFN width of no shape") != NULL,
          "tp 3: %s", err.msg);
    o.tp[1] = 1;
    CHECK(tsl_prof_opts_check(&o, "--mb", "profile.tp", &err) != 0 &&
              strstr(err.msg, "profile.tp: 1 given twice") != NULL,
          "tp 1,1: %s", err.msg);
    o.tp[1] = 32; /* the second shape's heads: it alone is timed at 32 */
    o.mb[2] = 4;
    CHECK(tsl_prof_opts_check(&o, "--mb", "--tp", &err) != 0 &&
              strstr(err.msg, "--mb: 4 given twice") != NULL,
          "mb 1,4,4: %s", err.msg);
    o.mb[2] = 16;
    CHECK(tsl_prof_opts_check(&o, "--mb", "--tp", &err) == 0, "tp 1,32: %s", err.msg);
}

static void test_hw_name(void)
{
    char b[32];
    tsl_prof_hw_name("NVIDIA H100 80GB HBM3", 85017493504ull, b, sizeof(b));
    CHECK(strcmp(b, "H100-80G") == 0, "%s", b);
    tsl_prof_hw_name("NVIDIA A100-SXM4-40GB", 42505273344ull, b, sizeof(b));
    CHECK(strcmp(b, "A100-40G") == 0, "%s", b);
    tsl_prof_hw_name("NVIDIA A100-SXM4-80GB", 85198045184ull, b, sizeof(b));
    CHECK(strcmp(b, "A100-80G") == 0, "%s", b);
    tsl_prof_hw_name("NVIDIA L4", 23580639232ull, b, sizeof(b));
    CHECK(strcmp(b, "NVIDIA L4") == 0, "unknown: the model itself: %s", b);
}

/* The cuda backend's "no GPU" in an operator's words, the runtime's text kept. */
static void test_no_gpu_reason(void)
{
    const char *raw = "CUDA driver version is insufficient for CUDA runtime version";
    char b[TSL_ERR_MAX];
    tsl_prof_no_gpu_reason(true, 0, 13000, raw, b, sizeof b);
    CHECK(strstr(b, "no NVIDIA driver is loaded") && strstr(b, "CUDA 13.0") &&
              strstr(b, "(the CUDA runtime: CUDA driver version is insufficient") &&
              !strstr(b, "too old"),
          "no driver: %s", b);
    tsl_prof_no_gpu_reason(true, 12040, 13000, raw, b, sizeof b);
    CHECK(strstr(b, "the NVIDIA driver is too old for CUDA 13.0") &&
              strstr(b, "CUDA 12.4 at most") && strstr(b, "update the driver") &&
              strstr(b, "(the CUDA runtime: CUDA driver"),
          "an old driver: %s", b);
    tsl_prof_no_gpu_reason(false, 13000, 13000, "no CUDA-capable device is detected", b, sizeof b);
    CHECK(strstr(b, "no GPU visible") && strstr(b, "CUDA_VISIBLE_DEVICES") &&
              strstr(b, "(the CUDA runtime: no CUDA-capable device is detected)") &&
              !strstr(b, "driver is"),
          "none visible: %s", b);
}

/* ---- the measuring code on the cpu ops ---- */

static int cpu_open(void *ud, int size, void **world, tsl_err_t *err)
{
    (void)ud;
    return tsl_comm_loopback_world(size, (tsl_loopback_world_t **)world, err);
}

static int cpu_rank(void *ud, void *world, int rank, int size, tsl_devops_t **dev,
                    tsl_commops_t **comm, tsl_err_t *err)
{
    (void)ud, (void)size;
    *dev = NULL, *comm = NULL;
    return tsl_devops_cpu_create(0, dev, err) || tsl_comm_loopback_rank(world, rank, comm, err);
}

static void cpu_close(void *ud, void *world)
{
    (void)ud;
    tsl_comm_loopback_world_free(world);
}

static const tsl_prof_ranks_t cpu_ranks = {cpu_open, cpu_rank, cpu_close, NULL};

/* Small enough for a CPU: no warm-up, 64³ and 32³ references, 1 MiB copies,
 * collectives to 64 KiB, a 64³ GEMM against 256 KiB of communication for 10 ms. */
static tsl_prof_sizes_t tiny_sizes(void)
{
    return (tsl_prof_sizes_t){.ref_gemm = {64, 32},
                              .h2d_bytes = 1u << 20,
                              .dmem_bytes = 1u << 20,
                              .coll_max_bytes = 64u << 10,
                              .overlap_gemm = 64,
                              .overlap_bytes = {256u << 10, 256u << 10, 256u << 10},
                              .overlap_loop_s = 0.01};
}

static tsl_prof_opts_t tiny_opts(const char *shape, bool unfused)
{
    tsl_prof_opts_t o;
    tsl_err_t err = {0};
    tsl_prof_opts_default(&o, true);
    o.n_shapes = 1;
    CHECK(tsl_prof_parse_shape(shape, &o.shapes[0], &err) == 0, "%s", err.msg);
    o.n_mb = 1, o.mb[0] = 2;
    o.n_tp = 2, o.tp[0] = 1, o.tp[1] = 2;
    o.warmup = 0, o.iters = 2;
    o.unfused_attn = unfused;
    return o;
}

/* One attention block, fused and unfused: the executor's chunk rule (256 query rows
 * here) or none, and the unfused block holds its b·a·s² softmax stash: b·a·s² + a·s²
 * (its dP workspace) against the fused 2·a·256·s (P and dP of a chunk), 4-byte
 * floats on the cpu ops. */
static void test_block_fused_unfused(void)
{
    tsl_devops_t *dev = NULL;
    tsl_err_t err = {0};
    CHECK(tsl_devops_cpu_create(0, &dev, &err) == 0, "%s", err.msg);
    uint64_t b = 2, a = 4, s = 1024, mem[2] = {0, 0};
    for (int unfused = 0; unfused < 2; unfused++) {
        tsl_prof_t *p = calloc(1, sizeof(*p));
        tsl_prof_opts_t o = tiny_opts("h=64,s=1024,a=4", unfused);
        tsl_prof_sizes_t sz = tiny_sizes();
        tsl_prof_dev_t c;
        CHECK(tsl_prof_dev_open(&c, &o, &sz, dev, p, &err) == 0, "%s", err.msg);
        CHECK(tsl_prof_dev_block(&c, TSL_PROF_ATTENTION, &o.shapes[0], 2, 1, &err) == 0, "%s",
              err.msg);
        CHECK(p->n_blocks == 1 && p->blocks[0].fwd_s > 0 && p->blocks[0].bwd_s > 0,
              "unfused %d: one timed block", unfused);
        mem[unfused] = p->blocks[0].mem_bytes;
        CHECK(dev->used_bytes(dev) == 0, "unfused %d: the block freed all it held", unfused);
        tsl_prof_dev_close(&c);
        free(p);
        /* which path: the chunk the executor's block runs with */
        tsl_exec_layer_t l = {.kind = TSL_LAYER_ATTENTION,
                              .seq = 1024,
                              .hidden = 64,
                              .heads = 4,
                              .ffn = 256,
                              .unfused_attn = unfused,
                              .causal = true,
                              .tp = 1,
                              .dw = 1,
                              .b = 2};
        tsl_exec_block_t *k = NULL;
        CHECK(tsl_exec_block_create(dev, &l, 0, 1, &k, &err) == 0, "%s", err.msg);
        CHECK(tsl_exec_block_chunk(k) == (unfused ? 0u : 256u), "chunk %u",
              tsl_exec_block_chunk(k));
        tsl_exec_block_destroy(k);
    }
    uint64_t want = 4 * (b * a * s * s + a * s * s - 2 * a * 256 * s);
    CHECK(mem[1] - mem[0] == want, "unfused holds %llu bytes more, want %llu",
          (unsigned long long)(mem[1] - mem[0]), (unsigned long long)want);
    dev->destroy(dev);
}

/* A clock that decays from 8 % above 600 TFLOP/s with a 3 s time constant, sampled
 * at each window's end (a window that took no time when `broken`). */
typedef struct fake_clock {
    double t_s;
    bool broken;
} fake_clock_t;

static int fake_window(void *ud, double want_s, double *took_s, double *rate, tsl_err_t *err)
{
    (void)err;
    fake_clock_t *k = ud;
    k->t_s += want_s;
    *took_s = k->broken ? 0 : want_s;
    *rate = 600e12 * (1 + 0.08 * exp(-k->t_s / 3));
    return 0;
}

/* The soak on the fake clock with its progress in a file: into line, the first line
 * holding `needle` (empty when none does). */
static void soak_logged(fake_clock_t *k, tsl_prof_soak_t *s, const char *needle, char *line,
                        size_t cap)
{
    tsl_err_t err = {0};
    FILE *log = tmpfile();
    CHECK(log != NULL, "tmpfile");
    if (log == NULL)
        return;
    CHECK(tsl_prof_soak(fake_window, k, s, log, &err) == 0, "%s", err.msg);
    rewind(log);
    line[0] = '\0';
    while (fgets(line, (int)cap, log) && !strstr(line, needle))
        ;
    fclose(log);
}

/* The soak's rule (prof_soak.c): it waits for the decay, not the first windows, and a
 * bounded soak stops at its cap saying so. */
static void test_soak_rule(void)
{
    tsl_err_t err = {0};
    fake_clock_t k = {0};
    tsl_prof_soak_t s = {.max_s = 60, .window_s = 1};
    char line[512];
    soak_logged(&k, &s, "settled at", line, sizeof line);
    CHECK(s.settled && s.windows >= TSL_PROF_SOAK_STABLE && s.seconds < 60, "settled after %u",
          s.windows);
    CHECK(s.spread <= TSL_PROF_SOAK_TOL, "spread %g", s.spread);
    /* the first window is near boost; the settled rate within 1 % of the sustained 600 */
    CHECK(s.first_tflops > 620, "first %g", s.first_tflops);
    CHECK(s.settled_tflops > 600 && s.settled_tflops < 606, "settled %g", s.settled_tflops);
    CHECK(strstr(line, "soak settled at") != NULL, "progress: %s", line);

    /* a 3 s cap: three windows, not settled, and the message names the cap */
    k = (fake_clock_t){0};
    s = (tsl_prof_soak_t){.max_s = 3, .window_s = 1};
    soak_logged(&k, &s, "cap", line, sizeof line);
    CHECK(!s.settled && s.windows == 3 && s.seconds == 3, "capped: %u windows", s.windows);
    CHECK(s.settled_tflops > 620, "the capped rate is still above sustained: %g", s.settled_tflops);
    CHECK(strstr(line, "stopped at its 3 s cap before settling") != NULL, "%s", line);

    /* none asked: nothing runs */
    k = (fake_clock_t){0};
    s = (tsl_prof_soak_t){.max_s = 0, .window_s = 1};
    CHECK(tsl_prof_soak(fake_window, &k, &s, NULL, &err) == 0 && s.windows == 0 && k.t_s == 0,
          "no soak");
    /* a window that took no time is an error, not an endless loop */
    k = (fake_clock_t){.broken = true};
    s = (tsl_prof_soak_t){.max_s = 10, .window_s = 1};
    CHECK(tsl_prof_soak(fake_window, &k, &s, NULL, &err) == -1 && strstr(err.msg, "soak"), "%s",
          err.msg);
}

/* The soak on the cpu device ops: windows of 64³ GEMMs before the table, its record in
 * the profile, not a row of the table, and its buffers freed after the blocks. */
static void test_dev_soak(void)
{
    tsl_devops_t *dev = NULL;
    tsl_err_t err = {0};
    tsl_prof_t *p = calloc(1, sizeof(*p));
    tsl_prof_opts_t o = tiny_opts("h=64,s=64,a=4", false);
    tsl_prof_sizes_t sz = tiny_sizes();
    sz.warm_gemm = 64;
    sz.soak_window_s = 0.002;
    sz.keep_warm_s = 0.001;
    o.soak_max_s = 0.03;
    tsl_prof_dev_t c;
    CHECK(tsl_devops_cpu_create(0, &dev, &err) == 0, "%s", err.msg);
    CHECK(tsl_prof_dev_open(&c, &o, &sz, dev, p, &err) == 0, "%s", err.msg);
    CHECK(tsl_prof_dev_soak(&c, &err) == 0, "%s", err.msg);
    CHECK(p->soak.windows >= 1 && p->soak.seconds > 0 && p->soak.gemm == 64, "%u windows",
          p->soak.windows);
    CHECK(p->soak.settled || p->soak.seconds >= 0.03, "settled or at the cap");
    CHECK(p->soak.settled_tflops > 0 && p->soak.first_tflops > 0, "rates");
    CHECK(c.fill_n >= 1 && dev->used_bytes(dev) > 0, "filler ready: %u", c.fill_n);
    CHECK(tsl_prof_dev_gemm(&c, "after", 32, 32, 32, 1, &err) == 0, "%s", err.msg);
    CHECK(p->n_gemms == 1, "the soak is not a table row: %u", p->n_gemms);
    tsl_prof_dev_soak_end(&c);
    CHECK(dev->used_bytes(dev) == 0 && c.fill_n == 0, "soak buffers freed");
    /* --soak 0: the old warm-up, no filler, no record */
    o.soak_max_s = 0;
    p->n_gemms = 0;
    CHECK(tsl_prof_dev_soak(&c, &err) == 0, "%s", err.msg);
    CHECK(p->soak.max_s == 0 && p->soak.windows == 0 && c.fill_n == 0 && p->n_gemms == 0,
          "no soak");
    tsl_prof_dev_close(&c);
    dev->destroy(dev);
    free(p);
}

/* A whole profile on n cpu "GPUs": every section filled, as the cuda backend's. */
static void test_run(int n, bool unfused)
{
    tsl_devops_t *dev = NULL;
    tsl_err_t err = {0};
    tsl_prof_t *p = calloc(1, sizeof(*p));
    tsl_prof_opts_t o = tiny_opts("h=64,s=64,a=4,gated", unfused);
    tsl_prof_sizes_t sz = tiny_sizes();
    tsl_prof_dev_t c;
    CHECK(tsl_devops_cpu_create(0, &dev, &err) == 0, "%s", err.msg);
    CHECK(tsl_prof_dev_open(&c, &o, &sz, dev, p, &err) == 0, "%s", err.msg);
    CHECK(tsl_prof_dev_run(&c, &cpu_ranks, n, &err) == 0, "n %d: %s", n, err.msg);
    /* 2 references, then 6 GEMMs at (mb 2, tp 1) and at (mb 2, tp 2) */
    CHECK(p->n_gemms == 14 && strcmp(p->gemms[0].what, "reference 64^3") == 0, "%u gemms: %s",
          p->n_gemms, p->gemms[0].what);
    CHECK(p->n_blocks == 4, "%u blocks", p->n_blocks);
    for (uint32_t i = 0; i < p->n_blocks; i++)
        CHECK(p->blocks[i].fwd_s > 0 && p->blocks[i].bwd_s > 0 && p->blocks[i].mem_bytes > 0,
              "block %u", i);
    CHECK(p->h2d_gbps > 0 && p->d2h_gbps > 0 && p->dmem_gbps > 0, "bandwidth");
    /* 1 KiB, 4, 16, 64 KiB for each op; no send/recv on one rank */
    uint32_t ops = n == 1 ? 3 : 4;
    CHECK(p->n_colls == 4 * ops, "n %d: %u collectives", n, p->n_colls);
    for (uint32_t i = 0; i < p->n_colls; i++)
        CHECK(p->colls[i].group == (uint32_t)n && p->colls[i].time_s > 0, "collective %u", i);
    CHECK(p->n_overlap == 2 && strcmp(p->overlap[1].comm, "h2d-copy") == 0, "overlap");
    CHECK(strcmp(p->overlap[0].comm, n == 1 ? "d2d-copy" : "nccl-all-reduce") == 0, "%s",
          p->overlap[0].comm);
    CHECK(p->overlap[0].gemm_alone_s > 0 && p->overlap[0].comm_together_s > 0, "overlap times");
    CHECK(strstr(p->notes, unfused ? "unfused attention" : "fused attention") != NULL, "%s",
          p->notes);
    CHECK(strcmp(p->attention_core, unfused ? "executor-unfused" : "executor-fused") == 0, "%s",
          p->attention_core);
    FILE *f = tmpfile();
    CHECK(f != NULL && tsl_prof_write_json(f, p) == 0, "JSON");
    if (f)
        fclose(f);
    tsl_prof_dev_close(&c);
    dev->destroy(dev);
    free(p);
}

int main(void)
{
    test_busbw();
    test_bandwidth();
    test_median();
    test_flops_match_model();
    test_parse();
    test_hw_name();
    test_no_gpu_reason();
    test_block_fused_unfused();
    test_soak_rule();
    test_dev_soak();
    test_run(1, false);
    test_run(2, true);
    return CHECK_DONE();
}
