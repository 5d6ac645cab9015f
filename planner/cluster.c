/*
 * cluster.c — building, validating and querying a cluster description.
 *
 * Bandwidth lookups walk a group node by node, never device by device: a block
 * can hold thousands of devices while it touches only a few nodes.
 */
#include "cluster.h"
#include "nearest.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SPEC_FORMAT                                                                                \
    "expected [NODES x]GPUSxTYPE[:[NICS x]LINK][:nvlN], e.g. 2x8xA100-40G:ib100, "                 \
    "4x8xA100-80G:8xib200 or 36x4xGB200:nvl72:4xib800"
#define SPEC_MAX 128

void tsl_cluster_init(tsl_cluster_t *c)
{
    memset(c, 0, sizeof(*c));
    c->overlap_slowdown = TSL_DEFAULT_OVERLAP_SLOWDOWN;
}

void tsl_cluster_free(tsl_cluster_t *c)
{
    if (c == NULL)
        return;
    free(c->nodes);
    free(c->inter_bw_matrix);
    free(c->device_node);
    free(c->node_first);
    tsl_cluster_init(c);
}

static bool positive_finite(double x)
{
    return isfinite(x) && x > 0;
}

static int check_gpu(const tsl_gpu_spec_t *g, tsl_err_t *err)
{
    size_t len = strnlen(g->name, sizeof(g->name));
    if (len == 0 || len == sizeof(g->name))
        return tsl_err_set(err, "cluster: GPU type name must be 1 to %zu characters",
                           sizeof(g->name) - 1);
    if (g->mem_bytes == 0)
        return tsl_err_set(err, "cluster: GPU type '%s': memory must be > 0", g->name);
    if (!positive_finite(g->peak_flops))
        return tsl_err_set(err, "cluster: GPU type '%s': peak FLOP/s must be > 0", g->name);
    if (!(g->efficiency > 0 && g->efficiency <= 1))
        return tsl_err_set(err, "cluster: GPU type '%s': efficiency %g is outside (0, 1]", g->name,
                           g->efficiency);
    if (!positive_finite(g->intra_bw))
        return tsl_err_set(err, "cluster: GPU type '%s': intra-node bandwidth must be > 0",
                           g->name);
    if (!positive_finite(g->pcie_bw))
        return tsl_err_set(err, "cluster: GPU type '%s': PCIe bandwidth must be > 0", g->name);
    if (!(isfinite(g->fp32_peak_flops) && g->fp32_peak_flops >= 0) ||
        !(isfinite(g->tf32_peak_flops) && g->tf32_peak_flops >= 0))
        return tsl_err_set(err,
                           "cluster: GPU type '%s': fp32 and TF32 peaks must be >= 0 (0: "
                           "none)",
                           g->name);
    if (!(isfinite(g->host_scale) && g->host_scale >= 0))
        return tsl_err_set(err,
                           "cluster: GPU type '%s': host_scale %g must be >= 0 (0: an x86 host)",
                           g->name, g->host_scale);
    if (!(isfinite(g->hybridep_nvl_bw) && g->hybridep_nvl_bw >= 0))
        return tsl_err_set(err,
                           "cluster: GPU type '%s': hybridep_nvl_bw %g must be >= 0 (0: none "
                           "published)",
                           g->name, g->hybridep_nvl_bw);
    return 0;
}

static bool same_figures(const tsl_gpu_spec_t *a, const tsl_gpu_spec_t *b)
{
    return a->mem_bytes == b->mem_bytes && a->peak_flops == b->peak_flops &&
           a->efficiency == b->efficiency && a->intra_bw == b->intra_bw &&
           a->pcie_bw == b->pcie_bw && a->fp32_peak_flops == b->fp32_peak_flops &&
           a->tf32_peak_flops == b->tf32_peak_flops && a->no_bf16 == b->no_bf16 &&
           a->host_scale == b->host_scale && a->hybridep_nvl_bw == b->hybridep_nvl_bw;
}

int tsl_cluster_add_gpu_type(tsl_cluster_t *c, const tsl_gpu_spec_t *gpu, uint32_t *idx,
                             tsl_err_t *err)
{
    if (check_gpu(gpu, err) != 0)
        return -1;
    for (uint32_t i = 0; i < c->n_gpu_types; i++) {
        if (strcasecmp(c->gpu_types[i].name, gpu->name) != 0)
            continue;
        if (!same_figures(&c->gpu_types[i], gpu))
            return tsl_err_set(err, "cluster: GPU type '%s' given twice with different figures",
                               gpu->name);
        *idx = i;
        return 0;
    }
    if (c->n_gpu_types >= TSL_CLUSTER_MAX_GPU_TYPES)
        return tsl_err_set(err, "cluster: more than %u GPU types", TSL_CLUSTER_MAX_GPU_TYPES);
    c->gpu_types[c->n_gpu_types] = *gpu;
    *idx = c->n_gpu_types++;
    return 0;
}

/* Keeps a pair matrix square when a node is added after the first pair was set. */
static int grow_matrix(tsl_cluster_t *c, uint32_t n_old, uint32_t n_new, tsl_err_t *err)
{
    double *m = calloc((size_t)n_new * n_new, sizeof(*m));
    if (m == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "cluster: out of memory for the bandwidth matrix");
    for (uint32_t a = 0; a < n_old; a++)
        memcpy(&m[(size_t)a * n_new], &c->inter_bw_matrix[(size_t)a * n_old], n_old * sizeof(*m));
    free(c->inter_bw_matrix);
    c->inter_bw_matrix = m;
    return 0;
}

/* Room for n nodes. tsl_cluster_add_node doubles it; where the count is known
 * (a homogeneous cluster, a permutation) it is sized once, as the doubling alone
 * left glibc's heap holding the freed halves (bench/search: 100k GPUs' peak RSS
 * 146 -> 170 MiB). */
static int reserve_nodes(tsl_cluster_t *c, uint32_t n, tsl_err_t *err)
{
    if (n <= c->nodes_cap)
        return 0;
    tsl_node_t *nodes = realloc(c->nodes, (size_t)n * sizeof(*nodes));
    if (nodes == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "cluster: out of memory for %u nodes", n);
    c->nodes = nodes;
    c->nodes_cap = n;
    return 0;
}

