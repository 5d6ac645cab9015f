/*
 * cluster_json.c — reads and writes the cluster description format of
 * docs/cluster-format.md. Validation is strict (unknown keys are errors) so that
 * a typo such as "intra_gpbs" is reported instead of silently ignored.
 */
#include "cluster_json.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "nearest.h"
#include "path_kind.h"

#define GBPS           1e9          /* GB/s → bytes/s */
#define GBIT           (1e9 / 8)    /* Gb/s → bytes/s */
#define GIB            1073741824.0 /* GiB → bytes */
#define TFLOPS         1e12
#define BW_FLOOR       0.01e9 /* bytes/s: the least bandwidth a request may give (request.h) */
#define PATH_MAX_LEN   192
#define FILE_TYPES_MAX 16u

typedef struct loader {
    tsl_cluster_t *c;
    tsl_err_t *err;
    tsl_gpu_spec_t types[FILE_TYPES_MAX]; /* the file's gpu_types */
    uint32_t n_types;
} loader_t;

/* dst = path.key; a path too long for the buffer is cut, still naming the place. */
static void join(char *dst, const char *path, const char *key)
{
    int n = snprintf(dst, PATH_MAX_LEN, "%s%s%s", path, path[0] ? "." : "", key);
    if (n < 0)
        dst[0] = '\0';
}

static int check_keys(json_t *obj, const char *path, const char *const *allowed, tsl_err_t *err)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val)
    {
        size_t i = 0;
        while (allowed[i] != NULL && strcmp(allowed[i], key) != 0)
            i++;
        if (allowed[i] != NULL)
            continue;
        char known[256] = "", at[PATH_MAX_LEN];
        size_t len = 0;
        for (i = 0; allowed[i] != NULL && len < sizeof(known); i++)
            len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", i ? ", " : "",
                                    allowed[i]);
        join(at, path, key);
        return tsl_err_set(err, "%s: unknown key; known: %s", at, known);
    }
    return 0;
}

/* Optional number at obj.key: *present says whether it was there. */
static int opt_number(json_t *obj, const char *path, const char *key, double *out, bool *present,
                      tsl_err_t *err)
{
    json_t *v = json_object_get(obj, key);
    char at[PATH_MAX_LEN];
    *present = v != NULL;
    if (v == NULL)
        return 0;
    join(at, path, key);
    if (!json_is_number(v))
        return tsl_err_set(err, "%s: must be a number", at);
    *out = json_number_value(v);
    return 0;
}

static int opt_positive(json_t *obj, const char *path, const char *key, double *out, bool *present,
                        tsl_err_t *err)
{
    char at[PATH_MAX_LEN];
    if (opt_number(obj, path, key, out, present, err) != 0)
        return -1;
    join(at, path, key);
    if (*present && !(*out > 0 && isfinite(*out)))
        return tsl_err_set(err, "%s: must be a positive number", at);
    return 0;
}

/* Bytes of a size in GiB; -1 when it does not fit an unsigned 64-bit count (llround
 * of such a value is undefined: 1e300 GiB read back as 8.6e9). */
static int gib_bytes(const char *path, const char *key, double gib, uint64_t *out, tsl_err_t *err)
{
    char at[PATH_MAX_LEN];
    if (!(gib * GIB < 0x1p63)) {
        join(at, path, key);
        return tsl_err_set(err, "%s: %g GiB is beyond any device or host (2^33 GiB)", at, gib);
    }
    *out = (uint64_t)llround(gib * GIB);
    return 0;
}

/* A bandwidth given as <base>_gbps (GB/s) or <base>_gbit (Gb/s), in bytes/s. */
static int opt_bw(json_t *obj, const char *path, const char *base, double *bw, bool *present,
                  tsl_err_t *err)
{
    char kbps[64], kbit[64], at[PATH_MAX_LEN];
    double v_gbps = 0, v_gbit = 0;
    bool has_gbps, has_gbit;
    snprintf(kbps, sizeof(kbps), "%s%sgbps", base, base[0] ? "_" : "");
    snprintf(kbit, sizeof(kbit), "%s%sgbit", base, base[0] ? "_" : "");
    if (opt_positive(obj, path, kbps, &v_gbps, &has_gbps, err) != 0 ||
        opt_positive(obj, path, kbit, &v_gbit, &has_gbit, err) != 0)
        return -1;
    if (has_gbps && has_gbit) {
        join(at, path, kbps);
        return tsl_err_set(err, "%s: give %s or %s, not both", at, kbps, kbit);
    }
    *present = has_gbps || has_gbit;
    if (*present)
        *bw = has_gbps ? v_gbps * GBPS : v_gbit * GBIT;
    if (*present && !isfinite(*bw)) { /* 1e308 GB/s: finite as given, not in bytes/s */
        join(at, path, has_gbps ? kbps : kbit);
        return tsl_err_set(err, "%s: %g is beyond any link", at, has_gbps ? v_gbps : v_gbit);
    }
    /* the request's floor (api/request.h), here where the key is known: a links[] pair
     * checked there was named inter_gbps_matrix[a][b], a key the file did not have */
    if (*present && *bw < BW_FLOOR) {
        join(at, path, has_gbps ? kbps : kbit);
        return tsl_err_set(err, "%s: %g GB/s is outside the physical bounds [0.01, 100000]", at,
                           *bw / GBPS);
    }
    return 0;
}

