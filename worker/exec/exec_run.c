/*
 * tessel-exec-run — try the stage executor from flags: a GPT-style block stack, a
 * uniform plan (pp stages of tp × dp devices), every rank run for W + N iterations,
 * one report per rank (docs/executor.md).
 *
 *   loopback  all ranks as threads of this process;
 *   tcp       all ranks as forked processes on 127.0.0.1:--port.., or only --rank R
 *             (then start the other ranks yourself, e.g. on other machines with --host);
 *   nccl      one rank per process and GPU: --rank R, --device D, and --nccl-id FILE,
 *             which rank 0 writes and the others wait for.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec.h"

typedef struct run_cfg {
    uint32_t layers, hidden, heads, seq, ffn, vocab;
    tsl_exec_plan_spec_t spec;
    tsl_exec_opts_t opts;
    const char *devops, *comm, *host, *nccl_id;
    int port, rank, device;
    uint64_t mem_limit;
    bool json;
    tsl_model_t model;
    tsl_plan_t plan;
    tsl_loopback_world_t *world;
} run_cfg_t;

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: tessel-exec-run [--layers N] [--hidden H] [--heads A] [--seq S] [--ffn F]\n"
        "         [--vocab V] [--mbs B] [--micro M] [--pp P] [--dp D] [--sdp] [--tp T]\n"
        "         [--ckpt] [--devops cpu|cuda] [--comm loopback|tcp|nccl] [--warmup W]\n"
        "         [--iters N] [--seed S] [--sgd] [--lr X] [--no-overlap] [--mem-limit BYTES]\n"
        "         [--rank R] [--host ADDR] [--port P] [--device D] [--nccl-id FILE] [--json]\n"
        "  --mbs is the plan's micro-batch (samples over the whole data group); --vocab > 0\n"
        "  adds a token embedding and an LM head with cross-entropy (else MSE on the output).\n");
}

static int parse(run_cfg_t *c, int argc, char **argv)
{
    static const struct option lo[] = {
        {"layers", 1, 0, 'L'},    {"hidden", 1, 0, 'H'}, {"heads", 1, 0, 'A'},
        {"seq", 1, 0, 'S'},       {"ffn", 1, 0, 'F'},    {"vocab", 1, 0, 'V'},
        {"mbs", 1, 0, 'b'},       {"micro", 1, 0, 'm'},  {"pp", 1, 0, 'p'},
        {"dp", 1, 0, 'd'},        {"sdp", 0, 0, 'z'},    {"tp", 1, 0, 't'},
        {"ckpt", 0, 0, 'c'},      {"devops", 1, 0, 'o'}, {"comm", 1, 0, 'x'},
        {"warmup", 1, 0, 'w'},    {"iters", 1, 0, 'n'},  {"seed", 1, 0, 's'},
        {"sgd", 0, 0, 'g'},       {"lr", 1, 0, 'l'},     {"no-overlap", 0, 0, 'O'},
        {"mem-limit", 1, 0, 'M'}, {"rank", 1, 0, 'r'},   {"host", 1, 0, 'h'},
        {"port", 1, 0, 'P'},      {"device", 1, 0, 'D'}, {"nccl-id", 1, 0, 'I'},
        {"json", 0, 0, 'j'},      {"help", 0, 0, '?'},   {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        unsigned long v = optarg ? strtoul(optarg, NULL, 10) : 0;
        switch (ch) {
        case 'L': c->layers = (uint32_t)v; break;
        case 'H': c->hidden = (uint32_t)v; break;
        case 'A': c->heads = (uint32_t)v; break;
        case 'S': c->seq = (uint32_t)v; break;
        case 'F': c->ffn = (uint32_t)v; break;
        case 'V': c->vocab = (uint32_t)v; break;
        case 'b': c->spec.micro_batch = (uint32_t)v; break;
        case 'm': c->spec.n_micro = (uint32_t)v; break;
        case 'p': c->spec.pp = (uint32_t)v; break;
        case 'd': c->spec.dp = (uint32_t)v; break;
        case 'z': c->spec.sdp = true; break;
        case 't': c->spec.tp = (uint32_t)v; break;
        case 'c': c->spec.ckpt = true; break;
        case 'o': c->devops = optarg; break;
        case 'x': c->comm = optarg; break;
        case 'w': c->opts.warmup = (uint32_t)v; break;
        case 'n': c->opts.iters = (uint32_t)v; break;
        case 's': c->opts.seed = strtoull(optarg, NULL, 10); break;
        case 'g': c->opts.optim = TSL_EXEC_SGD; break;
        case 'l': c->opts.lr = strtof(optarg, NULL); break;
        case 'O': c->opts.no_overlap = true; break;
        case 'M': c->mem_limit = strtoull(optarg, NULL, 10); break;
        case 'r': c->rank = (int)v; break;
        case 'h': c->host = optarg; break;
        case 'P': c->port = (int)v; break;
        case 'D': c->device = (int)v; break;
        case 'I': c->nccl_id = optarg; break;
        case 'j': c->json = true; break;
        default: usage(ch == '?' && !optopt ? stdout : stderr); return -1;
        }
    }
    return 0;
}

static int build(run_cfg_t *c, tsl_err_t *err)
{
    tsl_layer_t l = {.kind = TSL_LAYER_ENCODER,
                     .seq_len = c->seq,
                     .hidden = c->hidden,
                     .ffn_hidden = c->ffn ? c->ffn : 4 * c->hidden,
                     .heads = c->heads};
    tsl_model_init(&c->model, "exec-gpt");
    if (c->vocab) {
        tsl_layer_t emb = {
            .kind = TSL_LAYER_EMBEDDING, .seq_len = c->seq, .hidden = c->hidden, .vocab = c->vocab};
        if (tsl_model_add(&c->model, &emb, err))
            return -1;
    }
    if (tsl_model_add_n(&c->model, &l, c->layers, err))
        return -1;
    if (c->vocab) {
        tsl_layer_t head = {
            .kind = TSL_LAYER_HEAD, .seq_len = c->seq, .hidden = c->hidden, .vocab = c->vocab};
        if (tsl_model_add(&c->model, &head, err))
            return -1;
    }
    return tsl_exec_uniform_plan(&c->model, &c->spec, &c->plan, err);
}

static tsl_devops_t *make_dev(run_cfg_t *c, tsl_err_t *err)
{
    tsl_devops_t *d = NULL;
    return tsl_devops_create(c->devops, c->device, c->mem_limit, &d, err) ? NULL : d;
}

/* nccl: rank 0 writes the id to the file (atomically, by rename); the others poll it. */
static int nccl_comm(run_cfg_t *c, int rank, tsl_commops_t **out, tsl_err_t *err)
{
    uint8_t id[TSL_NCCL_ID_BYTES];
    char tmp[4096];
    if (c->plan.n_devices == 1) { /* nobody to tell */
        if (tsl_comm_nccl_unique_id(id, err))
            return -1;
        return tsl_comm_nccl_create(id, 0, 1, c->device, out, err);
    }
    if (!c->nccl_id)
        return tsl_err_set(err, "--comm nccl needs --nccl-id FILE");
    if (rank == 0) {
        snprintf(tmp, sizeof(tmp), "%s.tmp", c->nccl_id);
        FILE *f = NULL;
        if (tsl_comm_nccl_unique_id(id, err) || !(f = fopen(tmp, "wb")) ||
            fwrite(id, 1, sizeof(id), f) != sizeof(id) || fclose(f) || rename(tmp, c->nccl_id))
            return tsl_err_set(err, "nccl: cannot write the id to %s", c->nccl_id);
    } else {
        FILE *f = NULL;
        for (int i = 0; i < 6000 && !(f = fopen(c->nccl_id, "rb")); i++)
            usleep(10000);
        size_t got = f ? fread(id, 1, sizeof(id), f) : 0;
        if (f)
            fclose(f);
        if (got != sizeof(id))
            return tsl_err_set(err, "nccl: no id in %s after 60 s", c->nccl_id);
    }
    return tsl_comm_nccl_create(id, rank, (int)c->plan.n_devices, c->device, out, err);
}

