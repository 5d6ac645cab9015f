/*
 * test_amp_profile.c — common/amp_profile.h: AMP's known_cost files read as
 * Tessel profiles. On the synthetic fixture in tests/data/amp (AMP's layout,
 * made-up values): a GPT-2 345M layer costs the mean of the layer units at TP 1
 * and TP 2 (backward twice forward, time linear in samples), float32 files
 * read, one profile per instance whose GPU type the cluster has (a mixed
 * V100 + T4 cluster gets both, a T4 cluster only G4's); a cluster with neither
 * type, an empty directory, and malformed files (magic, descr, fortran_order,
 * shape, a truncated body, a negative time) are refused naming the file and
 * the field. On AMP's own files in ../shared/fixtures/amp/known_cost (exits 77
 * with the reason when absent): they load for GPT-2 345M on 4 g4dn + p3 nodes.
 * A TP-2 layer priced on the profile adds no TP all-reduce (AMP's TP-2 times hold
 * Megatron-LM's), while a profile without that mark gets it added.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amp_profile.h"
#include "check.h"
#include "cluster_json.h"
#include "cost.h"
#include "strategy.h"

static const char *mixed_json =
    "{\"nodes\": [{\"type\": \"V100-16G\", \"gpus\": 4, \"count\": 3},"
    " {\"type\": \"T4-16G\", \"gpus\": 4, \"count\": 1}], \"inter_gbps\": 1.0}";

static void free_all(tsl_profile_t *p[TSL_AMP_MAX_TYPES], uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        free(p[i]);
}

static void write_file(const char *path, const void *buf, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "create %s", path);
    if (f == NULL)
        return;
    fwrite(buf, 1, n, f);
    fclose(f);
}

/* A .npy of n float64 values v with a header dict hdr ("" = the right one). */
static void write_npy(const char *path, const char *hdr, const double *v, uint32_t n, size_t drop)
{
    char h[256], buf[4096];
    if (hdr[0] == '\0') {
        snprintf(h, sizeof h, "{'descr': '<f8', 'fortran_order': False, 'shape': (%u,), }", n);
        hdr = h;
    }
    size_t hl = strlen(hdr), pad = 64 - (10 + hl + 1) % 64, at = 0;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)((hl + pad + 1) & 0xff);
    buf[9] = (char)((hl + pad + 1) >> 8);
    at = 10;
    memcpy(buf + at, hdr, hl);
    at += hl;
    memset(buf + at, ' ', pad);
    at += pad;
    buf[at++] = '\n';
    memcpy(buf + at, v, n * sizeof(double)); /* the test hosts are little-endian */
    at += n * sizeof(double);
    write_file(path, buf, at - drop);
}

