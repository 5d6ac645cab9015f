/*
 * test_registry_cluster.c — a `registered` cluster assembled from the store
 * (daemon/registry_cluster.h): the online workers become nodes on their
 * profile's figures; offline, stopped, GPU-less and unnamed workers are left
 * out and named with why; an unknown name is refused naming
 * cluster.registered.nodes; no online worker is a precondition failure; the
 * request JSON of a plan on it carries the profile key, so that a newer
 * report marks the plan stale; a measured bandwidth outside the request's
 * physical bounds is not taken (the document must still load).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cluster_json.h"
#include "registry_cluster.h"
#include "request.h"
#include "store_natural.h"
#include "store_registry.h"

#define MODEL "NVIDIA H100 80GB HBM3"

static char tmpdir[256];
static int64_t now;

/* One worker of n GPUs of MODEL, registered (and last seen) at `at`. */
static void add_worker(tsl_store_t *s, const char *host, uint32_t n, int64_t at, char *id)
{
    tsl_reg_device_t devs[2];
    for (uint32_t i = 0; i < 2; i++)
        devs[i] = (tsl_reg_device_t){
            .index = i, .model = MODEL, .memory_bytes = 80ULL << 30, .sm_count = 132, .uuid = ""};
    tsl_reg_worker_t w = {.hostname = host,
                          .driver_version = "550",
                          .cuda_version = "12.4",
                          .nccl_version = "2.21",
                          .version = "0.1.0",
                          .simulated = true,
                          .heartbeat_s = 1,
                          .n_devices = n,
                          .devices = devs};
    tsl_err_t err = {0};
    bool known;
    CHECK(tsl_registry_register(s, &w, at, &known, &err) == 0, "register %s: %s", host, err.msg);
    snprintf(id, TSL_WORKER_ID_LEN + 1, "%s", w.worker_id);
}

/* A GEMM (4096^3 in 1 ms: 137 TFLOP/s) and an all-reduce inside the node. */
static uint32_t report(tsl_store_t *s, const char *id, const char *report_id, double gemm_s)
{
    tsl_reg_measurement_t m[] = {
        {.name = "gemm_fwd",
         .unit = "s",
         .value = gemm_s,
         .labels_json = "{\"k\": \"4096\", \"m\": \"4096\", \"n\": \"4096\"}",
         .link_class = "",
         .per_device = true},
        {.name = "allreduce_busbw",
         .unit = "bytes/s",
         .value = 200e9,
         .labels_json = "{\"bytes\": \"67108864\", \"group\": \"2\"}",
         .link_class = "nvlink"},
    };
    tsl_reg_report_result_t res;
    tsl_err_t err = {0};
    CHECK(tsl_registry_report(s, id, report_id, now, now, m, 2, &res, &err) == 0, "report: %s",
          err.msg);
    return res.plans_marked_stale;
}

/* Two agents on one host (each with its own GPU, so two worker ids): the second is
 * no second node (the cluster format refuses a name twice) but left out, saying why.
 * Before, the document named the host twice, which the cluster loader now refuses. */
static void test_same_host(const char *path)
{
    tsl_store_t *s = NULL;
    tsl_err_t err = {0};
    tsl_registry_cluster_t rc;
    bool known;
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    if (!s)
        return;
    const char *hosts[] = {"gpu-a", "GPU-A", "gpu-b"}, *uuids[] = {"GPU-1", "GPU-2", "GPU-3"};
    for (int i = 0; i < 3; i++) {
        tsl_reg_device_t d = {.index = 0,
                              .model = MODEL,
                              .memory_bytes = 80ULL << 30,
                              .sm_count = 132,
                              .uuid = uuids[i]};
        tsl_reg_worker_t w = {.hostname = hosts[i],
                              .driver_version = "550",
                              .cuda_version = "12.4",
                              .nccl_version = "2.21",
                              .version = "0.1.0",
                              .simulated = true,
                              .heartbeat_s = 1,
                              .n_devices = 1,
                              .devices = &d};
        CHECK(tsl_registry_register(s, &w, now, &known, &err) == 0, "register: %s", err.msg);
        if (i == 0)
            report(s, w.worker_id, "r-h", 1e-3);
    }
    CHECK(tsl_registry_cluster_build(s, NULL, 0, now, 0, &rc, &err) == 0, "%s", err.msg);
    json_t *doc = json_loads(rc.json ? rc.json : "", 0, NULL);
    CHECK(json_array_size(json_object_get(doc, "nodes")) == 2, "%s", rc.json);
    CHECK(rc.n_left_out == 1 &&
              strstr(rc.left_out[0],
                     "(another worker of this host is in the cluster (one per node))"),
          "%s", rc.n_left_out ? rc.left_out[0] : "none left out");
    json_decref(doc);
    tsl_registry_cluster_free(&rc);
    tsl_store_close(s);
}