/* A positive integer ≤ max at obj.key; dflt when absent and not required. */
static int get_count(json_t *obj, const char *path, const char *key, bool required, uint32_t dflt,
                     uint32_t max, uint32_t *out, tsl_err_t *err)
{
    char at[PATH_MAX_LEN];
    json_t *v = json_object_get(obj, key);
    join(at, path, key);
    if (v == NULL && required)
        return tsl_err_set(err, "%s: missing; must be a positive integer", at);
    if (v == NULL) {
        *out = dflt;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return tsl_err_set(err, "%s: must be a positive integer", at);
    if (json_integer_value(v) > (json_int_t)max)
        return tsl_err_set(err, "%s: %lld exceeds the limit of %u", at,
                           (long long)json_integer_value(v), max);
    *out = (uint32_t)json_integer_value(v);
    return 0;
}

static int opt_string(json_t *obj, const char *path, const char *key, const char **out,
                      tsl_err_t *err)
{
    char at[PATH_MAX_LEN];
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (v == NULL)
        return 0;
    join(at, path, key);
    if (!json_is_string(v))
        return tsl_err_set(err, "%s: must be a string", at);
    *out = json_string_value(v);
    return 0;
}

/* "A100-40G, ..., <the file's types>" for error messages. */
static void known_gpus(const tsl_gpu_spec_t *file_types, uint32_t n_file, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < tsl_gpu_count() && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", tsl_gpu_at(i)->name);
    for (uint32_t i = 0; i < n_file && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, ", %s", file_types[i].name);
}

/* " (did you mean ...?)" among the built-in types and the file's own, or "". */
static const char *gpu_hint(const char *name, const tsl_gpu_spec_t *file_types, uint32_t n_file,
                            char *buf, size_t cap)
{
    tsl_nearest_t n;
    tsl_nearest_init(&n, name);
    for (size_t i = 0; i < tsl_gpu_count(); i++)
        tsl_nearest_offer(&n, tsl_gpu_at(i)->name);
    for (uint32_t i = 0; i < n_file; i++)
        tsl_nearest_offer(&n, file_types[i].name);
    return tsl_nearest_hint(&n, buf, cap);
}

/* ---- gpu_types ---- */

static const char *const gpu_keys[] = {"base",        "memory_gb",   "peak_tflops", "efficiency",
                                       "intra_gbps",  "intra_gbit",  "pcie_gbps",   "pcie_gbit",
                                       "fp32_tflops", "tf32_tflops", "host_scale",  NULL};

/* Where a file type starts from: its "base", the built-in of its own name, or
 * nothing (a custom type that must give every figure). Returns 1 when it starts
 * from a built-in, 0 for a custom type, -1 on error. */
static int gpu_start(loader_t *ld, json_t *obj, const char *path, const char *name,
                     tsl_gpu_spec_t *g)
{
    const char *base;
    char known[400], at[PATH_MAX_LEN], hint[128];
    if (opt_string(obj, path, "base", &base, ld->err) != 0)
        return -1;
    const tsl_gpu_spec_t *from = tsl_gpu_find(base ? base : name);
    memset(g, 0, sizeof(*g));
    if (base != NULL && from == NULL) {
        known_gpus(NULL, 0, known, sizeof(known));
        join(at, path, "base");
        char shown[TSL_ERR_SHOWN_MAX(40)];
        return tsl_err_set(ld->err, "%s: unknown built-in GPU type '%s'%s; known: %s", at,
                           tsl_err_shown(base, 40, shown, sizeof shown),
                           gpu_hint(base, NULL, 0, hint, sizeof hint), known);
    }
    if (from != NULL)
        *g = *from;
    /* An override keeps the built-in's canonical name so aliases still find it. */
    snprintf(g->name, sizeof(g->name), "%s", base == NULL && from ? from->name : name);
    g->source = from == NULL   ? "cluster file (custom GPU type)"
                : base == NULL ? "cluster file (overrides of the built-in entry)"
                               : "cluster file (derived from a built-in entry)";
    return from != NULL;
}

/* One figure of a GPU type: a plain positive number, or a bandwidth (is_bw) given
 * as <key>_gbps / <key>_gbit. A custom type must give every figure. */
static int gpu_field(loader_t *ld, json_t *obj, const char *path, const char *key, bool is_bw,
                     bool custom, double *out)
{
    bool present;
    char at[PATH_MAX_LEN], name[64];
    int rc = is_bw ? opt_bw(obj, path, key, out, &present, ld->err)
                   : opt_positive(obj, path, key, out, &present, ld->err);
    if (rc != 0)
        return -1;
    if (!present && custom) {
        snprintf(name, sizeof(name), "%s%s", key, is_bw ? "_gbps" : "");
        join(at, path, name);
        return tsl_err_set(ld->err,
                           "%s: missing; a custom GPU type (not a built-in) needs "
                           "memory_gb, peak_tflops, efficiency, intra_gbps and pcie_gbps",
                           at);
    }
    return 0;
}

/* The fp32 training rates (docs/cluster-format.md): fp32_tflops, the non-tensor fp32
 * peak, a positive number; tf32_tflops, the dense TF32 tensor peak, 0 for a GPU or a run
 * without TF32 (what an fp32 step's GEMMs run at: tsl_gpu_fp32_peak). Optional, custom
 * types too: a type without either refuses fp32 plans (search.c tsl_fp32_ok). */
static int gpu_fp32_fields(loader_t *ld, json_t *obj, const char *path, tsl_gpu_spec_t *g)
{
    char at[PATH_MAX_LEN];
    double fp32 = g->fp32_peak_flops / TFLOPS, tf32 = g->tf32_peak_flops / TFLOPS;
    bool has_fp32, has_tf32;
    if (opt_positive(obj, path, "fp32_tflops", &fp32, &has_fp32, ld->err) != 0 ||
        opt_number(obj, path, "tf32_tflops", &tf32, &has_tf32, ld->err) != 0)
        return -1;
    join(at, path, "tf32_tflops");
    if (has_tf32 && !(tf32 >= 0 && isfinite(tf32)))
        return tsl_err_set(ld->err, "%s: must be a number >= 0 (0: no TF32)", at);
    /* 1e300 TFLOPS is finite as given, not in FLOP/s */
    const char *huge = !isfinite(fp32 * TFLOPS)   ? "fp32_tflops"
                       : !isfinite(tf32 * TFLOPS) ? "tf32_tflops"
                                                  : NULL;
    if (huge != NULL) {
        join(at, path, huge);
        return tsl_err_set(ld->err, "%s: %g is beyond any GPU", at, huge[0] == 'f' ? fp32 : tf32);
    }
    g->fp32_peak_flops = fp32 * TFLOPS;
    g->tf32_peak_flops = tf32 * TFLOPS;
    return 0;
}

/* host_scale (docs/cluster-format.md): the host CPU's time per eager PyTorch op over the
 * x86 host the built-in figure was measured on (planner/cluster_hw.c: GB200's Grace
 * 2.75), a positive number; absent, the built-in's (0: an x86 host, 1). Optional, custom
 * types too. The beyond-any-host bound keeps a typo from pricing a step at 10^30 s. */
static int gpu_host_scale(loader_t *ld, json_t *obj, const char *path, tsl_gpu_spec_t *g)
{
    char at[PATH_MAX_LEN];
    double x = g->host_scale;
    bool present;
    if (opt_positive(obj, path, "host_scale", &x, &present, ld->err) != 0)
        return -1;
    if (present && x > 1000) {
        join(at, path, "host_scale");
        return tsl_err_set(ld->err, "%s: %g is beyond any host (at most 1000 x the x86 one)", at,
                           x);
    }
    g->host_scale = x;
    return 0;
}

static int parse_gpu_type(loader_t *ld, const char *name, json_t *obj)
{
    char path[PATH_MAX_LEN];
    tsl_gpu_spec_t g;
    snprintf(path, sizeof(path), "gpu_types.%s", name);
    if (!json_is_object(obj))
        return tsl_err_set(ld->err, "%s: must be an object", path);
    if (strlen(name) == 0 || strlen(name) >= sizeof(g.name))
        return tsl_err_set(ld->err, "%s: name must be 1 to %zu characters", path,
                           sizeof(g.name) - 1);
    if (ld->n_types >= FILE_TYPES_MAX)
        return tsl_err_set(ld->err, "%s: more than %u GPU types", path, FILE_TYPES_MAX);
    int known = gpu_start(ld, obj, path, name, &g);
    if (known < 0 || check_keys(obj, path, gpu_keys, ld->err) != 0)
        return -1;
    bool custom = known == 0;
    double mem_gb = (double)g.mem_bytes / GIB, tflops = g.peak_flops / TFLOPS;
    if (gpu_field(ld, obj, path, "memory_gb", false, custom, &mem_gb) != 0 ||
        gpu_field(ld, obj, path, "peak_tflops", false, custom, &tflops) != 0 ||
        gpu_field(ld, obj, path, "efficiency", false, custom, &g.efficiency) != 0 ||
        gpu_field(ld, obj, path, "intra", true, custom, &g.intra_bw) != 0 ||
        gpu_field(ld, obj, path, "pcie", true, custom, &g.pcie_bw) != 0 ||
        gpu_fp32_fields(ld, obj, path, &g) != 0 || gpu_host_scale(ld, obj, path, &g) != 0)
        return -1;
    if (g.efficiency > 1)
        return tsl_err_set(ld->err, "%s.efficiency: %g is outside (0, 1]", path, g.efficiency);
    if (gib_bytes(path, "memory_gb", mem_gb, &g.mem_bytes, ld->err) != 0)
        return -1;
    /* named here: past this the planner's check sees 0 bytes or an infinite peak and
     * names the type alone ("memory must be > 0" of 1e-300) */
    if (g.mem_bytes == 0)
        return tsl_err_set(ld->err, "%s.memory_gb: %g GiB is less than a byte", path, mem_gb);
    if (!isfinite(tflops * TFLOPS))
        return tsl_err_set(ld->err, "%s.peak_tflops: %g is beyond any GPU", path, tflops);
    g.peak_flops = tflops * TFLOPS;
    for (uint32_t i = 0; i < ld->n_types; i++)
        if (strcasecmp(ld->types[i].name, g.name) == 0)
            return tsl_err_set(ld->err,
                               "%s: names the same type as another entry (names are "
                               "case-insensitive, aliases count)",
                               path);
    ld->types[ld->n_types++] = g;
    return 0;
}

static int parse_gpu_types(loader_t *ld, json_t *root)
{
    json_t *types = json_object_get(root, "gpu_types"), *val;
    const char *name;
    if (types == NULL)
        return 0;
    if (!json_is_object(types))
        return tsl_err_set(ld->err, "gpu_types: must be an object of name -> GPU type");
    json_object_foreach(types, name, val)
    {
        if (parse_gpu_type(ld, name, val) != 0)
            return -1;
    }
    return 0;
}

static const tsl_gpu_spec_t *find_type(const loader_t *ld, const char *name)
{
    const tsl_gpu_spec_t *builtin = tsl_gpu_find(name);
    for (uint32_t i = 0; i < ld->n_types; i++)
        if (strcasecmp(ld->types[i].name, name) == 0 ||
            (builtin && strcasecmp(ld->types[i].name, builtin->name) == 0))
            return &ld->types[i];
    return builtin;
}

/* ---- nodes ---- */

static const char *const node_keys[] = {"type",       "gpus",          "count", "intra_gbps",
                                        "intra_gbit", "cpu_memory_gb", "name",  "nics",
                                        "nic_gbps",   "nic_gbit",      NULL};

static int node_type(loader_t *ld, json_t *obj, const char *path, uint32_t *idx)
{
    const char *name;
    char known[400], hint[128];
    if (opt_string(obj, path, "type", &name, ld->err) != 0)
        return -1;
    if (name == NULL)
        return tsl_err_set(ld->err, "%s.type: missing; name a GPU type, e.g. \"A100-80G\"", path);
    const tsl_gpu_spec_t *g = find_type(ld, name);
    if (g == NULL) {
        char shown[TSL_ERR_SHOWN_MAX(40)]; /* a raw newline would end the message's line */
        known_gpus(ld->types, ld->n_types, known, sizeof(known));
        return tsl_err_set(ld->err, "%s.type: unknown GPU type '%s'%s; known: %s", path,
                           tsl_err_shown(name, 40, shown, sizeof shown),
                           gpu_hint(name, ld->types, ld->n_types, hint, sizeof hint), known);
    }
    if (tsl_cluster_add_gpu_type(ld->c, g, idx, ld->err) != 0)
        return tsl_err_prefix(ld->err, "%s.type", path);
    return 0;
}

static int check_node_limits(loader_t *ld, const char *path, uint32_t gpus, uint32_t count)
{
    uint64_t nodes = (uint64_t)ld->c->n_nodes + count;
    uint64_t devices = (uint64_t)count * gpus + ld->c->n_devices;
    if (nodes > TSL_CLUSTER_MAX_NODES)
        return tsl_err_set(ld->err,
                           "%s.count: brings the node count to %llu, above the limit "
                           "of %u",
                           path, (unsigned long long)nodes, TSL_CLUSTER_MAX_NODES);
    if (devices > TSL_CLUSTER_MAX_DEVICES)
        return tsl_err_set(ld->err, "%s: brings the device count to %llu, above the limit of %u",
                           path, (unsigned long long)devices, TSL_CLUSTER_MAX_DEVICES);
    return 0;
}

static int parse_node(loader_t *ld, json_t *obj, size_t i)
{
    char path[PATH_MAX_LEN];
    const char *label;
    tsl_node_t node = {0};
    uint32_t count;
    double cpu_gb = 0;
    bool present;
    snprintf(path, sizeof(path), "nodes[%zu]", i);
    if (!json_is_object(obj))
        return tsl_err_set(ld->err,
                           "%s: must be an object such as {\"gpus\": 8, \"type\": "
                           "\"A100-80G\"}",
                           path);
    if (check_keys(obj, path, node_keys, ld->err) != 0 ||
        opt_string(obj, path, "name", &label, ld->err) != 0 ||
        get_count(obj, path, "gpus", true, 0, TSL_CLUSTER_MAX_DEVICES, &node.n_gpus, ld->err) ||
        get_count(obj, path, "count", false, 1, TSL_CLUSTER_MAX_NODES, &count, ld->err) ||
        opt_bw(obj, path, "intra", &node.intra_bw, &present, ld->err) != 0 ||
        get_count(obj, path, "nics", false, 1, 8 * TSL_CLUSTER_MAX_DEVICES, &node.n_nics,
                  ld->err) ||
        opt_bw(obj, path, "nic", &node.nic_bw, &present, ld->err) != 0 ||
        opt_number(obj, path, "cpu_memory_gb", &cpu_gb, &present, ld->err) != 0)
        return -1;
    node.nics_stated = json_object_get(obj, "nics") != NULL; /* "nics": 1 says one NIC */
    if (cpu_gb < 0)
        return tsl_err_set(ld->err, "%s.cpu_memory_gb: must be >= 0", path);
    if (gib_bytes(path, "cpu_memory_gb", cpu_gb, &node.cpu_mem_bytes, ld->err) != 0)
        return -1;
    if (check_node_limits(ld, path, node.n_gpus, count) != 0 ||
        node_type(ld, obj, path, &node.gpu_type) != 0)
        return -1;
    for (uint32_t k = 0; k < count; k++)
        if (tsl_cluster_add_node(ld->c, &node, ld->err) != 0)
            return tsl_err_prefix(ld->err, "%s", path);
    return 0;
}

/* A node's name is a label (a hostname, as the registered cluster writes it), yet the
 * one way to tell which host is "node 3" of a heterogeneous plan's node order (plans
 * export's placement note counts the cluster's nodes from 0): a name on two entries
 * leaves that ambiguous, so it is refused, case-insensitively as hostnames compare.
 * seen maps each lowered name to its entry's index. */
static int node_name_once(loader_t *ld, json_t *seen, json_t *obj, size_t i)
{
    const char *name = json_string_value(json_object_get(obj, "name"));
    char low[256];
    size_t n = name ? strlen(name) : 0;
    if (n == 0) /* no label; a wrong type was refused by parse_node */
        return 0;
    if (n >= sizeof low)
        return tsl_err_set(ld->err, "nodes[%zu].name: longer than %zu characters", i,
                           sizeof low - 1);
    for (size_t k = 0; k <= n; k++)
        low[k] = (char)tolower((unsigned char)name[k]);
    json_t *first = json_object_get(seen, low);
    if (first != NULL)
        return tsl_err_set(ld->err,
                           "nodes[%zu].name: '%s' names nodes[%lld] too; give each node entry "
                           "its own name (names are case-insensitive), or one entry with count",
                           i, name, (long long)json_integer_value(first));
    if (json_object_set_new(seen, low, json_integer((json_int_t)i)) != 0)
        return tsl_err_set(ld->err, "nodes[%zu].name: out of memory", i);
    return 0;
}

static int parse_nodes(loader_t *ld, json_t *root)
{
    json_t *nodes = json_object_get(root, "nodes"), *val;
    size_t i;
    int rc = 0;
    if (nodes == NULL)
        return tsl_err_set(ld->err, "nodes: missing; give at least one node, e.g. "
                                    "[{\"gpus\": 8, \"type\": \"A100-80G\"}]");
    if (!json_is_array(nodes) || json_array_size(nodes) == 0)
        return tsl_err_set(ld->err, "nodes: must be a non-empty array of nodes");
    json_t *seen = json_object();
    if (seen == NULL)
        return tsl_err_set(ld->err, "nodes: out of memory");
    json_array_foreach(nodes, i, val)
    {
        if (parse_node(ld, val, i) != 0 || node_name_once(ld, seen, val, i) != 0) {
            rc = -1;
            break;
        }
    }
    json_decref(seen);
    return rc;
}

/* ---- inter-node bandwidth ---- */

static int parse_inter_scalar(loader_t *ld, json_t *root)
{
    const char *link_name;
    char known[256] = "";
    bool present;
    double bw = 0;
    if (opt_string(root, "", "link", &link_name, ld->err) != 0 ||
        opt_bw(root, "", "inter", &bw, &present, ld->err) != 0)
        return -1;
    if (link_name != NULL && present)
        return tsl_err_set(ld->err, "link: give link or inter_gbps/inter_gbit, not both");
    if (link_name != NULL) {
        const tsl_link_spec_t *l = tsl_link_find(link_name);
        if (l == NULL) {
            size_t len = 0;
            for (size_t i = 0; i < tsl_link_count() && len < sizeof(known); i++)
                len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", i ? ", " : "",
                                        tsl_link_at(i)->name);
            char shown[TSL_ERR_SHOWN_MAX(40)];
            return tsl_err_set(ld->err, "link: '%s' unknown; known: %s",
                               tsl_err_shown(link_name, 40, shown, sizeof shown), known);
        }
        bw = l->bw;
        ld->c->inter_a2a_ratio = tsl_link_a2a_ratio(l);
        ld->c->inter_flex_ratio = tsl_link_flex_ratio(l);
    }
    ld->c->inter_bw = bw;
    return 0;
}

