/*
 * test_profile_json.c — the profile format (docs/profile-format.md): what the
 * worker writes (prof_emit.c, here from the sim backend) reads back into the
 * planner's struct unchanged; the committed H100 profile loads; bad documents
 * get an error naming the JSON path; a "calibration" object round-trips and
 * attaches with the profile.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "profile.h"
#include "profile_json.h"

#include "prof.h"

static tsl_profile_t *from_text(const char *text, tsl_err_t *err)
{
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    tsl_profile_t *p = NULL;
    if (root == NULL) {
        tsl_err_set(err, "parse: %s", je.text);
        return NULL;
    }
    tsl_profile_json_from(root, "inline", &p, err);
    json_decref(root);
    return p;
}

static void test_round_trip(void)
{
    const char *shared = getenv("TSL_SOURCE_ROOT");
    char dev[512];
    snprintf(dev, sizeof(dev), "%s/deploy/sim/h100-80g.json", shared ? shared : "..");
    tsl_prof_opts_t o;
    tsl_prof_opts_default(&o, false);
    o.device_file = dev;
    tsl_prof_t *w = calloc(1, sizeof(*w));
    tsl_err_t err = {0};
    CHECK(tsl_prof_run_sim(&o, w, &err) == 0, "sim: %s", err.msg);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(tsl_prof_write_json(f, w) == 0, "write");
    fclose(f);
    tsl_profile_t *p = from_text(buf, &err);
    CHECK(p != NULL, "read back: %s", err.msg);
    if (p == NULL) {
        free(buf);
        free(w);
        return;
    }
    CHECK(p->simulated && strcmp(p->gpu, "H100-80G") == 0 && strcmp(p->link, "nvlink") == 0 &&
              p->gpus == 8,
          "hardware key");
    CHECK(p->n_blocks == w->n_blocks && p->n_blocks == 2 * 4 * 5 * 2, "blocks %u", p->n_blocks);
    /* every block, matched by its key, with the same figures (JSON keeps 9 digits) */
    uint32_t matched = 0;
    for (uint32_t i = 0; i < w->n_blocks; i++) {
        const tsl_prof_block_t *a = &w->blocks[i];
        tsl_prof_shape_t s = tsl_prof_shape_resolved(&a->shape);
        for (uint32_t j = 0; j < p->n_blocks; j++) {
            const tsl_profile_block_t *b = &p->blocks[j];
            if ((int)b->kind != (int)a->kind || b->hidden != s.hidden || b->mb != a->mb ||
                b->tp != a->tp)
                continue;
            matched++;
            CHECK(b->seq_len == s.seq_len && b->heads == s.heads && b->head_dim == s.head_dim &&
                      b->ffn_hidden == s.ffn_hidden && b->gated == s.gated,
                  "shape %u", i);
            CHECK_NEAR(b->fwd_s, a->fwd_s, 1e-8, "fwd %u", i);
            CHECK_NEAR(b->bwd_s, a->bwd_s, 1e-8, "bwd %u", i);
            CHECK_NEAR(b->fwd_flops, a->fwd_flops, 1e-8, "flops %u", i);
            CHECK(b->mem_bytes == a->mem_bytes, "memory %u", i);
        }
    }
    CHECK(matched == w->n_blocks, "matched %u of %u", matched, w->n_blocks);
    CHECK_NEAR(p->h2d_bw, 48e9, 1e-9, "h2d");
    CHECK_NEAR(p->dmem_bw, 3000e9, 1e-9, "dmem");
    CHECK(p->intra_group == 8 && p->intra_busbw > 0 && p->intra_busbw <= 230e9, "intra %g",
          p->intra_busbw);
    CHECK_NEAR(p->overlap_slowdown, 1.3, 1e-9, "overlap from the NCCL entry");
    free(p);
    free(buf);
    free(w);
}

