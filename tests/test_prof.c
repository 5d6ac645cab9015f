/*
 * test_prof.c — the pure parts of tessel-worker's profiler (worker/profile/
 * prof_util.c): nccl-tests' bus-bandwidth factors, bandwidth arithmetic, the
 * median, FLOP and byte counts of the blocks, option parsing, hardware names.
 */
#include <string.h>

#include "check.h"
#include "model.h"
#include "prof.h"

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
    tsl_layer_t l = {.kind = TSL_LAYER_ENCODER,
                     .seq_len = 1024,
                     .hidden = 1024,
                     .ffn_hidden = 4096,
                     .heads = 16};
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
    tsl_prof_opts_t o;
    tsl_prof_opts_default(&o, true);
    CHECK(o.n_shapes == 2 && o.n_mb == 3 && o.n_tp == 2 && o.iters > 0, "quick defaults");
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

int main(void)
{
    test_busbw();
    test_bandwidth();
    test_median();
    test_flops_match_model();
    test_parse();
    test_hw_name();
    return CHECK_DONE();
}