static void test_fixture(const char *data)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/amp", data);
    tsl_model_t m = {0};
    tsl_cluster_t c = {0}, t4 = {0}, a100 = {0};
    tsl_profile_t *p[TSL_AMP_MAX_TYPES] = {0};
    uint32_t n = 0;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset_seq("GPT2-345M", 1024, &m, NULL) == 0, "GPT2-345M");
    CHECK(tsl_cluster_json_parse(mixed_json, &c, &err) == 0, "mixed cluster: %s", err.msg);
    CHECK(tsl_amp_profile_load(dir, &m, &c, p, &n, &err) == 0, "loads: %s", err.msg);
    CHECK(n == 2, "%u profiles (G4 and P3)", n);
    if (n == 2) {
        CHECK(strcmp(p[0]->gpu, "T4-16G") == 0 && strcmp(p[1]->gpu, "V100-16G") == 0,
              "types %s, %s", p[0]->gpu, p[1]->gpu);
        CHECK(p[0]->n_blocks == 4 && p[1]->n_blocks == 2, "blocks %u (TP 1, 2), %u (TP 1)",
              p[0]->n_blocks, p[1]->n_blocks);
        const tsl_layer_t *l = &m.layers[1];
        double fwd, bwd;
        tsl_profile_layer_s(p[0], l, 1, 1, 1e12, &fwd, &bwd);
        CHECK_NEAR(fwd, 0.005, 1e-9, "T4 TP 1 layer forward %.6f s (mean of the units)", fwd);
        CHECK_NEAR(bwd, 0.010, 1e-9, "T4 TP 1 backward %.6f s (twice forward)", bwd);
        tsl_profile_layer_s(p[0], l, 4, 1, 1e12, &fwd, &bwd);
        CHECK_NEAR(fwd, 0.020, 1e-9, "T4 TP 1, 4 samples: %.6f s (linear, as AMP)", fwd);
        tsl_profile_layer_s(p[0], l, 1, 2, 1e12, &fwd, &bwd);
        CHECK_NEAR(fwd, 0.006, 1e-9, "T4 TP 2 layer forward %.6f s", fwd);
        tsl_profile_layer_s(p[1], l, 2, 1, 1e12, &fwd, &bwd);
        CHECK_NEAR(fwd, 0.008, 1e-6, "V100 (float32 file) 2 samples %.6f s", fwd);
        CHECK(strstr(p[0]->source, "amp-profile") && strstr(p[0]->source, "(G4)"), "source %s",
              p[0]->source);
    }
    free_all(p, n);
    CHECK(tsl_cluster_parse_spec(&t4, "4x4xT4", NULL) == 0, "T4 cluster");
    CHECK(tsl_amp_profile_load(dir, &m, &t4, p, &n, &err) == 0 && n == 1 &&
              strcmp(p[0]->gpu, "T4-16G") == 0,
          "a T4 cluster gets G4's profile only (%u)", n);
    free_all(p, n);
    CHECK(tsl_cluster_parse_spec(&a100, "1x8xA100-80G", NULL) == 0, "A100 cluster");
    CHECK(tsl_amp_profile_load(dir, &m, &a100, p, &n, &err) != 0 && n == 0 &&
              err.code == TSL_E_PRECONDITION && strstr(err.msg, "T4-16G, V100-16G"),
          "no matching GPU type refused: %s", err.msg);
    tsl_cluster_free(&c);
    tsl_cluster_free(&t4);
    tsl_cluster_free(&a100);
    tsl_model_free(&m);
}

/* Layer 1 of m under tp2 on the first two GPUs of c, 2 samples; dbl: the stack
 * runs each block's forward twice (double_block_fwd). */
static tsl_layer_cost_t tp2_cost(const tsl_cluster_t *c, const tsl_model_t *m, bool dbl)
{
    tsl_cost_env_t env;
    tsl_strategy_t s;
    tsl_layer_cost_t r;
    tsl_err_t err = {0};
    CHECK(tsl_cost_env_init(&env, c, 0, 2, &err) == 0, "env: %s", err.msg);
    env.knobs.double_block_fwd = dbl;
    CHECK(tsl_strategy_parse("tp2", &s, &err) == 0, "tp2: %s", err.msg);
    tsl_cost_layer(&env, &m->layers[1], &s, NULL, 2, &r);
    CHECK(r.feasible, "tp2 feasible on 2 T4s");
    return r;
}

static double tp2_fwd_s(const tsl_cluster_t *c, const tsl_model_t *m)
{
    return tp2_cost(c, m, false).fwd_s;
}

/* AMP measured its TP-2 layer on a running TP group: the all-reduce is inside the
 * time, so the cost model must not add its own (2 samples: 2 × 0.006 s). */
