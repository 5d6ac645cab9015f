/*
 * test_galvatron_profile.c — common/galvatron_profile.h on the real Galvatron
 * set in ../shared/fixtures/galvatron (skipped with a message when absent):
 * the llama2-7b profiles load; a Llama2-7B layer at sequence 2048 costs what
 * Galvatron measured (its two layer counts' difference, backward twice
 * forward); the all-reduce bandwidth of one 8-GPU node and the overlap
 * coefficient come through; a plan on it says where its figures came from.
 * The import (galvatron_import.h): a layer's parameters, activations and
 * checkpoint from memory_profiling (MB, fp32 parameter_size), the embedding's
 * and head's from other_memory_pp_on_*, and on two nodes the inter-node link
 * from the one-GPU-per-node all-reduce and the cross-node p2p, all compared
 * with figures read by hand from the fixture files; a malformed memory file
 * is refused naming its key; a profile without "_sp" is fitted per TP degree.
 * Without ../shared the fixture part exits 77.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "galvatron_import.h"
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
    CHECK(tsl_galvatron_profile_load(dir, &m, &c, &p, NULL, 0, &err) == 0, "loads: %s", err.msg);
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
    /* bsz 1 from the model's own profile, not the seqlen2048 run beside it */
    double u2 = json_number_value(json_object_get(comp, "layernum[2]_bsz1_seq2048"));
    double u4 = json_number_value(json_object_get(comp, "layernum[4]_bsz1_seq2048"));
    tsl_profile_layer_s(p, &m.layers[1], 1, 1, 1e12, &fwd, &bwd);
    CHECK(u4 > u2 && fabs(fwd - (u4 - u2) / 2 / 1000) < 1e-9 * fwd,
          "a layer at bsz 1: %.6f s forward; Galvatron's llama2-7b profile %.6f", fwd,
          (u4 - u2) / 2 / 1000);
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
    CHECK(tsl_galvatron_profile_load(dir, &m, &c, &q, NULL, 0, &err) != 0 &&
              strstr(err.msg, "4096"),
          "no profile at the model's sequence length: %s", err.msg);
    free(q);
out:
    free(p);
    json_decref(comp);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

#define MIB 1048576.0

/* Figures read by hand from memory_profiling_bf16_llama2-7b_all.json and the
 * hardware files (MB = 2^20 bytes, GB/s = 1e9 bytes/s). */