static bool has_left_out(const tsl_registry_cluster_t *rc, const char *prefix)
{
    for (size_t i = 0; i < rc->n_left_out; i++)
        if (strncmp(rc->left_out[i], prefix, strlen(prefix)) == 0)
            return true;
    return false;
}

static bool has_source(const tsl_registry_cluster_t *rc, const char *part)
{
    size_t i;
    json_t *line;
    json_array_foreach(rc->sources, i, line)
    {
        if (strstr(json_string_value(line), part))
            return true;
    }
    return false;
}

/* node-1, node-2 online with 2 GPUs; node-3 offline, node-4 stopped, node-5 GPU-less. */
static void populate(tsl_store_t *s, char *id1)
{
    char id[TSL_WORKER_ID_LEN + 1];
    tsl_err_t err = {0};
    bool back;
    add_worker(s, "node-1", 2, now, id1);
    add_worker(s, "node-2", 2, now, id);
    add_worker(s, "node-3", 2, now - 100, id);
    add_worker(s, "node-4", 2, now, id);
    CHECK(tsl_registry_heartbeat(s, id, true, now, &back, &err) == 0, "deregister: %s", err.msg);
    add_worker(s, "node-5", 0, now, id);
    report(s, id1, "r-1", 1e-3);
}

static void test_all(tsl_store_t *s)
{
    tsl_registry_cluster_t rc;
    tsl_err_t err = {0};
    CHECK(tsl_registry_cluster_build(s, NULL, 0, now, 0, &rc, &err) == 0, "%s", err.msg);
    json_t *doc = json_loads(rc.json ? rc.json : "", 0, NULL);
    CHECK(json_array_size(json_object_get(doc, "nodes")) == 2, "%s", rc.json);
    CHECK(strcmp(json_string_value(json_object_get(doc, "name")), "registered: node-1,node-2") == 0,
          "%s", rc.json);
    CHECK(json_object_get(json_object_get(doc, "gpu_types"), "H100-80G-sim") != NULL, "%s",
          rc.json);
    CHECK(rc.n_left_out == 3, "%zu left out", rc.n_left_out);
    CHECK(has_left_out(&rc, "node-3 (offline since "), "%s", rc.left_out[0]);
    CHECK(has_left_out(&rc, "node-4 (stopped at "), "%s", rc.left_out[1]);
    CHECK(has_left_out(&rc, "node-5 (no GPUs registered)"), "%s", rc.left_out[2]);
    CHECK(rc.n_profiles == 1 && strcmp(rc.profiles[0].model, MODEL) == 0 &&
              rc.profiles[0].simulated && strcmp(rc.profiles[0].type, "H100-80G-sim") == 0,
          "%zu profiles", rc.n_profiles);
    CHECK(rc.n_keys == 1 && strcmp(rc.key_ptrs[0], "profile:" MODEL "|simulated") == 0, "keys %zu",
          rc.n_keys);
    CHECK(has_source(&rc, "achieved on gemm_fwd m=4096"), "no compute source");
    CHECK(has_source(&rc, "200.0 GB/s all-reduce"), "no intra-node source");
    json_decref(doc);
    tsl_registry_cluster_free(&rc);
}