static void test_committed_h100(void)
{
    const char *root = getenv("TSL_SOURCE_ROOT");
    char path[512];
    snprintf(path, sizeof(path), "%s/deploy/profiles/h100-80g.json", root ? root : "..");
    tsl_profile_t *p = NULL;
    tsl_err_t err = {0};
    CHECK(tsl_profile_json_load(path, &p, &err) == 0, "%s", err.msg);
    if (p == NULL)
        return;
    CHECK(!p->simulated && strcmp(p->gpu, "H100-80G") == 0 && strcmp(p->link, "single") == 0,
          "measured, one H100");
    CHECK(p->n_blocks == 80, "blocks %u", p->n_blocks);
    CHECK(p->intra_busbw == 0 && p->intra_group == 0, "one GPU: no NCCL bus bandwidth");
    CHECK(p->overlap_slowdown == 0 && p->overlap_stand_in > 1, "stand-in only: %g",
          p->overlap_stand_in);
    CHECK(p->h2d_bw > 10e9 && p->dmem_bw > 1e12, "bandwidths");
    double f, b;
    CHECK(tsl_profile_block_rate(p, TSL_PROFILE_FFN, 2048, 16384, 1, &f, &b) == 0 && f > 300e12 &&
              f < 989e12,
          "FFN rate %g", f);
    free(p);
}

static void test_errors(void)
{
    tsl_err_t err = {0};
    tsl_profile_t *p;
    p = from_text("[]", &err);
    CHECK(p == NULL && strstr(err.msg, "object"), "%s", err.msg);
    p = from_text("{\"format\": \"other/2\"}", &err);
    CHECK(p == NULL && strstr(err.msg, "tessel-profile/1"), "%s", err.msg);
    p = from_text("{\"format\": \"tessel-profile/1\", \"simulated\": false, \"hardware\": "
                  "{\"gpu\": \"H100-80G\", \"link\": \"single\", \"gpus\": 1}, \"blocks\": []}",
                  &err);
    CHECK(p == NULL && strstr(err.msg, "blocks"), "%s", err.msg);
    p = from_text("{\"format\": \"tessel-profile/1\", \"simulated\": false, \"hardware\": "
                  "{\"gpu\": \"H100-80G\", \"link\": \"single\", \"gpus\": 1}, \"blocks\": "
                  "[{\"block\": \"ffn\", \"hidden\": 1024, \"seq_len\": 1024, \"heads\": 16, "
                  "\"head_dim\": 64, \"ffn_hidden\": 4096, \"ffn_kind\": \"gelu\", "
                  "\"micro_batch\": 1, \"tp\": 1, \"fwd_s\": -1, \"bwd_s\": 1, "
                  "\"fwd_flops\": 1e9}]}",
                  &err);
    CHECK(p == NULL && strstr(err.msg, "blocks[0].fwd_s"), "%s", err.msg);
    p = from_text("{\"format\": \"tessel-profile/1\", \"simulated\": \"no\"}", &err);
    CHECK(p == NULL && strstr(err.msg, "simulated"), "%s", err.msg);
    CHECK(tsl_profile_json_load("/nonexistent/p.json", &p, &err) == -1 &&
              tsl_err_code(&err) == TSL_E_NOTFOUND,
          "%s", err.msg);
    /* --profile DIR: a directory is said to be one, not "'[' or '{' expected" */
    char d[] = "/tmp/tsl-profile-XXXXXX";
    if (mkdtemp(d) != NULL) {
        CHECK(tsl_profile_json_load(d, &p, &err) == -1 && strstr(err.msg, "is a directory") &&
                  !strstr(err.msg, "expected"),
              "a directory is named as one: %s", err.msg);
        rmdir(d);
    }
}

