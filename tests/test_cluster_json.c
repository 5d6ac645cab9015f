/*
 * test_cluster_json.c — the cluster file format (docs/cluster-format.md): the
 * example files in tests/data/cluster, an error naming the JSON path for every
 * kind of mistake, the writer's round trip, tsl_cluster_from_arg, and the built-in
 * A100 bandwidth against every intra-node figure of Galvatron's fixtures.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cluster_json.h"
#include "cost.h"
#include "roofline.h"

#define GB  1e9
#define GIB (1024.0 * 1024.0 * 1024.0)

static char data_dir[512];

static void data_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/cluster/%s", data_dir, name);
}

static int load(const char *name, tsl_cluster_t *c, tsl_err_t *err)
{
    char path[700];
    data_path(path, sizeof(path), name);
    return tsl_cluster_json_load(path, c, err);
}

static void test_file_a100(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(load("a100-2x8-ib100.json", &c, &err) == 0, "%s", err.msg);
    CHECK(c.n_nodes == 2 && c.n_devices == 16, "2 x 8");
    CHECK(c.inter_bw == tsl_link_find("ib100")->bw && c.inter_bw_matrix == NULL, "ib100");
    CHECK(c.nodes[1].intra_bw == tsl_gpu_find("A100-40G")->intra_bw, "built-in intra");
    CHECK(c.overlap_slowdown == TSL_DEFAULT_OVERLAP_SLOWDOWN, "default overlap");
    CHECK(tsl_cluster_is_homogeneous(&c), "homogeneous");
    tsl_cluster_free(&c);
}

static void test_file_amp(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(load("amp-hetero.json", &c, &err) == 0, "%s", err.msg);
    CHECK(c.n_nodes == 4 && c.n_devices == 16 && c.n_gpu_types == 2, "3 V100 nodes + 1 T4");
    CHECK_NEAR(c.nodes[0].intra_bw, 170 * GB / 8, 1e-12, "170 Gb/s NVLink");
    CHECK_NEAR(c.nodes[3].intra_bw, 50 * GB / 8, 1e-12, "50 Gb/s PCIe");
    CHECK_NEAR(c.inter_bw, 10 * GB / 8, 1e-12, "10 Gb/s between instances");
    CHECK(strcmp(tsl_cluster_device_gpu(&c, 12)->name, "T4-16G") == 0, "alias T4");
    CHECK(c.nodes[2].cpu_mem_bytes == 244ull << 30, "cpu memory in GiB");
    CHECK(c.overlap_slowdown == 1.3, "overlap");
    CHECK_NEAR(tsl_cluster_group_bw(&c, 0, 1, 16), 10 * GB / 8, 1e-12, "slowest link");
    CHECK_NEAR(tsl_cluster_group_bw(&c, 12, 1, 4), 50 * GB / 8, 1e-12, "T4 node");
    tsl_cluster_free(&c);
}

static void test_file_matrix(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(load("matrix-4nodes.json", &c, &err) == 0, "%s", err.msg);
    CHECK(c.n_nodes == 4 && c.n_devices == 32 && c.inter_bw_matrix != NULL, "4 x 8, matrix");
    CHECK(tsl_cluster_link_bw(&c, 0, 8) == 21.25 * GB, "same rack");
    CHECK(tsl_cluster_link_bw(&c, 9, 17) == 5 * GB, "across racks");
    CHECK(tsl_cluster_link_bw(&c, 31, 0) == 2.5 * GB, "links override the matrix");
    CHECK(c.inter_bw == 2.5 * GB, "inter_bw = slowest pair");
    CHECK(c.overlap_slowdown == 1.13, "Galvatron's measured overlap");
    CHECK(tsl_cluster_dim_bw(&c, 0, 16, 8, 2) == 21.25 * GB, "rack 0 block");
    CHECK(tsl_cluster_dim_bw(&c, 0, 32, 8, 4) == 2.5 * GB, "all nodes");
    CHECK(!tsl_cluster_is_homogeneous(&c), "not homogeneous links");
    tsl_cluster_free(&c);
}

static void test_file_custom(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(load("custom-gpu.json", &c, &err) == 0, "%s", err.msg);
    CHECK(c.n_nodes == 3 && c.n_devices == 14 && c.n_gpu_types == 3, "three types");
    const tsl_gpu_spec_t *l40 = tsl_cluster_device_gpu(&c, 0);
    CHECK(strcmp(l40->name, "L40S-48G") == 0 && l40->mem_bytes == 48ull << 30, "custom type");
    CHECK(l40->peak_flops == 362e12 && l40->efficiency == 0.45, "custom figures");
    CHECK(l40->intra_bw == 20 * GB && l40->pcie_bw == 24 * GB, "custom bandwidths");
    CHECK(strstr(l40->source, "cluster file") != NULL, "source says the file");
    const tsl_gpu_spec_t *a = tsl_cluster_device_gpu(&c, 4), *b = tsl_gpu_find("A100-80G");
    CHECK(strcmp(a->name, "A100-80G") == 0, "override keeps the canonical name");
    CHECK(a->intra_bw == 140 * GB && c.nodes[1].intra_bw == 140 * GB, "overridden intra");
    CHECK(a->peak_flops == b->peak_flops && a->mem_bytes == b->mem_bytes, "rest as built-in");
    const tsl_gpu_spec_t *s = tsl_cluster_device_gpu(&c, 13);
    CHECK(strcmp(s->name, "A100-slow") == 0 && s->efficiency == 0.4, "derived type");
    CHECK(s->mem_bytes == 40ull << 30, "derived from A100-40G");
    CHECK(c.inter_bw == 10.625 * GB, "inter_gbps");
    tsl_cluster_free(&c);
}

static void test_file_bad(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(load("bad-gpus.json", &c, &err) == -1, "bad file fails");
    CHECK(strstr(err.msg, "bad-gpus.json: nodes[1].gpus: must be a positive integer") != NULL, "%s",
          err.msg);
    CHECK(c.nodes == NULL && c.n_nodes == 0, "left empty");
    CHECK(load("no-such-file.json", &c, &err) == -1 && strstr(err.msg, "no-such-file.json"), "%s",
          err.msg);
    /* a directory opens but reads as nothing: said as such, not as JSON that
     * "expected '[' or '{' near end of file" (--cluster DIR.json) */
    char d[] = "/tmp/tsl-cluster-XXXXXX", sub[64];
    if (mkdtemp(d) != NULL) {
        snprintf(sub, sizeof sub, "%s/c.json", d);
        CHECK(mkdir(sub, 0700) == 0, "mkdir %s", sub);
        CHECK(tsl_cluster_from_arg(sub, &c, &err) == -1 && strstr(err.msg, "is a directory") &&
                  strstr(err.msg, "c.json") && !strstr(err.msg, "expected"),
              "a directory is named as one: %s", err.msg);
        rmdir(sub);
        rmdir(d);
    }
}

