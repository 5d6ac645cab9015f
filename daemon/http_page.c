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
#include <string.h>
#include <time.h>

#include "http_html.h"
#include "http_trials.h"
#include "store_registry.h"

#define GIB              (1024.0 * 1024.0 * 1024.0)
#define CHART_MAX_STAGES 256
#define CHART_ROW_H      26
#define CHART_BAR_W      240.0 /* each panel's full-scale bar */

static const char PAGE_HEAD[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<title>tesseld</title>\n<style>\n"
    "body{font-family:sans-serif;margin:2em;color:#222}\n"
    "table{border-collapse:collapse;margin-bottom:1em}th,td{padding:3px 10px;"
    "border-bottom:1px solid #ddd;text-align:left}\n"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "td.fp{font-family:monospace}\nsvg text{font-size:12px}\n"
    "rect.time{fill:#4878a8}rect.mem{fill:#e0a040}line.budget{stroke:#c00;stroke-width:2}\n"
    "tr.chosen td{font-weight:bold}td.reason{color:#a00}\n"
    "td.id{font-family:monospace;white-space:nowrap}rect.pred{fill:#a8c4e0}rect.meas{fill:#2a5480}"
    "\n"
    "</style></head><body>\n<h1>tesseld</h1>\n";

static const char PAGE_TAIL[] =
    "<p><a href=\"/\">status</a> &middot; <a href=\"/metrics\">metrics</a> &middot; "
    "<a href=\"/healthz\">healthz</a></p>\n</body></html>\n";

static void limit_para(struct evbuffer *b, size_t n)
{
    if (n > TSL_PAGE_MAX_ROWS)
        evbuffer_add_printf(b, "<p>%zu more not shown.</p>\n", n - TSL_PAGE_MAX_ROWS);
}

/* ---- daemon ------------------------------------------------------------------------------ */

static void add_daemon(struct evbuffer *b, const tsl_page_ctx_t *c)
{
    tsl_proc_stats_t ps;
    int64_t queued = 0, running = 0, plans = 0;
    char up[64] = "unknown";
    tsl_proc_stats(&ps);
    if (c->m != NULL)
        tsl_metrics_get_queue(c->m, &queued, &running, &plans);
    if (ps.start_time_s >= 0)
        snprintf(up, sizeof(up), "%.0f s", (double)c->now - ps.start_time_s);
    evbuffer_add_printf(b, "<table id=\"daemon\"><tbody>\n<tr><th>status</th><td>%s</td></tr>\n",
                        c->healthy ? "serving" : "not serving");
    evbuffer_add_printf(b, "<tr><th>version</th><td>");
    tsl_page_escape(b, TSL_VERSION);
    evbuffer_add_printf(b,
                        "</td></tr>\n<tr><th>uptime</th><td>%s</td></tr>\n"
                        "<tr><th>search queue</th><td>%lld queued, %lld running</td></tr>\n"
                        "</tbody></table>\n",
                        up, (long long)queued, (long long)running);
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
    evbuffer_add_printf(r->b, "<tr>");
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
    evbuffer_add_printf(b, "<h2>Workers</h2>\n<table id=\"workers\"><thead><tr><th>node</th>"
                           "<th>GPUs</th><th>GPU model</th><th>state</th><th>last seen</th>"
                           "<th>profile age</th><th>profile</th></tr></thead>\n<tbody>\n");
    int rc = tsl_registry_list(c->store, add_worker, &r, &err);
    evbuffer_add_printf(b, "</tbody></table>\n");
    if (rc != 0)
        tsl_html_error(b, "workers", err.msg);
    else if (r.n == 0)
        evbuffer_add_printf(b, "<p>No workers registered.</p>\n");
    limit_para(b, r.n);
}

/* ---- profiles ---------------------------------------------------------------------------- */

static int add_measurement(void *ud, const tsl_reg_measurement_t *m)
{
    rows_t *r = ud;
    char s[64];
    if (r->n++ >= TSL_PAGE_MAX_ROWS)
        return 0;
    evbuffer_add_printf(r->b, "<tr>");
    tsl_html_cell(r->b, false, m->gpu_model);
    tsl_html_cell(r->b, false, m->simulated ? "simulated" : "measured");
    tsl_html_cell(r->b, false, m->name);
    tsl_html_cell(r->b, false, m->link_class);
    tsl_html_cellf(r->b, "%.4g", m->value);
    tsl_html_cell(r->b, false, m->unit);
    snprintf(s, sizeof(s), "%u", m->n_samples);
    tsl_html_cell(r->b, true, s);
    tsl_html_age(s, sizeof(s), r->now, m->measured_unix);
    tsl_html_cell(r->b, false, s);
    evbuffer_add_printf(r->b, "</tr>\n");
    return 0;
}

static void add_profiles(struct evbuffer *b, const tsl_page_ctx_t *c)
{
    rows_t r = {.b = b, .now = c->now};
    tsl_err_t err = {0};
    evbuffer_add_printf(b, "<h2>Profiles</h2>\n<table id=\"profiles\"><thead><tr>"
                           "<th>GPU model</th><th>source</th><th>figure</th><th>link</th>"
                           "<th>value</th><th>unit</th><th>samples</th><th>measured</th></tr>"
                           "</thead>\n<tbody>\n");
    int rc = tsl_registry_profile(c->store, "", NULL, add_measurement, &r, &err);
    evbuffer_add_printf(b, "</tbody></table>\n");
    if (rc != 0)
        tsl_html_error(b, "profiles", err.msg);
    else if (r.n == 0)
        evbuffer_add_printf(b, "<p>No profiles reported.</p>\n");
    limit_para(b, r.n);
}

/* ---- plans ------------------------------------------------------------------------------- */

static int add_plan_row(void *ud, const tsl_stored_plan_t *p)
{
    rows_t *r = ud;
    char when[32];
    struct tm tm;
    time_t t = (time_t)p->created_unix;
    if (gmtime_r(&t, &tm) == NULL || strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(when, sizeof(when), "%lld", (long long)p->created_unix);
    evbuffer_add_printf(r->b, "<tr><td class=\"fp\">");
    if (tsl_html_is_fingerprint(p->fingerprint))
        evbuffer_add_printf(r->b, "<a href=\"/plan/%s\">%s</a>", p->fingerprint, p->fingerprint);
    else
        tsl_page_escape(r->b, p->fingerprint);
    evbuffer_add_printf(r->b, "</td>");
    tsl_html_cell(r->b, false, p->model_name);
    tsl_html_cellf(r->b, "%.0f", p->n_devices);
    tsl_html_cellf(r->b, "%.0f", p->global_batch);
    tsl_html_cellf(r->b, "%.2f", p->samples_per_s);
    tsl_html_cellf(r->b, "%.2f GiB", (double)p->peak_bytes / GIB);
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
    evbuffer_add_printf(b, "<h2>Cached plans</h2>\n<table id=\"plans\"><thead><tr>"
                           "<th>fingerprint</th><th>model</th><th>devices</th><th>batch</th>"
                           "<th>samples/s</th><th>peak memory</th><th>stale</th>"
                           "<th>created (UTC)</th></tr></thead>\n<tbody>\n");
    int rc = tsl_store_list_plans(c->store, &f, add_plan_row, &r, next, sizeof(next), &err);
    evbuffer_add_printf(b, "</tbody></table>\n");
    if (rc != 0) {
        tsl_html_error(b, "plans", err.msg);
        return;
    }
    evbuffer_add_printf(b, "<p>%zu shown of %lld stored (newest first).</p>\n", r.n,
                        (long long)total);
}

void tsl_page_status(struct evbuffer *b, const tsl_page_ctx_t *c)
{
    evbuffer_add(b, PAGE_HEAD, sizeof(PAGE_HEAD) - 1);
    add_daemon(b, c);
    if (c->store != NULL) {
        add_workers(b, c);
        add_profiles(b, c);
        add_plans(b, c);
        tsl_page_trials(b, c);
        tsl_page_calibrations(b, c);
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
    evbuffer_add_printf(b,
                        "<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"680\" "
                        "height=\"%d\" viewBox=\"0 0 680 %d\" role=\"img\">\n"
                        "<text x=\"80\" y=\"16\">time per micro-batch (ms)</text>\n"
                        "<text x=\"400\" y=\"16\">peak memory (GiB) vs budget %.2f GiB (red)"
                        "</text>\n",
                        h, h, budget / GIB);
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(stages, i);
        double t = num(s, "time_s"), pk = num(s, "peak_bytes");
        double tw = tmax > 0 ? CHART_BAR_W * t / tmax : 0;
        double mw = mmax > 0 ? CHART_BAR_W * pk / mmax : 0;
        int y = 24 + CHART_ROW_H * (int)i;
        evbuffer_add_printf(b,
                            "<g class=\"stage\" data-stage=\"%zu\">"
                            "<text x=\"4\" y=\"%d\">stage %zu</text>"
                            "<rect class=\"time\" x=\"80\" y=\"%d\" width=\"%.1f\" height=\"18\">"
                            "<title>%.3f ms</title></rect>"
                            "<text x=\"%.1f\" y=\"%d\">%.2f</text>"
                            "<rect class=\"mem\" x=\"400\" y=\"%d\" width=\"%.1f\" height=\"18\">"
                            "<title>%.2f GiB</title></rect>"
                            "<text x=\"%.1f\" y=\"%d\">%.2f</text></g>\n",
                            i, y + 13, i, y, tw, t * 1e3, 84 + tw, y + 13, t * 1e3, y, mw, pk / GIB,
                            404 + mw, y + 13, pk / GIB);
    }
    if (budget > 0 && mmax > 0)
        evbuffer_add_printf(b,
                            "<line class=\"budget\" x1=\"%.1f\" y1=\"20\" x2=\"%.1f\" "
                            "y2=\"%d\"><title>budget %.2f GiB</title></line>\n",
                            400 + CHART_BAR_W * budget / mmax, 400 + CHART_BAR_W * budget / mmax,
                            h - 4, budget / GIB);
    evbuffer_add_printf(b, "</svg>\n");
}

static void add_stage_table(struct evbuffer *b, const json_t *stages)
{
    evbuffer_add_printf(b, "<table id=\"stages\"><thead><tr><th>stage</th><th>layers</th>"
                           "<th>devices</th><th>time/micro-batch (ms)</th><th>p2p (ms)</th>"
                           "<th>model states (GiB)</th><th>activations (GiB)</th>"
                           "<th>peak (GiB)</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < json_array_size(stages) && i < CHART_MAX_STAGES; i++) {
        const json_t *s = json_array_get(stages, i);
        evbuffer_add_printf(b, "<tr>");
        tsl_html_cellf(b, "%.0f", (double)i);
        tsl_html_cellf(b, "%.0f", num(s, "n_layers"));
        tsl_html_cellf(b, "%.0f", num(s, "n_devices"));
        tsl_html_cellf(b, "%.3f", num(s, "time_s") * 1e3);
        tsl_html_cellf(b, "%.3f", num(s, "p2p_s") * 1e3);
        tsl_html_cellf(b, "%.2f", num(s, "ms_bytes") / GIB);
        tsl_html_cellf(b, "%.2f", num(s, "act_bytes") / GIB);
        tsl_html_cellf(b, "%.2f", num(s, "peak_bytes") / GIB);
        evbuffer_add_printf(b, "</tr>\n");
    }
    evbuffer_add_printf(b, "</tbody></table>\n");
}

static void add_plan_body(struct evbuffer *b, const tsl_stored_plan_t *p)
{
    json_error_t jerr;
    json_t *root = json_loads(p->result_json ? p->result_json : "", 0, &jerr);
    const json_t *plan = json_object_get(root, "plan");
    const json_t *stages = json_object_get(plan, "stages");
    evbuffer_add_printf(b, "<h2>Plan <span class=\"fp\">");
    tsl_page_escape(b, p->fingerprint);
    evbuffer_add_printf(b, "</span></h2>\n<p>");
    tsl_page_escape(b, p->model_name);
    evbuffer_add_printf(b,
                        " on %u devices, global batch %u: %.2f samples/s, iteration %.3f s, "
                        "peak %.2f GiB%s.</p>\n",
                        p->n_devices, p->global_batch, p->samples_per_s, p->iter_time_s,
                        (double)p->peak_bytes / GIB, p->stale ? " (stale)" : "");
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
    if (c->store == NULL || !tsl_html_is_fingerprint(fingerprint))
        return 1;
    int rc = tsl_store_get_plan(c->store, fingerprint, &p, &err);
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