int tsl_cluster_add_node(tsl_cluster_t *c, const tsl_node_t *node, tsl_err_t *err)
{
    uint32_t i = c->n_nodes;
    if (node->n_gpus == 0)
        return tsl_err_set(err, "cluster: node %u has no GPUs", i);
    if (node->gpu_type >= c->n_gpu_types)
        return tsl_err_set(err, "cluster: node %u: GPU type index %u not added", i, node->gpu_type);
    if (!(isfinite(node->intra_bw) && node->intra_bw >= 0))
        return tsl_err_set(err,
                           "cluster: node %u: intra-node bandwidth must be >= 0 (0 = the "
                           "GPU type's)",
                           i);
    if (!(isfinite(node->nic_bw) && node->nic_bw >= 0))
        return tsl_err_set(err, "cluster: node %u: NIC bandwidth must be >= 0 (0 = the link's)", i);
    if (node->n_nics > node->n_gpus * 8u)
        return tsl_err_set(err, "cluster: node %u: %u NICs for %u GPUs; at most 8 per GPU", i,
                           node->n_nics, node->n_gpus);
    if (i >= TSL_CLUSTER_MAX_NODES)
        return tsl_err_set(err, "cluster: more than %u nodes", TSL_CLUSTER_MAX_NODES);
    uint64_t devices = c->n_devices; /* kept here: no O(nodes) walk per node added */
    if (devices + node->n_gpus > TSL_CLUSTER_MAX_DEVICES)
        return tsl_err_set(err,
                           "cluster: node %u brings the device count to %llu, above the "
                           "limit of %u",
                           i, (unsigned long long)(devices + node->n_gpus),
                           TSL_CLUSTER_MAX_DEVICES);
    if (c->inter_bw_matrix != NULL && i + 1 > TSL_CLUSTER_MAX_MATRIX_NODES)
        return tsl_err_set(err,
                           "cluster: node %u: a per-pair bandwidth matrix is limited to %u nodes",
                           i, TSL_CLUSTER_MAX_MATRIX_NODES);
    if (i >= c->nodes_cap && reserve_nodes(c, i < 8 ? 8 : i * 2, err) != 0)
        return -1;
    if (c->inter_bw_matrix != NULL && grow_matrix(c, i, i + 1, err) != 0)
        return -1;
    c->nodes[i] = *node;
    c->n_nodes = i + 1;
    c->n_devices = (uint32_t)(devices + node->n_gpus);
    return 0;
}

int tsl_cluster_set_pair_bw(tsl_cluster_t *c, uint32_t a, uint32_t b, double bw, tsl_err_t *err)
{
    if (a >= c->n_nodes || b >= c->n_nodes)
        return tsl_err_set(err, "cluster: link %u-%u names a node beyond the %u nodes", a, b,
                           c->n_nodes);
    if (a == b)
        return tsl_err_set(err,
                           "cluster: link %u-%u joins a node to itself; use the node's "
                           "intra-node bandwidth",
                           a, b);
    if (!positive_finite(bw))
        return tsl_err_set(err, "cluster: link %u-%u: bandwidth must be > 0", a, b);
    if (c->inter_bw_matrix == NULL && c->n_nodes > TSL_CLUSTER_MAX_MATRIX_NODES)
        return tsl_err_set(err,
                           "cluster: link %u-%u: a per-pair bandwidth matrix is limited to %u "
                           "nodes, the cluster has %u; give one inter-node figure",
                           a, b, TSL_CLUSTER_MAX_MATRIX_NODES, c->n_nodes);
    if (c->inter_bw_matrix == NULL) {
        c->inter_bw_matrix = calloc((size_t)c->n_nodes * c->n_nodes, sizeof(double));
        if (c->inter_bw_matrix == NULL)
            return tsl_err_setc(err, TSL_E_NOMEM,
                                "cluster: out of memory for the bandwidth matrix");
    }
    c->inter_bw_matrix[(size_t)a * c->n_nodes + b] = bw;
    c->inter_bw_matrix[(size_t)b * c->n_nodes + a] = bw;
    return 0;
}

/* Fills unset pairs with inter_bw; inter_bw becomes the slowest pair if unset. */
static int finish_matrix(tsl_cluster_t *c, tsl_err_t *err)
{
    uint32_t n = c->n_nodes;
    double slowest = INFINITY;
    for (uint32_t a = 0; a < n; a++) {
        for (uint32_t b = 0; b < n; b++) {
            double *m = &c->inter_bw_matrix[(size_t)a * n + b];
            if (a == b) {
                *m = 0;
                continue;
            }
            if (*m == 0 && c->inter_bw <= 0)
                return tsl_err_set(err,
                                   "cluster: no bandwidth between nodes %u and %u: set "
                                   "the inter-node bandwidth or that pair",
                                   a, b);
            if (*m == 0)
                *m = c->inter_bw;
            slowest = fmin(slowest, *m);
        }
    }
    if (c->inter_bw <= 0)
        c->inter_bw = slowest;
    return 0;
}

static int derive_devices(tsl_cluster_t *c, tsl_err_t *err)
{
    uint32_t total = 0;
    for (uint32_t i = 0; i < c->n_nodes; i++)
        total += c->nodes[i].n_gpus;
    free(c->device_node);
    free(c->node_first);
    c->device_node = malloc((size_t)total * sizeof(uint32_t));
    c->node_first = malloc((size_t)c->n_nodes * sizeof(uint32_t));
    if (c->device_node == NULL || c->node_first == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "cluster: out of memory for %u devices", total);
    uint32_t dev = 0;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        c->node_first[i] = dev;
        for (uint32_t g = 0; g < c->nodes[i].n_gpus; g++)
            c->device_node[dev++] = i;
    }
    c->n_devices = total;
    return 0;
}