#define ONE_BLOCK_DOC                                                                              \
    "{\"format\": \"tessel-profile/1\", \"simulated\": false, \"hardware\": "                      \
    "{\"gpu\": \"H100-80G\", \"link\": \"single\", \"gpus\": 1}, \"blocks\": "                     \
    "[{\"block\": \"ffn\", \"hidden\": 1024, \"seq_len\": 1024, \"heads\": 16, "                   \
    "\"head_dim\": 64, \"ffn_hidden\": 4096, \"ffn_kind\": \"gelu\", "                             \
    "\"micro_batch\": 1, \"tp\": 1, \"fwd_s\": 1e-3, \"bwd_s\": 2e-3, \"fwd_flops\": 1e11}]"

/* A profile document with the given "calibration" value (NULL: none). */
static tsl_profile_t *with_calib(json_t *cal, tsl_err_t *err)
{
    json_error_t je;
    json_t *root = json_loads(ONE_BLOCK_DOC "}", 0, &je);
    if (cal != NULL)
        json_object_set_new(root, "calibration", cal);
    tsl_profile_t *p = NULL;
    tsl_profile_json_from(root, "inline", &p, err);
    json_decref(root);
    return p;
}

/* Figures outside physical bounds are refused naming them, not priced: a
 * device memory at 1e-9 GB/s made an optimizer step 10^9 s. */
static void test_bounds(void)
{
    static const struct {
        const char *extra, *want;
    } cases[] = {
        {", \"bandwidth\": {\"device_memory_gbps\": 1e-9}",
         "bandwidth.device_memory_gbps: 1e-09 GB/s is outside the physical bounds"},
        {", \"bandwidth\": {\"h2d_gbps\": 1e9}", "bandwidth.h2d_gbps: 1e+09 GB/s"},
        {", \"collectives\": [{\"op\": \"all_reduce\", \"group\": 2, \"bytes\": 1024, "
         "\"busbw_gbps\": 1e-9}]",
         "collectives[0].busbw_gbps: 1e-09 GB/s"},
        /* a group past 2^32 was cast into intra_group (undefined), a fractional one
         * taken as the next lower */
        {", \"collectives\": [{\"op\": \"all_reduce\", \"group\": 1e30, \"bytes\": 1024, "
         "\"busbw_gbps\": 100}]",
         "collectives[0].group: 1e+30 is not a whole number of ranks in 1..131072"},
        {", \"collectives\": [{\"op\": \"all_reduce\", \"group\": 4.5, \"bytes\": 1024, "
         "\"busbw_gbps\": 100}]",
         "collectives[0].group: 4.5 is not a whole number"},
        /* an unknown op was skipped silently, a group past the node's GPUs taken as the
         * node's all-reduce, a slowdown of 0 read as none */
        {", \"collectives\": [{\"op\": \"allreduce\", \"group\": 1, \"bytes\": 1024, "
         "\"busbw_gbps\": 0}]",
         "collectives[0].op: \"allreduce\" is not all_reduce"},
        {", \"collectives\": [{\"op\": \"all_reduce\", \"group\": 8, \"bytes\": 1024, "
         "\"busbw_gbps\": 100}]",
         "collectives[0].group: 8 ranks, above the node's hardware.gpus 1"},
        {", \"overlap\": [{\"gemm_slowdown\": 0, \"comm_slowdown\": 1.1}]",
         "overlap[0].gemm_slowdown: must be above 0"},
    };
    tsl_err_t err = {0};
    char doc[2048];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(doc, sizeof doc, "%s%s}", ONE_BLOCK_DOC, cases[i].extra);
        tsl_profile_t *p = from_text(doc, &err);
        CHECK(p == NULL && strstr(err.msg, cases[i].want), "%s: %s", cases[i].want, err.msg);
        free(p);
    }
    /* a block of more than an hour */
    snprintf(doc, sizeof doc, "%s}", ONE_BLOCK_DOC);
    char *at = strstr(doc, "\"fwd_s\": 1e-3");
    memcpy(at, "\"fwd_s\": 1e+6", strlen("\"fwd_s\": 1e+6"));
    tsl_profile_t *p = from_text(doc, &err);
    CHECK(p == NULL && strstr(err.msg, "blocks[0].fwd_s: 1e+06 s is above"), "%s", err.msg);
    free(p);
    /* 0 is "not measured", as before; a 1 KiB all-reduce's busbw of 0.1 GB/s is kept
     * (on a node of 2 GPUs: the group is the node's) */
    snprintf(doc, sizeof doc,
             "%s, \"bandwidth\": {\"h2d_gbps\": 0}, \"collectives\": [{\"op\": "
             "\"all_reduce\", \"group\": 2, \"bytes\": 1024, \"busbw_gbps\": 0.1}]}",
             ONE_BLOCK_DOC);
    at = strstr(doc, "\"gpus\": 1");
    at[strlen("\"gpus\": ")] = '2';
    p = from_text(doc, &err);
    CHECK(p != NULL, "0 and a small busbw accepted: %s", err.msg);
    free(p);
}

