/*
 * trial_sched.c — the workers and GPUs of a trial's ranks (trial_sched.h).
 */
#include "trial_sched.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cluster_json.h"
#include "export.h"
#include "plan.h"

void tsl_sched_need_free(tsl_sched_need_t *need)
{
    free(need->rank_type);
    free(need->hosts);
    free(need->host_gpus);
    memset(need, 0, sizeof *need);
}

/* "registered: a,b" clusters: their nodes' names and GPU counts. */
static int registered_hosts(const json_t *cl, tsl_sched_need_t *need, tsl_err_t *err)
{
    const json_t *nodes = json_object_get(cl, "nodes");
    size_t n = json_array_size(nodes), i;
    const json_t *node;
    need->hosts = calloc(n ? n : 1, sizeof *need->hosts);
    need->host_gpus = calloc(n ? n : 1, sizeof *need->host_gpus);
    if (!need->hosts || !need->host_gpus)
        return tsl_err_setc(err, TSL_E_NOMEM, "trial: out of memory");
    json_array_foreach(nodes, i, node)
    {
        const char *name = json_string_value(json_object_get(node, "name"));
        json_int_t gpus = json_integer_value(json_object_get(node, "gpus"));
        if (!name || gpus <= 0)
            return tsl_err_setc(err, TSL_E_INTERNAL,
                                "trial: the stored registered cluster has a node without name "
                                "or gpus (nodes[%zu])",
                                i);
        snprintf(need->hosts[need->n_hosts], sizeof need->hosts[0], "%s", name);
        need->host_gpus[need->n_hosts++] = (uint32_t)gpus;
    }
    return 0;
}

/* The plan's placement (plan.h, node_order): its nodes in the order its stages
 * take them; NULL when it has none (or it does not fit the cluster). */
static uint16_t *node_order(const json_t *plan, uint32_t n_nodes)
{
    const json_t *o = json_object_get(plan, "node_order");
    size_t n = json_array_size(o), i;
    const json_t *v;
    uint16_t *order = n == n_nodes && n > 0 ? calloc(n, sizeof *order) : NULL;
    json_array_foreach(o, i, v)
    {
        json_int_t k = json_integer_value(v);
        if (!order || k < 0 || k >= (json_int_t)n_nodes) {
            free(order);
            return NULL;
        }
        order[i] = (uint16_t)k;
    }
    return order;
}

/* The registered hosts in the plan's node order. */
static int reorder_hosts(tsl_sched_need_t *need, const uint16_t *order, tsl_err_t *err)
{
    char(*h)[128] = calloc(need->n_hosts, sizeof *h);
    uint32_t *g = calloc(need->n_hosts, sizeof *g);
    if (!h || !g) {
        free(h);
        free(g);
        return tsl_err_setc(err, TSL_E_NOMEM, "trial: out of memory");
    }
    for (uint32_t j = 0; j < need->n_hosts; j++) {
        memcpy(h[j], need->hosts[order[j]], sizeof h[j]);
        g[j] = need->host_gpus[order[j]];
    }
    free(need->hosts);
    free(need->host_gpus);
    need->hosts = h;
    need->host_gpus = g;
    return 0;
}

/* need's rank types (and registered hosts) from the cluster, in the plan's node order. */
static int fill_need(const tsl_cluster_t *given, const json_t *cl, const json_t *plan,
                     tsl_sched_need_t *need, tsl_err_t *err)
{
    tsl_cluster_t perm;
    const tsl_cluster_t *c = given;
    uint16_t *order = node_order(plan, given->n_nodes);
    tsl_cluster_init(&perm);
    if (order && tsl_cluster_permute(given, order, &perm, err) == 0)
        c = &perm;
    int rc = 0;
    if (!(need->rank_type = calloc(need->world ? need->world : 1, sizeof *need->rank_type)))
        rc = tsl_err_setc(err, TSL_E_NOMEM, "trial: out of memory");
    for (uint32_t r = 0; rc == 0 && r < need->world; r++)
        need->rank_type[r] = *tsl_cluster_device_gpu(c, r);
    const char *name = json_string_value(json_object_get(cl, "name"));
    if (rc == 0 && name && strncmp(name, "registered:", 11) == 0)
        rc = registered_hosts(cl, need, err);
    if (rc == 0 && order && need->n_hosts == given->n_nodes)
        rc = reorder_hosts(need, order, err);
    tsl_cluster_free(&perm);
    free(order);
    return rc;
}

