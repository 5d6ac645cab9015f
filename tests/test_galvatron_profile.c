/*
 * test_galvatron_profile.c — common/galvatron_profile.h on the real Galvatron
 * set in ../shared/fixtures/galvatron (skipped with a message when absent):
 * the llama2-7b profiles load; a Llama2-7B layer at sequence 2048 costs what
 * Galvatron measured (its two layer counts' difference, backward twice
 * forward); the all-reduce bandwidth of one 8-GPU node and the overlap
 * coefficient come through; a plan on it says where its figures came from.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "galvatron_profile.h"
#include "search.h"

static void test_fixture(const char *shared)
{
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/fixtures/galvatron/llama2-7b", shared);
    snprintf(path, sizeof path, "%s/computation_profiling_bf16_llama2-7b_all.json", dir);
    json_t *comp = json_load_file(path, 0, NULL);
    if (comp == NULL) {
        printf("skip: %s cannot be read\n", path);
        return;
    }
    tsl_model_t m = {0};
    tsl_cluster_t c = {0};
    tsl_profile_t *p = NULL;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset_seq("Llama2-7B", 2048, &m, NULL) == 0, "Llama2-7B at 2048");
    CHECK(tsl_cluster_parse_spec(&c, "1x8xA100-80G", NULL) == 0, "cluster");
    CHECK(tsl_galvatron_profile_load(dir, &m, &c, &p, &err) == 0, "loads: %s", err.msg);
    if (p == NULL)
        goto out;
    CHECK(p->n_blocks >= 2 * 8, "%u blocks (attention and FFN per micro-batch size)", p->n_blocks);
    /* Galvatron's own figure: (T(4 layers) - T(2 layers)) / 2 at bsz 8 */
    double t2 = json_number_value(json_object_get(comp, "layernum[2]_bsz8_seq2048"));
    double t4 = json_number_value(json_object_get(comp, "layernum[4]_bsz8_seq2048"));
    double want = (t4 - t2) / 2 / 1000, fwd, bwd;
    tsl_profile_layer_s(p, &m.layers[1], 8, 1, 1e12, &fwd, &bwd);
    CHECK(t4 > t2 && fabs(fwd - want) < 1e-9 * want && fabs(bwd - 2 * want) < 1e-9 * want,
          "a layer at bsz 8: %.6f s forward, %.6f backward; Galvatron %.6f", fwd, bwd, want);
    CHECK(fabs(p->intra_busbw - 154.203e9) < 1e3 && p->intra_group == 8,
          "all-reduce of 8 consecutive GPUs: %.3f GB/s over %u", p->intra_busbw / 1e9,
          p->intra_group);
    CHECK(fabs(p->overlap_slowdown - 1.125552573612729) < 1e-12, "overlap %.6f",
          p->overlap_slowdown);
    tsl_profile_use_t use;
    CHECK(tsl_profile_attach(&c, p, &use, &err) == 0 && use.intra && use.overlap, "attaches: %s",
          err.msg);
    char line[512];
    tsl_profile_describe(p, &use, line, sizeof line);
    CHECK(strstr(line, "compute measured (galvatron-profile ") != NULL, "figures: %s", line);
    tsl_search_result_t *res = malloc(sizeof(*res));
    tsl_request_t r;
    tsl_request_init(&r);
    r.global_batch = 16;
    r.mem_budget_bytes = 36ull << 30;
    r.no_baselines = true;
    CHECK(tsl_search(&m, &c, &r, NULL, res, &err) == TSL_SEARCH_OK, "a plan on it: %s", err.msg);
    free(res);
    tsl_model_free(&m);
    tsl_model_init(&m, "");
    CHECK(tsl_model_preset("Llama2-7B", &m, NULL) == 0, "Llama2-7B at 4096");
    tsl_profile_t *q = NULL;
    CHECK(tsl_galvatron_profile_load(dir, &m, &c, &q, &err) != 0 && strstr(err.msg, "4096"),
          "no profile at the model's sequence length: %s", err.msg);
    free(q);
out:
    free(p);
    json_decref(comp);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

static void test_empty_dir(void)
{
    tsl_model_t m = {0};
    tsl_cluster_t c = {0};
    tsl_profile_t *p = NULL;
    tsl_err_t err = {0};
    CHECK(tsl_model_preset("GPT2-345M", &m, NULL) == 0 &&
              tsl_cluster_parse_spec(&c, "8xA100-80G", NULL) == 0,
          "inputs");
    CHECK(tsl_galvatron_profile_load("/nonexistent-dir", &m, &c, &p, &err) != 0 &&
              tsl_err_code(&err) == TSL_E_NOTFOUND && p == NULL,
          "a directory without profiles: %s", err.msg);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

int main(void)
{
    const char *shared = getenv("TSL_SHARED");
    test_empty_dir();
    if (shared == NULL)
        printf("skip fixture check: TSL_SHARED not set\n");
    else
        test_fixture(shared);
    return CHECK_DONE();
}