struct bad_case {
    const char *json;
    const char *want;
};

#define NODE "{\"type\": \"A100-80G\", \"gpus\": 8}"
#define TWO  "\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"count\": 2}]"

static const struct bad_case bad_cases[] = {
    {"[]", "(root): must be a JSON object"},
    {"{", "cluster JSON: line 1"},
    {"{\"nodes\": [" NODE "], \"nodes\": []}", "cluster JSON: line 1"},
    {"{}", "nodes: missing"},
    {"{\"nodes\": []}", "nodes: must be a non-empty array"},
    {"{\"nodes\": {}}", "nodes: must be a non-empty array"},
    {"{\"nodes\": [5]}", "nodes[0]: must be an object"},
    {"{\"nodes\": [{\"type\": \"A100-80G\"}]}",
     "nodes[0].gpus: missing; must be a positive integer"},
    {"{\"nodes\": [" NODE ", {\"type\": \"A100-80G\", \"gpus\": 0}]}",
     "nodes[1].gpus: must be a positive integer"},
    {"{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8.5}]}",
     "nodes[0].gpus: must be a positive integer"},
    {"{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": -1}]}",
     "nodes[0].gpus: must be a positive integer"},
    {"{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": \"8\"}]}",
     "nodes[0].gpus: must be a positive integer"},
    {"{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 200000}]}",
     "nodes[0].gpus: 200000 exceeds the limit of 131072"},
    {"{\"nodes\": [{\"gpus\": 8}]}", "nodes[0].type: missing"},
    {"{\"nodes\": [{\"type\": \"A200\", \"gpus\": 8}]}",
     "nodes[0].type: unknown GPU type 'A200'; known: A100-40G"},
    {"{\"gpu_types\": {\"MyGPU\": {\"base\": \"A100-80G\"}}, \"nodes\": [{\"type\": "
     "\"MyGPU2\", \"gpus\": 8}]}",
     "nodes[0].type: unknown GPU type 'MyGPU2' (did you mean MyGPU?); known: A100-40G"},
    {"{\"gpu_types\": {\"X\": {\"base\": \"H100-80GB\"}}, \"nodes\": [{\"type\": \"X\", "
     "\"gpus\": 8}]}",
     "gpu_types.X.base: unknown built-in GPU type 'H100-80GB' (did you mean H100-80G?); known: "},
    {"{\"nodes\": [{\"type\": 5, \"gpus\": 8}]}", "nodes[0].type: must be a string"},
    /* beyond 64 bits once in bytes: llround of 1e309 was undefined (read back as
     * 8.6e9 GiB), 1e308 GB/s became infinity ("inter-node bandwidth must be > 0") */
    {"{\"gpu_types\": {\"X\": {\"base\": \"A100-80G\", \"memory_gb\": 1e300}}, "
     "\"nodes\": [{\"type\": \"X\", \"gpus\": 8}]}",
     "gpu_types.X.memory_gb: 1e+300 GiB is beyond any device or host"},
    /* an infinite peak in FLOP/s, a memory under a byte: named, not the planner's "GPU
     * type 'X': peak FLOP/s must be > 0" / "memory must be > 0" of the type alone */
    {"{\"gpu_types\": {\"X\": {\"base\": \"A100-80G\", \"peak_tflops\": 1e300}}, "
     "\"nodes\": [{\"type\": \"X\", \"gpus\": 8}]}",
     "gpu_types.X.peak_tflops: 1e+300 is beyond any GPU"},
    {"{\"gpu_types\": {\"X\": {\"base\": \"A100-80G\", \"memory_gb\": 1e-300}}, "
     "\"nodes\": [{\"type\": \"X\", \"gpus\": 8}]}",
     "gpu_types.X.memory_gb: 1e-300 GiB is less than a byte"},
    {"{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"cpu_memory_gb\": 1e300}]}",
     "nodes[0].cpu_memory_gb: 1e+300 GiB is beyond any device or host"},
    {"{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"count\": 2}], \"inter_gbit\": 1e308}",
     "inter_gbit: 1e+308 is beyond any link"},
    {"{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"count\": 0}]}",
     "nodes[0].count: must be a positive integer"},
    {"{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"count\": 40000}]}",
     "nodes[0].count: 40000 exceeds the limit of 32768"},
    {"{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 1, \"count\": 20000}, {\"type\": "
     "\"A100-80G\", "
     "\"gpus\": 1, \"count\": 20000}], \"link\": \"ib100\"}",
     "nodes[1].count: brings the node count to 40000, above the limit of 32768"},
    {"{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 80000, \"count\": 3}]}",
     "nodes[0]: brings the device count to 240000"},
    {"{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"intra_gbps\": 0}]}",
     "nodes[0].intra_gbps: must be a positive number"},
    {"{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"intra_gbps\": 10, \"intra_gbit\": 80}]}",
     "nodes[0].intra_gbps: give intra_gbps or intra_gbit, not both"},
    {"{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"intra_gpbs\": 10}]}",
     "nodes[0].intra_gpbs: unknown key; known: type, gpus"},
    {"{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"cpu_memory_gb\": -1}]}",
     "nodes[0].cpu_memory_gb: must be >= 0"},
    {"{\"nodes\": [" NODE "], \"foo\": 1}", "foo: unknown key; known: name"},
    {"{\"nodes\": [" NODE "], \"name\": 1}", "name: must be a string"},
    {"{" TWO "}", "inter_gbps: missing; nodes 0 and 1 have no bandwidth"},
    {"{" TWO ", \"link\": \"ib7\"}", "link: 'ib7' unknown; known: ib100"},
    {"{" TWO ", \"link\": 100}", "link: must be a string"},
    {"{" TWO ", \"link\": \"ib100\", \"inter_gbps\": 10}", "link: give link or inter_gbps"},
    {"{" TWO ", \"inter_gbps\": \"fast\"}", "inter_gbps: must be a number"},
    {"{" TWO ", \"inter_gbps\": -3}", "inter_gbps: must be a positive number"},
    {"{" TWO ", \"inter_gbps_matrix\": [[0, 5]]}", "inter_gbps_matrix: must be an array of 2 rows"},
    {"{" TWO ", \"inter_gbps_matrix\": [[0, 5], [5]]}",
     "inter_gbps_matrix[1]: must be an array of 2 numbers"},
    {"{" TWO ", \"inter_gbps_matrix\": [[0, 5], [4, 0]]}",
     "inter_gbps_matrix[1][0]: 4 differs from inter_gbps_matrix[0][1] = 5"},
    {"{" TWO ", \"inter_gbps_matrix\": [[0, 0], [0, 0]]}",
     "inter_gbps_matrix[0][1]: must be a positive number"},
    {"{" TWO ", \"inter_gbps_matrix\": [[\"x\", 5], [5, 0]]}",
     "inter_gbps_matrix[0][0]: must be a number"},
    {"{" TWO ", \"inter_gbps_matrix\": [[0, 5], [5, 0]], \"inter_gbit_matrix\": [[0, 5], [5, 0]]}",
     "inter_gbps_matrix: give it or inter_gbit_matrix, not both"},
    {"{" TWO ", \"links\": [{\"a\": 0, \"b\": 7, \"gbps\": 1}]}",
     "links[0].b: node 7 does not exist; the file has 2 nodes"},
    {"{" TWO ", \"links\": [{\"a\": -1, \"b\": 1, \"gbps\": 1}]}",
     "links[0].a: must be a node index"},
    {"{" TWO ", \"links\": [{\"a\": 1, \"b\": 1, \"gbps\": 1}]}",
     "links[0]: a and b are both node 1"},
    {"{" TWO ", \"links\": [{\"a\": 0, \"b\": 1}]}", "links[0].gbps: missing"},
    {"{" TWO ", \"links\": [{\"a\": 0, \"b\": 1, \"bw\": 3}]}",
     "links[0].bw: unknown key; known: a, b, gbps"},
    {"{" TWO ", \"links\": [{\"a\": 0, \"b\": 1, \"gbit\": 0}]}",
     "links[0].gbit: must be a positive number"},
    {"{" TWO ", \"links\": {}}", "links: must be an array"},
    {"{\"nodes\": [" NODE "], \"overlap_slowdown\": 0.9}", "overlap_slowdown: 0.9 must be >= 1"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": []}", "gpu_types: must be an object"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"X\": 3}}", "gpu_types.X: must be an object"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"X\": {\"memory_gb\": 16}}}",
     "gpu_types.X.peak_tflops: missing"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"X\": {\"memory_gb\": 16, \"peak_tflops\": 100, "
     "\"efficiency\": 0.5, \"pcie_gbps\": 10}}}",
     "gpu_types.X.intra_gbps: missing"},
    {"{\"nodes\": [" NODE
     "], \"gpu_types\": {\"X\": {\"base\": \"A100-80G\", \"efficiency\": 1.5}}}",
     "gpu_types.X.efficiency: 1.5 is outside (0, 1]"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"X\": {\"base\": \"A100-80G\", \"efficiency\": 0}}}",
     "gpu_types.X.efficiency: must be a positive number"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"X\": {\"base\": \"Z\"}}}",
     "gpu_types.X.base: unknown built-in GPU type 'Z'"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"X\": {\"base\": \"A100-80G\", \"flops\": 1}}}",
     "gpu_types.X.flops: unknown key"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"A100-80G\": {}, \"a100-80g\": {}}}",
     "gpu_types.a100-80g: names the same type"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"0123456789012345678901234567890123\": {}}}",
     "name must be 1 to 31 characters"},
    /* the fp32 training rates: a positive fp32 peak, a TF32 peak >= 0, finite in FLOP/s */
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"A100-80G\": {\"fp32_tflops\": \"19.5\"}}}",
     "gpu_types.A100-80G.fp32_tflops: must be a number"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"A100-80G\": {\"fp32_tflops\": -1}}}",
     "gpu_types.A100-80G.fp32_tflops: must be a positive number"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"A100-80G\": {\"fp32_tflops\": 0}}}",
     "gpu_types.A100-80G.fp32_tflops: must be a positive number"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"A100-80G\": {\"fp32_tflops\": 1e300}}}",
     "gpu_types.A100-80G.fp32_tflops: 1e+300 is beyond any GPU"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"A100-80G\": {\"tf32_tflops\": -156}}}",
     "gpu_types.A100-80G.tf32_tflops: must be a number >= 0 (0: no TF32)"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"A100-80G\": {\"tf32_tflops\": true}}}",
     "gpu_types.A100-80G.tf32_tflops: must be a number"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"A100-80G\": {\"tf32_tflops\": 1e305}}}",
     "gpu_types.A100-80G.tf32_tflops: 1e+305 is beyond any GPU"},
    /* the host's pace (host_scale): a positive number up to 1000, named */
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"A100-80G\": {\"host_scale\": 0}}}",
     "gpu_types.A100-80G.host_scale: must be a positive number"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"A100-80G\": {\"host_scale\": -2.75}}}",
     "gpu_types.A100-80G.host_scale: must be a positive number"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"A100-80G\": {\"host_scale\": \"2.75\"}}}",
     "gpu_types.A100-80G.host_scale: must be a number"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"A100-80G\": {\"host_scale\": 1e6}}}",
     "gpu_types.A100-80G.host_scale: 1e+06 is beyond any host"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"A100-80G\": {\"host_scal\": 2}}}",
     "gpu_types.A100-80G.host_scal: unknown key; known: base, memory_gb, peak_tflops, "
     "efficiency, intra_gbps, intra_gbit, pcie_gbps, pcie_gbit, fp32_tflops, tf32_tflops, "
     "host_scale"},
    {"{\"nodes\": [" NODE "], \"gpu_types\": {\"A100-80G\": {\"fp32_tflop\": 19.5}}}",
     "gpu_types.A100-80G.fp32_tflop: unknown key; known: base, memory_gb, peak_tflops, "
     "efficiency, intra_gbps, intra_gbit, pcie_gbps, pcie_gbit, fp32_tflops, tf32_tflops"},
    /* one name on two node entries (hostnames compare case-insensitively): which host
     * is node 1 of a heterogeneous plan's node order would be ambiguous; was accepted */
    {"{\"link\": \"ib100\", \"nodes\": [{\"name\": \"gpu-a\", \"gpus\": 8, \"type\": "
     "\"A100-80G\"}, {\"name\": \"gpu-b\", \"gpus\": 8, \"type\": \"A100-80G\"}, "
     "{\"name\": \"GPU-A\", \"gpus\": 8, \"type\": \"V100-32G\"}]}",
     "nodes[2].name: 'GPU-A' names nodes[0] too"},
    /* a links[] pair below the floor named inter_gbps_matrix[0][1], a key not in the file */
    {"{\"nodes\": [{\"gpus\": 8, \"type\": \"A100-80G\", \"count\": 2}], \"links\": "
     "[{\"a\": 0, \"b\": 1, \"gbit\": 1e-300}]}",
     "links[0].gbit: 1.25e-301 GB/s is outside the physical bounds [0.01, 100000]"},
    /* an unknown type's, base's or link's control bytes shown escaped (echoed raw, the
     * message's line ended at the newline and the escape sequence reached the terminal) */
    {"{\"nodes\": [{\"gpus\": 8, \"type\": \"A100\\n\\u001b[31m\"}]}",
     "nodes[0].type: unknown GPU type 'A100\\n\\x1b[31m'"},
    {"{\"link\": \"ib\\n1\", \"nodes\": [" NODE "]}", "link: 'ib\\n1' unknown"},
    {"{\"gpu_types\": {\"X-1G\": {\"base\": \"a\\tb\"}}, \"nodes\": [" NODE "]}",
     "unknown built-in GPU type 'a\\tb'"},
};