/* An optional share of the ring's figure a NIC carries of another traffic, in (0, 1]:
 * absent, *out keeps the named link's (cluster_hw.c), else 1. Given with a link, it
 * replaces the link's. `what` says, in the error, what the share is of. */
static int parse_nic_ratio(loader_t *ld, json_t *root, const char *key, const char *what,
                           double *out)
{
    double r = 0;
    bool present;
    if (opt_number(root, "", key, &r, &present, ld->err) != 0)
        return -1;
    if (!present)
        return 0;
    if (!(r > 0 && r <= 1))
        return tsl_err_set(ld->err, "%s: %g must be in (0, 1] (%s; 1 = the ring's)", key, r, what);
    *out = r;
    return 0;
}

/* "inter_a2a_ratio": NCCL's all-to-all (as before cost model 129 when absent and no link
 * is named: a fabric measured with nccl-tests' alltoall_perf); "inter_flex_ratio": a
 * flex MoE dispatcher's RDMA, DeepEP's or HybridEP's (as before cost model 136: a fabric
 * measured with their internode test, counted off the node). */
static int parse_nic_ratios(loader_t *ld, json_t *root)
{
    if (parse_nic_ratio(ld, root, "inter_a2a_ratio",
                        "NCCL's all-to-all busbw over one NIC over its ring's",
                        &ld->c->inter_a2a_ratio) != 0 ||
        parse_nic_ratio(ld, root, "inter_flex_ratio",
                        "a flex MoE dispatcher's RDMA over one NIC over NCCL's ring's",
                        &ld->c->inter_flex_ratio) != 0)
        return -1;
    return 0;
}

