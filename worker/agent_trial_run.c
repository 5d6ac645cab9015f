/*
 * agent_trial_run.c — the child's side of a trial rank (agent.h): the rank's model
 * and plan from the assignment's document (exec_doc.h), its device ops and comm
 * ops, the stage executor's run, and the lines the agent reads from the pipe.
 *
 * Pairs: cpu device ops move host memory and go with tcp (or, alone, loopback);
 * cuda goes with nccl. Rendezvous: tcp rank 0 listens on the agent's address and
 * port, the others on rank 0's "host:port" from the assignment (every rank
 * listens on port + rank of that host: comm_tcp's scheme, so tcp ranks share one
 * host); nccl rank 0 makes the unique id and writes it first, the others take it
 * from the assignment. Waiting for peers is bounded by the rank's timeout.
 * A link probe (kind "link") makes the same device and comm ops and hands them
 * to agent_trial_link.c instead of the executor.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "plan.h"
#include "exec.h"
#include "exec_doc.h"

/* "host:port" (the last colon splits) into host[cap] and *port. */
static int split_rendezvous(const char *rv, char *host, size_t cap, int *port, tsl_err_t *err)
{
    const char *colon = strrchr(rv, ':');
    char *end = NULL;
    long p = colon ? strtol(colon + 1, &end, 10) : 0;
    if (!colon || colon == rv || (size_t)(colon - rv) >= cap || !end || *end || p <= 0 || p > 65535)
        return tsl_err_set(err, "rendezvous: '%s' is not host:port", rv);
    memcpy(host, rv, (size_t)(colon - rv));
    host[colon - rv] = '\0';
    *port = (int)p;
    return 0;
}

static int nccl_comm(const tsl_agent_assignment_t *a, int fd, tsl_commops_t **out, tsl_err_t *err)
{
    uint8_t id[TSL_NCCL_ID_BYTES];
    if (a->rank == 0) {
        char hex[2 * TSL_NCCL_ID_BYTES + 1];
        if (tsl_comm_nccl_unique_id(id, err))
            return -1;
        for (int i = 0; i < TSL_NCCL_ID_BYTES; i++)
            snprintf(hex + 2 * i, 3, "%02x", id[i]);
        if (tsl_agent_put_line(fd, "nccl-id", "%s", hex))
            return tsl_err_set(err, "nccl: the agent's pipe closed");
    } else if (!a->has_nccl_id) {
        return tsl_err_set(err, "assignment: comm nccl, rank %u: no nccl_unique_id (128 bytes)",
                           a->rank);
    } else {
        memcpy(id, a->nccl_id, sizeof id);
    }
    return tsl_comm_nccl_create(id, (int)a->rank, (int)a->world_size, (int)a->device_index, out,
                                err);
}

static int make_comm(const tsl_agent_trial_opts_t *o, const tsl_agent_assignment_t *a, int fd,
                     tsl_loopback_world_t **world, tsl_commops_t **out, tsl_err_t *err)
{
    if (!strcmp(a->comm, "nccl"))
        return nccl_comm(a, fd, out, err);
    if (strcmp(a->comm, "tcp"))
        return tsl_err_set(err, "assignment: comm '%s': give tcp or nccl", a->comm);
    if (a->world_size == 1) /* nobody to reach: no port taken */
        return tsl_comm_loopback_world(1, world, err) || tsl_comm_loopback_rank(*world, 0, out, err)
                   ? -1
                   : 0;
    char host[160];
    int port = (int)o->port;
    snprintf(host, sizeof host, "%s", o->address);
    if (a->rank > 0 && split_rendezvous(a->rendezvous, host, sizeof host, &port, err))
        return tsl_err_prefix(err, "assignment: rank %u", a->rank);
    double wait = o->timeout_s > 0 ? o->timeout_s : 600;
    return tsl_comm_tcp_create(host, port, (int)a->rank, (int)a->world_size, wait, out, err);
}

static int check_pair(const tsl_agent_assignment_t *a, tsl_err_t *err)
{
    bool cpu = !strcmp(a->devops, "cpu"), cuda = !strcmp(a->devops, "cuda");
    if (!cpu && !cuda)
        return tsl_err_set(err, "assignment: devops '%s': give cpu or cuda", a->devops);
    if (cpu != !strcmp(a->comm, "tcp"))
        return tsl_err_setc(
            err, TSL_E_UNSUPPORTED,
            "assignment: devops %s with comm %s: cpu pairs with tcp, cuda with nccl", a->devops,
            a->comm);
    return 0;
}

/* The rank's work from the document, checked against the assignment; the plan's MoE
 * capacity factor (0: dropless) into the run's options, as it was priced. */
static int load_rank(const tsl_agent_assignment_t *a, tsl_exec_rank_t *r, tsl_exec_opts_t *eo,
                     tsl_err_t *err)
{
    tsl_model_t m;
    tsl_plan_t *p = malloc(sizeof *p);
    if (!p)
        return tsl_err_setc(err, TSL_E_NOMEM, "out of memory");
    int rc = tsl_exec_doc_load(a->document, a->plan_index, &m, p, err);
    if (rc == 0) {
        if (a->world_size != p->n_devices)
            rc = tsl_err_set(err, "assignment: world_size %u, but plan %u has %u devices",
                             a->world_size, a->plan_index, p->n_devices);
        else {
            tsl_plan_trial_form(p); /* what tesseld checked and holds it to */
            rc = tsl_exec_rank_from_plan(p, &m, a->rank, r, err);
        }
        eo->moe_capacity = (float)p->moe_capacity;
        tsl_model_free(&m);
    }
    free(p);
    return rc;
}

int tsl_agent_trial_child(const tsl_agent_trial_opts_t *o, const tsl_agent_assignment_t *a, int fd)
{
    tsl_err_t err = {0};
    tsl_exec_env_t e = {0};
    tsl_exec_opts_t eo;
    tsl_exec_report_t rep;
    int rc = -1;
    tsl_exec_opts_default(&eo);
    eo.warmup = a->warmup;
    if (a->iterations)
        eo.iters = a->iterations;
    eo.seed = a->seed;
    uint64_t limit = !strcmp(a->devops, "cpu") ? o->cpu_memory_bytes : 0;
    if (!strcmp(a->kind, "link")) { /* a link probe: no plan to load */
        if (!check_pair(a, &err) &&
            !tsl_devops_create(a->devops, (int)a->device_index, limit, &e.dev, &err) &&
            !make_comm(o, a, fd, &e.world, &e.comm, &err))
            rc = tsl_agent_link_probe(a, e.dev, e.comm, limit, fd, &err);
        goto out;
    }
    if (check_pair(a, &err) || load_rank(a, &e.rank, &eo, &err) ||
        tsl_devops_create(a->devops, (int)a->device_index, limit, &e.dev, &err) ||
        make_comm(o, a, fd, &e.world, &e.comm, &err) ||
        tsl_exec_run(&e.rank, &eo, e.dev, e.comm, &rep, &err))
        goto out;
    char json[1024];
    tsl_exec_report_json(&rep, json, sizeof json);
    rc = tsl_agent_put_line(fd, "report", "%s", json) ? -1 : 0;
out:
    if (rc && err.msg[0])
        tsl_agent_put_line(fd, "error", "%s", err.msg);
    tsl_exec_env_end(&e);
    return rc ? 1 : 0;
}
