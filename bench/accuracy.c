/*
 * accuracy.c — bench/accuracy: how close the cost model comes to the executor
 * (docs/cost-model.md, "bench/accuracy" under "Calibration — from trials").
 *
 * Twelve single-device plans spread over hidden 1024–5120, 8–32 layers,
 * sequence 1024–4096, micro-batch 1–32, 1–4 micro-batches and checkpointing on
 * and off (--scale-down shrinks them for a cpu smoke run). Each runs through
 * the stage executor in this process (worker/exec, devops cpu or cuda; one
 * rank, no communication) and is priced by tsl_eval_plan three ways: built-in
 * figures, the measured profile (--profile), and with a calibration fitted on
 * the *other* plans attached to the GPU type (leave-one-out: the cost model's
 * own calibrated path, not arithmetic on the sample). --torch adds PyTorch on
 * the same shapes as a reference. Benchmarks never fail on figures: the exit
 * status says only whether the program could do its work.
 *
 * The model is the executor's: encoder blocks with biases and a causal attention
 * core, fused by query chunks as the cost model assumes (--unfused: the scores kept,
 * tsl_model_set_unfused_attn, for executor, cost model and PyTorch alike), no
 * embedding or head.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "cost.h"
#include "eval.h"
#include "exec.h"
#include "profile.h"
#ifdef TSL_HAVE_JSON
#include "profile_json.h"
#endif

#ifndef TSL_BENCH_DIR
#define TSL_BENCH_DIR "bench"
#endif

typedef struct acc_cfg {
    const char *devops, *gpu, *profile_path, *json, *torch_script;
    int device;
    bool scale_down, torch, unfused;
    tsl_exec_opts_t opts;
    tsl_cluster_t builtin, measured; /* 1 x gpu; the second with the profile attached */
    tsl_profile_t *profile;
} acc_cfg_t;

/* hidden, heads, layers, seq, micro-batch, micro-batches, checkpointing */
static const acc_plan_t k_plans[] = {
    {1024, 16, 24, 1024, 8, 1, false},  {1024, 16, 8, 4096, 2, 4, false},
    {2048, 16, 16, 2048, 4, 2, true},   {2048, 16, 24, 1024, 16, 1, true},
    {2560, 20, 12, 2048, 1, 4, false},  {3072, 24, 8, 1024, 32, 1, true},
    {4096, 32, 8, 2048, 2, 2, true},    {4096, 32, 12, 1024, 1, 1, false},
    {5120, 40, 8, 1024, 4, 1, true},    {1536, 16, 32, 4096, 4, 2, true},
    {1024, 16, 12, 1024, 32, 1, false}, {1024, 16, 8, 2048, 32, 3, true},
};
#define N_PLANS (sizeof(k_plans) / sizeof(k_plans[0]))

static void usage(FILE *f)
{
    fprintf(f, "usage: accuracy [--devops cuda|cpu] [--device D] [--gpu TYPE] [--profile FILE]\n"
               "         [--scale-down] [--torch] [--torch-script PATH] [--warmup W] [--iters N]\n"
               "         [--unfused] [--json FILE|-]\n"
               "  --gpu: the built-in GPU type the predictions are for (default H100-80G, or\n"
               "  the profile's); --json -: JSON instead of the table on stdout.\n");
}

