/*
 * test_metrics.c — counters, histogram and gauges, and the exposition text: every
 * line is parsed (HELP/TYPE before samples, label syntax, values), the histogram
 * is cumulative with ascending le ending in +Inf == _count.
 */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "metrics.h"

/* ---- a small exposition-format parser ---------------------------------------------------- */

typedef struct sample {
    char name[96];
    char labels[256]; /* raw, between the braces */
    double value;
} sample_t;

typedef struct family {
    char name[96];
    char type[16];
    int has_help;
} family_t;

typedef struct parsed {
    sample_t samples[512];
    int n_samples;
    family_t families[32];
    int n_families;
    int errors;
} parsed_t;

static int valid_name(const char *s, size_t n)
{
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == ':'))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == ':'))
            return 0;
    return 1;
}

/* label="value",label="value" with \\ \" \n escapes only. */
static int valid_labels(const char *s)
{
    while (*s) {
        const char *eq = strchr(s, '=');
        if (eq == NULL || !valid_name(s, (size_t)(eq - s)) || eq[1] != '"')
            return 0;
        s = eq + 2;
        while (*s && *s != '"') {
            if (*s == '\\') {
                if (s[1] != '\\' && s[1] != '"' && s[1] != 'n')
                    return 0;
                s++;
            }
            if (*s == '\n')
                return 0;
            s++;
        }
        if (*s != '"')
            return 0;
        s++;
        if (*s == ',')
            s++;
        else if (*s != '\0')
            return 0;
    }
    return 1;
}

static family_t *family_of(parsed_t *p, const char *sample_name)
{
    for (int i = 0; i < p->n_families; i++) {
        size_t n = strlen(p->families[i].name);
        if (strncmp(sample_name, p->families[i].name, n) != 0)
            continue;
        const char *rest = sample_name + n;
        if (*rest == '\0')
            return &p->families[i];
        if (strcmp(p->families[i].type, "histogram") == 0 &&
            (!strcmp(rest, "_bucket") || !strcmp(rest, "_sum") || !strcmp(rest, "_count")))
            return &p->families[i];
    }
    return NULL;
}

static void parse_comment(parsed_t *p, const char *line)
{
    char kw[8], name[96], rest[256];
    if (sscanf(line, "# %7s %95s %255[^\n]", kw, name, rest) != 3) {
        p->errors++;
        return;
    }
    family_t *f = NULL;
    for (int i = 0; i < p->n_families; i++)
        if (strcmp(p->families[i].name, name) == 0)
            f = &p->families[i];
    if (f == NULL && p->n_families < 32) {
        f = &p->families[p->n_families++];
        snprintf(f->name, sizeof(f->name), "%s", name);
    }
    if (f == NULL || !valid_name(name, strlen(name))) {
        p->errors++;
    } else if (strcmp(kw, "HELP") == 0) {
        f->has_help = 1;
    } else if (strcmp(kw, "TYPE") == 0) {
        if (strcmp(rest, "counter") && strcmp(rest, "gauge") && strcmp(rest, "histogram"))
            p->errors++;
        snprintf(f->type, sizeof(f->type), "%.15s", rest);
    } else {
        p->errors++;
    }
}

static void parse_sample(parsed_t *p, const char *line)
{
    sample_t *s = &p->samples[p->n_samples];
    const char *brace = strchr(line, '{'), *space = strchr(line, ' ');
    if (space == NULL || p->n_samples >= 512) {
        p->errors++;
        return;
    }
    const char *name_end = brace && brace < space ? brace : space;
    snprintf(s->name, sizeof(s->name), "%.*s", (int)(name_end - line), line);
    s->labels[0] = '\0';
    if (brace && brace < space) {
        const char *close = strrchr(line, '}');
        if (close == NULL) {
            p->errors++;
            return;
        }
        snprintf(s->labels, sizeof(s->labels), "%.*s", (int)(close - brace - 1), brace + 1);
        space = close + 1;
        if (*space != ' ') {
            p->errors++;
            return;
        }
    }
    char *end = NULL;
    s->value = strtod(space + 1, &end);
    family_t *f = family_of(p, s->name);
    if (!valid_name(s->name, strlen(s->name)) || !valid_labels(s->labels) || end == space + 1 ||
        *end != '\0' || f == NULL || f->type[0] == '\0' || !f->has_help)
        p->errors++;
    p->n_samples++;
}