static void test_import(const char *shared)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/fixtures/galvatron/llama2-7b", shared);
    tsl_model_t m = {0}, m1 = {0};
    tsl_cluster_t c = {0}, c1 = {0};
    tsl_err_t err = {0};
    tsl_galvatron_import_t g;
    CHECK(tsl_model_preset_seq("Llama2-7B", 2048, &m, NULL) == 0 &&
              tsl_model_preset_seq("Llama2-7B", 2048, &m1, NULL) == 0,
          "Llama2-7B at 2048");
    CHECK(tsl_cluster_parse_spec(&c, "2x8xA100-80G:ib100", NULL) == 0 &&
              tsl_cluster_parse_spec(&c1, "1x8xA100-80G", NULL) == 0,
          "clusters");
    double ib100 = c.inter_bw;
    tsl_layer_t before = m.layers[1];
    CHECK(tsl_galvatron_import(dir, &m, &c, &g, &err) == 0, "imports: %s", err.msg);
    const tsl_layer_t *l = &m.layers[1];
    CHECK(g.memory_layers == m.n_layers && g.memory_sp, "%u of %u layers, sp %d", g.memory_layers,
          m.n_layers, g.memory_sp);
    /* layertype_0_sp["2048"].parameter_size 778.2236328125 MB of fp32 parameters */
    CHECK(l->params == (uint64_t)llround(778.2236328125 * MIB / 4), "layer params %llu",
          (unsigned long long)l->params);
    /* tp_activation_per_bsz_dict["1"] 514.5634765625 MB a sample, split as the shapes split */
    double act = (double)l->act_repl_bytes + (double)l->act_shard_bytes;
    double share = (double)before.act_repl_bytes /
                   ((double)before.act_repl_bytes + (double)before.act_shard_bytes);
    CHECK(fabs(act - 514.5634765625 * MIB) <= 1, "layer activation %.0f bytes", act);
    CHECK(fabs(l->act_repl_bytes / act - share) < 1e-6, "replicated share %.4f (shapes %.4f)",
          l->act_repl_bytes / act, share);
    CHECK(l->bnd_act_bytes == (uint64_t)(32.0 * MIB), "checkpoint %llu bytes",
          (unsigned long long)l->bnd_act_bytes);
    /* other_memory_pp_on_first/last model_states["1"]: 16 bytes a parameter */
    const tsl_layer_t *e = &m.layers[0], *h = &m.layers[m.n_layers - 1];
    CHECK(e->kind == TSL_LAYER_EMBEDDING &&
              e->params == (uint64_t)llround(2021.0048828125 * MIB / 16) &&
              fabs((double)e->act_repl_bytes + (double)e->act_shard_bytes -
                   198.7357177734375 * MIB) <= 1,
          "embedding %llu params", (unsigned long long)e->params);
    CHECK(h->kind == TSL_LAYER_HEAD && h->params == (uint64_t)llround(2021.0673828125 * MIB / 16),
          "head %llu params", (unsigned long long)h->params);
    /* 2 nodes: allreduce_size_2_consec_0 8.13007, pp_size_2 7.65998 GB/s; the smaller */
    CHECK(fabs(g.inter_allreduce_bw - 8.13007e9) < 1 && fabs(g.inter_p2p_bw - 7.65998e9) < 1 &&
              fabs(c.inter_bw - 7.65998e9) < 1 && c.inter_bw != ib100,
          "inter-node %.3f GB/s (all-reduce %.3f, p2p %.3f)", c.inter_bw / 1e9,
          g.inter_allreduce_bw / 1e9, g.inter_p2p_bw / 1e9);
    CHECK(fabs(g.inter_wide_allreduce_bw - 44.682e9) < 1, "16 consecutive: %.3f GB/s",
          g.inter_wide_allreduce_bw / 1e9);
    CHECK(g.sp_groups == 3, "the one-node sp_time file on two nodes: %u group sizes", g.sp_groups);
    char line[256];
    tsl_galvatron_import_describe(&g, line, sizeof line);
    CHECK(strstr(line, "memory galvatron (34 layers, sp profile)") &&
              strstr(line, "inter-node galvatron 7.66 GB/s"),
          "describe: %s", line);
    /* one node: the sp_time table (no 1-node inter link); size 8 at 1024 MB in 8.1409 ms */
    CHECK(tsl_galvatron_import(dir, &m1, &c1, &g, &err) == 0 && g.inter_bw == 0, "1 node: %s",
          err.msg);
    double want8 = 2.0 * 7 / 8 * 1024 * MIB / 8.1409e-3;
    bool found = false;
    for (uint32_t i = 0; i < g.sp_groups; i++)
        if (g.sp_n[i] == 8)
            found = fabs(g.sp_busbw[i] - want8) < 1e-6 * want8;
    CHECK(g.sp_groups == 3 && found, "sp_time: %u groups, size 8 as %.1f GB/s", g.sp_groups,
          want8 / 1e9);
    tsl_model_free(&m);
    tsl_model_free(&m1);
    tsl_cluster_free(&c);
    tsl_cluster_free(&c1);
}

/* A temporary directory holding one memory profile file with text, and a
 * GPT2-345M model on 8xA100-80G to import it into; false when it cannot be
 * made. Undo with drop_memory_profile. */
typedef struct mem_case {
    char dir[32], path[80];
    tsl_model_t m;
    tsl_cluster_t c;
} mem_case_t;