static void test_named(tsl_store_t *s)
{
    tsl_registry_cluster_t rc;
    tsl_err_t err = {0};
    const char *two[] = {"node-2"};
    CHECK(tsl_registry_cluster_build(s, two, 1, now, 0, &rc, &err) == 0, "%s", err.msg);
    CHECK(rc.json && strstr(rc.json, "\"registered: node-2\""), "%s", rc.json);
    CHECK(has_left_out(&rc, "node-1 (not in cluster.registered.nodes)"), "node-1 not named");
    tsl_registry_cluster_free(&rc);

    const char *unknown[] = {"node-1", "nowhere"};
    memset(&err, 0, sizeof err);
    CHECK(tsl_registry_cluster_build(s, unknown, 2, now, 0, &rc, &err) == -1 &&
              tsl_err_code(&err) == TSL_E_INVALID &&
              strstr(err.msg, "cluster.registered.nodes[1]: 'nowhere'"),
          "%s", err.msg);
    tsl_registry_cluster_free(&rc);

    const char *down[] = {"node-3", "node-4"};
    memset(&err, 0, sizeof err);
    CHECK(tsl_registry_cluster_build(s, down, 2, now, 0, &rc, &err) == -1 &&
              tsl_err_code(&err) == TSL_E_PRECONDITION && strstr(err.msg, "node-3 (offline") &&
              strstr(err.msg, "node-4 (stopped") && !strstr(err.msg, "node-1") &&
              strstr(err.msg, "start tessel-worker"),
          "%s", err.msg);
    tsl_registry_cluster_free(&rc);
}

/* The decoded request records the key; a newer report marks the stored plan stale. */
static void test_stale(tsl_store_t *s, const char *id1)
{
    tsl_registry_cluster_t rc;
    tsl_err_t err = {0};
    CHECK(tsl_registry_cluster_build(s, NULL, 0, now, 0, &rc, &err) == 0, "%s", err.msg);
    Tessel__V1__RegisteredCluster reg_msg = TESSEL__V1__REGISTERED_CLUSTER__INIT;
    Tessel__V1__PlanRequest req = TESSEL__V1__PLAN_REQUEST__INIT;
    req.model_case = TESSEL__V1__PLAN_REQUEST__MODEL_MODEL_PRESET;
    req.model_preset = (char *)"GPT2-345M";
    req.cluster_case = TESSEL__V1__PLAN_REQUEST__CLUSTER_REGISTERED;
    req.registered = &reg_msg;
    tsl_request_limits_t lim = {.max_batch = 4096, .max_layers = 1000, .max_devices = 1024};
    tsl_plan_input_t in;
    memset(&in, 0, sizeof in);
    CHECK(tsl_plan_request_decode(&req, &lim, &in, &err) == -1 &&
              strstr(err.msg, "only tesseld assembles"),
          "without the built cluster: %s", err.msg);
    tsl_request_registered_t reg = {
        .cluster_json = rc.json, .profile_keys = rc.key_ptrs, .n_profile_keys = rc.n_keys};
    memset(&in, 0, sizeof in);
    CHECK(tsl_plan_request_decode_registered(&req, &lim, &reg, &in, &err) == 0, "%s", err.msg);
    CHECK(in.cluster.n_devices == 4, "%u devices", in.cluster.n_devices);
    CHECK(in.request_json && strstr(in.request_json, "\"profile:" MODEL "|simulated\""), "%s",
          in.request_json);
    tsl_stored_plan_t p;
    memset(&p, 0, sizeof p);
    snprintf(p.fingerprint, sizeof p.fingerprint, "%s", in.fingerprint);
    snprintf(p.model_name, sizeof p.model_name, "GPT2-345M");
    p.n_devices = 4;
    p.created_unix = now;
    p.request_json = in.request_json;
    p.result_json = (char *)"{}";
    CHECK(tsl_store_put_plan(s, &p, &err) == 0, "put: %s", err.msg);
    CHECK(report(s, id1, "r-2", 2e-3) == 1, "the plan was not marked stale");
    tsl_plan_input_free(&in);
    tsl_registry_cluster_free(&rc);
}