/* One off-diagonal matrix cell; the lower triangle must mirror the upper. */
static int matrix_cell(loader_t *ld, const char *key, json_t *v, uint32_t a, uint32_t b,
                       double unit)
{
    uint32_t n = ld->c->n_nodes;
    if (a == b)
        return (v == NULL || json_is_null(v) || json_is_number(v))
                   ? 0
                   : tsl_err_set(ld->err, "%s[%u][%u]: must be a number (ignored)", key, a, b);
    if (!json_is_number(v) || !(json_number_value(v) > 0))
        return tsl_err_set(ld->err, "%s[%u][%u]: must be a positive number", key, a, b);
    double bw = json_number_value(v) * unit;
    if (b > a)
        return tsl_cluster_set_pair_bw(ld->c, a, b, bw, ld->err);
    double mirror = ld->c->inter_bw_matrix[(size_t)b * n + a];
    if (bw != mirror)
        return tsl_err_set(ld->err,
                           "%s[%u][%u]: %g differs from %s[%u][%u] = %g; the matrix "
                           "must be symmetric",
                           key, a, b, bw / unit, key, b, a, mirror / unit);
    return 0;
}

static int parse_matrix(loader_t *ld, json_t *root)
{
    json_t *gbps = json_object_get(root, "inter_gbps_matrix");
    json_t *gbit = json_object_get(root, "inter_gbit_matrix");
    if (gbps && gbit)
        return tsl_err_set(ld->err, "inter_gbps_matrix: give it or inter_gbit_matrix, not both");
    json_t *m = gbps ? gbps : gbit;
    const char *key = gbps ? "inter_gbps_matrix" : "inter_gbit_matrix";
    double unit = gbps ? GBPS : GBIT;
    uint32_t n = ld->c->n_nodes;
    if (m == NULL)
        return 0;
    if (!json_is_array(m) || json_array_size(m) != n)
        return tsl_err_set(ld->err, "%s: must be an array of %u rows, one per node", key, n);
    for (uint32_t a = 0; a < n; a++) {
        json_t *row = json_array_get(m, a);
        if (!json_is_array(row) || json_array_size(row) != n)
            return tsl_err_set(ld->err, "%s[%u]: must be an array of %u numbers", key, a, n);
        for (uint32_t b = 0; b < n; b++)
            if (matrix_cell(ld, key, json_array_get(row, b), a, b, unit) != 0)
                return -1;
    }
    return 0;
}