static int parse(acc_cfg_t *c, int argc, char **argv)
{
    static const struct option lo[] = {{"devops", 1, 0, 'o'},
                                       {"device", 1, 0, 'D'},
                                       {"gpu", 1, 0, 'g'},
                                       {"profile", 1, 0, 'p'},
                                       {"scale-down", 0, 0, 's'},
                                       {"torch", 0, 0, 't'},
                                       {"torch-script", 1, 0, 'T'},
                                       {"warmup", 1, 0, 'w'},
                                       {"iters", 1, 0, 'n'},
                                       {"json", 1, 0, 'j'},
                                       {"help", 0, 0, 'h'},
                                       {"unfused", 0, 0, 'u'},
                                       {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'o': c->devops = optarg; break;
        case 'D': c->device = atoi(optarg); break;
        case 'g': c->gpu = optarg; break;
        case 'p': c->profile_path = optarg; break;
        case 's': c->scale_down = true; break;
        case 't': c->torch = true; break;
        case 'u': c->unfused = true; break;
        case 'T': c->torch_script = optarg; break;
        case 'w': c->opts.warmup = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'n': c->opts.iters = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'j': c->json = optarg; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    if (optind < argc || c->opts.iters == 0) {
        fprintf(stderr, "accuracy: %s\n", optind < argc ? "unexpected argument" : "--iters 0");
        return -1;
    }
    return 0;
}

/* --scale-down: the same spread, small enough for plain C in seconds. */
static acc_plan_t shrink(acc_plan_t p)
{
    p.hidden /= 16;
    p.heads /= 4;
    p.seq /= 32;
    p.layers = p.layers / 8 > 1 ? p.layers / 8 : 1;
    p.mbs = p.mbs / 4 > 1 ? p.mbs / 4 : 1;
    return p;
}

static int build(const acc_plan_t *p, bool unfused, tsl_model_t *m, tsl_plan_t *plan,
                 tsl_err_t *err)
{
    tsl_layer_t l = {.kind = TSL_LAYER_ENCODER,
                     .seq_len = p->seq,
                     .hidden = p->hidden,
                     .ffn_hidden = 4 * p->hidden,
                     .heads = p->heads,
                     .causal = true}; /* the executor's attention is causal */
    tsl_model_init(m, "accuracy-gpt");
    tsl_exec_plan_spec_t spec = {
        .pp = 1, .tp = 1, .dp = 1, .ckpt = p->ckpt, .micro_batch = p->mbs, .n_micro = p->ga};
    if (tsl_model_add_n(m, &l, p->layers, err) || tsl_model_set_unfused_attn(m, unfused, err))
        return -1;
    return tsl_exec_uniform_plan(m, &spec, plan, err);
}

/* The cost model's figures for the plan on cluster c: the iteration, the peak,
 * and the compute and communication parts of the iteration (one device: the sum
 * of the layers' over the micro-batches). A plan above the budget keeps its
 * figures (eval fills them): the executor decides whether it runs. */
static int predict(const tsl_model_t *m, const tsl_plan_t *plan, const tsl_cluster_t *c,
                   tsl_calib_sample_t *s, tsl_err_t *err)
{
    tsl_request_t r;
    tsl_request_init(&r);
    r.global_batch = plan->micro_batch * plan->n_micro;
    r.no_host_floor = true; /* the executor is C: its 4 µs launches, no eager host */
    tsl_plan_t *out = malloc(sizeof(*out));
    if (out == NULL)
        return tsl_err_setc(err, TSL_E_NOMEM, "out of memory");
    int rc = tsl_eval_plan(m, c, &r, plan, out, err);
    if (rc != 0 && tsl_err_code(err) != TSL_E_NOFIT) {
        free(out);
        return -1;
    }
    s->pred_iter_s = out->iter_time_s;
    s->pred_peak_bytes = out->peak_bytes;
    free(out);
    tsl_cost_env_t env;
    if (tsl_cost_env_init(&env, c, 0, 1, err) != 0)
        return -1;
    env.host_op_s = 0.0; /* as the request's no_host_floor above */
    s->pred_compute_s = s->pred_comm_s = 0;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        tsl_layer_cost_t lc;
        tsl_cost_layer(&env, &m->layers[i], &plan->layer[i], NULL, plan->micro_batch, &lc);
        s->pred_compute_s += lc.compute_s * plan->n_micro;
        s->pred_comm_s += lc.comm_s * plan->n_micro;
    }
    return 0;
}

/* One rank, in this process; an OOM is a result (row->oom). */
static int run_exec(const acc_cfg_t *c, const tsl_model_t *m, const tsl_plan_t *plan, acc_row_t *w,
                    tsl_err_t *err)
{
    tsl_exec_env_t e = {0};
    tsl_exec_report_t rep;
    int rc = -1;
    if (tsl_exec_rank_from_plan(plan, m, 0, &e.rank, err) ||
        tsl_devops_create(c->devops, c->device, 0, &e.dev, err) ||
        tsl_comm_loopback_world(1, &e.world, err) ||
        tsl_comm_loopback_rank(e.world, 0, &e.comm, err) ||
        tsl_exec_run(&e.rank, &c->opts, e.dev, e.comm, &rep, err))
        goto out;
    w->ran = true;
    w->oom = rep.oom;
    w->meas_s = rep.iter_median_s;
    w->meas_opt_s = rep.opt_s;
    w->meas_peak = rep.peak_bytes;
    w->sample.meas_iter_s = rep.oom ? 0 : rep.iter_median_s;
    w->sample.meas_compute_s = rep.fwd_s + rep.bwd_s;
    w->sample.meas_comm_s = rep.comm_s;
    w->sample.meas_peak_bytes = rep.oom ? 0 : rep.peak_bytes;
    rc = 0;
out:
    tsl_exec_env_end(&e);
    return rc;
}

/* PyTorch on the same shapes (bench/torch_block_stack.py); NAN when it cannot. */
static void run_torch(const acc_cfg_t *c, acc_row_t *w)
{
    char cmd[1024], line[512] = "";
    const acc_plan_t *p = &w->p;
    w->iter_s[ACC_TORCH] = NAN;
    snprintf(cmd, sizeof(cmd),
             "python3 '%s' --layers %u --hidden %u --heads %u --seq %u --mbs %u --micro %u%s%s "
             "--warmup %u --iters %u 2>/dev/null",
             c->torch_script, p->layers, p->hidden, p->heads, p->seq, p->mbs, p->ga,
             p->ckpt ? " --ckpt" : "", c->unfused ? "" : " --fused", c->opts.warmup, c->opts.iters);
    FILE *f = popen(cmd, "r");
    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f) != NULL && strstr(line, "{") == NULL) {
    }
    pclose(f);
    const char *t = strstr(line, "\"iter_s\":"), *b = strstr(line, "\"peak_bytes\":");
    if (t != NULL)
        w->iter_s[ACC_TORCH] = strtod(t + 9, NULL);
    if (b != NULL)
        w->peak[ACC_TORCH] = strtoull(b + 13, NULL, 10);
}