static bool memory_profile(mem_case_t *k, const char *name, const char *text)
{
    memset(k, 0, sizeof *k);
    snprintf(k->dir, sizeof k->dir, "/tmp/tsl-galv-XXXXXX");
    if (mkdtemp(k->dir) == NULL)
        return false;
    snprintf(k->path, sizeof k->path, "%s/%s", k->dir, name);
    FILE *f = fopen(k->path, "w");
    if (f == NULL)
        return false;
    fputs(text, f);
    fclose(f);
    CHECK(tsl_model_preset("GPT2-345M", &k->m, NULL) == 0 &&
              tsl_cluster_parse_spec(&k->c, "8xA100-80G", NULL) == 0,
          "inputs");
    return true;
}

static void drop_memory_profile(mem_case_t *k)
{
    remove(k->path);
    rmdir(k->dir);
    tsl_model_free(&k->m);
    tsl_cluster_free(&k->c);
}

/* A memory profile with a bad activation key is refused naming it; the model
 * is left as it was. */
static void test_bad_memory(void)
{
    mem_case_t k;
    tsl_err_t err = {0};
    tsl_galvatron_import_t g;
    if (!memory_profile(&k, "memory_profiling_x.json",
                        "{\"layertype_0\": {\"1024\": {\"parameter_size\": 10,"
                        " \"tp_activation_per_bsz_dict\": {\"two\": 5}}}}"))
        return;
    uint64_t params = k.m.layers[1].params;
    CHECK(tsl_galvatron_import(k.dir, &k.m, &k.c, &g, &err) != 0 &&
              tsl_err_code(&err) == TSL_E_INVALID && strstr(err.msg, "'two'") &&
              k.m.layers[1].params == params,
          "bad key: %s", err.msg);
    drop_memory_profile(&k);
}

/* Memory figures above what one device holds (16 TiB) are refused naming the
 * entry: parameter_size 1e308 rounded to 2^63 parameters and priced Llama2-7B's
 * iteration at 6·10⁸ s, model_states["1"] 1e30 at 2·10⁷ s, an activation of 1e308
 * MB a sample came out as less memory than the fixture's (tests/cli_fuzz.py). */
static void test_huge_memory(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"{\"layertype_0\": {\"1024\": {\"parameter_size\": 1e308,"
         " \"tp_activation_per_bsz_dict\": {\"1\": 5}}}}",
         "layertype_0: needs a positive parameter_size (MB, at most a device's 16 TiB)"},
        {"{\"layertype_0\": {\"1024\": {\"parameter_size\": 10,"
         " \"tp_activation_per_bsz_dict\": {\"1\": 1e308}}}}",
         "layertype_0: key '1' is not a TP degree with an MB figure in [0, 16777216]"},
        {"{\"layertype_0\": {\"1024\": {\"parameter_size\": 10,"
         " \"tp_activation_per_bsz_dict\": {\"1\": 5, \"checkpoint\": 1e308}}}}",
         "layertype_0: key 'checkpoint' is not a TP degree with an MB figure"},
        {"{\"other_memory_pp_on_first\": {\"1024\": {\"model_states\": {\"1\": 1e30},"
         " \"activation\": {\"1\": 5}}}}",
         "other_memory_pp_on_first: needs model_states[\"1\"] (MB, 0 to a device's 16 TiB)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mem_case_t k;
        tsl_err_t err = {0};
        tsl_galvatron_import_t g;
        if (!memory_profile(&k, "memory_profiling_x.json", cases[i].text))
            return;
        uint64_t params = k.m.layers[1].params;
        CHECK(tsl_galvatron_import(k.dir, &k.m, &k.c, &g, &err) != 0 &&
                  tsl_err_code(&err) == TSL_E_INVALID && strstr(err.msg, cases[i].want) &&
                  k.m.layers[1].params == params,
              "case %zu: %s", i, err.msg);
        drop_memory_profile(&k);
    }
}

/* A profile without "_sp": act(t) = repl + shard / t fitted by least squares
 * (exact here: 20 + 80/t MB a sample at t = 1, 2, 4), the checkpoint as
 * given, and the parameters from parameter_size (fp32 MB). */