static void parse(const char *text, parsed_t *p)
{
    memset(p, 0, sizeof(*p));
    const char *line = text;
    size_t len = strlen(text);
    if (len == 0 || text[len - 1] != '\n')
        p->errors++;
    while (*line) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        char buf[512];
        snprintf(buf, sizeof(buf), "%.*s", (int)n, line);
        if (buf[0] == '#')
            parse_comment(p, buf);
        else if (buf[0] != '\0')
            parse_sample(p, buf);
        else
            p->errors++; /* no blank lines in our output */
        line += n + (nl != NULL);
    }
}

static const sample_t *find(const parsed_t *p, const char *name, const char *labels)
{
    for (int i = 0; i < p->n_samples; i++)
        if (strcmp(p->samples[i].name, name) == 0 && strcmp(p->samples[i].labels, labels) == 0)
            return &p->samples[i];
    return NULL;
}

static double value(const parsed_t *p, const char *name, const char *labels)
{
    const sample_t *s = find(p, name, labels);
    return s ? s->value : -1;
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void test_empty(void)
{
    tsl_metrics_t *m = tsl_metrics_new();
    char *text = tsl_metrics_render(m);
    parsed_t *p = malloc(sizeof(*p));
    parse(text, p);
    CHECK(p->errors == 0, "empty render parses:\n%s", text);
    CHECK(value(p, "tessel_search_seconds_count", "") == 0, "zero count");
    CHECK(value(p, "tessel_search_seconds_bucket", "le=\"+Inf\"") == 0, "+Inf bucket present");
    CHECK(value(p, "tessel_plans_stored", "") == 0, "plans gauge");
    free(p);
    free(text);
    tsl_metrics_free(m);
}

/* tessel_workers{state}: left out until the daemon counted once (a 0 would read
 * as every worker gone), then one sample per state; a cancel and a skipped plan are
 * trial events. */
static void test_workers(void)
{
    tsl_metrics_t *m = tsl_metrics_new();
    char *text = tsl_metrics_render(m);
    CHECK(strstr(text, "tessel_workers") == NULL, "no worker gauge before the first count");
    free(text);
    tsl_metrics_set_workers(m, 3, 1, 2);
    tsl_metrics_trial(m, "cancelled");
    tsl_metrics_trial(m, "failed");
    tsl_metrics_trial(m, "skipped");
    tsl_metrics_trial(m, "skipped");
    text = tsl_metrics_render(m);
    parsed_t *p = malloc(sizeof(*p));
    parse(text, p);
    CHECK(p->errors == 0, "render with workers parses:\n%s", text);
    CHECK(value(p, "tessel_workers", "state=\"online\"") == 3, "online");
    CHECK(value(p, "tessel_workers", "state=\"offline\"") == 1, "offline");
    CHECK(value(p, "tessel_workers", "state=\"stopped\"") == 2, "stopped");
    CHECK(value(p, "tessel_trials_total", "event=\"cancelled\"") == 1, "cancelled counted");
    CHECK(value(p, "tessel_trials_total", "event=\"failed\"") == 1, "failed apart from it");
    CHECK(value(p, "tessel_trials_total", "event=\"skipped\"") == 2, "skipped plans counted");
    tsl_metrics_set_workers(m, 0, 3, 3);
    free(text);
    text = tsl_metrics_render(m);
    parse(text, p);
    CHECK(value(p, "tessel_workers", "state=\"online\"") == 0 &&
              value(p, "tessel_workers", "state=\"offline\"") == 3,
          "the gauge follows the last count");
    free(p);
    free(text);
    tsl_metrics_free(m);
}

static void test_values(void)
{
    tsl_metrics_t *m = tsl_metrics_new();
    tsl_metrics_request(m, "Planner.Plan", 0);
    tsl_metrics_request(m, "Planner.Plan", 0);
    tsl_metrics_request(m, "Planner.Plan", 8);
    tsl_metrics_request(m, "Planner.GetPlan", 5);
    tsl_metrics_request(m, "Odd\"name\\x\n", 16);
    tsl_metrics_request(m, "Planner.Plan", 99); /* out of range → UNKNOWN */
    tsl_metrics_search_time(m, 0.005);
    tsl_metrics_search_time(m, 0.01); /* le is inclusive */
    tsl_metrics_search_time(m, 3.0);
    tsl_metrics_search_time(m, 601);
    tsl_metrics_search_time(m, -1); /* ignored */
    tsl_metrics_cache(m, 1);
    tsl_metrics_cache(m, 1);
    tsl_metrics_cache(m, 0);
    tsl_metrics_set_queue(m, 3, 2);
    tsl_metrics_set_plans(m, 42);
    char *text = tsl_metrics_render(m);
    parsed_t *p = malloc(sizeof(*p));
    parse(text, p);
    CHECK(p->errors == 0, "render parses (%d errors):\n%s", p->errors, text);
    CHECK(value(p, "tessel_requests_total", "method=\"Planner.Plan\",code=\"OK\"") == 2, "Plan OK");
    CHECK(value(p, "tessel_requests_total",
                "method=\"Planner.Plan\",code=\"RESOURCE_EXHAUSTED\"") == 1,
          "exhausted");
    CHECK(value(p, "tessel_requests_total", "method=\"Planner.GetPlan\",code=\"NOT_FOUND\"") == 1,
          "not found");
    CHECK(value(p, "tessel_requests_total", "method=\"Planner.Plan\",code=\"UNKNOWN\"") == 1,
          "unknown code");
    CHECK(value(p, "tessel_requests_total",
                "method=\"Odd\\\"name\\\\x\\n\",code=\"UNAUTHENTICATED\"") == 1,
          "label escaping");
    CHECK(value(p, "tessel_search_seconds_bucket", "le=\"0.01\"") == 2, "0.01 bucket");
    CHECK(value(p, "tessel_search_seconds_bucket", "le=\"2.5\"") == 2, "2.5 bucket");
    CHECK(value(p, "tessel_search_seconds_bucket", "le=\"5\"") == 3, "5 bucket");
    CHECK(value(p, "tessel_search_seconds_bucket", "le=\"600\"") == 3, "600 bucket");
    CHECK(value(p, "tessel_search_seconds_bucket", "le=\"+Inf\"") == 4, "+Inf");
    CHECK(value(p, "tessel_search_seconds_count", "") == 4, "count");
    CHECK_NEAR(value(p, "tessel_search_seconds_sum", ""), 604.015, 1e-12, "sum");
    CHECK(value(p, "tessel_plan_cache_hits_total", "") == 2, "hits");
    CHECK(value(p, "tessel_plan_cache_misses_total", "") == 1, "misses");
    CHECK(value(p, "tessel_search_queue_depth", "") == 3, "queue");
    CHECK(value(p, "tessel_searches_running", "") == 2, "running");
    CHECK(value(p, "tessel_plans_stored", "") == 42, "plans");
    /* Buckets: le ascending, counts cumulative, the last is +Inf. */
    double last_le = -1, last_count = -1;
    int ok = 1, n_buckets = 0;
    for (int i = 0; i < p->n_samples; i++) {
        const sample_t *s = &p->samples[i];
        if (strcmp(s->name, "tessel_search_seconds_bucket") != 0)
            continue;
        double le =
            strncmp(s->labels, "le=\"+Inf\"", 9) == 0 ? INFINITY : strtod(s->labels + 4, NULL);
        ok &= le > last_le && s->value >= last_count;
        last_le = le;
        last_count = s->value;
        n_buckets++;
    }
    CHECK(ok && isinf(last_le) && n_buckets == 16, "histogram shape (%d buckets)", n_buckets);
    CHECK(strstr(text, "le=\"0.01\"") && strstr(text, "le=\"600\""), "bucket range 0.01 … 600");
    const char *families[] = {"tessel_requests_total",        "tessel_search_seconds",
                              "tessel_plan_cache_hits_total", "tessel_plan_cache_misses_total",
                              "tessel_search_queue_depth",    "tessel_searches_running",
                              "tessel_plans_stored"};
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
        int found = 0;
        for (int k = 0; k < p->n_families; k++)
            found |= strcmp(p->families[k].name, families[i]) == 0 && p->families[k].has_help &&
                     p->families[k].type[0];
        CHECK(found, "%s has HELP and TYPE", families[i]);
    }
    free(p);
    free(text);
    tsl_metrics_free(m);
}