/* The names' own rules (api/request.c), before any store is read. */
static void test_names(void)
{
    /* a name with a quote or a newline shown escaped: the newline ended the message's
     * line and printed the rest as a line of its own */
    char *bad[][2] = {
        {"node-1", ""}, {"node-1", "a\"b"}, {"node-1", "node-1"}, {"node-1", "n\nINFO forged"}};
    const char *why[] = {"nodes[1]: '' must be", "nodes[1]: 'a\\\"b' must be", "named twice",
                         "nodes[1]: 'n\\nINFO forged' must be"};
    tsl_err_t err = {0};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        Tessel__V1__RegisteredCluster r = TESSEL__V1__REGISTERED_CLUSTER__INIT;
        r.n_nodes = 2;
        r.nodes = bad[i];
        memset(&err, 0, sizeof err);
        CHECK(tsl_request_check_registered(&r, &err) == -1 &&
                  strstr(err.msg, "cluster.registered.nodes") && strstr(err.msg, why[i]),
              "case %zu: %s", i, err.msg);
    }
    char *many[TSL_REQUEST_MAX_NODES + 1];
    for (size_t i = 0; i <= TSL_REQUEST_MAX_NODES; i++)
        many[i] = (char *)"n";
    Tessel__V1__RegisteredCluster r = TESSEL__V1__REGISTERED_CLUSTER__INIT;
    r.n_nodes = TSL_REQUEST_MAX_NODES + 1;
    r.nodes = many;
    CHECK(tsl_request_check_registered(&r, &err) == -1 && strstr(err.msg, "above the limit"), "%s",
          err.msg);
}

/* The labels of the "nat_probe" rows, in the order the store lists them. */
typedef struct nat_rows {
    char labels[4][32];
    size_t n;
} nat_rows_t;

static int take_nat(void *ud, const tsl_reg_measurement_t *m)
{
    nat_rows_t *r = ud;
    if (strcmp(m->name, "nat_probe") == 0 && r->n < 4)
        snprintf(r->labels[r->n++], sizeof r->labels[0], "%s", m->labels_json);
    return 0;
}

/* `tesselctl profiles` lists labels in natural order: mb 2, 4, 16 (a text order
 * gives 16, 2, 4), raw by node and aggregated alike. */
static void test_natural_order(tsl_store_t *s)
{
    CHECK(tsl_natural_cmp("mb=2", 4, "mb=16", 5) < 0 && tsl_natural_cmp("mb=16", 5, "mb=2", 4) > 0,
          "2 before 16");
    CHECK(tsl_natural_cmp("a10b", 4, "a10c", 4) < 0 && tsl_natural_cmp("x", 1, "x1", 2) < 0 &&
              tsl_natural_cmp("v02", 3, "v2", 2) < 0 && tsl_natural_cmp("v2", 2, "v2", 2) == 0,
          "ties and prefixes");
    char id[TSL_WORKER_ID_LEN + 1];
    add_worker(s, "node-nat", 1, now, id);
    tsl_reg_measurement_t m[3];
    const char *mb[] = {"{\"mb\": \"16\"}", "{\"mb\": \"2\"}", "{\"mb\": \"4\"}"};
    for (size_t i = 0; i < 3; i++)
        m[i] = (tsl_reg_measurement_t){.name = "nat_probe",
                                       .unit = "s",
                                       .value = 1e-3,
                                       .labels_json = mb[i],
                                       .link_class = "",
                                       .per_device = true};
    tsl_reg_report_result_t res;
    tsl_err_t err = {0};
    CHECK(tsl_registry_report(s, id, "nat-1", now, now, m, 3, &res, &err) == 0, "%s", err.msg);
    for (int raw = 0; raw < 2; raw++) {
        nat_rows_t r = {0};
        CHECK(tsl_registry_profile(s, MODEL, raw ? "node-nat" : NULL, take_nat, &r, &err) == 0 &&
                  r.n == 3 && strcmp(r.labels[0], mb[1]) == 0 && strcmp(r.labels[1], mb[2]) == 0 &&
                  strcmp(r.labels[2], mb[0]) == 0,
              "%s: %zu rows: %s, %s, %s %s", raw ? "raw" : "aggregate", r.n, r.labels[0],
              r.labels[1], r.labels[2], err.msg);
    }
}

/* A probe on a loaded host measured 8.7 MB/s between two nodes, and the node's own
 * all-reduce 1 MB/s: both under the request's floor (0.01 GB/s). Before, the
 * document carried them and every plan on the registered cluster failed to load
 * ("links[0].gbps: 0.00866 GB/s is outside the physical bounds"); now the built-in
 * figures stand and the sources say why. */