static void test_tp_comm_inside(const char *data)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/amp", data);
    tsl_model_t m = {0};
    tsl_cluster_t c = {0};
    tsl_profile_t *p[TSL_AMP_MAX_TYPES] = {0};
    tsl_profile_use_t use;
    uint32_t n = 0;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset_seq("GPT2-345M", 1024, &m, NULL) == 0, "GPT2-345M");
    CHECK(tsl_cluster_parse_spec(&c, "1x4xT4", NULL) == 0, "T4 node");
    CHECK(tsl_amp_profile_load(dir, &m, &c, p, &n, &err) == 0 && n == 1, "loads: %s", err.msg);
    if (n == 1) {
        CHECK(p[0]->tp_comm_in_times, "AMP's times are marked as holding the TP collectives");
        CHECK(tsl_profile_attach(&c, p[0], &use, &err) == 0, "attach: %s", err.msg);
        double inside = tp2_fwd_s(&c, &m);
        CHECK_NEAR(inside, 0.012, 1e-9, "TP 2 forward %.6f s: the profile's time alone", inside);
        /* AMP's fork ran each block's forward twice and its profile timed both runs:
         * the forward stays 0.012 s, the backward is twice one run, 0.012 s, not 0.024 */
        tsl_layer_cost_t one = tp2_cost(&c, &m, false), dbl = tp2_cost(&c, &m, true);
        CHECK_NEAR(one.bwd_s, 0.024, 1e-9, "backward twice the profiled forward");
        CHECK_NEAR(dbl.fwd_s, 0.012, 1e-9, "double_block_fwd: the profiled forward holds both");
        CHECK_NEAR(dbl.bwd_s, 0.012, 1e-9, "double_block_fwd: the backward of one run, %.6f s",
                   dbl.bwd_s);
        p[0]->tp_comm_in_times = false;
        double added = tp2_fwd_s(&c, &m);
        CHECK(added > inside + 1e-5, "unmarked: the all-reduce added (%.6f > %.6f s)", added,
              inside);
    }
    free_all(p, n);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

static void expect_refused(const char *dir, const char *want, const char *what)
{
    tsl_model_t m = {0};
    tsl_cluster_t c = {0};
    tsl_profile_t *p[TSL_AMP_MAX_TYPES] = {0};
    uint32_t n = 0;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset_seq("GPT2-345M", 1024, &m, NULL) == 0, "GPT2-345M");
    CHECK(tsl_cluster_parse_spec(&c, "4x4xT4", NULL) == 0, "T4 cluster");
    int rc = tsl_amp_profile_load(dir, &m, &c, p, &n, &err);
    CHECK(rc != 0 && n == 0 && strstr(err.msg, "gpt2_G4_1.npy") && strstr(err.msg, want),
          "%s refused naming the file and '%s': %s", what, want, err.msg);
    free_all(p, n);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

static void test_malformed(void)
{
    char dir[] = "/tmp/tsl-amp-XXXXXX", path[128];
    if (mkdtemp(dir) == NULL) {
        CHECK(0, "mkdtemp");
        return;
    }
    {
        tsl_model_t m = {0};
        tsl_cluster_t c = {0};
        tsl_profile_t *p[TSL_AMP_MAX_TYPES] = {0};
        uint32_t n = 0;
        tsl_err_t err = {0};
        tsl_model_preset_seq("GPT2-345M", 1024, &m, NULL);
        tsl_cluster_parse_spec(&c, "4x4xT4", NULL);
        CHECK(tsl_amp_profile_load(dir, &m, &c, p, &n, &err) != 0 && err.code == TSL_E_NOTFOUND &&
                  strstr(err.msg, "gpt2_G4_{tp}.npy"),
              "an empty directory: %s", err.msg);
        /* a missing path or a file: said so, not "no gpt2_G4_{tp}.npy" as if the
         * directory held other things */
        CHECK(tsl_amp_profile_load("/nonexistent-dir", &m, &c, p, &n, &err) != 0 &&
                  strstr(err.msg, "No such file or directory"),
              "a missing directory is named as missing: %s", err.msg);
        CHECK(tsl_amp_profile_load("/dev/null", &m, &c, p, &n, &err) != 0 &&
                  strstr(err.msg, "not a directory"),
              "a file is not a profile directory: %s", err.msg);
        tsl_cluster_free(&c);
        tsl_model_free(&m);
    }
    double v[30];
    for (int i = 0; i < 30; i++)
        v[i] = 0.005;
    snprintf(path, sizeof path, "%s/gpt2_G4_1.npy", dir);
    write_file(path, "NOTNUMPY..", 10);
    expect_refused(dir, "magic", "a file that is no .npy");
    write_npy(path, "{'descr': '>i4', 'fortran_order': False, 'shape': (30,), }", v, 30, 0);
    expect_refused(dir, "descr", "an integer array");
    /* the header's bytes shown escaped (a newline in descr ended the message's line) */
    write_npy(path, "{'descr': '<\n8', 'fortran_order': False, 'shape': (30,), }", v, 30, 0);
    expect_refused(dir, "descr: '<\\n8', expected", "a descr with a newline");
    write_npy(path, "{'descr': '<f8', 'fortran_order': True, 'shape': (30,), }", v, 30, 0);
    expect_refused(dir, "fortran_order", "Fortran order");
    write_npy(path, "{'descr': '<f8', 'fortran_order': False, 'shape': (5, 6), }", v, 30, 0);
    expect_refused(dir, "shape", "a 2-D array");
    write_npy(path, "", v, 28, 0);
    expect_refused(dir, "shape: (28,), expected (30,)", "a 22-layer profile for 24 layers");
    write_npy(path, "", v, 30, 9);
    expect_refused(dir, "truncated", "a truncated body");
    /* 30 float64 values under a '<f4' header: the first 15 values' bytes were read as
     * 30 float32 times and the rest left without a word (tests/cli_fuzz.py) */
    write_npy(path, "{'descr': '<f4', 'fortran_order': False, 'shape': (30,), }", v, 30, 0);
    expect_refused(dir, "data: bytes past the 30 '<f4' elements", "float64 data under '<f4'");
    v[7] = -1;
    write_npy(path, "", v, 30, 0);
    expect_refused(dir, "element 7", "a negative layer time");
    v[7] = 1e300; /* named, not "blocks[0]: fwd_s and bwd_s must be positive" */
    write_npy(path, "", v, 30, 0);
    expect_refused(dir, "element 7: 1e+300 is not a positive time in seconds (at most 3600)",
                   "a layer time of 1e300 s");
    unlink(path);
    rmdir(dir);
}