/* A share of the ring's figure a NIC carries of other traffic: in (0, 1], 0 meaning 1. */
static int nic_ratio_check(const char *key, double r, const char *of, tsl_err_t *err)
{
    if (isfinite(r) && r >= 0 && r <= 1)
        return 0;
    return tsl_err_set(err,
                       "cluster: %s %g outside (0, 1] (what a NIC carries of %s over its ring "
                       "figure; 0 = 1)",
                       key, r, of);
}

int tsl_cluster_finish(tsl_cluster_t *c, tsl_err_t *err)
{
    if (c->n_nodes == 0)
        return tsl_err_set(err, "cluster: no nodes");
    if (!(isfinite(c->overlap_slowdown) && c->overlap_slowdown >= 1))
        return tsl_err_set(err, "cluster: overlap slowdown %g must be >= 1 (1 = no contention)",
                           c->overlap_slowdown);
    if (!(isfinite(c->inter_bw) && c->inter_bw >= 0))
        return tsl_err_set(err, "cluster: inter-node bandwidth must be > 0");
    if (nic_ratio_check("inter_a2a_ratio", c->inter_a2a_ratio, "NCCL's all-to-all", err) ||
        nic_ratio_check("inter_flex_ratio", c->inter_flex_ratio, "a flex MoE dispatcher's RDMA",
                        err))
        return -1;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        tsl_node_t *n = &c->nodes[i];
        if (n->intra_bw == 0)
            n->intra_bw = c->gpu_types[n->gpu_type].intra_bw;
        if (n->n_nics == 0) /* the network as one figure per pair: one NIC */
            n->n_nics = 1;
        /* Unknown host memory: assume twice the node's GPU memory (a DGX A100-40G
         * has 1 TiB for 320 GiB of GPU memory, cloud instances about 1.5-3×). */
        if (n->cpu_mem_bytes == 0)
            n->cpu_mem_bytes =
                TSL_DEFAULT_HOST_MEM_PER_GPU_MEM * n->n_gpus * c->gpu_types[n->gpu_type].mem_bytes;
    }
    if (c->nvl_domain_nodes == 0) /* NVLink reaches the node's own GPUs */
        c->nvl_domain_nodes = 1;
    if (c->nvl_domain_nodes > c->n_nodes)
        return tsl_err_set(err, "cluster: NVLink domain of %u nodes in a cluster of %u",
                           c->nvl_domain_nodes, c->n_nodes);
    if (c->n_nodes > 1 && c->inter_bw_matrix != NULL && finish_matrix(c, err) != 0)
        return -1;
    if (c->n_nodes > 1 && c->inter_bw <= 0)
        return tsl_err_set(err, "cluster: inter-node bandwidth not set for %u nodes", c->n_nodes);
    return derive_devices(c, err);
}

static int dup_array(void **dst, const void *src, size_t bytes)
{
    *dst = NULL;
    if (src == NULL || bytes == 0)
        return 0;
    *dst = malloc(bytes);
    if (*dst == NULL)
        return -1;
    memcpy(*dst, src, bytes);
    return 0;
}

int tsl_cluster_copy(tsl_cluster_t *dst, const tsl_cluster_t *src, tsl_err_t *err)
{
    *dst = *src;
    size_t n = src->n_nodes;
    int rc = 0;
    rc |= dup_array((void **)&dst->nodes, src->nodes, n * sizeof(*src->nodes));
    dst->nodes_cap = (uint32_t)n;
    rc |= dup_array((void **)&dst->inter_bw_matrix, src->inter_bw_matrix, n * n * sizeof(double));
    rc |= dup_array((void **)&dst->device_node, src->device_node,
                    (size_t)src->n_devices * sizeof(uint32_t));
    rc |= dup_array((void **)&dst->node_first, src->node_first, n * sizeof(uint32_t));
    if (rc != 0) {
        tsl_cluster_free(dst);
        return tsl_err_setc(err, TSL_E_NOMEM, "cluster: out of memory copying %zu nodes", n);
    }
    return 0;
}

int tsl_cluster_homogeneous(tsl_cluster_t *c, uint32_t n_nodes, uint32_t gpus_per_node,
                            const tsl_gpu_spec_t *gpu, double inter_bw, tsl_err_t *err)
{
    tsl_cluster_init(c);
    int rc = -1;
    uint32_t type;
    if (n_nodes == 0 || n_nodes > TSL_CLUSTER_MAX_NODES) {
        tsl_err_set(err, "cluster: node count %u outside 1..%u", n_nodes, TSL_CLUSTER_MAX_NODES);
        goto out;
    }
    if (tsl_cluster_add_gpu_type(c, gpu, &type, err) != 0 || reserve_nodes(c, n_nodes, err) != 0)
        goto out;
    c->inter_bw = n_nodes > 1 ? inter_bw : 0;
    tsl_node_t node = {.n_gpus = gpus_per_node, .gpu_type = type, .intra_bw = gpu->intra_bw};
    for (uint32_t i = 0; i < n_nodes; i++)
        if (tsl_cluster_add_node(c, &node, err) != 0)
            goto out;
    rc = tsl_cluster_finish(c, err);
out:
    if (rc != 0)
        tsl_cluster_free(c);
    return rc;
}

/* ---- short spec ---- */

/* "name1, name2, ..." of a built-in table, for error messages. */
static void list_gpus(char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < tsl_gpu_count() && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", tsl_gpu_at(i)->name);
}

/* " (did you mean A100-80G?)" for an unknown type or link name, or "". */
static const char *gpu_hint(const char *name, char *buf, size_t cap)
{
    tsl_nearest_t n;
    tsl_nearest_init(&n, name);
    for (size_t i = 0; i < tsl_gpu_count(); i++)
        tsl_nearest_offer(&n, tsl_gpu_at(i)->name);
    return tsl_nearest_hint(&n, buf, cap);
}

static const char *link_hint(const char *name, char *buf, size_t cap)
{
    tsl_nearest_t n;
    tsl_nearest_init(&n, name);
    for (size_t i = 0; i < tsl_link_count(); i++)
        tsl_nearest_offer(&n, tsl_link_at(i)->name);
    return tsl_nearest_hint(&n, buf, cap);
}