static int make_comm(run_cfg_t *c, int rank, tsl_commops_t **out, tsl_err_t *err)
{
    if (!strcmp(c->comm, "loopback"))
        return tsl_comm_loopback_rank(c->world, rank, out, err);
    if (!strcmp(c->comm, "tcp"))
        return tsl_comm_tcp_create(c->host, c->port, rank, (int)c->plan.n_devices, 60.0, out, err);
    if (!strcmp(c->comm, "nccl"))
        return nccl_comm(c, rank, out, err);
    return tsl_err_set(err, "--comm '%s': give loopback, tcp or nccl", c->comm);
}

static void print_report(const run_cfg_t *c, const tsl_exec_report_t *r)
{
    char buf[1024];
    if (c->json) {
        tsl_exec_report_json(r, buf, sizeof(buf));
        printf("%s\n", buf);
    } else {
        printf("rank %-3u stage %-2u iter %.4f s (min %.4f max %.4f)  fwd %.4f  bwd %.4f  "
               "comm %.4f  bubble %.4f  opt %.4f  peak %.1f MiB%s  loss %.6g\n",
               r->rank, r->stage, r->iter_median_s, r->iter_min_s, r->iter_max_s, r->fwd_s,
               r->bwd_s, r->comm_s, r->bubble_s, r->opt_s, r->peak_bytes / 1048576.0,
               r->oom ? "  OOM" : "", r->loss);
    }
    fflush(stdout);
}

