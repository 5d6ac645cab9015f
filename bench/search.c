/*
 * bench/search — how long Tessel's search takes, how much it visits and how much
 * memory it needs, on the cases issue #2 names. Prints a table; asserts nothing.
 *
 * usage: bench/search [CASE-SUBSTRING]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "search.h"

typedef struct bench_case {
    const char *title;
    const char *model;
    const char *cluster;
    double memory_gib;      /* 0 = device memory */
    uint32_t batch;         /* 0 = sweep */
} bench_case_t;

static const bench_case_t cases[] = {
    {"BERT-Huge-32, 8 GPUs, 8 GB", "BERT-Huge-32", "8xRTX-TITAN-24G", 8, 0},
    {"BERT-Huge-32, 8 GPUs, 12 GB", "BERT-Huge-32", "8xRTX-TITAN-24G", 12, 0},
    {"BERT-Huge-32, 8 GPUs, 16 GB", "BERT-Huge-32", "8xRTX-TITAN-24G", 16, 0},
    {"BERT-Huge-32, 8 GPUs, 20 GB", "BERT-Huge-32", "8xRTX-TITAN-24G", 20, 0},
    {"GPT3-65B, 8x8 A100-80G", "GPT3-65B", "8x8xA100-80G:ib400", 0, 0},
    {"GPT-2 24L, 16x16 GPUs, batch 32", "GPT2-345M", "16x16xA100-40G:ib100", 0, 32},
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;
}

static void print_baselines(const tsl_search_result_t *res)
{
    for (int b = 0; b < TSL_BASELINE_COUNT; b++) {
        const tsl_plan_t *p = &res->baseline[b];
        if (p->valid)
            printf("      %-14s %10.2f samples/s  (tessel %.2fx)\n", tsl_baseline_name(b),
                   p->samples_per_s, res->best.samples_per_s / p->samples_per_s);
        else
            printf("      %-14s %10s\n", tsl_baseline_name(b),
                   res->baseline_why[b][0] ? res->baseline_why[b] : "OOM");
    }
}

static int run_case(const bench_case_t *bc, tsl_search_result_t *res)
{
    tsl_model_t m = {0};
    tsl_cluster_t c = {0};
    tsl_err_t err = {{0}};
    if (tsl_model_preset(bc->model, &m, &err) != 0 ||
        tsl_cluster_parse_spec(&c, bc->cluster, &err) != 0) {
        printf("%-34s error: %s\n", bc->title, err.msg);
        return 1;
    }
    tsl_request_t r;
    tsl_request_init(&r);
    r.mem_budget_bytes = (uint64_t)(bc->memory_gib * 1073741824.0);
    r.global_batch = bc->batch;
    double t0 = now_s();
    int rc = tsl_search(&m, &c, &r, NULL, res, &err);
    double wall = now_s() - t0;
    if (rc != TSL_SEARCH_OK) {
        printf("%-34s %8.3f s  no plan: %s\n", bc->title, wall, err.msg);
    } else {
        printf("%-34s %8.3f s %9llu %9.1f %12.2f  batch %u pp %u m %u\n", bc->title, wall,
               (unsigned long long)res->stats.dp_runs, peak_rss_mib(), res->best.samples_per_s,
               res->best.global_batch, res->best.pp, res->best.n_micro);
        print_baselines(res);
    }
    tsl_model_free(&m);
    tsl_cluster_free(&c);
    return rc != TSL_SEARCH_OK;
}

int main(int argc, char **argv)
{
    tsl_search_result_t *res = malloc(sizeof(*res));
    if (res == NULL)
        return 1;
    printf("%-34s %10s %9s %9s %12s\n", "case", "wall", "DP runs", "RSS MiB", "samples/s");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (argc > 1 && strstr(cases[i].title, argv[1]) == NULL)
            continue;
        run_case(&cases[i], res);
    }
    printf("peak RSS of the whole run: %.1f MiB\n", peak_rss_mib());
    free(res);
    return 0;
}