int tsl_sched_need_from_request(const char *request_json, const json_t *plan, uint32_t world,
                                tsl_sched_need_t *need, tsl_err_t *err)
{
    memset(need, 0, sizeof *need);
    json_t *req = json_loads(request_json ? request_json : "", 0, NULL);
    const json_t *cl = json_object_get(req, "cluster");
    tsl_cluster_t c;
    int rc = -1;
    tsl_cluster_init(&c);
    need->world = world;
    int named = req ? tsl_cluster_from_request(req, &c, err) : 1;
    if (named == 1)
        tsl_err_setc(err, TSL_E_INTERNAL, "trial: the stored request names no cluster");
    else if (named != 0)
        tsl_err_prefix(err, "trial: the stored request's cluster");
    else if (c.n_devices < world)
        tsl_err_setc(err, TSL_E_INTERNAL, "trial: the plan uses %u devices, its cluster has %u",
                     world, c.n_devices);
    else
        rc = fill_need(&c, cl, plan, need, err);
    tsl_cluster_free(&c);
    json_decref(req);
    if (rc != 0)
        tsl_sched_need_free(need);
    return rc;
}

static bool in_nodes(const char *host, const char *const *nodes, size_t n_nodes)
{
    if (n_nodes == 0)
        return true;
    for (size_t i = 0; i < n_nodes; i++)
        if (strcmp(nodes[i], host) == 0)
            return true;
    return false;
}

static bool usable(const tsl_reg_worker_t *w, bool sim, const char *const *nodes, size_t n_nodes)
{
    return w->simulated == sim && w->state && strcmp(w->state, "online") == 0 &&
           in_nodes(w->hostname, nodes, n_nodes);
}

static uint32_t matching_devices(const tsl_reg_worker_t *w, const tsl_gpu_spec_t *type)
{
    uint32_t n = 0;
    for (uint32_t d = 0; d < w->n_devices; d++)
        n += tsl_gpu_model_matches(w->devices[d].model, w->devices[d].memory_bytes, type);
    return n;
}

/* Worker by worker, device by device, over the usable workers of one kind. */
static bool pick_kind(const tsl_sched_need_t *need, const tsl_reg_worker_t *ws, size_t n, bool sim,
                      const char *const *nodes, size_t n_nodes, tsl_sched_pick_t *out)
{
    bool *used = calloc(n ? n : 1, sizeof *used);
    uint32_t r = 0;
    while (used && r < need->world) {
        size_t w = 0;
        while (w < n && (used[w] || !usable(&ws[w], sim, nodes, n_nodes) ||
                         matching_devices(&ws[w], &need->rank_type[r]) == 0))
            w++;
        if (w == n)
            break;
        used[w] = true;
        for (uint32_t d = 0; d < ws[w].n_devices && r < need->world; d++) {
            const tsl_reg_device_t *dev = &ws[w].devices[d];
            if (tsl_gpu_model_matches(dev->model, dev->memory_bytes, &need->rank_type[r]))
                out[r++] = (tsl_sched_pick_t){.worker = (uint32_t)w, .device_index = dev->index};
        }
    }
    free(used);
    return r == need->world;
}