/* One rank, start to end; 0 on success (an OOM included: it is reported). */
static int run_rank(run_cfg_t *c, int rank)
{
    tsl_err_t err = {0};
    tsl_exec_env_t e = {0};
    tsl_exec_report_t rep;
    int rc = -1;
    if (tsl_exec_rank_from_plan(&c->plan, &c->model, (uint32_t)rank, &e.rank, &err) ||
        !(e.dev = make_dev(c, &err)) || make_comm(c, rank, &e.comm, &err) ||
        tsl_exec_run(&e.rank, &c->opts, e.dev, e.comm, &rep, &err))
        goto out;
    print_report(c, &rep);
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "tessel-exec-run: rank %d: %s\n", rank, err.msg);
    tsl_exec_env_end(&e);
    return rc;
}

typedef struct thread_arg {
    run_cfg_t *c;
    int rank, rc;
} thread_arg_t;

static void *rank_thread(void *p)
{
    thread_arg_t *a = p;
    a->rc = run_rank(a->c, a->rank);
    return NULL;
}

static int run_threads(run_cfg_t *c)
{
    int n = (int)c->plan.n_devices, rc = 0;
    tsl_err_t err = {0};
    thread_arg_t *a = calloc((size_t)n, sizeof(*a));
    pthread_t *th = calloc((size_t)n, sizeof(*th));
    if (!a || !th || tsl_comm_loopback_world(n, &c->world, &err)) {
        fprintf(stderr, "tessel-exec-run: %s\n", err.msg[0] ? err.msg : "out of memory");
        free(a), free(th);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        a[i] = (thread_arg_t){c, i, 0};
        pthread_create(&th[i], NULL, rank_thread, &a[i]);
    }
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        rc |= a[i].rc;
    }
    tsl_comm_loopback_world_free(c->world);
    free(a), free(th);
    return rc ? 1 : 0;
}

static int run_forked(run_cfg_t *c)
{
    int n = (int)c->plan.n_devices, rc = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(run_rank(c, i) ? 1 : 0);
        if (pid < 0)
            return 1;
    }
    for (int i = 0; i < n; i++) {
        int st = 0;
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
            rc = 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    run_cfg_t c = {.layers = 4,
                   .hidden = 64,
                   .heads = 4,
                   .seq = 32,
                   .spec = {.pp = 1, .tp = 1, .dp = 1, .micro_batch = 2, .n_micro = 2},
                   .devops = "cpu",
                   .comm = "loopback",
                   .host = "127.0.0.1",
                   .port = 29500,
                   .rank = -1};
    tsl_err_t err = {0};
    tsl_exec_opts_default(&c.opts);
    if (parse(&c, argc, argv))
        return 2;
    if (build(&c, &err)) {
        fprintf(stderr, "tessel-exec-run: %s\n", err.msg);
        tsl_model_free(&c.model);
        return 2;
    }
    int rc;
    if (c.rank >= 0)
        rc = run_rank(&c, c.rank) ? 1 : 0;
    else if (!strcmp(c.comm, "loopback"))
        rc = run_threads(&c);
    else if (!strcmp(c.comm, "tcp"))
        rc = run_forked(&c);
    else if (c.plan.n_devices == 1)
        rc = run_rank(&c, 0) ? 1 : 0;
    else {
        fprintf(stderr, "tessel-exec-run: --comm %s with %u ranks: give --rank\n", c.comm,
                c.plan.n_devices);
        rc = 2;
    }
    tsl_model_free(&c.model);
    return rc;
}