static void list_links(char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < tsl_link_count() && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", tsl_link_at(i)->name);
}

/* Reads up to 9 digits (no overflow possible); -1 if none, -2 if more. */
static int read_count(const char **p, uint32_t *out)
{
    const char *s = *p;
    uint32_t v = 0;
    int n = 0;
    while (isdigit((unsigned char)s[n])) {
        if (n == 9)
            return -2;
        v = v * 10 + (uint32_t)(s[n] - '0');
        n++;
    }
    if (n == 0)
        return -1;
    *p = s + n;
    *out = v;
    return 0;
}

static bool is_x(char ch)
{
    return ch == 'x' || ch == 'X';
}

/* Splits "[N x]G x TYPE" into counts and the type name (points into s). */
static int split_counts(const char *s, const char *spec, uint32_t *nodes, uint32_t *gpus,
                        const char **type, tsl_err_t *err)
{
    const char *p = s;
    uint32_t first, second;
    int rc = read_count(&p, &first);
    const char *q = p + 1;
    /* digits then x are a count, however many: ten or more are a count too
     * large ("4x4294967297xA100-80G" read as the type "4294967297xA100-80G") */
    if ((rc == -2 && is_x(s[strspn(s, "0123456789")])) ||
        (rc == 0 && is_x(*p) && read_count(&q, &second) == -2 && is_x(q[strspn(q, "0123456789")])))
        return tsl_err_set(err,
                           "cluster: a count in '%s' has more than 9 digits; the limits are %u "
                           "nodes and %u devices",
                           spec, TSL_CLUSTER_MAX_NODES, TSL_CLUSTER_MAX_DEVICES);
    if (rc != 0 || !is_x(*p))
        return tsl_err_set(err, "cluster: '%s' is not a cluster spec; " SPEC_FORMAT, spec);
    p++;
    q = p;
    /* A second count only when digits are followed by 'x': "8x2080Ti" is a type. */
    if (read_count(&q, &second) == 0 && is_x(*q)) {
        *nodes = first;
        *gpus = second;
        p = q + 1;
    } else {
        *nodes = 1;
        *gpus = first;
    }
    *type = p;
    return 0;
}

static int check_counts(uint32_t nodes, uint32_t gpus, const char *spec, tsl_err_t *err)
{
    if (nodes == 0)
        return tsl_err_set(err, "cluster: node count 0 in '%s'; need at least 1", spec);
    if (gpus == 0)
        return tsl_err_set(err, "cluster: GPUs per node 0 in '%s'; need at least 1", spec);
    if (nodes > TSL_CLUSTER_MAX_NODES)
        return tsl_err_set(err, "cluster: node count %u in '%s' exceeds the limit of %u", nodes,
                           spec, TSL_CLUSTER_MAX_NODES);
    if ((uint64_t)nodes * gpus > TSL_CLUSTER_MAX_DEVICES)
        return tsl_err_set(err, "cluster: %u x %u = %llu devices in '%s' exceeds the limit of %u",
                           nodes, gpus, (unsigned long long)nodes * gpus, spec,
                           TSL_CLUSTER_MAX_DEVICES);
    return 0;
}

/* "8xib200" → 8 NICs and "ib200"; a link name alone keeps one NIC. Link names
 * start with a letter, so digits then 'x' can only be a count. */
static int split_nics(const char **link, uint32_t *nics, uint32_t gpus, const char *spec,
                      tsl_err_t *err)
{
    const char *p = *link;
    uint32_t n;
    if (!isdigit((unsigned char)*p))
        return 0;
    if (read_count(&p, &n) != 0 || !is_x(*p))
        return tsl_err_set(err, "cluster: '%s': after ':' expected [NICS x]LINK, e.g. 8xib200",
                           spec);
    if (n == 0 || n > 8 * gpus)
        return tsl_err_set(err, "cluster: %u NICs per node in '%s'; need 1 to %u (8 per GPU)", n,
                           spec, 8 * gpus);
    *nics = n;
    *link = p + 1;
    return 0;
}

/* "nvl72": an NVLink domain of 72 GPUs, a whole number of `gpus`-GPU nodes; the
 * domain in nodes, at most the cluster's (a partial rack is one domain). 0 when
 * the part is not an nvl part. */
static int parse_domain(const char *part, uint32_t nodes, uint32_t gpus, const char *spec,
                        uint32_t *domain_nodes, tsl_err_t *err)
{
    const char *p = part + 3;
    uint32_t n;
    if (strncasecmp(part, "nvl", 3) != 0 || !isdigit((unsigned char)*p))
        return 0;
    if (read_count(&p, &n) != 0 || *p != '\0')
        return tsl_err_set(err,
                           "cluster: NVLink domain '%s' in '%s': expected nvlN, N the GPUs "
                           "of one domain, e.g. nvl72",
                           part, spec);
    if (n == 0 || n % gpus != 0)
        return tsl_err_set(err,
                           "cluster: NVLink domain '%s' in '%s': %u GPUs is not a whole "
                           "number of %u-GPU nodes",
                           part, spec, n, gpus);
    if (*domain_nodes != 0)
        return tsl_err_set(err, "cluster: NVLink domain '%s' in '%s': given twice", part, spec);
    *domain_nodes = n / gpus < nodes ? n / gpus : nodes;
    return 0;
}

/* The parts after the counts: at most one [NICS x]LINK and one nvlN, any order. */
static int split_parts(char *rest, uint32_t nodes, uint32_t gpus, const char *spec,
                       const char **link_name, uint32_t *domain_nodes, tsl_err_t *err)
{
    for (char *part = rest; part != NULL;) {
        char *next = strchr(part, ':');
        if (next)
            *next++ = '\0';
        uint32_t before = *domain_nodes;
        if (parse_domain(part, nodes, gpus, spec, domain_nodes, err) != 0)
            return -1;
        if (*domain_nodes == before) { /* not an nvl part: the link */
            if (*link_name != NULL)
                return tsl_err_set(err, "cluster: '%s': two links ('%s', '%s'); " SPEC_FORMAT, spec,
                                   *link_name, part);
            *link_name = part;
        }
        part = next;
    }
    return 0;
}