static void test_errors(void)
{
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        tsl_cluster_t c;
        tsl_err_t err = {0};
        int rc = tsl_cluster_json_parse(bad_cases[i].json, &c, &err);
        CHECK(rc == -1, "case %zu must fail: %s", i, bad_cases[i].json);
        CHECK(strstr(err.msg, bad_cases[i].want) != NULL, "case %zu: got \"%s\", want \"%s\"", i,
              err.msg, bad_cases[i].want);
        CHECK(c.nodes == NULL && c.n_nodes == 0, "case %zu leaves the cluster empty", i);
        tsl_cluster_free(&c);
    }
}

/* Nine GPU types in one file: the cluster holds at most eight. */
static void test_too_many_types(void)
{
    char json[4096];
    size_t len = (size_t)snprintf(json, sizeof(json), "{\"gpu_types\": {");
    for (int i = 0; i < 9; i++)
        len += (size_t)snprintf(json + len, sizeof(json) - len,
                                "%s\"G%d\": {\"base\": \"A100-80G\", \"efficiency\": 0.%d}",
                                i ? ", " : "", i, i + 1);
    len += (size_t)snprintf(json + len, sizeof(json) - len, "}, \"nodes\": [");
    for (int i = 0; i < 9; i++)
        len += (size_t)snprintf(json + len, sizeof(json) - len,
                                "%s{\"type\": \"G%d\", \"gpus\": 1}", i ? ", " : "", i);
    snprintf(json + len, sizeof(json) - len, "], \"inter_gbps\": 10}");
    tsl_cluster_t c;
    tsl_err_t err = {0};
    CHECK(tsl_cluster_json_parse(json, &c, &err) == -1, "nine types");
    CHECK(strstr(err.msg, "nodes[8].type: cluster: more than 8 GPU types") != NULL, "%s", err.msg);
}

