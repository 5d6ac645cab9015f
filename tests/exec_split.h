/*
 * exec_split.h — the executor tests' "one rank against splits" harness (test_exec_moe.c,
 * test_exec_mla.c): run a plan's ranks as threads over the loopback comm ops on the CPU
 * device ops, two SGD steps from one seed, collect every layer's dense and routed-expert
 * gradients and the loss, and compare a split run with the one-rank run of the same model
 * (each rank's gradients against its part of the reference, within 1e-5 of the largest);
 * and loss_now (exec_loss.h), the finite-difference checks' loss of one step.
 * Static functions for the one test file that includes it, after check.h, exec.h,
 * commops.h, devops.h, <pthread.h>, <sys/wait.h> and <unistd.h>, with MAXR (ranks),
 * MAXL (layers) and CAP (floats per gradient buffer) defined.
 */
#ifndef TSL_TESTS_EXEC_SPLIT_H
#define TSL_TESTS_EXEC_SPLIT_H

#include "exec_loss.h"

/* The MoE capacity factor of the runs (tsl_exec_opts_t.moe_capacity; 0: dropless). */
static float split_capacity;

/* Called on each rank's comm ops before its run when set: a test's counting wrapper. */
static void (*split_wrap)(tsl_commops_t *c);

typedef struct lgrad {
    tsl_exec_layer_t lay;
    size_t n, ne;
    float *g, *ge; /* dense, routed experts (NULL: none) */
} lgrad_t;

typedef struct result {
    double loss;
    bool ok;
    uint32_t world;
    uint64_t peak[MAXR]; /* the cpu ops' count after the steps */
    struct {
        uint32_t n_layers;
        lgrad_t l[MAXL];
    } r[MAXR];
} result_t;

typedef struct job {
    const tsl_plan_t *plan;
    const tsl_model_t *model;
    tsl_loopback_world_t *world;
    result_t *res;
    uint32_t rank;
} job_t;

/* Runs on the rank's thread: failures go to the result (CHECK's counters are not
 * for threads). */
static void collect(tsl_exec_t *e, const tsl_exec_rank_t *r, result_t *res)
{
    tsl_err_t err = {0};
    res->r[r->rank].n_layers = r->n_layers;
    for (uint32_t i = 0; i < r->n_layers && i < MAXL; i++) {
        lgrad_t *l = &res->r[r->rank].l[i];
        l->lay = r->layers[i];
        l->g = malloc(CAP * sizeof(float));
        bool ok = l->g && !tsl_exec_layer_grad(e, i, l->g, CAP, &l->n, &err);
        if (ok && r->layers[i].experts) {
            l->ge = malloc(CAP * sizeof(float));
            ok = l->ge && !tsl_exec_expert_grad(e, i, l->ge, CAP, &l->ne, &err);
        }
        if (!ok) {
            fprintf(stderr, "rank %u layer %u: %s\n", r->rank, i, err.msg);
            res->ok = false;
        }
    }
    if (r->next_rank < 0)
        res->loss = tsl_exec_loss(e);
}

static int run_one(job_t *j, tsl_commops_t *c, tsl_err_t *err)
{
    tsl_exec_rank_t r;
    tsl_exec_opts_t o;
    tsl_devops_t *d = NULL;
    tsl_exec_t *e = NULL;
    int rc = -1;
    tsl_exec_opts_default(&o);
    o.warmup = 0;
    o.iters = 2; /* the second step's gradients depend on the first's update */
    o.optim = TSL_EXEC_SGD;
    o.lr = 0.5f;
    o.seed = 42;
    o.moe_capacity = split_capacity;
    if (tsl_exec_rank_from_plan(j->plan, j->model, j->rank, &r, err))
        return -1;
    if (tsl_devops_cpu_create(0, &d, err) || tsl_exec_create(&r, &o, d, c, &e, err))
        goto out;
    for (uint32_t i = 0; i < o.iters; i++)
        if (tsl_exec_step(e, NULL, err))
            goto out;
    collect(e, &r, j->res);
    j->res->peak[j->rank] = d->peak_bytes(d);
    rc = 0;
out:
    tsl_exec_destroy(e);
    if (d)
        d->destroy(d);
    tsl_exec_rank_free(&r);
    return rc;
}