static const char *const link_keys[] = {"a", "b", "gbps", "gbit", NULL};

static int link_end(loader_t *ld, json_t *obj, const char *path, const char *key, uint32_t *out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return tsl_err_set(ld->err, "%s.%s: must be a node index (0-based integer)", path, key);
    if (json_integer_value(v) >= (json_int_t)ld->c->n_nodes)
        return tsl_err_set(ld->err,
                           "%s.%s: node %lld does not exist; the file has %u nodes "
                           "(0..%u)",
                           path, key, (long long)json_integer_value(v), ld->c->n_nodes,
                           ld->c->n_nodes - 1);
    *out = (uint32_t)json_integer_value(v);
    return 0;
}

static int parse_links(loader_t *ld, json_t *root)
{
    json_t *links = json_object_get(root, "links"), *obj;
    size_t i;
    if (links == NULL)
        return 0;
    if (!json_is_array(links))
        return tsl_err_set(ld->err, "links: must be an array of {\"a\", \"b\", \"gbps\"}");
    json_array_foreach(links, i, obj)
    {
        char path[PATH_MAX_LEN];
        uint32_t a, b;
        double bw = 0;
        bool present;
        snprintf(path, sizeof(path), "links[%zu]", i);
        if (!json_is_object(obj))
            return tsl_err_set(ld->err, "%s: must be an object {\"a\", \"b\", \"gbps\"}", path);
        if (check_keys(obj, path, link_keys, ld->err) != 0 ||
            link_end(ld, obj, path, "a", &a) != 0 || link_end(ld, obj, path, "b", &b) != 0 ||
            opt_bw(obj, path, "", &bw, &present, ld->err) != 0)
            return -1;
        if (a == b)
            return tsl_err_set(ld->err, "%s: a and b are both node %u; a link joins two nodes",
                               path, a);
        if (!present)
            return tsl_err_set(ld->err, "%s.gbps: missing; give gbps or gbit", path);
        if (tsl_cluster_set_pair_bw(ld->c, a, b, bw, ld->err) != 0)
            return tsl_err_prefix(ld->err, "%s", path);
    }
    return 0;
}