int tsl_cluster_parse_spec(tsl_cluster_t *c, const char *spec, tsl_err_t *err)
{
    char buf[SPEC_MAX], known[400], hint[128];
    uint32_t nodes = 0, gpus = 0, domain_nodes = 0;
    const char *type = NULL, *link_name = NULL;
    tsl_cluster_init(c);
    if (spec == NULL || spec[0] == '\0')
        return tsl_err_set(err, "cluster: empty spec; " SPEC_FORMAT);
    if (strlen(spec) >= sizeof(buf))
        return tsl_err_set(err, "cluster: spec longer than %zu characters", sizeof(buf) - 1);
    /* every refusal below quotes the spec: one with a byte no spec is spelt with (a
     * control byte, a quote, a backslash, a blank, non-ASCII) is refused first, shown
     * escaped, so that no message carries a raw control byte */
    if (tsl_err_token_bad_byte(spec) != NULL) {
        char shown[TSL_ERR_SHOWN_MAX(60)];
        return tsl_err_set(err, "cluster: '%s' is not a cluster spec; " SPEC_FORMAT,
                           tsl_err_shown(spec, 60, shown, sizeof shown));
    }
    memcpy(buf, spec, strlen(spec) + 1);
    char *colon = strchr(buf, ':');
    if (colon)
        *colon = '\0';
    if (split_counts(buf, spec, &nodes, &gpus, &type, err) != 0 ||
        check_counts(nodes, gpus, spec, err) != 0 ||
        (colon && split_parts(colon + 1, nodes, gpus, spec, &link_name, &domain_nodes, err) != 0))
        return -1;
    const tsl_gpu_spec_t *gpu = tsl_gpu_find(type);
    if (gpu == NULL) {
        char shown[TSL_ERR_SHOWN_MAX(40)]; /* a raw newline would end the message's line */
        list_gpus(known, sizeof(known));
        return tsl_err_set(err, "cluster: unknown GPU type '%s'%s; known: %s",
                           tsl_err_shown(type, 40, shown, sizeof shown),
                           gpu_hint(type, hint, sizeof hint), known);
    }
    uint32_t nics = 0; /* 0: not stated, one NIC (tsl_cluster_nic_warning) */
    if (link_name != NULL && split_nics(&link_name, &nics, gpus, spec, err) != 0)
        return -1;
    const tsl_link_spec_t *link = tsl_link_find(link_name ? link_name : "ib100");
    if (link == NULL) {
        list_links(known, sizeof(known));
        return tsl_err_set(err, "cluster: link '%s' unknown%s; known: %s", link_name,
                           link_hint(link_name, hint, sizeof hint), known);
    }
    if (tsl_cluster_homogeneous(c, nodes, gpus, gpu, link->bw, err) != 0)
        return -1;
    c->inter_a2a_ratio = tsl_link_a2a_ratio(link);
    c->inter_flex_ratio = tsl_link_flex_ratio(link);
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        c->nodes[i].n_nics = nics ? nics : 1;
        c->nodes[i].nics_stated = nics != 0;
    }
    c->nvl_domain_nodes = domain_nodes ? domain_nodes : 1;
    return 0;
}

/* ---- the one-NIC trap ---- */

/* Whether a type is of a family NVIDIA ships on 8-GPU DGX/HGX boards with one NIC per
 * GPU (DGX A100: eight ConnectX-6 HDR; DGX H100/H200: eight ConnectX-7 NDR; DGX
 * B200: eight ConnectX-7; DGX B300: eight ConnectX-8, the datasheets): its name up
 * to the last '-' ("H100-80G", a file's "H100-slow"). The H800 is left out (issue 18
 * names these five); a GB200 tray has 4 GPUs, below the 8 this looks at. */
static int family_len(const tsl_gpu_spec_t *g)
{
    const char *dash = strrchr(g->name, '-');
    return (int)(dash ? (size_t)(dash - g->name) : strlen(g->name));
}

static bool eight_nic_family(const tsl_gpu_spec_t *g)
{
    static const char *const families[] = {"A100", "H100", "H200", "B200", "B300"};
    size_t len = (size_t)family_len(g);
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        if (len == strlen(families[i]) && strncasecmp(g->name, families[i], len) == 0)
            return true;
    return false;
}

/* The first node the trap catches (tsl_cluster_nic_warning), or n_nodes. */
static uint32_t one_nic_node(const tsl_cluster_t *c)
{
    if (c->n_nodes < 2) /* one node: no network to starve */
        return c->n_nodes;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        const tsl_node_t *n = &c->nodes[i];
        if (!n->nics_stated && n->n_nics == 1 && n->n_gpus >= 8 &&
            eight_nic_family(&c->gpu_types[n->gpu_type]))
            return i;
    }
    return c->n_nodes;
}

/* The spec with `count`x before its link part, or ":<count>xib100" (the default link)
 * appended where it names none; the link's name into link. The spec has parsed, so
 * its parts after ':' are nvlN parts and at most one link. */
static void spec_with_nics(const char *spec, uint32_t count, char *out, size_t cap, char *link,
                           size_t link_cap)
{
    const char *p = strchr(spec, ':');
    while (p != NULL) {
        const char *part = p + 1, *next = strchr(part, ':');
        size_t len = next ? (size_t)(next - part) : strlen(part);
        if (!(strncasecmp(part, "nvl", 3) == 0 && isdigit((unsigned char)part[3]))) {
            snprintf(out, cap, "%.*s%ux%s", (int)(part - spec), spec, count, part);
            snprintf(link, link_cap, "%.*s", (int)len, part);
            return;
        }
        p = next;
    }
    snprintf(out, cap, "%s:%uxib100", spec, count);
    snprintf(link, link_cap, "ib100 (the default link)");
}