static void test_shared(const char *shared)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/fixtures/amp/known_cost", shared);
    tsl_model_t m = {0};
    tsl_cluster_t c = {0};
    tsl_profile_t *p[TSL_AMP_MAX_TYPES] = {0};
    uint32_t n = 0;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset_seq("GPT2-345M", 1024, &m, NULL) == 0, "GPT2-345M");
    CHECK(tsl_cluster_json_parse(mixed_json, &c, &err) == 0, "mixed cluster");
    CHECK(tsl_amp_profile_load(dir, &m, &c, p, &n, &err) == 0 && n == 2, "AMP's files: %s",
          err.msg);
    for (uint32_t i = 0; i < n; i++) {
        double fwd, bwd;
        tsl_profile_layer_s(p[i], &m.layers[1], 1, 1, 1e12, &fwd, &bwd);
        CHECK(fwd > 1e-3 && fwd < 1e-2, "%s: a layer forward %.4f s at micro-batch 1", p[i]->gpu,
              fwd);
    }
    free_all(p, n);
    tsl_cluster_free(&c);
    tsl_model_free(&m);
}

int main(void)
{
    const char *data = getenv("TSL_TESTDATA"), *shared = getenv("TSL_SHARED");
    char probe[700];
    test_malformed();
    snprintf(probe, sizeof probe, "%s/amp/gpt2_G4_1.npy", data ? data : "");
    if (data == NULL || access(probe, R_OK) != 0) {
        int rc = CHECK_DONE();
        if (rc != 0)
            return rc;
        SKIP_ALL("tests/data/amp is absent (TSL_TESTDATA unset or no fixture)");
    }
    test_fixture(data);
    test_tp_comm_inside(data);
    snprintf(probe, sizeof probe, "%s/fixtures/amp/known_cost/gpt2_G4_1.npy", shared ? shared : "");
    /* AMP's own files are optional: the synthetic fixture above is the test; they
     * are read too where someone has put them beside the project */
    if (shared == NULL || access(probe, R_OK) != 0)
        printf("note: ../shared/fixtures/amp/known_cost is absent: AMP's own files not read "
               "(the synthetic fixture passed)\n");
    else
        test_shared(shared);
    return CHECK_DONE();
}