static void test_many_methods(void)
{
    tsl_metrics_t *m = tsl_metrics_new();
    for (int i = 0; i < 300; i++) {
        char name[32];
        snprintf(name, sizeof(name), "M%d", i);
        tsl_metrics_request(m, name, i % 3);
    }
    char *text = tsl_metrics_render(m);
    parsed_t *p = malloc(sizeof(*p));
    parse(text, p);
    CHECK(p->errors == 0, "parses");
    double total = 0;
    int others = 0;
    for (int i = 0; i < p->n_samples; i++) {
        if (strcmp(p->samples[i].name, "tessel_requests_total") == 0) {
            total += p->samples[i].value;
            others += strstr(p->samples[i].labels, "method=\"other\"") != NULL;
        }
    }
    CHECK(total == 300, "nothing lost past the series cap: %g", total);
    CHECK(others == 3, "overflow lumped into method=other by code: %d", others);
    free(p);
    free(text);
    tsl_metrics_free(m);
}

static void *hammer(void *arg)
{
    tsl_metrics_t *m = arg;
    for (int i = 0; i < 20000; i++) {
        tsl_metrics_request(m, i % 2 ? "Planner.Plan" : "Planner.GetPlan", 0);
        tsl_metrics_search_time(m, (i % 100) * 0.1);
        tsl_metrics_cache(m, i % 2);
    }
    return NULL;
}