static void test_inline_good(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    /* an override given by alias applies to nodes named canonically, and the other way */
    const char *json = "{\"gpu_types\": {\"TITAN-RTX\": {\"intra_gbps\": 5}},"
                       " \"nodes\": [{\"type\": \"RTX-TITAN-24G\", \"gpus\": 8},"
                       "             {\"type\": \"titan-rtx\", \"gpus\": 8}],"
                       " \"inter_gbit\": 100}";
    CHECK(tsl_cluster_json_parse(json, &c, &err) == 0, "%s", err.msg);
    CHECK(c.n_gpu_types == 1 && c.nodes[0].intra_bw == 5 * GB && c.nodes[1].intra_bw == 5 * GB,
          "alias override");
    CHECK(c.inter_bw == 12.5 * GB, "inter_gbit");
    tsl_cluster_free(&c);

    /* links alone may describe every pair */
    json = "{\"nodes\": [{\"type\": \"H100\", \"gpus\": 8, \"count\": 3}],"
           " \"links\": [{\"a\": 0, \"b\": 1, \"gbps\": 40}, {\"a\": 1, \"b\": 2, \"gbit\": 400},"
           "             {\"a\": 2, \"b\": 0, \"gbps\": 20}], \"overlap_slowdown\": 1}";
    CHECK(tsl_cluster_json_parse(json, &c, &err) == 0, "%s", err.msg);
    CHECK(tsl_cluster_link_bw(&c, 0, 23) == 20 * GB && tsl_cluster_link_bw(&c, 8, 16) == 50 * GB,
          "pairs from links");
    CHECK(c.overlap_slowdown == 1.0, "no contention");
    tsl_cluster_free(&c);

    /* one node: the diagonal-only matrix and links are fine, link names still checked */
    json = "{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 4}], \"inter_gbps_matrix\": [[null]],"
           " \"link\": \"eth25\"}";
    CHECK(tsl_cluster_json_parse(json, &c, &err) == 0, "%s", err.msg);
    CHECK(c.n_devices == 4, "one node of 4");
    tsl_cluster_free(&c);

    /* a name labels its entry, count nodes and all; unnamed and empty-named entries
     * share nothing */
    json = "{\"nodes\": [{\"name\": \"rack-1\", \"type\": \"A100-80G\", \"gpus\": 8, "
           "\"count\": 2}, {\"type\": \"A100-80G\", \"gpus\": 8}, {\"type\": \"A100-80G\", "
           "\"gpus\": 8}, {\"name\": \"\", \"type\": \"A100-80G\", \"gpus\": 8}, "
           "{\"name\": \"\", \"type\": \"A100-80G\", \"gpus\": 8}], \"link\": \"ib100\"}";
    CHECK(tsl_cluster_json_parse(json, &c, &err) == 0, "%s", err.msg);
    CHECK(c.n_nodes == 6, "%u nodes", c.n_nodes);
    tsl_cluster_free(&c);
}