static void test_fit_without_sp(void)
{
    mem_case_t k;
    tsl_err_t err = {0};
    tsl_galvatron_import_t g;
    if (!memory_profile(&k, "memory_profiling_fit.json",
                        "{\"layertype_0\": {\"1024\": {\"parameter_size\": 48,"
                        " \"tp_activation_per_bsz_dict\": {\"1\": 100, \"2\": 60, \"4\": 40,"
                        " \"checkpoint\": 4}}}}"))
        return;
    uint64_t emb = k.m.layers[0].params;
    CHECK(tsl_galvatron_import(k.dir, &k.m, &k.c, &g, &err) == 0 && !g.memory_sp &&
              g.memory_layers == k.m.n_layers - 2,
          "imports %u layers: %s", g.memory_layers, err.msg);
    const tsl_layer_t *l = &k.m.layers[5];
    CHECK(fabs((double)l->act_repl_bytes - 20 * MIB) <= 1 &&
              fabs((double)l->act_shard_bytes - 80 * MIB) <= 1,
          "repl %llu, shard %llu", (unsigned long long)l->act_repl_bytes,
          (unsigned long long)l->act_shard_bytes);
    CHECK(l->bnd_act_bytes == (uint64_t)(4 * MIB) && l->params == (uint64_t)(48 * MIB / 4) &&
              k.m.layers[0].params == emb,
          "checkpoint %llu, params %llu, the embedding untouched",
          (unsigned long long)l->bnd_act_bytes, (unsigned long long)l->params);
    drop_memory_profile(&k);
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
    CHECK(tsl_galvatron_profile_load("/nonexistent-dir", &m, &c, &p, NULL, 0, &err) != 0 &&
              tsl_err_code(&err) == TSL_E_NOTFOUND && p == NULL,
          "a directory without profiles: %s", err.msg);
    /* a path that is not there, or a file, is said to be so, not "no
     * computation_profiling_*.json" as if the directory held other things */
    CHECK(tsl_galvatron_profile_load("/nonexistent-dir", &m, &c, &p, NULL, 0, &err) != 0 &&
              strstr(err.msg, "No such file or directory"),
          "a missing directory is named as missing: %s", err.msg);
    CHECK(tsl_galvatron_profile_load("/dev/null", &m, &c, &p, NULL, 0, &err) != 0 &&
              strstr(err.msg, "not a directory"),
          "a file is not a profile directory: %s", err.msg);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
}

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static double bsz1_layer_s(const char *dir, tsl_err_t *err)
{
    tsl_model_t m = {0};
    tsl_cluster_t c = {0};
    tsl_profile_t *p = NULL;
    double fwd = -1, bwd;
    tsl_model_preset_seq("GPT2-345M", 1024, &m, NULL);
    tsl_cluster_parse_spec(&c, "8xA100-80G", NULL);
    if (tsl_galvatron_profile_load(dir, &m, &c, &p, NULL, 0, err) == 0)
        tsl_profile_layer_s(p, &m.layers[1], 1, 1, 1e12, &fwd, &bwd);
    free(p);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
    return fwd;
}

/* Galvatron reads one computation profile, named after the model; another run's
 * profile beside it (a conflicting bsz-1 entry) must not win by directory order. */
static void test_which_profile(void)
{
    char dir[] = "/tmp/tsl-galv-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        printf("skip: no temporary directory\n");
        return;
    }
    write_text(dir, "computation_profiling_bf16_gpt-345m_all.json",
               "{\"layernum[2]_bsz1_seq1024\": 10.0, \"layernum[4]_bsz1_seq1024\": 14.0}");
    write_text(dir, "computation_profiling_bf16_gpt-345m_seqlen1024_all.json",
               "{\"layernum[2]_bsz1_seq1024\": 30.0, \"layernum[4]_bsz1_seq1024\": 50.0}");
    tsl_err_t err = {0};
    CHECK(bsz1_layer_s(dir, &err) < 0 && tsl_err_code(&err) == TSL_E_INVALID &&
              strstr(err.msg, "computation_profiling_bf16_gpt-345m_all.json") &&
              strstr(err.msg, "computation_profiling_bf16_gpt-345m_seqlen1024_all.json") &&
              strstr(err.msg, "{precision}_{model_size}_all.json"),
          "two candidates and no model config: refused, naming both: %s", err.msg);
    write_text(dir, "gpt-345m.yaml", "# Galvatron model config\nmodel_size: gpt-345m\n");
    double fwd = bsz1_layer_s(dir, &err);
    CHECK(fabs(fwd - 0.002) < 1e-12, "the config's model_size picks its profile: %.6f s (%s)", fwd,
          err.msg);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "cleanup");
}

