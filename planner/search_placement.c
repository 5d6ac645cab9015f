/*
 * search_placement.c — which node group takes which stage on a heterogeneous
 * cluster (AMP 3.6). Stages and their parallel groups are laid over the devices
 * in node order, so re-ordering the nodes is re-placing the plan. A handful of
 * orders worth trying is generated; the search costs each and keeps the best.
 */
#include <stdlib.h>
#include <string.h>

#include "search_internal.h"

static double node_flops(const tsl_cluster_t *c, uint32_t n)
{
    const tsl_gpu_spec_t *g = &c->gpu_types[c->nodes[n].gpu_type];
    return g->peak_flops * g->efficiency * c->nodes[n].n_gpus;
}

static double pair_bw(const tsl_cluster_t *c, uint32_t a, uint32_t b)
{
    return c->inter_bw_matrix ? c->inter_bw_matrix[a * c->n_nodes + b] : c->inter_bw;
}

/* Fastest nodes first, ties by index. Insertion sort: qsort has no context
 * argument and the planner keeps no globals; n ≤ 1024. */
static void sort_by_flops_desc(const tsl_cluster_t *c, uint16_t *o, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        uint16_t v = o[i];
        double fv = node_flops(c, v);
        uint32_t j = i;
        while (j > 0 &&
               (node_flops(c, o[j - 1]) < fv || (node_flops(c, o[j - 1]) == fv && o[j - 1] > v))) {
            o[j] = o[j - 1];
            j--;
        }
        o[j] = v;
    }
}

/* Greedy chain: start at the best-connected node, then always the node with the
 * fastest link to the previous one — neighbouring stages and groups share the
 * good links, the slow ones end up between the fewest neighbours. */
static void order_by_links(const tsl_cluster_t *c, uint16_t *order)
{
    uint32_t n = c->n_nodes, start = 0;
    double best = -1;
    for (uint32_t a = 0; a < n; a++) {
        double sum = 0;
        for (uint32_t b = 0; b < n; b++)
            sum += a == b ? 0 : pair_bw(c, a, b);
        if (sum > best) {
            best = sum;
            start = a;
        }
    }
    bool *used = calloc(n, sizeof(bool));
    if (used == NULL) {
        for (uint32_t k = 0; k < n; k++)
            order[k] = (uint16_t)k;
        return;
    }
    order[0] = (uint16_t)start;
    used[start] = true;
    for (uint32_t k = 1; k < n; k++) {
        uint32_t next = 0;
        double bw = -1;
        for (uint32_t b = 0; b < n; b++) {
            if (!used[b] && pair_bw(c, order[k - 1], b) > bw) {
                bw = pair_bw(c, order[k - 1], b);
                next = b;
            }
        }
        order[k] = (uint16_t)next;
        used[next] = true;
    }
    free(used);
}

static bool seen(uint16_t (*orders)[TSL_PLAN_MAX_ORDER_NODES], uint32_t count, uint32_t n)
{
    for (uint32_t i = 0; i < count; i++)
        if (memcmp(orders[i], orders[count], n * sizeof(uint16_t)) == 0)
            return true;
    return false;
}

uint32_t tsl_placement_orders(const tsl_cluster_t *c, uint16_t (*orders)[TSL_PLAN_MAX_ORDER_NODES],
                              uint32_t cap)
{
    uint32_t n = c->n_nodes, count = 0;
    for (int kind = 0; kind < 4 && count < cap; kind++) {
        uint16_t *o = orders[count];
        for (uint32_t k = 0; k < n; k++)
            o[k] = (uint16_t)k;
        if (kind == 1 || kind == 2) {
            sort_by_flops_desc(c, o, n);
            for (uint32_t k = 0; kind == 2 && k < n / 2; k++) {
                uint16_t t = o[k];
                o[k] = o[n - 1 - k];
                o[n - 1 - k] = t;
            }
        } else if (kind == 3) {
            order_by_links(c, o);
        }
        if (!seen(orders, count, n))
            count++;
    }
    return count;
}