/* The fp32 training rates of a type (docs/cluster-format.md): a custom type may give
 * them, an override replaces the built-in's (tf32_tflops 0: fp32 GEMMs without TF32),
 * a derived type inherits its base's; written back and read again unchanged. */
static void test_fp32_rates(void)
{
    tsl_cluster_t c, d;
    tsl_err_t err = {0};
    const char *json =
        "{\"gpu_types\": {\"X-24G\": {\"memory_gb\": 24, \"peak_tflops\": 100, "
        "\"efficiency\": 0.5, \"intra_gbps\": 20, \"pcie_gbps\": 24, \"fp32_tflops\": 25},"
        " \"A100-80G\": {\"tf32_tflops\": 0}, \"MI300X\": {\"tf32_tflops\": 653.7},"
        " \"B-slow\": {\"base\": \"B200\", \"efficiency\": 0.5}},"
        " \"nodes\": [{\"type\": \"X-24G\", \"gpus\": 2}, {\"type\": \"A100-80G\", \"gpus\": 2},"
        "             {\"type\": \"MI300X\", \"gpus\": 2}, {\"type\": \"B-slow\", \"gpus\": 2}],"
        " \"inter_gbps\": 10}";
    CHECK(tsl_cluster_json_parse(json, &c, &err) == 0, "%s", err.msg);
    CHECK(tsl_gpu_fp32_peak(tsl_cluster_device_gpu(&c, 0)) == 25e12, "custom: fp32 as given");
    CHECK(tsl_gpu_fp32_peak(tsl_cluster_device_gpu(&c, 2)) == 19.5e12,
          "A100 with TF32 off: its fp32 peak");
    CHECK(tsl_gpu_fp32_peak(tsl_cluster_device_gpu(&c, 4)) == 653.7e12,
          "MI300X opting in to TF32: its TF32 peak");
    CHECK(tsl_gpu_fp32_peak(tsl_cluster_device_gpu(&c, 6)) == 1100e12, "derived: the base's");
    json_t *j = tsl_cluster_to_json(&c);
    char *text = json_dumps(j, JSON_INDENT(2));
    CHECK(tsl_cluster_json_parse(text, &d, &err) == 0, "%s\n%s", err.msg, text);
    for (uint32_t dev = 0; dev < c.n_devices && dev < d.n_devices; dev += 2) {
        const tsl_gpu_spec_t *x = tsl_cluster_device_gpu(&c, dev),
                             *y = tsl_cluster_device_gpu(&d, dev);
        CHECK(x->fp32_peak_flops == y->fp32_peak_flops && x->tf32_peak_flops == y->tf32_peak_flops,
              "%s: the fp32 pair read back", x->name);
    }
    free(text);
    json_decref(j);
    tsl_cluster_free(&d);
    tsl_cluster_free(&c);
}

/* The host's pace of a type (host_scale, docs/cluster-format.md): an override replaces
 * the built-in's (GB200's Grace 2.75), a derived type inherits its base's, a custom type
 * and the x86 parts have none (1); priced on the block's built-in host op (cost.c
 * tsl_cost_env_init: the slowest host of the block, a faster one alone); written back
 * and read again unchanged. Before, a cluster file could not say it. */