/* Without a scalar, every pair must come from the matrix or the links. */
static int check_inter_complete(loader_t *ld)
{
    const tsl_cluster_t *c = ld->c;
    if (c->n_nodes < 2 || c->inter_bw > 0)
        return 0;
    for (uint32_t a = 0; a < c->n_nodes; a++)
        for (uint32_t b = a + 1; b < c->n_nodes; b++)
            if (c->inter_bw_matrix == NULL || c->inter_bw_matrix[(size_t)a * c->n_nodes + b] == 0)
                return tsl_err_set(ld->err,
                                   "inter_gbps: missing; nodes %u and %u have no "
                                   "bandwidth: give link, inter_gbps or inter_gbps_matrix, or "
                                   "list every pair in links",
                                   a, b);
    return 0;
}

static int parse_overlap(loader_t *ld, json_t *root)
{
    double k = TSL_DEFAULT_OVERLAP_SLOWDOWN;
    bool present;
    if (opt_number(root, "", "overlap_slowdown", &k, &present, ld->err) != 0)
        return -1;
    if (present && !(k >= 1))
        return tsl_err_set(ld->err,
                           "overlap_slowdown: %g must be >= 1 (1 = no contention, "
                           "Galvatron measured 1.13-1.3)",
                           k);
    ld->c->overlap_slowdown = k;
    return 0;
}