/* Hardware figures outside physical bounds are refused naming file and key:
 * a bus bandwidth of 1e-12 GB/s priced an iteration at 2.5e11 s, an overlap
 * coefficient of -1 was dropped and 1e300 taken. */
static void test_bad_hardware(void)
{
    static const struct {
        const char *file, *text, *want;
    } cases[] = {
        {"allreduce_bandwidth_1nodes_8gpus_per_node.json", "{\"allreduce_size_8_consec_1\": 1e-12}",
         "allreduce_size_8_consec_1: 1e-12 GB/s is outside the physical bounds"},
        /* a string was dropped, the bus bandwidth then taken from another group size's
         * file or the built-in figure (tests/cli_fuzz.py) */
        {"allreduce_bandwidth_1nodes_8gpus_per_node.json", "{\"allreduce_size_8_consec_1\": \"\"}",
         "allreduce_size_8_consec_1: must be a number (bus bandwidth in GB/s"},
        {"allreduce_bandwidth_1nodes_8gpus_per_node.json", "{\"allreduce_size_8_consec_1\": -150}",
         "allreduce_size_8_consec_1: -150 GB/s is outside the physical bounds"},
        {"overlap_coefficient.json", "{\"overlap_coe\": -1}", "overlap_coe: must be a number"},
        {"overlap_coefficient.json", "{\"overlap_coe\": 1e300}", "overlap_coe: must be a number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[] = "/tmp/tsl-galv-XXXXXX";
        if (mkdtemp(dir) == NULL) {
            printf("skip: no temporary directory\n");
            return;
        }
        write_text(dir, "computation_profiling_bf16_gpt-345m_all.json",
                   "{\"layernum[2]_bsz1_seq1024\": 10.0, \"layernum[4]_bsz1_seq1024\": 14.0}");
        write_text(dir, cases[i].file, cases[i].text);
        tsl_err_t err = {0};
        CHECK(bsz1_layer_s(dir, &err) < 0 && tsl_err_code(&err) == TSL_E_INVALID &&
                  strstr(err.msg, cases[i].want) && strstr(err.msg, cases[i].file),
              "%s: %s", cases[i].text, err.msg);
        char cmd[200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0, "cleanup");
    }
}

/* The inter-node figures of a two-node cluster (allreduce_bandwidth_2nodes_*,
 * p2p_bandwidth_2nodes_*) are held to a cluster's bandwidth bounds as the one-node
 * figure is: pp_size_2 at 1e-9 GB/s was taken as the link between the nodes and
 * priced Llama2-7B's iteration at 5·10⁷ s; a negative figure or a string was
 * dropped without a word (tests/cli_fuzz.py). A figure of 0, or none, is none
 * measured, as before. */
static void test_bad_inter_node(void)
{
    static const struct {
        const char *file, *text, *want;
    } cases[] = {
        {"p2p_bandwidth_2nodes_8gpus_per_node.json", "{\"pp_size_2\": 1e-9}",
         "pp_size_2: 1e-09 GB/s is outside the physical bounds [0.01, 100000]"},
        {"p2p_bandwidth_2nodes_8gpus_per_node.json", "{\"pp_size_2\": -7.6}",
         "pp_size_2: -7.6 GB/s is outside the physical bounds"},
        {"allreduce_bandwidth_2nodes_8gpus_per_node.json",
         "{\"allreduce_size_2_consec_0\": \"8.1\"}",
         "allreduce_size_2_consec_0: must be a number (bus bandwidth in GB/s"},
        {"allreduce_bandwidth_2nodes_8gpus_per_node.json",
         "{\"allreduce_size_2_consec_0\": 8.1, \"allreduce_size_16_consec_1\": 1e300}",
         "allreduce_size_16_consec_1: 1e+300 GB/s is outside the physical bounds"},
        {"p2p_bandwidth_2nodes_8gpus_per_node.json", "{\"pp_size_2\": 0}", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[] = "/tmp/tsl-galv-XXXXXX";
        if (mkdtemp(dir) == NULL) {
            printf("skip: no temporary directory\n");
            return;
        }
        write_text(dir, cases[i].file, cases[i].text);
        tsl_model_t m = {0};
        tsl_cluster_t c = {0};
        tsl_err_t err = {0};
        tsl_galvatron_import_t g;
        CHECK(tsl_model_preset_seq("GPT2-345M", 1024, &m, NULL) == 0 &&
                  tsl_cluster_parse_spec(&c, "2x8xA100-80G:ib100", NULL) == 0,
              "model and cluster");
        double ib100 = c.inter_bw;
        int rc = tsl_galvatron_import(dir, &m, &c, &g, &err);
        if (cases[i].want != NULL)
            CHECK(rc != 0 && tsl_err_code(&err) == TSL_E_INVALID &&
                      strstr(err.msg, cases[i].want) && strstr(err.msg, cases[i].file),
                  "%s: %s", cases[i].text, err.msg);
        else
            CHECK(rc == 0 && g.inter_bw == 0 && c.inter_bw == ib100,
                  "%s: none measured, the cluster's link kept: %s", cases[i].text, err.msg);
        tsl_model_free(&m);
        tsl_cluster_free(&c);
        char cmd[200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0, "cleanup");
    }
}

/* A computation entry of the model's sequence that is no forward time is refused
 * naming file and key: a negative one was taken as measured (-3 and 14 ms at 2 and 4
 * layers priced a layer at 8.5 ms), a string dropped without a word. */
static void test_bad_computation(void)
{
    static const char *const cases[] = {
        "{\"layernum[2]_bsz1_seq1024\": -3.0, \"layernum[4]_bsz1_seq1024\": 14.0}",
        "{\"layernum[2]_bsz1_seq1024\": 0, \"layernum[4]_bsz1_seq1024\": 14.0}",
        "{\"layernum[2]_bsz1_seq1024\": 10.0, \"layernum[4]_bsz1_seq1024\": 1e300}",
        "{\"layernum[2]_bsz1_seq1024\": \"10\", \"layernum[4]_bsz1_seq1024\": 14.0}",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[] = "/tmp/tsl-galv-XXXXXX";
        if (mkdtemp(dir) == NULL) {
            printf("skip: no temporary directory\n");
            return;
        }
        write_text(dir, "computation_profiling_bf16_gpt-345m_all.json", cases[i]);
        tsl_err_t err = {0};
        CHECK(bsz1_layer_s(dir, &err) < 0 && tsl_err_code(&err) == TSL_E_INVALID &&
                  strstr(err.msg, "computation_profiling_bf16_gpt-345m_all.json: layernum[") &&
                  strstr(err.msg, "must be a forward time in ms in (0, 3600000]"),
              "%s: %s", cases[i], err.msg);
        char cmd[200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0, "cleanup");
    }
}

/* A micro-batch size whose time at 4 layers is not above its time at 2 (noise
 * larger than a GPT2-345M layer at bsz 2) is left out, its rate taken from bsz 1
 * and 4, and the note names the file and both keys (it was dropped without a
 * word); every size so is refused naming them, not "no two layer counts". */
static void test_noisy_computation(void)
{
    char dir[] = "/tmp/tsl-galv-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        printf("skip: no temporary directory\n");
        return;
    }
    write_text(dir, "computation_profiling_bf16_gpt-345m_all.json",
               "{\"layernum[2]_bsz1_seq1024\": 10.0, \"layernum[4]_bsz1_seq1024\": 14.0,"
               " \"layernum[2]_bsz2_seq1024\": 20.0, \"layernum[4]_bsz2_seq1024\": 19.5,"
               " \"layernum[2]_bsz4_seq1024\": 30.0, \"layernum[4]_bsz4_seq1024\": 46.0}");
    tsl_model_t m = {0};
    tsl_cluster_t c = {0};
    tsl_profile_t *p = NULL;
    tsl_err_t err = {0};
    char note[1024] = "stale";
    CHECK(tsl_model_preset_seq("GPT2-345M", 1024, &m, NULL) == 0, "GPT2-345M");
    CHECK(tsl_cluster_parse_spec(&c, "8xA100-80G", NULL) == 0, "cluster");
    CHECK(tsl_galvatron_profile_load(dir, &m, &c, &p, note, sizeof note, &err) == 0, "loads: %s",
          err.msg);
    CHECK(strstr(note, "computation_profiling_bf16_gpt-345m_all.json") &&
              strstr(note, "layernum[4]_bsz2_seq1024 (19.5 ms) is not above "
                           "layernum[2]_bsz2_seq1024 (20 ms)") &&
              strstr(note, "micro-batch 2 left out"),
          "the note names the file and keys: '%s'", note);
    CHECK(p && p->n_blocks == 4, "bsz 1 and 4 kept (attention and FFN each): %u blocks",
          p ? p->n_blocks : 0);
    double fwd = -1, bwd;
    if (p)
        tsl_profile_layer_s(p, &m.layers[1], 4, 1, 1e12, &fwd, &bwd);
    CHECK(fabs(fwd - 0.008) < 1e-12, "bsz 4 as measured: %.6f s", fwd);
    free(p);
    p = NULL;
    /* a clean profile leaves the note empty */
    write_text(dir, "computation_profiling_bf16_gpt-345m_all.json",
               "{\"layernum[2]_bsz1_seq1024\": 10.0, \"layernum[4]_bsz1_seq1024\": 14.0}");
    CHECK(tsl_galvatron_profile_load(dir, &m, &c, &p, note, sizeof note, &err) == 0 &&
              note[0] == '\0',
          "clean: '%s' (%s)", note, err.msg);
    free(p);
    p = NULL;
    /* nothing left: refused naming the keys */
    write_text(dir, "computation_profiling_bf16_gpt-345m_all.json",
               "{\"layernum[2]_bsz1_seq1024\": 10.0, \"layernum[4]_bsz1_seq1024\": 10.0}");
    CHECK(tsl_galvatron_profile_load(dir, &m, &c, &p, note, sizeof note, &err) != 0 &&
              tsl_err_code(&err) == TSL_E_INVALID &&
              strstr(err.msg, "layernum[4]_bsz1_seq1024 (10 ms) is not above") &&
              strstr(err.msg, "no micro-batch size is left"),
          "every size noisy: %s", err.msg);
    free(p);
    tsl_model_free(&m);
    tsl_cluster_free(&c);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "cleanup");
}

int main(void)
{
    const char *shared = getenv("TSL_SHARED");
    char probe[600];
    test_empty_dir();
    test_bad_memory();
    test_huge_memory();
    test_fit_without_sp();
    test_which_profile();
    test_noisy_computation();
    test_bad_hardware();
    test_bad_inter_node();
    test_bad_computation();
    snprintf(probe, sizeof probe, "%s/fixtures/galvatron/llama2-7b", shared ? shared : "");
    if (shared == NULL || access(probe, R_OK) != 0) {
        int rc = CHECK_DONE();
        if (rc != 0)
            return rc;
        SKIP_ALL("../shared/fixtures/galvatron is absent (TSL_SHARED unset or no fixture)");
    }
    test_fixture(shared);
    test_import(shared);
    return CHECK_DONE();
}