static void test_host_scale(void)
{
    tsl_cluster_t c, d;
    tsl_err_t err = {0};
    const char *json =
        "{\"gpu_types\": {\"GB200\": {\"host_scale\": 2.2}, \"H100-80G\": {\"host_scale\": 0.5},"
        " \"G-slow\": {\"base\": \"GB200\", \"efficiency\": 0.5},"
        " \"X-24G\": {\"memory_gb\": 24, \"peak_tflops\": 100, \"efficiency\": 0.5,"
        " \"intra_gbps\": 20, \"pcie_gbps\": 24}},"
        " \"nodes\": [{\"type\": \"GB200\", \"gpus\": 2}, {\"type\": \"H100-80G\", \"gpus\": 2},"
        "             {\"type\": \"G-slow\", \"gpus\": 2}, {\"type\": \"X-24G\", \"gpus\": 2}],"
        " \"inter_gbps\": 10}";
    CHECK(tsl_cluster_json_parse(json, &c, &err) == 0, "%s", err.msg);
    const double want[4] = {2.2, 0.5, 2.75, 0};
    for (uint32_t i = 0; i < 4; i++)
        CHECK(tsl_cluster_device_gpu(&c, 2 * i)->host_scale == want[i], "node %u: host_scale %g", i,
              tsl_cluster_device_gpu(&c, 2 * i)->host_scale);
    /* the built-in op's host time on a block: its slowest host; 0 counts as 1 */
    const uint32_t first[5] = {0, 2, 4, 6, 2}, size[5] = {2, 2, 2, 2, 6};
    const double pace[5] = {2.2, 0.5, 2.75, 1.0, 2.75};
    for (uint32_t i = 0; i < 5; i++) {
        tsl_cost_env_t env;
        CHECK(tsl_cost_env_init(&env, &c, first[i], size[i], &err) == 0 &&
                  env.host_scale == pace[i] && env.host_op_s == TSL_ROOFLINE_HOST_OP_S * pace[i],
              "block %u+%u: host_scale %g (%s)", first[i], size[i], env.host_scale, err.msg);
    }
    json_t *j = tsl_cluster_to_json(&c);
    char *text = json_dumps(j, JSON_INDENT(2));
    CHECK(tsl_cluster_json_parse(text, &d, &err) == 0, "%s\n%s", err.msg, text);
    for (uint32_t dev = 0; dev < c.n_devices && dev < d.n_devices; dev += 2)
        CHECK(tsl_cluster_device_gpu(&c, dev)->host_scale ==
                  tsl_cluster_device_gpu(&d, dev)->host_scale,
              "device %u: host_scale read back\n%s", dev, text);
    free(text);
    json_decref(j);
    tsl_cluster_free(&d);
    tsl_cluster_free(&c);
}

static void check_same(const tsl_cluster_t *a, const tsl_cluster_t *b, const char *what)
{
    CHECK(a->n_nodes == b->n_nodes && a->n_devices == b->n_devices, "%s: sizes", what);
    CHECK(a->n_gpu_types == b->n_gpu_types, "%s: types", what);
    CHECK_NEAR(a->overlap_slowdown, b->overlap_slowdown, 1e-12, "%s: overlap", what);
    for (uint32_t d = 0; d < a->n_devices && d < b->n_devices; d++) {
        const tsl_gpu_spec_t *x = tsl_cluster_device_gpu(a, d), *y = tsl_cluster_device_gpu(b, d);
        CHECK(strcmp(x->name, y->name) == 0 && x->mem_bytes == y->mem_bytes, "%s: dev %u", what, d);
        CHECK_NEAR(x->peak_flops, y->peak_flops, 1e-12, "%s: peak %u", what, d);
        CHECK_NEAR(x->efficiency, y->efficiency, 1e-12, "%s: efficiency %u", what, d);
        CHECK_NEAR(x->pcie_bw, y->pcie_bw, 1e-12, "%s: pcie %u", what, d);
        for (uint32_t e = d % 3 == 0 ? 1 : 0; e < a->n_devices; e += 3) /* e ≠ d */
            CHECK_NEAR(tsl_cluster_link_bw(a, d, e), tsl_cluster_link_bw(b, d, e), 1e-12,
                       "%s: link %u-%u", what, d, e);
    }
    for (uint32_t i = 0; i < a->n_nodes && i < b->n_nodes; i++)
        CHECK(a->nodes[i].cpu_mem_bytes == b->nodes[i].cpu_mem_bytes, "%s: cpu mem", what);
}

static void test_round_trip(void)
{
    const char *files[] = {"a100-2x8-ib100.json", "amp-hetero.json", "matrix-4nodes.json",
                           "custom-gpu.json"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        tsl_cluster_t a, b;
        tsl_err_t err = {0};
        CHECK(load(files[i], &a, &err) == 0, "%s", err.msg);
        json_t *j = tsl_cluster_to_json(&a);
        CHECK(j != NULL, "%s: written", files[i]);
        char *text = json_dumps(j, JSON_INDENT(2));
        CHECK(tsl_cluster_json_parse(text, &b, &err) == 0, "%s: %s\n%s", files[i], err.msg, text);
        check_same(&a, &b, files[i]);
        free(text);
        json_decref(j);
        tsl_cluster_free(&a);
        tsl_cluster_free(&b);
    }
    /* a spec-built cluster writes built-in types by name only */
    tsl_cluster_t c;
    tsl_err_t err;
    CHECK(tsl_cluster_parse_spec(&c, "2x8xA100-40G:ib200", &err) == 0, "%s", err.msg);
    json_t *j = tsl_cluster_to_json(&c);
    CHECK(json_object_get(j, "gpu_types") == NULL, "no gpu_types for built-ins");
    CHECK(json_array_size(json_object_get(j, "nodes")) == 1, "one node entry with count 2");
    CHECK_NEAR(json_real_value(json_object_get(j, "inter_gbps")), 24, 1e-12, "ib200 in GB/s");
    /* cost model 129: the link's all-to-all share travels with the figure */
    CHECK_NEAR(json_real_value(json_object_get(j, "inter_a2a_ratio")), 24.0 * 24 / 31 / 24, 1e-12,
               "ib200's all-to-all share");
    /* cost model 136: and its flex dispatcher's RDMA share */
    CHECK_NEAR(json_real_value(json_object_get(j, "inter_flex_ratio")),
               tsl_link_flex_ratio(tsl_link_find("ib200")), 1e-12, "ib200's flex share");
    json_decref(j);
    tsl_cluster_free(&c);
}