static void *thread_main(void *p)
{
    job_t *j = p;
    tsl_err_t err = {0};
    tsl_commops_t *c = NULL;
    if (tsl_comm_loopback_rank(j->world, (int)j->rank, &c, &err) == 0 && split_wrap)
        split_wrap(c); /* the same wrapper on every rank */
    if (!c || run_one(j, c, &err)) {
        fprintf(stderr, "rank %u: %s\n", j->rank, err.msg);
        j->res->ok = false;
    }
    if (c)
        c->destroy(c);
    return NULL;
}

static void run_plan(const tsl_plan_t *p, const tsl_model_t *m, result_t *res)
{
    tsl_err_t err = {0};
    job_t jobs[MAXR];
    pthread_t th[MAXR];
    memset(res, 0, sizeof(*res));
    res->ok = true;
    res->world = p->n_devices;
    CHECK(p->n_devices <= MAXR, "%u ranks", p->n_devices);
    CHECK(!tsl_comm_loopback_world((int)p->n_devices, &jobs[0].world, &err), "%s", err.msg);
    for (uint32_t k = 0; k < p->n_devices; k++) {
        jobs[k] = (job_t){p, m, jobs[0].world, res, k};
        pthread_create(&th[k], NULL, thread_main, &jobs[k]);
    }
    for (uint32_t k = 0; k < p->n_devices; k++)
        pthread_join(th[k], NULL);
    tsl_comm_loopback_world_free(jobs[0].world);
}

static void free_result(result_t *res)
{
    for (int k = 0; k < MAXR; k++)
        for (int i = 0; i < MAXL; i++) {
            free(res->r[k].l[i].g);
            free(res->r[k].l[i].ge);
        }
}

static const lgrad_t *ref_layer(const result_t *ref, uint32_t index)
{
    for (uint32_t i = 0; i < ref->r[0].n_layers; i++)
        if (ref->r[0].l[i].lay.index == index)
            return &ref->r[0].l[i];
    return NULL;
}

/* got[0 .. n) against want[0 .. n): within 1e-5 of want's largest. */
static void near(const float *got, const float *want, size_t n, const char *what, uint32_t k,
                 uint32_t idx, const char *part)
{
    double mx = 0, worst = 0;
    for (size_t j = 0; j < n; j++)
        mx = fmax(mx, fabs(want[j]));
    for (size_t j = 0; j < n; j++)
        worst = fmax(worst, fabs((double)got[j] - want[j]));
    CHECK(worst <= 1e-5 * mx, "%s: rank %u layer %u %s: off by %g of %g", what, k, idx, part, worst,
          mx);
}

/* The reference's slice of what rank k's layer holds, its SDP shard (of w) if sdp. */
static float *held_part(const float *full, size_t off, size_t n, bool sdp, uint32_t w, uint32_t wi,
                        size_t *held)
{
    size_t shard = sdp ? (n + w - 1) / w : n;
    float *want = calloc(shard * (sdp ? w : 1) + 1, sizeof(float));
    memcpy(want, full + off, n * sizeof(float));
    if (sdp)
        memmove(want, want + wi * shard, shard * sizeof(float));
    *held = shard;
    return want;
}

static void compare_layer(const lgrad_t *ref, const lgrad_t *got, const char *what, uint32_t k)
{
    const tsl_exec_layer_t *l = &got->lay;
    size_t np = tsl_exec_layer_params(l, l->tp), held = 0;
    float *part = calloc(np + 1, sizeof(float));
    tsl_exec_layer_slice(l, l->tp, l->tp_index, ref->g, part);
    float *want = held_part(part, 0, np, l->sdp, l->dw, l->dw_index, &held);
    CHECK(got->n == held, "%s: rank %u layer %u: %zu gradients, expected %zu", what, k, l->index,
          got->n, held);
    if (got->n == held)
        near(got->g, want, held, what, k, l->index, "dense");
    free(want);
    free(part);
    if (!l->experts)
        return;
    size_t pe = tsl_exec_expert_params(l), El = l->experts / l->ep;
    want = held_part(ref->ge, l->ep_index * El * pe, El * pe, l->sdp, l->edp, l->edp_index, &held);
    CHECK(got->ne == held && ref->ne == l->experts * pe,
          "%s: rank %u layer %u: %zu expert gradients, expected %zu", what, k, l->index, got->ne,
          held);
    if (got->ne == held)
        near(got->ge, want, held, what, k, l->index, "experts");
    free(want);
}