bool tsl_cluster_nic_warning(const tsl_cluster_t *c, const char *spec, char *buf, size_t cap)
{
    if (cap > 0)
        buf[0] = '\0';
    uint32_t i = one_nic_node(c);
    if (i >= c->n_nodes || cap == 0)
        return false;
    const tsl_node_t *n = &c->nodes[i];
    const tsl_gpu_spec_t *g = &c->gpu_types[n->gpu_type];
    char eight[SPEC_MAX + 32], one[SPEC_MAX + 32], link[SPEC_MAX];
    if (spec == NULL) {
        snprintf(buf, cap,
                 "cluster: node %u (%u x %s) gives no \"nics\", so it has ONE NIC, of the "
                 "inter-node figure; 8-GPU DGX/HGX %.*s nodes have eight, one per GPU "
                 "(rail-optimised): give \"nics\": 8 in its nodes entry for eight, or "
                 "\"nics\": 1 if one is what the node has (docs/cluster-format.md)",
                 i, n->n_gpus, g->name, family_len(g), g->name);
        return true;
    }
    spec_with_nics(spec, 8, eight, sizeof eight, link, sizeof link);
    spec_with_nics(spec, 1, one, sizeof one, link, sizeof link);
    snprintf(buf, cap,
             "cluster: '%s' is ONE %s NIC per node, %.3g GB/s a node; 8-GPU DGX/HGX %.*s "
             "nodes have eight, one per GPU (rail-optimised): write %s for eight, or %s if "
             "one is what the nodes have (docs/cluster-format.md)",
             spec, link, c->inter_bw / 1e9, family_len(g), g->name, eight, one);
    return true;
}

/* ---- lookups ---- */

static double pair_bw(const tsl_cluster_t *c, uint32_t a, uint32_t b)
{
    if (c->inter_bw_matrix != NULL)
        return c->inter_bw_matrix[(size_t)a * c->n_nodes + b];
    return c->inter_bw;
}

double tsl_cluster_node_pair_bw(const tsl_cluster_t *c, uint32_t a, uint32_t b)
{
    return pair_bw(c, a, b);
}

double tsl_cluster_inter_a2a_ratio(const tsl_cluster_t *c)
{
    return c->inter_a2a_ratio > 0 ? c->inter_a2a_ratio : 1.0;
}

double tsl_cluster_inter_flex_ratio(const tsl_cluster_t *c)
{
    return c->inter_flex_ratio > 0 ? c->inter_flex_ratio : 1.0;
}

uint32_t tsl_cluster_node_domain(const tsl_cluster_t *c, uint32_t node)
{
    return c->nvl_domain_nodes > 1 ? node / c->nvl_domain_nodes : node;
}

/* Link between two distinct nodes: NVLink inside a domain (the slower node's
 * figure), else the network pair. Without domains: pair_bw, as AMP Eq. 3 has it. */
static double node_link_bw(const tsl_cluster_t *c, uint32_t a, uint32_t b)
{
    if (tsl_cluster_node_domain(c, a) == tsl_cluster_node_domain(c, b))
        return fmin(c->nodes[a].intra_bw, c->nodes[b].intra_bw);
    return pair_bw(c, a, b);
}

const tsl_gpu_spec_t *tsl_cluster_device_gpu(const tsl_cluster_t *c, uint32_t dev)
{
    return &c->gpu_types[c->nodes[c->device_node[dev]].gpu_type];
}

double tsl_gpu_flops(const tsl_gpu_spec_t *g)
{
    return g->peak_flops * g->efficiency;
}

double tsl_cluster_device_flops(const tsl_cluster_t *c, uint32_t dev)
{
    return tsl_gpu_flops(tsl_cluster_device_gpu(c, dev));
}

const tsl_gpu_spec_t *tsl_cluster_next_type(const tsl_cluster_t *c, uint32_t *dev, uint32_t end,
                                            uint32_t *seen)
{
    while (*dev < end && *dev < c->n_devices) {
        uint32_t node = c->device_node[*dev];
        *dev = c->node_first[node] + c->nodes[node].n_gpus;
        if (c->nodes[node].gpu_type != *seen) {
            *seen = c->nodes[node].gpu_type;
            return &c->gpu_types[*seen];
        }
    }
    return NULL;
}

/* Each type once (tsl_cluster_next_type: the same figure leaves the minimum as it is). */
double tsl_cluster_block_fp32_flops(const tsl_cluster_t *c, uint32_t first, uint32_t n,
                                    bool tf32_off)
{
    double x = INFINITY;
    uint32_t dev = first, seen = UINT32_MAX;
    for (const tsl_gpu_spec_t *g; (g = tsl_cluster_next_type(c, &dev, first + n, &seen));)
        x = fmin(x, tsl_gpu_fp32_flops_as(g, tf32_off));
    return isfinite(x) ? x : 0.0;
}

double tsl_gpu_fp8_flops(const tsl_gpu_spec_t *g)
{
    double e = g->fp8_efficiency > 0 ? g->fp8_efficiency : g->efficiency;
    return g->fp8_peak_flops > 0 ? g->fp8_peak_flops * e : 0.0;
}

double tsl_gpu_fp32_peak(const tsl_gpu_spec_t *g)
{
    return g->tf32_peak_flops > 0   ? g->tf32_peak_flops
           : g->fp32_peak_flops > 0 ? g->fp32_peak_flops
                                    : 0.0;
}

double tsl_gpu_fp32_peak_as(const tsl_gpu_spec_t *g, bool tf32_off)
{
    return tf32_off ? g->fp32_peak_flops : tsl_gpu_fp32_peak(g);
}

double tsl_gpu_fp32_flops_as(const tsl_gpu_spec_t *g, bool tf32_off)
{
    return tsl_gpu_fp32_peak_as(g, tf32_off) * g->efficiency;
}

bool tsl_cluster_tf32_moot(const tsl_cluster_t *c)
{
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        const tsl_gpu_spec_t *g = &c->gpu_types[c->nodes[i].gpu_type];
        double off = tsl_gpu_fp32_peak_as(g, true);
        if (!(off > 0) || tsl_gpu_fp32_peak_as(g, false) != off) /* no figure: refused */
            return false;
    }
    return true;
}