static void test_from_arg(void)
{
    tsl_cluster_t c;
    tsl_err_t err = {0};
    char path[700];
    CHECK(tsl_cluster_from_arg("2x8xA100-40G:ib100", &c, &err) == 0, "%s", err.msg);
    CHECK(c.n_devices == 16, "spec");
    tsl_cluster_free(&c);
    data_path(path, sizeof(path), "amp-hetero.json");
    CHECK(tsl_cluster_from_arg(path, &c, &err) == 0 && c.n_nodes == 4, "%s", err.msg);
    tsl_cluster_free(&c);
    CHECK(tsl_cluster_from_arg("nowhere/cluster.json", &c, &err) == -1 &&
              strstr(err.msg, "nowhere/cluster.json"),
          "%s", err.msg);
    CHECK(tsl_cluster_from_arg("8xA200", &c, &err) == -1 && strstr(err.msg, "unknown GPU type"),
          "%s", err.msg);
    CHECK(tsl_cluster_from_arg("", &c, &err) == -1 && strstr(err.msg, "empty"), "%s", err.msg);

    /* an existing file without the extension is still a file */
    char tmp[] = "/tmp/tessel-cluster-XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    const char *text = "{\"nodes\": [{\"type\": \"V100-32G\", \"gpus\": 4}]}";
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write");
    close(fd);
    CHECK(tsl_cluster_from_arg(tmp, &c, &err) == 0 && c.n_devices == 4, "%s", err.msg);
    tsl_cluster_free(&c);
    unlink(tmp);
}

/* Every intra-node all-reduce figure Galvatron measured on A100 (GB/s of bus
 * bandwidth, consecutive ranks) within 25% of the built-in. */
static void test_galvatron_fixture(void)
{
    const char *shared = getenv("TSL_SHARED");
    const char *files[] = {"allreduce_bandwidth_1nodes_8gpus_per_node.json",
                           "allreduce_bandwidth_1nodes_4gpus_per_node.json"};
    if (shared == NULL) {
        printf("skip fixture check: TSL_SHARED not set\n");
        return;
    }
    double built_in = tsl_gpu_find("A100-80G")->intra_bw / GB;
    for (size_t i = 0; i < 2; i++) {
        char path[700];
        json_error_t jerr;
        snprintf(path, sizeof(path), "%s/fixtures/galvatron/hardware/%s", shared, files[i]);
        json_t *root = json_load_file(path, 0, &jerr);
        if (root == NULL) {
            printf("skip fixture %s: %s\n", files[i], jerr.text);
            continue;
        }
        const char *key;
        json_t *val;
        int seen = 0;
        json_object_foreach(root, key, val)
        {
            if (strstr(key, "_consec_1") == NULL)
                continue;
            seen++;
            CHECK_NEAR(built_in, json_number_value(val), 0.25, "%s %s: %.1f vs built-in %.1f",
                       files[i], key, json_number_value(val), built_in);
        }
        CHECK(seen >= 2, "%s has intra-node figures", files[i]);
        json_decref(root);
    }
}

/* NICs per node and the NVLink domain: read, written back, refused when wrong. */
static void test_topology(void)
{
    tsl_cluster_t a, b;
    tsl_err_t err = {0};
    const char *json = "{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"count\": 4, "
                       "\"nics\": 8}, {\"type\": \"A100-80G\", \"gpus\": 8, \"count\": 2, "
                       "\"nics\": 4, \"nic_gbps\": 12.5}], \"link\": \"ib200\", "
                       "\"nvlink_domain_nodes\": 2}";
    CHECK(tsl_cluster_json_parse(json, &a, &err) == 0, "%s", err.msg);
    CHECK(a.nodes[0].n_nics == 8 && a.nodes[3].n_nics == 8 && a.nodes[4].n_nics == 4,
          "NICs per node");
    CHECK(a.nodes[0].nic_bw == 0 && a.nodes[5].nic_bw == 12.5e9, "NIC bandwidth per node");
    CHECK(a.nvl_domain_nodes == 2 && a.inter_bw == 24e9, "domain and link");
    CHECK(a.inter_a2a_ratio == tsl_link_a2a_ratio(tsl_link_find("ib200")), "the link's a2a share");
    CHECK(a.inter_flex_ratio == tsl_link_flex_ratio(tsl_link_find("ib200")) &&
              a.inter_flex_ratio < 1,
          "the link's flex share");
    json_t *j = tsl_cluster_to_json(&a);
    char *text = json_dumps(j, JSON_INDENT(2));
    CHECK(tsl_cluster_json_parse(text, &b, &err) == 0, "%s\n%s", err.msg, text);
    CHECK(b.nvl_domain_nodes == 2 && b.nodes[0].n_nics == 8 && b.nodes[5].nic_bw == 12.5e9 &&
              b.inter_a2a_ratio == a.inter_a2a_ratio && b.inter_flex_ratio == a.inter_flex_ratio,
          "round trip keeps the topology:\n%s", text);
    free(text);
    json_decref(j);
    tsl_cluster_free(&a);
    tsl_cluster_free(&b);

    /* inter_gbps alone: one NIC of that figure, as before */
    CHECK(tsl_cluster_json_parse("{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"count\": "
                                 "2}], \"inter_gbps\": 20}",
                                 &a, &err) == 0 &&
              a.nodes[1].n_nics == 1 && a.inter_bw == 20e9 &&
              tsl_cluster_inter_a2a_ratio(&a) == 1.0 && tsl_cluster_inter_flex_ratio(&a) == 1.0,
          "inter_gbps: one NIC, its all-to-all and flex RDMA at that figure");
    tsl_cluster_free(&a);
    /* inter_a2a_ratio: a fabric's own all-to-all share, over a link's or a bare figure */
    CHECK(tsl_cluster_json_parse("{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"count\": "
                                 "2}], \"inter_gbps\": 20, \"inter_a2a_ratio\": 0.5}",
                                 &a, &err) == 0 &&
              a.inter_a2a_ratio == 0.5,
          "inter_a2a_ratio: %s", err.msg);
    tsl_cluster_free(&a);
    CHECK(tsl_cluster_json_parse("{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"count\": "
                                 "2}], \"link\": \"ib400\", \"inter_a2a_ratio\": 1}",
                                 &a, &err) == 0 &&
              a.inter_a2a_ratio == 1.0 && a.inter_bw == tsl_link_find("ib400")->bw,
          "inter_a2a_ratio over a link's: %s", err.msg);
    tsl_cluster_free(&a);
    /* inter_flex_ratio: a fabric's own flex dispatcher share (cost model 136), likewise */
    CHECK(tsl_cluster_json_parse("{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"count\": "
                                 "2}], \"inter_gbps\": 20, \"inter_flex_ratio\": 0.8}",
                                 &a, &err) == 0 &&
              a.inter_flex_ratio == 0.8 && tsl_cluster_inter_a2a_ratio(&a) == 1.0,
          "inter_flex_ratio: %s", err.msg);
    tsl_cluster_free(&a);
    CHECK(tsl_cluster_json_parse("{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"count\": "
                                 "2}], \"link\": \"ib400\", \"inter_flex_ratio\": 1}",
                                 &a, &err) == 0 &&
              a.inter_flex_ratio == 1.0 &&
              a.inter_a2a_ratio == tsl_link_a2a_ratio(tsl_link_find("ib400")),
          "inter_flex_ratio over a link's: %s", err.msg);
    tsl_cluster_free(&a);
    const char *bad_ratio[] = {"0", "1.5", "-0.2", "\"half\""};
    const char *ratio_keys[] = {"inter_a2a_ratio", "inter_flex_ratio"};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < sizeof bad_ratio / sizeof bad_ratio[0]; i++) {
            char doc[256];
            snprintf(doc, sizeof doc,
                     "{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"count\": 2}], "
                     "\"link\": \"ib200\", \"%s\": %s}",
                     ratio_keys[k], bad_ratio[i]);
            CHECK(tsl_cluster_json_parse(doc, &a, &err) == -1 && strstr(err.msg, ratio_keys[k]),
                  "%s %s refused: %s", ratio_keys[k], bad_ratio[i], err.msg);
        }
    const char *bad[] = {
        "{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"nics\": 0}]}",
        "{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"nic_gbps\": -1}]}",
        "{\"nodes\": [{\"type\": \"A100-80G\", \"gpus\": 8, \"count\": 2}], \"link\": \"ib200\", "
        "\"nvlink_domain_nodes\": 3}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(tsl_cluster_json_parse(bad[i], &a, &err) == -1 &&
                  (strstr(err.msg, "nics") || strstr(err.msg, "nic_gbps") ||
                   strstr(err.msg, "NVLink domain")),
              "bad %zu: %s", i, err.msg);
}