static void test_threads(void)
{
    tsl_metrics_t *m = tsl_metrics_new();
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, hammer, m);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    char *text = tsl_metrics_render(m);
    parsed_t *p = malloc(sizeof(*p));
    parse(text, p);
    CHECK(value(p, "tessel_requests_total", "method=\"Planner.Plan\",code=\"OK\"") == 40000,
          "no lost updates");
    CHECK(value(p, "tessel_search_seconds_count", "") == 80000, "histogram count");
    CHECK(value(p, "tessel_plan_cache_hits_total", "") == 40000, "hits");
    free(p);
    free(text);
    tsl_metrics_free(m);
}

/* The build and process gauges: values that can be checked against this very
 * process (it is the one rendering). */
static void test_process(void)
{
    tsl_metrics_t *m = tsl_metrics_new();
    char *text = tsl_metrics_render(m);
    parsed_t *p = malloc(sizeof(*p));
    parse(text, p);
    CHECK(p->errors == 0, "process render parses:\n%s", text);
    char lbl[128];
    snprintf(lbl, sizeof(lbl), "version=\"%s\"", TSL_VERSION);
    CHECK(value(p, "tessel_build_info", lbl) == 1, "build_info{%s} 1", lbl);
    double start = value(p, "process_start_time_seconds", "");
    double now = (double)time(NULL);
    CHECK(start > now - 600 && start <= now + 2, "start time %f near now %f", start, now);
    CHECK(value(p, "process_resident_memory_bytes", "") > 100000, "rss");
    CHECK(value(p, "process_cpu_seconds_total", "") >= 0, "cpu seconds");
    /* Opening a descriptor shows in the next render. */
    double fds = value(p, "process_open_fds", "");
    FILE *extra = fopen("/proc/self/stat", "r");
    tsl_proc_stats_t ps;
    tsl_proc_stats(&ps);
    CHECK(fds >= 3 && ps.open_fds == (int64_t)fds + 1, "open fds %f then %lld", fds,
          (long long)ps.open_fds);
    fclose(extra);
    int64_t q, r, n;
    tsl_metrics_set_queue(m, 7, 2);
    tsl_metrics_get_queue(m, &q, &r, &n);
    CHECK(q == 7 && r == 2 && n == 0, "queue getter");
    free(p);
    free(text);
    tsl_metrics_free(m);
}

int main(void)
{
    test_process();
    test_empty();
    test_values();
    test_workers();
    test_many_methods();
    test_threads();
    return CHECK_DONE();
}