const tsl_gpu_spec_t *tsl_cluster_no_bf16(const tsl_cluster_t *c)
{
    for (uint32_t i = 0; i < c->n_gpu_types; i++)
        if (c->gpu_types[i].no_bf16)
            return &c->gpu_types[i];
    return NULL;
}

const tsl_gpu_spec_t *tsl_cluster_no_flash(const tsl_cluster_t *c)
{
    /* the same line as bf16's: compute capability 8.0 (cluster.h) */
    return tsl_cluster_no_bf16(c);
}

double tsl_gpu_fp4_flops(const tsl_gpu_spec_t *g)
{
    double e = g->fp8_efficiency > 0 ? g->fp8_efficiency : g->efficiency;
    return g->fp4_peak_flops > 0 ? g->fp4_peak_flops * e : 0.0;
}

bool tsl_gpu_is_blackwell(const tsl_gpu_spec_t *g)
{
    return strncasecmp(g->name, "B", 1) == 0 || strncasecmp(g->name, "GB", 2) == 0;
}

double tsl_gpu_a2a_ratio(const tsl_gpu_spec_t *g)
{
    return g->a2a_ratio > 0 ? g->a2a_ratio : 1.0;
}

uint64_t tsl_cluster_device_mem(const tsl_cluster_t *c, uint32_t dev)
{
    return tsl_cluster_device_gpu(c, dev)->mem_bytes;
}

uint64_t tsl_cluster_min_device_mem(const tsl_cluster_t *c)
{
    uint64_t m = UINT64_MAX;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        uint64_t v = c->gpu_types[c->nodes[i].gpu_type].mem_bytes;
        m = v < m ? v : m;
    }
    return c->n_nodes ? m : 0;
}

uint64_t tsl_cluster_max_device_mem(const tsl_cluster_t *c)
{
    uint64_t m = 0;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        uint64_t v = c->gpu_types[c->nodes[i].gpu_type].mem_bytes;
        m = v > m ? v : m;
    }
    return m;
}

double tsl_cluster_link_bw(const tsl_cluster_t *c, uint32_t dev_a, uint32_t dev_b)
{
    if (dev_a == dev_b)
        return INFINITY;
    uint32_t a = c->device_node[dev_a], b = c->device_node[dev_b];
    return a == b ? c->nodes[a].intra_bw : node_link_bw(c, a, b);
}

bool tsl_cluster_is_homogeneous(const tsl_cluster_t *c)
{
    for (uint32_t i = 1; i < c->n_nodes; i++) {
        const tsl_node_t *a = &c->nodes[0], *b = &c->nodes[i];
        /* a type has its own figures (check_gpu: none NaN): compared only across types */
        if (a->n_gpus != b->n_gpus || a->intra_bw != b->intra_bw || a->n_nics != b->n_nics ||
            a->nic_bw != b->nic_bw ||
            (a->gpu_type != b->gpu_type &&
             !same_figures(&c->gpu_types[a->gpu_type], &c->gpu_types[b->gpu_type])))
            return false;
    }
    if (c->inter_bw_matrix == NULL || c->n_nodes < 2)
        return true;
    double first = pair_bw(c, 0, 1);
    for (uint32_t a = 0; a < c->n_nodes; a++)
        for (uint32_t b = 0; b < c->n_nodes; b++)
            if (a != b && pair_bw(c, a, b) != first)
                return false;
    return true;
}

/* ---- group bandwidth ---- */

/* Members k ≥ k0 of the group that fall in the node holding member k0. */
static uint32_t members_in_node(const tsl_cluster_t *c, uint32_t first, uint32_t stride,
                                uint32_t count, uint32_t k0, uint32_t *node)
{
    uint64_t dev = first + (uint64_t)k0 * stride;
    *node = c->device_node[dev];
    uint64_t end = (uint64_t)c->node_first[*node] + c->nodes[*node].n_gpus;
    uint64_t in = (end - dev + stride - 1) / stride;
    return in < count - k0 ? (uint32_t)in : count - k0;
}

/* Slowest matrix pair between `node` and the nodes of members [0, k_end). */
static double slowest_pair_before(const tsl_cluster_t *c, uint32_t first, uint32_t stride,
                                  uint32_t count, uint32_t k_end, uint32_t node)
{
    double bw = INFINITY;
    uint32_t other;
    for (uint32_t k = 0; k < k_end;) {
        k += members_in_node(c, first, stride, count, k, &other);
        bw = fmin(bw, node_link_bw(c, node, other));
    }
    return bw;
}

double tsl_cluster_group_bw(const tsl_cluster_t *c, uint32_t first, uint32_t stride, uint32_t count)
{
    if (count <= 1)
        return INFINITY;
    if (stride == 0 || first + (uint64_t)(count - 1) * stride >= c->n_devices)
        return 0;
    double bw = INFINITY;
    for (uint32_t k = 0; k < count;) {
        uint32_t node, in = members_in_node(c, first, stride, count, k, &node);
        if (in >= 2)
            bw = fmin(bw, c->nodes[node].intra_bw);
        if (k > 0)
            bw = fmin(bw, c->inter_bw_matrix || c->nvl_domain_nodes > 1
                              ? slowest_pair_before(c, first, stride, count, k, node)
                              : c->inter_bw);
        k += in;
    }
    return bw;
}

double tsl_cluster_dim_bw(const tsl_cluster_t *c, uint32_t block_first, uint32_t block_size,
                          uint32_t stride, uint32_t count)
{
    if (count <= 1)
        return INFINITY;
    uint64_t span = (uint64_t)stride * count;
    if (stride == 0 || block_size % span != 0 || (uint64_t)block_first + block_size > c->n_devices)
        return 0;
    double bw = INFINITY;
    for (uint64_t base = block_first; base < (uint64_t)block_first + block_size; base += span)
        for (uint32_t i = 0; i < stride; i++)
            bw = fmin(bw, tsl_cluster_group_bw(c, (uint32_t)base + i, stride, count));
    return bw;
}

/* ---- description ---- */

static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*len < cap ? buf + *len : NULL, *len < cap ? cap - *len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len += (size_t)n;
}