static void test_out_of_bounds(const char *path)
{
    tsl_store_t *s = NULL;
    tsl_err_t err = {0};
    tsl_registry_cluster_t rc;
    char a[TSL_WORKER_ID_LEN + 1], b[TSL_WORKER_ID_LEN + 1];
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    if (!s)
        return;
    add_worker(s, "slow-a", 2, now, a);
    add_worker(s, "slow-b", 2, now, b);
    tsl_reg_measurement_t own = {.name = "allreduce_busbw",
                                 .unit = "bytes/s",
                                 .value = 1e6,
                                 .labels_json = "{\"bytes\": \"67108864\", \"group\": \"2\"}",
                                 .link_class = "nvlink"};
    tsl_reg_measurement_t probe = {
        .name = "sendrecv_busbw",
        .unit = "bytes/s",
        .value = 8.66e6,
        .labels_json = "{\"bytes\": \"67108864\", \"comm\": \"tcp\", \"node\": \"slow-a\", "
                       "\"peer\": \"slow-b\"}",
        .link_class = "inter-node"};
    tsl_reg_report_result_t res;
    CHECK(tsl_registry_report(s, a, "r-slow", now, now, &own, 1, &res, &err) == 0, "report: %s",
          err.msg);
    CHECK(tsl_registry_report(s, a, "link:t-slow", now, now, &probe, 1, &res, &err) == 0,
          "probe report: %s", err.msg);
    CHECK(tsl_registry_cluster_build(s, NULL, 0, now, 0, &rc, &err) == 0, "%s", err.msg);
    json_t *doc = json_loads(rc.json ? rc.json : "", 0, NULL);
    CHECK(json_object_get(doc, "links") == NULL, "a link under the floor was taken: %s", rc.json);
    CHECK(has_source(&rc, "intra-node: built-in (0.001 GB/s measured is outside the physical"),
          "no source line for the intra-node figure left out");
    CHECK(has_source(&rc, "inter-node slow-a<->slow-b: built-in ib100 (0.00866 GB/s measured"),
          "no source line for the link left out");
    tsl_cluster_t c = {0};
    CHECK(tsl_cluster_json_parse(rc.json ? rc.json : "", &c, &err) == 0,
          "the registered document does not load: %s", err.msg);
    tsl_cluster_free(&c);
    json_decref(doc);
    tsl_registry_cluster_free(&rc);
    /* a pair never probed says so, whatever another pair's probe measured */
    char cid[TSL_WORKER_ID_LEN + 1];
    add_worker(s, "slow-c", 2, now, cid);
    const char *ac[] = {"slow-a", "slow-c"};
    CHECK(tsl_registry_cluster_build(s, ac, 2, now, 0, &rc, &err) == 0, "%s", err.msg);
    CHECK(has_source(&rc, "inter-node: built-in ib100 (no link probe between these workers yet"),
          "slow-a, slow-c: the unprobed pair not named so");
    CHECK(!has_source(&rc, "slow-a<->slow-b"), "slow-a, slow-c: the other pair's probe named");
    tsl_registry_cluster_free(&rc);
    tsl_store_close(s);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    char path[300], id1[TSL_WORKER_ID_LEN + 1];
    tsl_store_t *s = NULL;
    tsl_err_t err = {0};
    snprintf(tmpdir, sizeof tmpdir, "%s/tsl-regcl-XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL)
        SKIP_ALL("cannot create a temporary directory");
    snprintf(path, sizeof path, "%s/t.db", tmpdir);
    now = (int64_t)time(NULL);
    test_names();
    CHECK(tsl_store_open(path, &s, &err) == 0, "open: %s", err.msg);
    if (s) {
        populate(s, id1);
        test_all(s);
        test_named(s);
        test_stale(s, id1);
        test_natural_order(s);
        tsl_store_close(s);
    }
    snprintf(path, sizeof path, "%s/h.db", tmpdir);
    test_same_host(path);
    snprintf(path, sizeof path, "%s/o.db", tmpdir);
    test_out_of_bounds(path);
    static const char *const files[] = {"t.db",     "t.db-wal", "t.db-shm", "h.db",    "h.db-wal",
                                        "h.db-shm", "o.db",     "o.db-wal", "o.db-shm"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, files[i]);
        unlink(path);
    }
    rmdir(tmpdir);
    return CHECK_DONE();
}
