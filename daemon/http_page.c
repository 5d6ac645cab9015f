/*
 * http_page.c — the status page's HTML (see http_page.h).
 *
 * Everything is rendered from the HTTP thread's read-only store connection, so
 * a slow page never holds the lock the gRPC handlers write under. Tables stop
 * at TSL_PAGE_MAX_ROWS and say how many were left out.
 */
#include "http_page.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fingerprint.h"
#include "http_html.h"
#include "http_overview.h"
#include "http_trials.h"
#include "store_registry.h"

#define CHART_MAX_STAGES 256
#define CHART_ROW_H      26
#define CHART_BAR_W      240.0 /* each panel's full-scale bar */

static const char PAGE_HEAD[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width\">\n"
    "<title>tesseld</title>\n<style>\n"
    "body{font-family:sans-serif;margin:1.5em;color:#222;font-size:15px}\n"
    "h2{margin:1.2em 0 .4em;border-bottom:2px solid #ccd}h3{margin:.8em 0 .3em}\n"
    "table{border-collapse:collapse;margin-bottom:1em}\n"
    "table.fixed{table-layout:fixed;width:100%}table.kv{width:36em}table.kv th{width:9em}\n"
    "th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top;"
    "overflow-wrap:anywhere}\nth{background:#f3f4f8;font-weight:600;overflow-wrap:break-word}\n"
    "table.trials{font-size:13px}\n"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "td.fp,td.id,span.id,code{font-family:monospace}\nsvg{max-width:100%}svg text{font-size:12px}\n"
    "rect.time{fill:#4878a8}rect.mem{fill:#e0a040}line.budget{stroke:#c00;stroke-width:2}\n"
    "tr.chosen td{font-weight:bold}td.reason{color:#a00}td.bad{color:#a00}td.good{color:#070}\n"
    "rect.pred{fill:#a8c4e0}rect.meas{fill:#2a5480}tr.alert td{background:#fdecea}\n"
    "ul#alerts li.alert{color:#a00}ul#alerts li.none{color:#070}\n"
    "details.profile{margin:.3em 0}details.profile summary{cursor:pointer;padding:3px 0}\n"
    "td.strategy div{margin:1px 0}p.legend{color:#555;font-size:13px}\n"
    "</style></head><body>\n<h1>tesseld</h1>\n";

static const char PAGE_TAIL[] =
    "<p><a href=\"/\">status</a> &middot; <a href=\"/metrics\">metrics</a> &middot; "
    "<a href=\"/healthz\">healthz</a></p>\n</body></html>\n";

static void limit_para(struct evbuffer *b, size_t n)
{
    if (n > TSL_PAGE_MAX_ROWS)
        evbuffer_add_printf(b, "<p>%zu more not shown.</p>\n", n - TSL_PAGE_MAX_ROWS);
}

/* ---- workers ----------------------------------------------------------------------------- */

typedef struct rows {
    struct evbuffer *b;
    int64_t now;
    size_t n;
} rows_t;

static int add_worker(void *ud, const tsl_reg_worker_t *w)
{
    rows_t *r = ud;
    char s[96];
    if (r->n++ >= TSL_PAGE_MAX_ROWS)
        return 0; /* keep counting */
    evbuffer_add_printf(r->b, "<tr%s>", strcmp(w->state, "offline") == 0 ? " class=\"alert\"" : "");
    tsl_html_cell(r->b, false, w->hostname);
    snprintf(s, sizeof(s), "%u", w->n_devices);
    tsl_html_cell(r->b, true, s);
    tsl_html_cell(r->b, false, w->n_devices > 0 ? w->devices[0].model : "");
    tsl_html_cell(r->b, false, w->state);
    tsl_html_age(s, sizeof(s), r->now, w->last_seen_unix);
    tsl_html_cell(r->b, false, s);
    tsl_html_age(s, sizeof(s), r->now, w->profile_unix);
    tsl_html_cell(r->b, false, s);
    tsl_html_cell(r->b, false, w->simulated ? "simulated" : "measured");
    evbuffer_add_printf(r->b, "</tr>\n");
    return 0;
}

static void add_workers(struct evbuffer *b, const tsl_page_ctx_t *c)
{
    rows_t r = {.b = b, .now = c->now};
    tsl_err_t err = {0};
    evbuffer_add_printf(b, "<section id=\"workers-section\">\n<h2>Workers</h2>\n"
                           "<table id=\"workers\" class=\"fixed\"><thead><tr><th>node</th>"
                           "<th>GPUs</th><th>GPU model</th><th>state</th><th>last seen</th>"
                           "<th>profile age</th><th>profile</th></tr></thead>\n<tbody>\n");
    int rc = tsl_registry_list(c->store, add_worker, &r, &err);
    evbuffer_add_printf(b, "</tbody></table>\n");
    if (rc != 0)
        tsl_html_error(b, "workers", err.msg);
    else if (r.n == 0)
        evbuffer_add_printf(b, "<p>No workers registered.</p>\n");
    limit_para(b, r.n);
    evbuffer_add_printf(b, "</section>\n");
}

/* ---- profiles ---------------------------------------------------------------------------- */

/* A figure's labels (a JSON object of strings or numbers) as its shape, the
 * layer-shape keys first by name: "tokens/micro-batch 8192 · TP 2 · hidden 1024 ·
 * seq 2048 · micro-batch 4 · heads 16 · ffn 4096", then any other key as "key
 * value". Byte counts in readable units. */
static const struct {
    const char *key, *title;
} SHAPE_KEYS[] = {{"tp", "TP"},   {"h", "hidden"},    {"s", "seq"},       {"mb", "micro-batch"},
                  {"a", "heads"}, {"f", "ffn"},       {"m", "m"},         {"n", "n"},
                  {"k", "k"},     {"batch", "batch"}, {"group", "group"}, {"bytes", "size"}};

static void label_text(const json_t *v, char *buf, size_t cap)
{
    if (json_is_string(v))
        snprintf(buf, cap, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
    else if (json_is_number(v))
        snprintf(buf, cap, "%g", json_number_value(v));
    else
        snprintf(buf, cap, "?");
}

static void shape_part(struct evbuffer *b, bool *first, const char *title, const char *value)
{
    evbuffer_add_printf(b, "%s", *first ? "" : " \xC2\xB7 ");
    *first = false;
    tsl_page_escape(b, title);
    evbuffer_add(b, " ", 1);
    tsl_page_escape(b, value);
}

void tsl_page_shape(struct evbuffer *b, const char *labels_json)
{
    json_error_t jerr;
    json_t *o = json_loads(labels_json ? labels_json : "{}", 0, &jerr);
    char v[96], w[96];
    bool first = true;
    if (!json_is_object(o)) {
        tsl_page_escape(b, labels_json);
        goto out;
    }
    label_text(json_object_get(o, "s"), v, sizeof(v));
    label_text(json_object_get(o, "mb"), w, sizeof(w));
    if (json_object_get(o, "s") && json_object_get(o, "mb")) {
        snprintf(v, sizeof(v), "%.0f", strtod(v, NULL) * strtod(w, NULL));
        shape_part(b, &first, "tokens/micro-batch", v);
    }
    for (size_t i = 0; i < sizeof(SHAPE_KEYS) / sizeof(SHAPE_KEYS[0]); i++) {
        const json_t *x = json_object_get(o, SHAPE_KEYS[i].key);
        if (x == NULL)
            continue;
        label_text(x, v, sizeof(v));
        if (strcmp(SHAPE_KEYS[i].key, "bytes") == 0)
            tsl_html_bytes(v, sizeof(v), strtod(v, NULL));
        else if (strcmp(SHAPE_KEYS[i].key, "f") == 0 && v[0] != '\0' && v[strlen(v) - 1] == 'g')
            snprintf(v + strlen(v) - 1, sizeof(v) - strlen(v) + 1, " (gated)");
        shape_part(b, &first, SHAPE_KEYS[i].title, v);
    }
    const char *key;
    json_t *x;
    json_object_foreach(o, key, x)
    {
        bool known = false;
        for (size_t i = 0; i < sizeof(SHAPE_KEYS) / sizeof(SHAPE_KEYS[0]) && !known; i++)
            known = strcmp(SHAPE_KEYS[i].key, key) == 0;
        if (known)
            continue;
        label_text(x, v, sizeof(v));
        shape_part(b, &first, key, v);
    }
out:
    json_decref(o);
}

/* Figures arrive ordered by GPU model, then source: one <details> per (model,
 * source), its rows gathered in rows and written when the next group starts
 * (the summary counts them). */
typedef struct profile_groups {
    struct evbuffer *b, *rows;
    int64_t now;
    size_t n, n_groups, in_group;
    char model[256];
    bool simulated, open;
    int64_t newest;
} profile_groups_t;

static void group_flush(profile_groups_t *g)
{
    char age[64];
    if (!g->open)
        return;
    tsl_html_age(age, sizeof(age), g->now, g->newest);
    evbuffer_add_printf(g->b, "<details class=\"profile\" id=\"profile-%zu\"><summary><strong>",
                        g->n_groups);
    tsl_page_escape(g->b, g->model);
    evbuffer_add_printf(g->b,
                        "</strong> (%s): %zu figure%s, newest %s</summary>\n"
                        "<table class=\"fixed\"><colgroup><col style=\"width:16%%\">"
                        "<col style=\"width:44%%\"><col style=\"width:8%%\">"
                        "<col style=\"width:12%%\"><col style=\"width:8%%\">"
                        "<col style=\"width:12%%\"></colgroup>"
                        "<thead><tr><th>figure</th><th>shape</th><th>link</th><th>value</th>"
                        "<th>samples</th><th>measured</th></tr></thead>\n<tbody>\n",
                        g->simulated ? "simulated" : "measured", g->in_group,
                        g->in_group == 1 ? "" : "s", age);
    evbuffer_add_buffer(g->b, g->rows);
    evbuffer_add_printf(g->b, "</tbody></table></details>\n");
    g->open = false;
    g->n_groups++;
}

static int add_measurement(void *ud, const tsl_reg_measurement_t *m)
{
    profile_groups_t *g = ud;
    char s[64];
    if (g->n++ >= TSL_PAGE_MAX_ROWS)
        return 0;
    if (!g->open || strcmp(g->model, m->gpu_model) != 0 || g->simulated != m->simulated) {
        group_flush(g);
        snprintf(g->model, sizeof(g->model), "%s", m->gpu_model);
        g->simulated = m->simulated;
        g->open = true;
        g->in_group = 0;
        g->newest = 0;
    }
    g->in_group++;
    g->newest = m->measured_unix > g->newest ? m->measured_unix : g->newest;
    evbuffer_add_printf(g->rows, "<tr>");
    tsl_html_cell(g->rows, false, m->name);
    evbuffer_add_printf(g->rows, "<td class=\"shape\">");
    tsl_page_shape(g->rows, m->labels_json);
    evbuffer_add_printf(g->rows, "</td>");
    tsl_html_cell(g->rows, false, m->link_class);
    tsl_html_value(s, sizeof(s), m->value, m->unit);
    tsl_html_cell(g->rows, true, s);
    snprintf(s, sizeof(s), "%u", m->n_samples);
    tsl_html_cell(g->rows, true, s);
    tsl_html_age(s, sizeof(s), g->now, m->measured_unix);
    tsl_html_cell(g->rows, false, s);
    evbuffer_add_printf(g->rows, "</tr>\n");
    return 0;
}

static void add_profiles(struct evbuffer *b, const tsl_page_ctx_t *c)
{
    profile_groups_t g = {.b = b, .rows = evbuffer_new(), .now = c->now};
    tsl_err_t err = {0};
    evbuffer_add_printf(b, "<section id=\"profiles\">\n<h2>Profiles</h2>\n");
    if (g.rows == NULL) {
        tsl_html_error(b, "profiles", "out of memory");
        goto out;
    }
    int rc = tsl_registry_profile(c->store, "", NULL, add_measurement, &g, &err);
    group_flush(&g);
    if (rc != 0)
        tsl_html_error(b, "profiles", err.msg);
    else if (g.n == 0)
        evbuffer_add_printf(b, "<p>No profiles reported.</p>\n");
    else
        evbuffer_add_printf(b, "<p>One entry per GPU model and source (open it for its "
                               "figures, each with the shape it was measured at).</p>\n");
    limit_para(b, g.n);
    evbuffer_free(g.rows);
out:
    evbuffer_add_printf(b, "</section>\n");
}

/* ---- plans ------------------------------------------------------------------------------- */

static int add_plan_row(void *ud, const tsl_stored_plan_t *p)
{
    rows_t *r = ud;
    char when[32], s[32];
    struct tm tm;
    time_t t = (time_t)p->created_unix;
    if (gmtime_r(&t, &tm) == NULL || strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(when, sizeof(when), "%lld", (long long)p->created_unix);
    evbuffer_add_printf(r->b, "<tr%s><td class=\"fp\">", p->stale ? " class=\"alert\"" : "");
    if (tsl_html_is_fingerprint(p->fingerprint))
        evbuffer_add_printf(r->b, "<a href=\"/plan/%s\">%s</a>", p->fingerprint, p->fingerprint);
    else
        tsl_page_escape(r->b, p->fingerprint);
    evbuffer_add_printf(r->b, "</td>");
    tsl_html_cell(r->b, false, p->model_name);
    tsl_html_cellf(r->b, "%.0f", p->n_devices);
    tsl_html_cellf(r->b, "%.0f", p->global_batch);
    tsl_html_sig3(s, sizeof(s), p->samples_per_s);
    tsl_html_cell(r->b, true, s);
    tsl_html_cell_bytes(r->b, (double)p->peak_bytes);
    tsl_html_cell(r->b, false, p->stale ? "stale" : "fresh");
    tsl_html_cell(r->b, false, when);
    evbuffer_add_printf(r->b, "</tr>\n");
    r->n++;
    return 0;
}

static void add_plans(struct evbuffer *b, const tsl_page_ctx_t *c)
{
    tsl_plan_filter_t f = {.stale = -1, .page_size = TSL_PAGE_MAX_ROWS};
    rows_t r = {.b = b, .now = c->now};
    char next[128];
    tsl_err_t err = {0};
    int64_t total = tsl_store_count_plans(c->store);
    evbuffer_add_printf(b, "<section id=\"plans-section\">\n<h2>Cached plans</h2>\n"
                           "<table id=\"plans\" class=\"fixed\"><colgroup>"
                           "<col style=\"width:15%%\"><col style=\"width:21%%\">"
                           "<col style=\"width:8%%\"><col style=\"width:8%%\">"
                           "<col style=\"width:10%%\"><col style=\"width:11%%\">"
                           "<col style=\"width:8%%\"><col style=\"width:19%%\"></colgroup>"
                           "<thead><tr>"
                           "<th>fingerprint</th><th>model</th><th>devices</th><th>batch</th>"
                           "<th>samples/s</th><th>peak memory</th><th>stale</th>"
                           "<th>created (UTC)</th></tr></thead>\n<tbody>\n");
    int rc = tsl_store_list_plans(c->store, &f, add_plan_row, &r, next, sizeof(next), &err);
    evbuffer_add_printf(b, "</tbody></table>\n");
    if (rc != 0)
        tsl_html_error(b, "plans", err.msg);
    else
        evbuffer_add_printf(b, "<p>%zu shown of %lld stored (newest first).</p>\n", r.n,
                            (long long)total);
    evbuffer_add_printf(b, "</section>\n");
}

void tsl_page_status(struct evbuffer *b, const tsl_page_ctx_t *c)
{
    evbuffer_add(b, PAGE_HEAD, sizeof(PAGE_HEAD) - 1);
    tsl_page_overview(b, c);
    if (c->store != NULL) {
        add_workers(b, c);
        add_plans(b, c);
        tsl_page_trials(b, c);
        tsl_page_calibrations(b, c);
        add_profiles(b, c);
    } else {
        evbuffer_add_printf(b, "<p>No store attached.</p>\n");
    }
    evbuffer_add(b, PAGE_TAIL, sizeof(PAGE_TAIL) - 1);
}

/* ---- one plan: stages and the chart -------------------------------------------------------- */

static double num(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

/* One <g class="stage"> per stage: a time bar (time per micro-batch, scaled to the
 * slowest stage) and a memory bar (peak, scaled to the budget or the largest
 * peak) with the budget as a red line. Plain SVG: no script, no fonts fetched. */
static void add_chart(struct evbuffer *b, const json_t *stages, double budget)
{
    size_t n = json_array_size(stages);
    double tmax = 0, mmax = budget;
    if (n > CHART_MAX_STAGES)
        n = CHART_MAX_STAGES;
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(stages, i);
        tmax = num(s, "time_s") > tmax ? num(s, "time_s") : tmax;
        mmax = num(s, "peak_bytes") > mmax ? num(s, "peak_bytes") : mmax;
    }
    int h = 30 + CHART_ROW_H * (int)n;
    char bud[32], ts[32], ms[32];
    tsl_html_bytes(bud, sizeof(bud), budget);
    evbuffer_add_printf(b,
                        "<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"680\" "
                        "height=\"%d\" viewBox=\"0 0 680 %d\" role=\"img\">\n"
                        "<text x=\"80\" y=\"16\">time per micro-batch</text>\n"
                        "<text x=\"400\" y=\"16\">peak memory vs budget %s (red)</text>\n",
                        h, h, bud);
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(stages, i);
        double t = num(s, "time_s"), pk = num(s, "peak_bytes");
        double tw = tmax > 0 ? CHART_BAR_W * t / tmax : 0;
        double mw = mmax > 0 ? CHART_BAR_W * pk / mmax : 0;
        int y = 24 + CHART_ROW_H * (int)i;
        tsl_html_seconds(ts, sizeof(ts), t);
        tsl_html_bytes(ms, sizeof(ms), pk);
        evbuffer_add_printf(b,
                            "<g class=\"stage\" data-stage=\"%zu\">"
                            "<text x=\"4\" y=\"%d\">stage %zu</text>"
                            "<rect class=\"time\" x=\"80\" y=\"%d\" width=\"%.1f\" height=\"18\">"
                            "<title>%s</title></rect>"
                            "<text x=\"%.1f\" y=\"%d\">%s</text>"
                            "<rect class=\"mem\" x=\"400\" y=\"%d\" width=\"%.1f\" height=\"18\">"
                            "<title>%s</title></rect>"
                            "<text x=\"%.1f\" y=\"%d\">%s</text></g>\n",
                            i, y + 13, i, y, tw, ts, 84 + tw, y + 13, ts, y, mw, ms, 404 + mw,
                            y + 13, ms);
    }
    if (budget > 0 && mmax > 0)
        evbuffer_add_printf(b,
                            "<line class=\"budget\" x1=\"%.1f\" y1=\"20\" x2=\"%.1f\" "
                            "y2=\"%d\"><title>budget %s</title></line>\n",
                            400 + CHART_BAR_W * budget / mmax, 400 + CHART_BAR_W * budget / mmax,
                            h - 4, bud);
    evbuffer_add_printf(b, "</svg>\n");
}

/* "tp2-dp4+ckpt" → "TP 2 × DP 4, recompute" (docs/search-space.md: levels
 * innermost first, then "+" switches). Unknown tokens stand as written. */
void tsl_page_strategy(char *buf, size_t cap, const char *strategy)
{
    static const struct {
        const char *prefix, *title;
    } DIMS[] = {
        {"sdp", "SDP (ZeRO-3) "}, {"tp", "TP "}, {"dp", "DP "}, {"cp", "CP "}, {"ep", "EP "}};
    static const struct {
        const char *name, *title;
    } SWITCHES[] = {{"ckpt", "recompute"},       {"selckpt", "selective recompute"},
                    {"sp", "sequence parallel"}, {"zero1", "ZeRO-1"},
                    {"zero2", "ZeRO-2"},         {"zero3", "ZeRO-3"},
                    {"offload", "CPU offload"}};
    char tok[64];
    size_t n = 0;
    const char *p = strategy;
    buf[0] = '\0';
    if (strcmp(strategy, "single") == 0 || strncmp(strategy, "single+", 7) == 0) {
        n += (size_t)snprintf(buf, cap, "one GPU");
        p = strategy + 6;
    }
    while (*p != '\0' && n < cap) {
        char sep = *p == '-' || *p == '+' ? *p++ : '\0';
        size_t len = strcspn(p, "-+");
        snprintf(tok, sizeof(tok), "%.*s", (int)(len < sizeof(tok) ? len : sizeof(tok) - 1), p);
        p += len;
        const char *title = NULL;
        if (sep == '+') {
            for (size_t i = 0; i < sizeof(SWITCHES) / sizeof(SWITCHES[0]) && !title; i++)
                title = strcmp(tok, SWITCHES[i].name) == 0 ? SWITCHES[i].title : NULL;
            n += (size_t)snprintf(buf + n, cap - n, ", %s", title ? title : tok);
            continue;
        }
        for (size_t i = 0; i < sizeof(DIMS) / sizeof(DIMS[0]) && !title; i++) {
            size_t k = strlen(DIMS[i].prefix);
            if (strncmp(tok, DIMS[i].prefix, k) == 0 && tok[k] >= '1' && tok[k] <= '9') {
                title = DIMS[i].title;
                n += (size_t)snprintf(buf + n, cap - n, "%s%s%s", n > 0 ? " \xC3\x97 " : "", title,
                                      tok + k);
            }
        }
        if (title == NULL)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", n > 0 ? " \xC3\x97 " : "", tok);
    }
}

/* "first–last (count)", or the plan's own span text ("[7.5, 13)") for sublayer plans. */
static void span_cell(struct evbuffer *b, double first, double count, const json_t *text)
{
    char s[96];
    if (json_is_string(text))
        snprintf(s, sizeof(s), "%s", json_string_value(text));
    else if (count <= 1)
        snprintf(s, sizeof(s), "%.0f", first);
    else
        snprintf(s, sizeof(s), "%.0f\xE2\x80\x93%.0f (%.0f)", first, first + count - 1, count);
    tsl_html_cell(b, false, s);
}

/* Each run of consecutive layers sharing a strategy: "<code>tp2-dp2</code> layers
 * 0–11: TP 2 × DP 2". */
static void strategy_cell(struct evbuffer *b, const json_t *runs)
{
    char desc[256];
    evbuffer_add_printf(b, "<td class=\"strategy\">");
    if (!json_is_array(runs) || json_array_size(runs) == 0)
        evbuffer_add_printf(b, "-");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        const json_t *r = json_array_get(runs, i);
        const char *st = json_string_value(json_object_get(r, "strategy"));
        double first = num(r, "first_layer"), count = num(r, "count");
        const json_t *layers = json_object_get(r, "layers");
        evbuffer_add_printf(b, "<div><code>");
        tsl_page_escape(b, st ? st : "?");
        evbuffer_add_printf(b, "</code> ");
        if (json_is_string(layers)) {
            evbuffer_add_printf(b, "layers ");
            tsl_page_escape(b, json_string_value(layers));
        } else if (count <= 1) {
            evbuffer_add_printf(b, "layer %.0f", first);
        } else {
            evbuffer_add_printf(b, "layers %.0f\xE2\x80\x93%.0f", first, first + count - 1);
        }
        tsl_page_strategy(desc, sizeof(desc), st ? st : "");
        evbuffer_add_printf(b, ": ");
        tsl_page_escape(b, desc);
        evbuffer_add_printf(b, "</div>");
    }
    evbuffer_add_printf(b, "</td>");
}

static void add_stage_table(struct evbuffer *b, const json_t *stages)
{
    evbuffer_add_printf(b, "<table id=\"stages\" class=\"fixed\"><colgroup>"
                           "<col style=\"width:5%%\"><col style=\"width:9%%\">"
                           "<col style=\"width:8%%\"><col style=\"width:36%%\">"
                           "<col style=\"width:9%%\"><col style=\"width:8%%\">"
                           "<col style=\"width:8%%\"><col style=\"width:8%%\">"
                           "<col style=\"width:9%%\"></colgroup>"
                           "<thead><tr><th>stage</th><th>layers</th><th>devices</th>"
                           "<th>strategies (per run of layers)</th><th>time / micro-batch</th>"
                           "<th>p2p</th><th>model states</th><th>activations</th>"
                           "<th>peak memory</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < json_array_size(stages) && i < CHART_MAX_STAGES; i++) {
        const json_t *s = json_array_get(stages, i);
        evbuffer_add_printf(b, "<tr class=\"stage\">");
        tsl_html_cellf(b, "%.0f", (double)i);
        span_cell(b, num(s, "first_layer"), num(s, "n_layers"), json_object_get(s, "layers"));
        span_cell(b, num(s, "first_device"), num(s, "n_devices"), NULL);
        strategy_cell(b, json_object_get(s, "runs"));
        tsl_html_cell_seconds(b, num(s, "time_s"));
        tsl_html_cell_seconds(b, num(s, "p2p_s"));
        char m[32];
        const char *keys[] = {"ms_bytes", "act_bytes", "peak_bytes"};
        for (size_t k = 0; k < 3; k++) {
            tsl_html_bytes(m, sizeof(m), num(s, keys[k]));
            evbuffer_add_printf(b, "<td class=\"n mem\">%s</td>", m);
        }
        evbuffer_add_printf(b, "</tr>\n");
    }
    evbuffer_add_printf(b, "</tbody></table>\n"
                           "<p class=\"legend\">Strategies innermost level first "
                           "(docs/search-space.md): TP tensor parallel, DP data parallel, "
                           "SDP sharded data parallel (ZeRO-3), +ckpt recompute (activation "
                           "checkpointing), +selckpt selective recompute, +sp sequence "
                           "parallel, +zero1/+zero2 ZeRO stage of the DP level. Memory is per "
                           "device; model states are weights, gradients and optimizer "
                           "states.</p>\n");
}

static void add_plan_body(struct evbuffer *b, const tsl_stored_plan_t *p)
{
    json_error_t jerr;
    json_t *root = json_loads(p->result_json ? p->result_json : "", 0, &jerr);
    const json_t *plan = json_object_get(root, "plan");
    const json_t *stages = json_object_get(plan, "stages");
    const json_t *memopt = json_object_get(plan, "memopt");
    char it[32], peak[32], budget[32], sps[32];
    tsl_html_seconds(it, sizeof(it), p->iter_time_s);
    tsl_html_bytes(peak, sizeof(peak), (double)p->peak_bytes);
    tsl_html_bytes(budget, sizeof(budget), num(plan, "budget_bytes"));
    tsl_html_sig3(sps, sizeof(sps), p->samples_per_s);
    evbuffer_add_printf(b, "<h2>Plan <span class=\"fp\">");
    tsl_page_escape(b, p->fingerprint);
    evbuffer_add_printf(b, "</span></h2>\n<p>");
    tsl_page_escape(b, p->model_name);
    evbuffer_add_printf(b, " on %u devices, global batch %u: %s samples/s, iteration %s, peak %s",
                        p->n_devices, p->global_batch, sps, it, peak);
    if (num(plan, "budget_bytes") > 0)
        evbuffer_add_printf(b, " of a %s budget", budget);
    evbuffer_add_printf(b, "%s.", p->stale ? " (stale)" : "");
    if (json_is_object(plan))
        evbuffer_add_printf(b, " %.0f pipeline stage%s, micro-batch %.0f \xC3\x97 %.0f.",
                            num(plan, "pp"), num(plan, "pp") == 1 ? "" : "s",
                            num(plan, "micro_batch"), num(plan, "n_micro"));
    if (json_is_string(json_object_get(memopt, "mode"))) {
        evbuffer_add_printf(b, " Memory optimisation: ");
        tsl_page_escape(b, json_string_value(json_object_get(memopt, "mode")));
        evbuffer_add_printf(b, ".");
    }
    evbuffer_add_printf(b, "</p>\n");
    if (!json_is_array(stages) || json_array_size(stages) == 0) {
        evbuffer_add_printf(b, "<p>The stored result has no stages to chart.</p>\n");
        goto out;
    }
    add_chart(b, stages, num(plan, "budget_bytes"));
    add_stage_table(b, stages);
out:
    json_decref(root);
}

int tsl_page_plan(struct evbuffer *b, const tsl_page_ctx_t *c, const char *fingerprint)
{
    tsl_stored_plan_t p = {0};
    tsl_err_t err = {0};
    char fp[TSL_FINGERPRINT_LEN + 1]; /* either case, as GetPlan takes it; stored lowercase */
    if (c->store == NULL || tsl_fingerprint_parse(fingerprint, fp, NULL) != 0)
        return 1;
    int rc = tsl_store_get_plan(c->store, fp, &p, &err);
    if (rc == 1)
        goto out;
    evbuffer_add(b, PAGE_HEAD, sizeof(PAGE_HEAD) - 1);
    if (rc != 0)
        tsl_html_error(b, "the plan", err.msg);
    else {
        add_plan_body(b, &p);
        tsl_page_plan_trials(b, c, p.fingerprint);
    }
    evbuffer_add(b, PAGE_TAIL, sizeof(PAGE_TAIL) - 1);
out:
    tsl_stored_plan_clear(&p);
    return rc;
}