static void describe_nodes(const tsl_cluster_t *c, char *buf, size_t cap, size_t *len)
{
    for (uint32_t i = 0; i < c->n_nodes;) {
        uint32_t j = i + 1;
        while (j < c->n_nodes && c->nodes[j].n_gpus == c->nodes[i].n_gpus &&
               c->nodes[j].gpu_type == c->nodes[i].gpu_type)
            j++;
        const tsl_gpu_spec_t *g = &c->gpu_types[c->nodes[i].gpu_type];
        append(buf, cap, len, "%s%u node%s x %u %s (%.0f GiB)", i ? " + " : "", j - i,
               j - i == 1 ? "" : "s", c->nodes[i].n_gpus, g->name,
               (double)g->mem_bytes / (1024.0 * 1024.0 * 1024.0));
        i = j;
    }
}

static void describe_range(char *buf, size_t cap, size_t *len, const char *what, double lo,
                           double hi)
{
    if (lo == hi)
        append(buf, cap, len, ", %s %.3g GB/s", what, lo / 1e9);
    else
        append(buf, cap, len, ", %s %.3g-%.3g GB/s", what, lo / 1e9, hi / 1e9);
}

/* NICs per node and the NVLink domain, only where they are not the default (one
 * NIC, the node), so that descriptions of plain clusters read as before. */
static void describe_topology(const tsl_cluster_t *c, char *buf, size_t cap, size_t *len)
{
    uint32_t lo = UINT32_MAX, hi = 0;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        lo = c->nodes[i].n_nics < lo ? c->nodes[i].n_nics : lo;
        hi = c->nodes[i].n_nics > hi ? c->nodes[i].n_nics : hi;
    }
    if (lo == hi && hi > 1)
        append(buf, cap, len, ", %u NICs/node", hi);
    else if (lo != hi)
        append(buf, cap, len, ", %u-%u NICs/node", lo, hi);
    if (c->nvl_domain_nodes > 1)
        append(buf, cap, len, ", NVLink domain %u nodes", c->nvl_domain_nodes);
}

size_t tsl_cluster_describe(const tsl_cluster_t *c, char *buf, size_t cap)
{
    size_t len = 0;
    if (cap > 0)
        buf[0] = '\0';
    if (c->n_nodes == 0) {
        append(buf, cap, &len, "empty cluster");
        return len;
    }
    describe_nodes(c, buf, cap, &len);
    double lo = INFINITY, hi = 0;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        lo = fmin(lo, c->nodes[i].intra_bw);
        hi = fmax(hi, c->nodes[i].intra_bw);
    }
    describe_range(buf, cap, &len, "intra", lo, hi);
    if (c->n_nodes < 2)
        return len;
    lo = hi = c->inter_bw; /* O(nodes²) only with a matrix (≤ 2048 nodes) */
    if (c->inter_bw_matrix != NULL)
        lo = INFINITY, hi = 0;
    for (uint32_t a = 0; c->inter_bw_matrix != NULL && a < c->n_nodes; a++)
        for (uint32_t b = a + 1; b < c->n_nodes; b++) {
            lo = fmin(lo, pair_bw(c, a, b));
            hi = fmax(hi, pair_bw(c, a, b));
        }
    describe_range(buf, cap, &len, "inter", lo, hi);
    describe_topology(c, buf, cap, &len);
    return len;
}

/* ---- re-placing: a copy with its nodes in another order ---- */

/* order[0 .. n-1] names each of the n nodes once: a given plan's order is read
 * as given, and an index past the nodes would be read as one. */
static int permutation_check(const uint16_t *order, uint32_t n, tsl_err_t *err)
{
    uint8_t *seen = calloc(n ? n : 1, 1);
    if (seen == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "node_order: out of memory");
    int rc = 0;
    for (uint32_t k = 0; k < n && rc == 0; k++) {
        if (order[k] >= n)
            rc = tsl_err_set(err, "node_order[%u]: node %u, but the cluster has nodes 0..%u", k,
                             order[k], n - 1);
        else if (seen[order[k]]++)
            rc = tsl_err_set(err,
                             "node_order[%u]: node %u named twice; give each of the %u nodes "
                             "once",
                             k, order[k], n);
    }
    free(seen);
    return rc;
}

int tsl_cluster_permute(const tsl_cluster_t *c, const uint16_t *order, tsl_cluster_t *out,
                        tsl_err_t *err)
{
    tsl_cluster_init(out);
    if (permutation_check(order, c->n_nodes, err) != 0)
        return -1;
    for (uint32_t t = 0; t < c->n_gpu_types; t++) {
        uint32_t idx;
        if (tsl_cluster_add_gpu_type(out, &c->gpu_types[t], &idx, err) != 0)
            goto fail;
        /* the measured figures and corrections follow their GPU type */
        out->gpu_profile[idx] = c->gpu_profile[t];
        out->gpu_calib[idx] = c->gpu_calib[t];
    }
    if (reserve_nodes(out, c->n_nodes, err) != 0)
        goto fail;
    for (uint32_t k = 0; k < c->n_nodes; k++)
        if (tsl_cluster_add_node(out, &c->nodes[order[k]], err) != 0)
            goto fail;
    out->inter_bw = c->inter_bw;
    out->inter_a2a_ratio = c->inter_a2a_ratio;
    out->inter_flex_ratio = c->inter_flex_ratio;
    out->overlap_slowdown = c->overlap_slowdown;
    /* domains stay positional: a permutation that moves nodes between domains
     * re-places stages onto other racks (search_placement permutes whole nodes) */
    out->nvl_domain_nodes = c->nvl_domain_nodes;
    for (uint32_t a = 0; c->inter_bw_matrix && a < c->n_nodes; a++)
        for (uint32_t b = a + 1; b < c->n_nodes; b++)
            if (tsl_cluster_set_pair_bw(
                    out, a, b, c->inter_bw_matrix[order[a] * c->n_nodes + order[b]], err) != 0)
                goto fail;
    if (tsl_cluster_finish(out, err) != 0)
        goto fail;
    return 0;
fail:
    tsl_cluster_free(out);
    return -1;
}