/* "nvlink_domain_nodes": consecutive nodes whose GPUs share one NVLink domain
 * (an NVL72 rack: 18 trays of 4); 1, the default, is the node. */
static int parse_domain(loader_t *ld, json_t *root)
{
    return get_count(root, "", "nvlink_domain_nodes", false, 1, TSL_CLUSTER_MAX_NODES,
                     &ld->c->nvl_domain_nodes, ld->err);
}

static const char *const root_keys[] = {"name",
                                        "comment",
                                        "gpu_types",
                                        "nodes",
                                        "link",
                                        "inter_gbps",
                                        "inter_gbit",
                                        "inter_a2a_ratio",
                                        "inter_flex_ratio",
                                        "inter_gbps_matrix",
                                        "inter_gbit_matrix",
                                        "links",
                                        "overlap_slowdown",
                                        "nvlink_domain_nodes",
                                        NULL};

int tsl_cluster_json_from(const json_t *root_c, tsl_cluster_t *out, tsl_err_t *err)
{
    json_t *root = (json_t *)root_c; /* jansson's getters take non-const */
    loader_t ld = {.c = out, .err = err};
    const char *ignored;
    int rc = -1;
    tsl_cluster_init(out);
    if (!json_is_object(root)) {
        tsl_err_set(err, "(root): must be a JSON object with \"nodes\"");
        goto out;
    }
    if (check_keys(root, "", root_keys, err) != 0 ||
        opt_string(root, "", "name", &ignored, err) != 0 ||
        opt_string(root, "", "comment", &ignored, err) != 0 || parse_gpu_types(&ld, root) != 0 ||
        parse_nodes(&ld, root) != 0 || parse_inter_scalar(&ld, root) != 0 ||
        parse_nic_ratios(&ld, root) != 0 || parse_matrix(&ld, root) != 0 ||
        parse_links(&ld, root) != 0 || check_inter_complete(&ld) != 0 ||
        parse_overlap(&ld, root) != 0 || parse_domain(&ld, root) != 0)
        goto out;
    rc = tsl_cluster_finish(out, err);
out:
    if (rc != 0)
        tsl_cluster_free(out);
    return rc;
}

int tsl_cluster_json_parse(const char *text, tsl_cluster_t *out, tsl_err_t *err)
{
    json_error_t jerr;
    tsl_cluster_init(out);
    if (text == NULL)
        return tsl_err_set(err, "cluster JSON: no text");
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return tsl_err_set(err, "cluster JSON: line %d, column %d: %s", jerr.line, jerr.column,
                           jerr.text);
    int rc = tsl_cluster_json_from(root, out, err);
    json_decref(root);
    return rc;
}

int tsl_cluster_json_load(const char *path, tsl_cluster_t *out, tsl_err_t *err)
{
    json_error_t jerr;
    tsl_cluster_init(out);
    if (tsl_path_not_dir("cluster", path, err) != 0)
        return -1;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL && jerr.line < 0)
        return tsl_err_set(err, "%s: %s", path, jerr.text);
    if (root == NULL)
        return tsl_err_set(err, "%s: line %d, column %d: %s", path, jerr.line, jerr.column,
                           jerr.text);
    int rc = tsl_cluster_json_from(root, out, err);
    json_decref(root);
    if (rc != 0)
        tsl_err_prefix(err, "%s", path);
    return rc;
}

bool tsl_cluster_arg_is_file(const char *arg)
{
    size_t len = strlen(arg);
    struct stat st;
    if (len >= 5 && strcasecmp(arg + len - 5, ".json") == 0)
        return true;
    return stat(arg, &st) == 0 && S_ISREG(st.st_mode);
}

int tsl_cluster_from_arg(const char *arg, tsl_cluster_t *out, tsl_err_t *err)
{
    if (arg == NULL || arg[0] == '\0') {
        tsl_cluster_init(out);
        return tsl_err_set(err, "cluster: empty; give a spec such as 2x8xA100-40G:ib100 or a "
                                "JSON file (docs/cluster-format.md)");
    }
    if (tsl_cluster_arg_is_file(arg))
        return tsl_cluster_json_load(arg, out, err);
    return tsl_cluster_parse_spec(out, arg, err);
}

int tsl_cluster_from_request(const json_t *req, tsl_cluster_t *out, tsl_err_t *err)
{
    const char *spec = json_string_value(json_object_get(req, "cluster_spec"));
    const json_t *cl = json_object_get(req, "cluster");
    tsl_cluster_init(out);
    if (spec != NULL)
        return tsl_cluster_parse_spec(out, spec, err);
    return json_is_object(cl) ? tsl_cluster_json_from(cl, out, err) : 1;
}

/* ---- writing ---- */

static bool builtin_as_is(const tsl_gpu_spec_t *g)
{
    const tsl_gpu_spec_t *b = tsl_gpu_find(g->name);
    return b != NULL && strcmp(b->name, g->name) == 0 && b->mem_bytes == g->mem_bytes &&
           b->peak_flops == g->peak_flops && b->efficiency == g->efficiency &&
           b->intra_bw == g->intra_bw && b->pcie_bw == g->pcie_bw &&
           b->fp32_peak_flops == g->fp32_peak_flops && b->tf32_peak_flops == g->tf32_peak_flops &&
           b->host_scale == g->host_scale;
}