/* "…; online matching workers have 2: w-… (host a, 2 GPUs), ..." */
static void explain(const tsl_sched_need_t *need, const tsl_reg_worker_t *ws, size_t n,
                    const char *const *nodes, size_t n_nodes, char *why, size_t cap)
{
    const tsl_gpu_spec_t *type = &need->rank_type[0];
    uint32_t have[2] = {0, 0};
    for (size_t w = 0; w < n; w++)
        for (int sim = 0; sim < 2; sim++)
            if (usable(&ws[w], sim, nodes, n_nodes))
                have[sim] += matching_devices(&ws[w], type);
    int best = have[1] > have[0];
    int at =
        snprintf(why, cap, "the plan needs %u GPUs of type %s; online matching %sworkers%s have %u",
                 need->world, type->name, best ? "simulated " : "", n_nodes ? " among --nodes" : "",
                 have[best]);
    size_t listed = 0;
    for (size_t w = 0; w < n && at > 0 && (size_t)at < cap; w++) {
        uint32_t m = usable(&ws[w], best, nodes, n_nodes) ? matching_devices(&ws[w], type) : 0;
        if (m == 0)
            continue;
        if (listed++ == 4) {
            at += snprintf(why + at, cap - (size_t)at, ", ...");
            break;
        }
        at += snprintf(why + at, cap - (size_t)at, "%s %s (host %s, %u GPUs)",
                       listed == 1 ? ":" : ",", ws[w].worker_id, ws[w].hostname, m);
    }
    if (have[0] && have[1] && have[0] + have[1] >= need->world && (size_t)at < cap)
        snprintf(why + at, cap - (size_t)at,
                 " (simulated and real workers are never mixed in one trial)");
}

/* Registered plans: the named hosts in order, their first GPUs. */
static int pick_registered(const tsl_sched_need_t *need, const tsl_reg_worker_t *ws, size_t n,
                           const char *const *nodes, size_t n_nodes, tsl_sched_pick_t *out,
                           bool *simulated, char *why, size_t cap)
{
    uint32_t r = 0;
    int kind = -1;
    for (uint32_t h = 0; h < need->n_hosts && r < need->world; h++) {
        size_t w = 0;
        while (w < n && !(strcmp(ws[w].hostname, need->hosts[h]) == 0 && ws[w].state &&
                          strcmp(ws[w].state, "online") == 0))
            w++;
        if (w == n || !in_nodes(need->hosts[h], nodes, n_nodes)) {
            snprintf(why, cap,
                     "the plan was made on the registered node '%s', which has no online "
                     "worker%s now",
                     need->hosts[h], w < n ? " among --nodes" : "");
            return -1;
        }
        if (ws[w].n_devices < need->host_gpus[h]) {
            snprintf(why, cap, "the plan needs %u GPUs on '%s'; its worker %s has %u",
                     need->host_gpus[h], need->hosts[h], ws[w].worker_id, ws[w].n_devices);
            return -1;
        }
        if (kind >= 0 && kind != (int)ws[w].simulated) {
            snprintf(why, cap,
                     "the plan's nodes mix simulated and real workers ('%s'); a trial never "
                     "mixes them",
                     need->hosts[h]);
            return -1;
        }
        kind = ws[w].simulated;
        for (uint32_t d = 0; d < need->host_gpus[h] && r < need->world; d++)
            out[r++] =
                (tsl_sched_pick_t){.worker = (uint32_t)w, .device_index = ws[w].devices[d].index};
    }
    if (r < need->world) {
        snprintf(why, cap, "the plan needs %u GPUs; its registered nodes have %u", need->world, r);
        return -1;
    }
    *simulated = kind == 1;
    return 0;
}

int tsl_sched_pick(const tsl_sched_need_t *need, const tsl_reg_worker_t *workers, size_t n_workers,
                   const char *const *nodes, size_t n_nodes, tsl_sched_pick_t *out, bool *simulated,
                   char *why, size_t why_cap)
{
    why[0] = '\0';
    if (need->world == 0) {
        snprintf(why, why_cap, "the plan has no devices");
        return -1;
    }
    if (need->n_hosts > 0)
        return pick_registered(need, workers, n_workers, nodes, n_nodes, out, simulated, why,
                               why_cap);
    for (int sim = 0; sim < 2; sim++) {
        if (pick_kind(need, workers, n_workers, sim, nodes, n_nodes, out)) {
            *simulated = sim;
            return 0;
        }
    }
    explain(need, workers, n_workers, nodes, n_nodes, why, why_cap);
    return -1;
}