/* A node entry's "nics" stated or not (tsl_node_t.nics_stated): "nics": 1 keeps the
 * one-NIC note quiet and is written back, so the file read back is as quiet. */
static void test_nics_stated(void)
{
    tsl_cluster_t a, b;
    tsl_err_t err = {0};
    char buf[1024];
    CHECK(tsl_cluster_json_parse("{\"nodes\": [{\"type\": \"H100-80G\", \"gpus\": 8, "
                                 "\"count\": 2}], \"link\": \"ib400\"}",
                                 &a, &err) == 0,
          "%s", err.msg);
    CHECK(!a.nodes[1].nics_stated && tsl_cluster_nic_warning(&a, NULL, buf, sizeof buf),
          "no \"nics\": noted");
    tsl_cluster_free(&a);
    CHECK(tsl_cluster_json_parse("{\"nodes\": [{\"type\": \"H100-80G\", \"gpus\": 8, "
                                 "\"count\": 2, \"nics\": 1}], \"link\": \"ib400\"}",
                                 &a, &err) == 0,
          "%s", err.msg);
    CHECK(a.nodes[1].nics_stated && a.nodes[1].n_nics == 1 &&
              !tsl_cluster_nic_warning(&a, NULL, buf, sizeof buf),
          "\"nics\": 1: quiet (%s)", buf);
    json_t *j = tsl_cluster_to_json(&a);
    char *text = json_dumps(j, JSON_COMPACT);
    CHECK(text && strstr(text, "\"nics\":1") && tsl_cluster_json_parse(text, &b, &err) == 0 &&
              b.nodes[0].nics_stated && !tsl_cluster_nic_warning(&b, NULL, buf, sizeof buf),
          "written back with its \"nics\": %s", text ? text : "(null)");
    free(text);
    json_decref(j);
    tsl_cluster_free(&a);
    tsl_cluster_free(&b);
}

int main(void)
{
    test_topology();
    test_nics_stated();
    const char *dir = getenv("TSL_TESTDATA");
    snprintf(data_dir, sizeof(data_dir), "%s", dir ? dir : "tests/data");
    test_file_a100();
    test_file_amp();
    test_file_matrix();
    test_file_custom();
    test_file_bad();
    test_errors();
    test_too_many_types();
    test_inline_good();
    test_round_trip();
    test_fp32_rates();
    test_host_scale();
    test_from_arg();
    test_galvatron_fixture();
    return CHECK_DONE();
}