static bool torch_usable(void)
{
    return system("python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else "
                  "1)' >/dev/null 2>&1") == 0;
}

typedef struct acc_run {
    tsl_model_t model[N_PLANS];
    tsl_plan_t *plan[N_PLANS];
    acc_row_t row[N_PLANS];
} acc_run_t;

/* Column col of row i priced on cluster c (its calibration as attached). */
static void price(acc_run_t *a, size_t i, const tsl_cluster_t *c, acc_col_t col)
{
    tsl_calib_sample_t s = {0};
    tsl_err_t err = {0};
    acc_row_t *w = &a->row[i];
    w->iter_s[col] = NAN;
    if (predict(&a->model[i], a->plan[i], c, &s, &err) != 0) {
        fprintf(stderr, "accuracy: plan %zu, %s: %s\n", i + 1, acc_col_name(col), err.msg);
        return;
    }
    w->iter_s[col] = s.pred_iter_s;
    w->peak[col] = s.pred_peak_bytes;
}

/* Fits on the valid rows but `skip` (N_PLANS: none) into *k. */
static void fit_without(const acc_run_t *a, size_t skip, tsl_calib_t *k)
{
    tsl_calib_sample_t s[N_PLANS];
    size_t n = 0;
    for (size_t i = 0; i < N_PLANS; i++)
        if (i != skip && a->row[i].ran && !a->row[i].oom)
            s[n++] = a->row[i].sample;
    tsl_calib_fit(s, n, k);
}

/* The in-sample and leave-one-out columns, through the cost model with the
 * calibration attached to the GPU type of the base cluster. */
static void calibrate(acc_cfg_t *c, acc_run_t *a, tsl_calib_t *all)
{
    tsl_cluster_t *base = c->profile ? &c->measured : &c->builtin;
    tsl_calib_t k;
    tsl_err_t err = {0};
    fit_without(a, N_PLANS, all);
    for (size_t i = 0; i < N_PLANS; i++) {
        a->row[i].iter_s[ACC_FIT] = a->row[i].iter_s[ACC_LOO] = NAN;
        if (!a->row[i].ran || a->row[i].oom)
            continue;
        tsl_cluster_set_calib(base, c->gpu, all, &err);
        price(a, i, base, ACC_FIT);
        fit_without(a, i, &k);
        tsl_cluster_set_calib(base, c->gpu, &k, &err);
        price(a, i, base, ACC_LOO);
    }
    tsl_cluster_set_calib(base, c->gpu, NULL, &err);
}