/* ---- which plans of a batch the executor runs ---------------------------------------------- */

/* Plan i of doc as a trial runs it: 0 it runs, 1 not (why), -1 out of memory. The
 * mamba layers are the model's (the document's head counts them), so a hybrid
 * model's every plan is refused alike. */
static int plan_scope(const json_t *doc, uint32_t i, char *why, size_t cap, tsl_err_t *err)
{
    const json_t *p = i == 0 ? json_object_get(doc, "plan")
                             : json_array_get(json_object_get(doc, "alternatives"), i - 1);
    tsl_err_t e = {0};
    tsl_plan_t *plan = malloc(sizeof *plan); /* large: not on the stack */
    if (plan == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "trial: out of memory");
    int rc = tsl_plan_from_json(p, plan, &e);
    if (rc == 0) {
        tsl_plan_trial_form(plan);
        rc = tsl_plan_exec_scope(plan, &e);
    }
    if (rc == 0)
        rc = tsl_exec_scope_mamba((uint32_t)json_integer_value(json_object_get(
                                      json_object_get(doc, "model"), "mamba_layers")),
                                  &e);
    free(plan);
    if (rc == 0)
        return 0;
    snprintf(why, cap, "plan %u: %.380s", i, e.msg[0] ? e.msg : "not a plan object");
    return 1;
}

int tsl_sched_batch_scope(const json_t *doc, uint32_t n, tsl_sched_scope_t *scope, uint32_t *n_runs,
                          tsl_err_t *err)
{
    *n_runs = 0;
    for (uint32_t i = 0; i < n; i++) {
        int rc = plan_scope(doc, i, scope[i].why, sizeof scope[i].why, err);
        if (rc < 0)
            return -1;
        scope[i].runs = rc == 0;
        scope[i].unplaced = false;
        if (rc == 0)
            scope[i].why[0] = '\0';
        *n_runs += rc == 0;
    }
    return 0;
}

int tsl_sched_unplaced(tsl_sched_scope_t *scope, uint32_t i, const char *why, uint32_t *n_runs,
                       char *out, size_t cap)
{
    if (i == 0) { /* the plan asked for: only more workers make it run */
        snprintf(out, cap, "%s", why);
        return 1;
    }
    scope[i].runs = false;
    scope[i].unplaced = true;
    snprintf(scope[i].why, sizeof scope[i].why, "plan %u: no online workers fit it: %.*s", i,
             (int)(sizeof scope[i].why - 48), why);
    if (*n_runs > 0)
        (*n_runs)--;
    return 0;
}

void tsl_sched_skip_reason(const tsl_sched_scope_t *scope, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s", scope->why, scope->unplaced ? "" : "; the executor cannot try it");
}

void tsl_sched_none_runs(const char *fp, const tsl_sched_scope_t *scope, uint32_t n, char *out,
                         size_t cap)
{
    bool unplaced = false;
    for (uint32_t i = 0; i < n; i++)
        unplaced |= scope[i].unplaced;
    if (n == 1) { /* the one plan asked for: as a single plan was always refused */
        snprintf(out, cap, "plan %s: %s; the executor cannot try it", fp, scope[0].why);
        return;
    }
    size_t used =
        unplaced ? (size_t)snprintf(out, cap,
                                    "plan %s: no plan of the %u of the batch can be "
                                    "tried now: ",
                                    fp, n)
                 : (size_t)snprintf(out, cap,
                                    "plan %s: the executor cannot try any of the %u plans of the "
                                    "batch: ",
                                    fp, n);
    for (uint32_t i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? "; " : "", scope[i].why);
}