static void compare(const result_t *ref, const result_t *got, const char *what)
{
    CHECK(got->ok && ref->ok, "%s: every rank ran", what);
    CHECK_NEAR(got->loss, ref->loss, 1e-5, "%s: loss %.9g, one rank %.9g", what, got->loss,
               ref->loss);
    for (uint32_t k = 0; k < got->world && got->ok; k++)
        for (uint32_t i = 0; i < got->r[k].n_layers; i++) {
            const lgrad_t *rl = ref_layer(ref, got->r[k].l[i].lay.index);
            CHECK(rl != NULL, "%s: layer %u in the reference", what, got->r[k].l[i].lay.index);
            if (rl)
                compare_layer(rl, &got->r[k].l[i], what, k);
        }
}

typedef struct split {
    uint32_t pp, tp, dp;
    bool sdp, ckpt;
    uint32_t ep;
    const char *name;
} split_t;

static void plan_of(const tsl_model_t *m, split_t s, uint32_t mb, uint32_t nm, tsl_plan_t *p)
{
    tsl_err_t err = {0};
    tsl_exec_plan_spec_t sp = {s.pp, s.tp, s.dp, s.sdp, s.ckpt, mb, nm};
    CHECK(!tsl_exec_uniform_plan(m, &sp, p, &err), "%s: %s", s.name, err.msg);
    p->ep = s.ep;
}

/* The plan's ranks over tcp between forked processes (ports port .. port + ranks − 1):
 * bitwise the loopback run, which is one rank's (ref) within 1e-5. */
static void split_tcp_vs_loopback(const tsl_plan_t *p, const tsl_model_t *m, const result_t *ref,
                                  int port, const char *what)
{
    result_t lo;
    int fds[MAXR][2];
    pid_t pid[MAXR];
    uint32_t n = p->n_devices;
    run_plan(p, m, &lo);
    CHECK(lo.ok, "%s: the loopback run", what);
    compare(ref, &lo, what);
    for (uint32_t k = 0; k < n; k++) {
        CHECK(!pipe(fds[k]), "pipe");
        pid[k] = fork();
        if (pid[k] == 0) {
            static result_t res;
            tsl_err_t err = {0};
            tsl_commops_t *c = NULL;
            job_t j = {p, m, NULL, &res, k};
            res.ok = true;
            int rc = tsl_comm_tcp_create("127.0.0.1", port, (int)k, (int)n, 30, &c, &err) ||
                     run_one(&j, c, &err);
            if (rc)
                fprintf(stderr, "%s: tcp rank %u: %s\n", what, k, err.msg);
            if (c)
                c->destroy(c);
            FILE *f = fdopen(fds[k][1], "w");
            fwrite(&res.loss, sizeof(double), 1, f);
            for (uint32_t i = 0; i < res.r[k].n_layers; i++) {
                fwrite(res.r[k].l[i].g, sizeof(float), res.r[k].l[i].n, f);
                if (res.r[k].l[i].ge)
                    fwrite(res.r[k].l[i].ge, sizeof(float), res.r[k].l[i].ne, f);
            }
            fclose(f);
            _exit(rc ? 1 : 0);
        }
        close(fds[k][1]);
    }
    for (uint32_t k = 0; k < n; k++) {
        FILE *f = fdopen(fds[k][0], "r");
        double loss = 0;
        bool same = fread(&loss, sizeof(double), 1, f) == 1;
        for (uint32_t i = 0; same && i < lo.r[k].n_layers; i++) {
            const lgrad_t *l = &lo.r[k].l[i];
            float *g = malloc((l->n + l->ne + 1) * sizeof(float));
            same = fread(g, sizeof(float), l->n + l->ne, f) == l->n + l->ne &&
                   !memcmp(g, l->g, l->n * sizeof(float)) &&
                   (!l->ne || !memcmp(g + l->n, l->ge, l->ne * sizeof(float)));
            free(g);
        }
        fclose(f);
        int st = 0;
        waitpid(pid[k], &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: tcp rank %u exited %d", what, k, st);
        CHECK(same, "%s: tcp rank %u: gradients equal the loopback run's", what, k);
        if (k + 1 == n)
            CHECK(loss == lo.loss, "%s: tcp loss %.9g, loopback %.9g", what, loss, lo.loss);
    }
    free_result(&lo);
}

#endif