static void test_calibration(void)
{
    tsl_err_t err = {0};
    tsl_calib_t k;
    tsl_calib_identity(&k);
    k.compute_scale[2] = 1.25;
    k.range_samples[2] = 3;
    k.comm_scale = 1.5;
    k.mem_scale = 1.05;
    k.n_samples = 11;
    k.mae_before = 0.12;
    k.mae_after = 0.03;
    tsl_profile_t *p = with_calib(tsl_profile_json_calib(&k), &err);
    CHECK(p != NULL && p->calibrated, "read: %s", err.msg);
    if (p != NULL)
        CHECK(memcmp(&p->calib, &k, sizeof(k)) == 0, "round trip, every field");
    tsl_cluster_t c;
    tsl_profile_use_t use;
    CHECK(tsl_cluster_parse_spec(&c, "1xH100-80G", &err) == 0, "%s", err.msg);
    if (p != NULL) {
        CHECK(tsl_profile_attach(&c, p, &use, &err) == 0 && use.calib == &p->calib &&
                  c.gpu_calib[0] == &p->calib,
              "attached with the profile: %s", err.msg);
        char line[512];
        tsl_profile_describe(p, &use, line, sizeof(line));
        CHECK(strstr(line, "measured") && strstr(line, "calibrated from 11 trials"), "%s", line);
    }
    tsl_cluster_free(&c);
    free(p);
    p = with_calib(NULL, &err);
    CHECK(p != NULL && !p->calibrated, "no calibration: not calibrated");
    free(p);

    static const struct {
        const char *json, *needle;
    } bad[] = {
        {"[]", "calibration: must be an object"},
        {"{\"compute_scale\": [1, 1], \"comm_scale\": 1, \"mem_scale\": 1}", "compute_scale"},
        {"{\"compute_scale\": [1, 1, 0, 1], \"comm_scale\": 1, \"mem_scale\": 1}",
         "compute_scale[2]"},
        {"{\"compute_scale\": [1, 1, 1, 1], \"mem_scale\": 1}", "comm_scale"},
        {"{\"compute_scale\": [1, 1, 1, 1], \"comm_scale\": 1, \"mem_scale\": 1, "
         "\"range_max_tokens\": [4096, 100, 9000]}",
         "range_max_tokens[1]"},
        {"{\"compute_scale\": [1, 1, 1, 1], \"comm_scale\": 1, \"mem_scale\": 1, "
         "\"iter_error_after\": -1}",
         "iter_error_after"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_error_t je;
        p = with_calib(json_loads(bad[i].json, JSON_DECODE_ANY, &je), &err);
        CHECK(p == NULL && strstr(err.msg, "profile.calibration") && strstr(err.msg, bad[i].needle),
              "case %zu: %s", i, err.msg);
        free(p);
    }
}

int main(void)
{
    test_round_trip();
    test_committed_h100();
    test_errors();
    test_calibration();
    test_bounds();
    return CHECK_DONE();
}