/* Every figure of a type; the fp32 pair when either is known (tf32_tflops 0 written
 * beside an fp32 figure: a type without TF32 reads back so); host_scale where given. */
static json_t *gpu_to_json(const tsl_gpu_spec_t *g)
{
    json_t *o = json_pack("{s:f, s:f, s:f, s:f, s:f}", "memory_gb", (double)g->mem_bytes / GIB,
                          "peak_tflops", g->peak_flops / TFLOPS, "efficiency", g->efficiency,
                          "intra_gbps", g->intra_bw / GBPS, "pcie_gbps", g->pcie_bw / GBPS);
    if (o && g->fp32_peak_flops > 0)
        json_object_set_new(o, "fp32_tflops", json_real(g->fp32_peak_flops / TFLOPS));
    if (o && (g->fp32_peak_flops > 0 || g->tf32_peak_flops > 0))
        json_object_set_new(o, "tf32_tflops", json_real(g->tf32_peak_flops / TFLOPS));
    if (o && g->host_scale > 0) /* 0: an x86 host, what a file without the key reads as */
        json_object_set_new(o, "host_scale", json_real(g->host_scale));
    return o;
}

static bool same_node(const tsl_node_t *a, const tsl_node_t *b)
{
    return a->n_gpus == b->n_gpus && a->gpu_type == b->gpu_type && a->intra_bw == b->intra_bw &&
           a->cpu_mem_bytes == b->cpu_mem_bytes && a->n_nics == b->n_nics &&
           a->nic_bw == b->nic_bw && a->nics_stated == b->nics_stated;
}

static json_t *nodes_to_json(const tsl_cluster_t *c)
{
    json_t *arr = json_array();
    for (uint32_t i = 0; arr && i < c->n_nodes;) {
        uint32_t j = i + 1;
        while (j < c->n_nodes && same_node(&c->nodes[i], &c->nodes[j]))
            j++;
        const tsl_node_t *n = &c->nodes[i];
        json_t *o = json_pack("{s:s, s:I, s:I, s:f}", "type", c->gpu_types[n->gpu_type].name,
                              "gpus", (json_int_t)n->n_gpus, "count", (json_int_t)(j - i),
                              "intra_gbps", n->intra_bw / GBPS);
        if (o && n->cpu_mem_bytes)
            json_object_set_new(o, "cpu_memory_gb", json_real((double)n->cpu_mem_bytes / GIB));
        /* one NIC is what a file without the key means; a stated one is written, so
         * that the file read back is as quiet (tsl_cluster_nic_warning) */
        if (o && (n->n_nics > 1 || n->nics_stated))
            json_object_set_new(o, "nics", json_integer((json_int_t)n->n_nics));
        if (o && n->nic_bw > 0)
            json_object_set_new(o, "nic_gbps", json_real(n->nic_bw / GBPS));
        json_array_append_new(arr, o);
        i = j;
    }
    return arr;
}

static json_t *matrix_to_json(const tsl_cluster_t *c)
{
    json_t *rows = json_array();
    for (uint32_t a = 0; rows && a < c->n_nodes; a++) {
        json_t *row = json_array();
        for (uint32_t b = 0; row && b < c->n_nodes; b++)
            json_array_append_new(row,
                                  json_real(c->inter_bw_matrix[(size_t)a * c->n_nodes + b] / GBPS));
        json_array_append_new(rows, row);
    }
    return rows;
}

json_t *tsl_cluster_to_json(const tsl_cluster_t *c)
{
    json_t *root = json_object(), *types = json_object();
    if (root == NULL || types == NULL)
        goto fail;
    for (uint32_t i = 0; i < c->n_gpu_types; i++)
        if (!builtin_as_is(&c->gpu_types[i]))
            json_object_set_new(types, c->gpu_types[i].name, gpu_to_json(&c->gpu_types[i]));
    if (json_object_size(types) > 0)
        json_object_set(root, "gpu_types", types);
    json_object_set_new(root, "nodes", nodes_to_json(c));
    if (c->n_nodes > 1 && c->inter_bw_matrix != NULL)
        json_object_set_new(root, "inter_gbps_matrix", matrix_to_json(c));
    else if (c->n_nodes > 1)
        json_object_set_new(root, "inter_gbps", json_real(c->inter_bw / GBPS));
    if (c->n_nodes > 1 && c->inter_a2a_ratio > 0 && c->inter_a2a_ratio < 1)
        json_object_set_new(root, "inter_a2a_ratio", json_real(c->inter_a2a_ratio));
    if (c->n_nodes > 1 && c->inter_flex_ratio > 0 && c->inter_flex_ratio < 1)
        json_object_set_new(root, "inter_flex_ratio", json_real(c->inter_flex_ratio));
    json_object_set_new(root, "overlap_slowdown", json_real(c->overlap_slowdown));
    if (c->nvl_domain_nodes > 1)
        json_object_set_new(root, "nvlink_domain_nodes",
                            json_integer((json_int_t)c->nvl_domain_nodes));
    json_decref(types);
    return root;
fail:
    json_decref(root);
    json_decref(types);
    return NULL;
}