static int plan_row(acc_cfg_t *c, acc_run_t *a, size_t i)
{
    acc_row_t *w = &a->row[i];
    tsl_err_t err = {0};
    w->p = c->scale_down ? shrink(k_plans[i]) : k_plans[i];
    for (acc_col_t col = 0; col < ACC_COLUMNS; col++)
        w->iter_s[col] = NAN;
    if ((a->plan[i] = calloc(1, sizeof(tsl_plan_t))) == NULL ||
        build(&w->p, c->unfused, &a->model[i], a->plan[i], &err) != 0) {
        fprintf(stderr, "accuracy: plan %zu: %s\n", i + 1, a->plan[i] ? err.msg : "out of memory");
        return -1;
    }
    tsl_calib_sample_t *s = &w->sample;
    s->hidden = w->p.hidden;
    s->tokens = w->p.mbs * w->p.seq;
    s->tp = 1;
    price(a, i, &c->builtin, ACC_BUILTIN);
    if (c->profile != NULL)
        price(a, i, &c->measured, ACC_PROFILE);
    if (predict(&a->model[i], a->plan[i], c->profile ? &c->measured : &c->builtin, s, &err) ||
        run_exec(c, &a->model[i], a->plan[i], w, &err)) {
        snprintf(w->why, sizeof(w->why), "%s", err.msg);
        fprintf(stderr, "accuracy: plan %zu did not run: %s\n", i + 1, err.msg);
    }
    if (c->torch && w->ran && !w->oom)
        run_torch(c, w);
    fprintf(stderr, "accuracy: plan %zu/%zu done\n", i + 1, N_PLANS);
    return 0;
}

/* The built-in cluster 1 x gpu, and a copy with the profile attached. */
static int setup(acc_cfg_t *c, tsl_err_t *err)
{
    char spec[96];
    if (c->profile_path != NULL) {
#ifdef TSL_HAVE_JSON
        if (tsl_profile_json_load(c->profile_path, &c->profile, err) != 0)
            return -1;
        if (c->gpu == NULL)
            c->gpu = c->profile->gpu;
#else
        return tsl_err_set(err,
                           "--profile: built without jansson and libyaml (meson -Djson=enabled)");
#endif
    }
    if (c->gpu == NULL)
        c->gpu = "H100-80G";
    snprintf(spec, sizeof(spec), "1x%s", c->gpu);
    if (tsl_cluster_parse_spec(&c->builtin, spec, err) != 0)
        return -1;
    if (c->profile == NULL)
        return 0;
    tsl_profile_use_t use;
    if (tsl_cluster_copy(&c->measured, &c->builtin, err) != 0 ||
        tsl_profile_attach(&c->measured, c->profile, &use, err) != 0)
        return -1;
    /* a calibration the profile carries is not this run's: the columns fit their own */
    return tsl_cluster_set_calib(&c->measured, c->gpu, NULL, err);
}

static void report(const acc_cfg_t *c, acc_run_t *a, const tsl_calib_t *all)
{
    acc_report_t r = {.devops = c->devops,
                      .gpu = c->gpu,
                      .profile = c->profile_path,
                      .scaled_down = c->scale_down,
                      .torch = c->torch,
                      .rows = a->row,
                      .n_rows = N_PLANS,
                      .all = *all};
    bool json_only = c->json != NULL && strcmp(c->json, "-") == 0;
    if (!json_only)
        acc_print_markdown(&r);
    if (json_only) {
        acc_print_json(&r, stdout);
    } else if (c->json != NULL) {
        FILE *f = fopen(c->json, "w");
        if (f == NULL) {
            fprintf(stderr, "accuracy: --json %s: cannot write\n", c->json);
            return;
        }
        acc_print_json(&r, f);
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    static acc_run_t a;
    acc_cfg_t c = {.devops = "cuda", .torch_script = TSL_BENCH_DIR "/torch_block_stack.py"};
    tsl_err_t err = {0};
    tsl_calib_t all;
    tsl_exec_opts_default(&c.opts);
    c.opts.warmup = c.opts.iters = UINT32_MAX; /* unset: defaults below */
    if (parse(&c, argc, argv) != 0)
        return 2;
    if (c.opts.warmup == UINT32_MAX)
        c.opts.warmup = c.scale_down ? 1 : 2;
    if (c.opts.iters == UINT32_MAX)
        c.opts.iters = c.scale_down ? 2 : 5;
    if (setup(&c, &err) != 0) {
        fprintf(stderr, "accuracy: %s\n", err.msg);
        return 2;
    }
    if (c.torch && !torch_usable()) {
        fprintf(stderr, "accuracy: --torch: python3 with torch and a CUDA device not found; "
                        "no PyTorch column\n");
        c.torch = false;
    }
    int rc = 0;
    for (size_t i = 0; i < N_PLANS && rc == 0; i++)
        rc = plan_row(&c, &a, i);
    if (rc == 0) {
        calibrate(&c, &a, &all);
        report(&c, &a, &all);
    }
    for (size_t i = 0; i < N_PLANS; i++) {
        tsl_model_free(&a.model[i]);
        free(a.plan[i]);
    }
    tsl_cluster_free(&c.builtin);
    if (c.profile != NULL)
        tsl_cluster_free(&c.measured);
    free(c.profile);
    return rc ? 1 : 0;
}
