/*
 * http_overview.c — the status page's overview and alerts (see http_overview.h).
 *
 * Everything is gathered first (workers, the newest trials, calibrations, stale
 * plans) into small fixed arrays and a separate buffer of alerts, then written
 * in reading order: summary, alerts, recent plans, recent trials.
 */
#include "http_overview.h"

#include <stdio.h>
#include <string.h>

#include "http_html.h"
#include "http_trials.h"
#include "store_registry.h"
#include "store_trials.h"

typedef struct alerts {
    struct evbuffer *b; /* the <li> items */
    size_t n;
} alerts_t;

/* Opens one <li class="alert">; the caller writes the text and closes it. */
static void alert_open(alerts_t *a, const char *kind)
{
    evbuffer_add_printf(a->b, "<li class=\"alert\" data-kind=\"%s\">", kind);
    a->n++;
}

static void alert_more(alerts_t *a, const char *kind, size_t more, const char *what)
{
    if (more == 0)
        return;
    alert_open(a, kind);
    evbuffer_add_printf(a->b, "and %zu more %s</li>\n", more, what);
}

/* ---- the rule ------------------------------------------------------------------------------ */

static int outside(double f)
{
    return !(f >= TSL_PAGE_CALIB_MIN && f <= TSL_PAGE_CALIB_MAX);
}

int tsl_page_calib_alert(const tsl_calib_t *c, char *why, size_t cap)
{
    char v[32], refused[160] = "";
    int n = 0;
    if (c->n_samples == 0) {
        snprintf(why, cap, "no trials fitted");
        return 0;
    }
    for (uint32_t i = 0; i < TSL_CALIB_RANGES && n == 0; i++) {
        if (c->range_samples[i] == 0 || !outside(c->compute_scale[i]))
            continue;
        tsl_html_sig3(v, sizeof(v), c->compute_scale[i]);
        if (i + 1 < TSL_CALIB_RANGES)
            n = snprintf(why, cap, "compute factor \xC3\x97%s (tokens < %u)", v, c->range_max[i]);
        else
            n = snprintf(why, cap, "compute factor \xC3\x97%s (tokens \xE2\x89\xA5 %u)", v,
                         i > 0 ? c->range_max[i - 1] : 0);
    }
    if (n == 0 && outside(c->comm_scale)) {
        tsl_html_sig3(v, sizeof(v), c->comm_scale);
        n = snprintf(why, cap, "comm factor \xC3\x97%s", v);
    }
    if (n == 0 && outside(c->mem_scale)) {
        tsl_html_sig3(v, sizeof(v), c->mem_scale);
        n = snprintf(why, cap, "memory factor \xC3\x97%s", v);
    }
    if (n > 0 && (size_t)n < cap)
        n += snprintf(why + n, cap - (size_t)n, " is outside [%.1f, %.0f]", TSL_PAGE_CALIB_MIN,
                      TSL_PAGE_CALIB_MAX);
    if (n == 0 && (c->mae_after > TSL_PAGE_CALIB_MAX_LOO || !(c->mae_after >= 0)))
        n = snprintf(why, cap, "leave-one-out iteration-time error %.1f%% is above %.0f%%",
                     c->mae_after * 100, TSL_PAGE_CALIB_MAX_LOO * 100);
    if (n == 0 && (c->mem_mae_after > TSL_PAGE_CALIB_MAX_LOO || !(c->mem_mae_after >= 0)))
        n = snprintf(why, cap, "leave-one-out memory error %.1f%% is above %.0f%%",
                     c->mem_mae_after * 100, TSL_PAGE_CALIB_MAX_LOO * 100);
    if (n == 0) {
        snprintf(why, cap, "within bounds");
        return 0;
    }
    if ((size_t)n < cap && tsl_calib_check(c, refused, sizeof(refused)) != 0)
        snprintf(why + n, cap - (size_t)n, "; the planner refuses it (%s)", refused);
    else if ((size_t)n < cap)
        snprintf(why + n, cap - (size_t)n, "; plans on this hardware are priced with it");
    return 1;
}

/* ---- workers --------------------------------------------------------------------------------- */

typedef struct workers {
    alerts_t *a;
    int64_t now;
    size_t online, offline, stopped, listed;
} workers_t;

static int on_worker(void *ud, const tsl_reg_worker_t *w)
{
    workers_t *r = ud;
    char age[64];
    if (strcmp(w->state, "online") == 0) {
        r->online++;
        return 0;
    }
    if (strcmp(w->state, "offline") != 0) {
        r->stopped++;
        return 0;
    }
    if (r->offline++ >= TSL_PAGE_ALERT_LIST)
        return 0;
    tsl_html_age(age, sizeof(age), r->now, w->last_seen_unix);
    alert_open(r->a, "worker");
    evbuffer_add_printf(r->a->b, "Worker <strong>");
    tsl_page_escape(r->a->b, w->hostname);
    evbuffer_add_printf(r->a->b, "</strong> is offline (last seen %s).</li>\n", age);
    return 0;
}

/* ---- trials ---------------------------------------------------------------------------------- */

typedef struct trials {
    alerts_t *a;
    struct evbuffer *recent; /* <tr> rows */
    int64_t now;
    size_t n, failed;
} trials_t;

static void trial_link(struct evbuffer *b, const tsl_trial_t *t)
{
    if (tsl_html_is_fingerprint(t->plan_fingerprint))
        evbuffer_add_printf(b, "<a href=\"/plan/%s#trials\">%s</a>", t->plan_fingerprint,
                            t->plan_fingerprint);
    else
        tsl_page_escape(b, t->plan_fingerprint);
}

static int on_trial(void *ud, const tsl_trial_t *t)
{
    trials_t *r = ud;
    char s[64], cut[TSL_PAGE_REASON_LEN + 1];
    if (r->n++ < TSL_PAGE_RECENT) {
        evbuffer_add_printf(r->recent, "<tr>");
        tsl_html_cell_id(r->recent, "id", t->trial_id, 12);
        evbuffer_add_printf(r->recent, "<td class=\"fp\">");
        trial_link(r->recent, t);
        evbuffer_add_printf(r->recent, " #%u%s</td>", t->plan_index,
                            t->plan_stale ? " (stale)" : "");
        tsl_html_cell(r->recent, false, t->status);
        if (strcmp(t->status, "done") == 0)
            tsl_html_cell_seconds(r->recent, t->measured_iter_time_s);
        else
            evbuffer_add_printf(r->recent, "<td class=\"n\">-</td>");
        tsl_html_age(s, sizeof(s), r->now, t->created_unix);
        tsl_html_cell(r->recent, false, s);
        evbuffer_add_printf(r->recent, "</tr>\n");
    }
    if (strcmp(t->status, "failed") != 0 || r->failed++ >= TSL_PAGE_ALERT_LIST)
        return 0;
    size_t n = strlen(t->error);
    if (n > TSL_PAGE_REASON_LEN) {
        n = TSL_PAGE_REASON_LEN;
        while (n > 0 && ((unsigned char)t->error[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(cut, t->error, n);
    cut[n] = '\0';
    alert_open(r->a, "trial");
    evbuffer_add_printf(r->a->b, "Trial <span class=\"id\" title=\"");
    tsl_page_escape(r->a->b, t->trial_id);
    evbuffer_add_printf(r->a->b, "\">");
    tsl_page_escape(r->a->b, t->trial_id);
    evbuffer_add_printf(r->a->b, "</span> of plan ");
    trial_link(r->a->b, t);
    evbuffer_add_printf(r->a->b, " #%u failed: <span title=\"", t->plan_index);
    tsl_page_escape(r->a->b, t->error);
    evbuffer_add_printf(r->a->b, "\">");
    tsl_page_escape(r->a->b, cut);
    evbuffer_add_printf(r->a->b, "%s</span></li>\n", t->error[n] != '\0' ? "\xE2\x80\xA6" : "");
    return 0;
}

/* ---- calibrations and stale plans ------------------------------------------------------------ */

typedef struct calibs {
    alerts_t *a;
    size_t n;
} calibs_t;

static int on_calib(void *ud, const char *gpu_model, bool simulated, const tsl_calib_t *c,
                    int64_t updated_unix)
{
    calibs_t *r = ud;
    char why[320];
    (void)updated_unix;
    if (!tsl_page_calib_alert(c, why, sizeof(why)) || r->n++ >= TSL_PAGE_ALERT_LIST)
        return 0;
    alert_open(r->a, "calibration");
    evbuffer_add_printf(r->a->b, "Calibration of <strong>");
    tsl_page_escape(r->a->b, gpu_model);
    evbuffer_add_printf(r->a->b,
                        "</strong> (%s, %u trial%s): ", simulated ? "simulated" : "measured",
                        c->n_samples, c->n_samples == 1 ? "" : "s");
    tsl_page_escape(r->a->b, why);
    evbuffer_add_printf(r->a->b, ".</li>\n");
    return 0;
}

typedef struct plans {
    struct evbuffer *b;
    int64_t now;
    size_t n;
    bool table; /* rows of the recent-plans table, else links for the stale alert */
} plans_t;

static void plan_link(struct evbuffer *b, const char *fp)
{
    if (tsl_html_is_fingerprint(fp))
        evbuffer_add_printf(b, "<a href=\"/plan/%s\">%s</a>", fp, fp);
    else
        tsl_page_escape(b, fp);
}

static int on_plan(void *ud, const tsl_stored_plan_t *p)
{
    plans_t *r = ud;
    char s[64];
    if (r->n++ >= TSL_PAGE_RECENT)
        return 0;
    if (!r->table) {
        evbuffer_add_printf(r->b, "%s", r->n > 1 ? ", " : "");
        plan_link(r->b, p->fingerprint);
        return 0;
    }
    evbuffer_add_printf(r->b, "<tr><td class=\"fp\">");
    plan_link(r->b, p->fingerprint);
    evbuffer_add_printf(r->b, "</td>");
    tsl_html_cell(r->b, false, p->model_name);
    snprintf(s, sizeof(s), "%u", p->n_devices);
    tsl_html_cell(r->b, true, s);
    tsl_html_sig3(s, sizeof(s), p->samples_per_s);
    tsl_html_cell(r->b, true, s);
    tsl_html_cell_bytes(r->b, (double)p->peak_bytes);
    tsl_html_cell(r->b, false, p->stale ? "stale" : "fresh");
    tsl_html_age(s, sizeof(s), r->now, p->created_unix);
    tsl_html_cell(r->b, false, s);
    evbuffer_add_printf(r->b, "</tr>\n");
    return 0;
}

static void stale_alert(alerts_t *a, const tsl_page_ctx_t *c)
{
    tsl_plan_filter_t f = {.stale = 1, .page_size = TSL_PAGE_MAX_ROWS};
    struct evbuffer *links = evbuffer_new();
    plans_t r = {.b = links, .now = c->now};
    char next[128];
    tsl_err_t err = {0};
    if (links == NULL)
        return;
    if (tsl_store_list_plans(c->store, &f, on_plan, &r, next, sizeof(next), &err) != 0) {
        alert_open(a, "store");
        evbuffer_add_printf(a->b, "Cannot list the stale plans: ");
        tsl_page_escape(a->b, err.msg);
        evbuffer_add_printf(a->b, "</li>\n");
    } else if (r.n > 0) {
        alert_open(a, "stale");
        evbuffer_add_printf(a->b,
                            "%zu%s cached plan%s stale (a profile %s priced from changed "
                            "since, or another cost model priced %s; the next request "
                            "searches again): ",
                            r.n, next[0] != '\0' ? "+" : "", r.n == 1 ? " is" : "s are",
                            r.n == 1 ? "it was" : "they were", r.n == 1 ? "it" : "them");
        evbuffer_add_buffer(a->b, links);
        evbuffer_add_printf(a->b, "%s.</li>\n", r.n > TSL_PAGE_RECENT ? ", \xE2\x80\xA6" : "");
    }
    evbuffer_free(links);
}

/* ---- the section ----------------------------------------------------------------------------- */

static void add_summary(struct evbuffer *b, const tsl_page_ctx_t *c, const workers_t *w, bool known)
{
    tsl_proc_stats_t ps;
    int64_t queued = 0, running = 0, plans = 0;
    char up[64] = "unknown";
    tsl_proc_stats(&ps);
    if (c->m != NULL)
        tsl_metrics_get_queue(c->m, &queued, &running, &plans);
    if (ps.start_time_s >= 0)
        tsl_html_seconds(up, sizeof(up), (double)c->now - ps.start_time_s);
    evbuffer_add_printf(b,
                        "<table id=\"daemon\" class=\"fixed kv\"><tbody>\n"
                        "<tr><th>status</th><td class=\"%s\">%s</td></tr>\n"
                        "<tr><th>version</th><td>",
                        c->healthy ? "good" : "bad", c->healthy ? "serving" : "not serving");
    tsl_page_escape(b, TSL_VERSION);
    evbuffer_add_printf(b,
                        "</td></tr>\n<tr><th>uptime</th><td>%s</td></tr>\n"
                        "<tr><th>search queue</th><td>%lld queued, %lld running</td></tr>\n",
                        up, (long long)queued, (long long)running);
    if (known)
        evbuffer_add_printf(b,
                            "<tr><th>workers</th><td id=\"workers-online\">%zu online, "
                            "%zu offline, %zu stopped</td></tr>\n",
                            w->online, w->offline, w->stopped);
    evbuffer_add_printf(b, "</tbody></table>\n");
}

void tsl_page_overview(struct evbuffer *b, const tsl_page_ctx_t *c)
{
    struct evbuffer *items = evbuffer_new(), *recent = evbuffer_new(), *plans = evbuffer_new();
    alerts_t a = {.b = items};
    workers_t w = {.a = &a, .now = c->now};
    trials_t t = {.a = &a, .recent = recent, .now = c->now};
    calibs_t cal = {.a = &a};
    plans_t p = {.b = plans, .now = c->now, .table = true};
    tsl_plan_filter_t f = {.stale = -1, .page_size = TSL_PAGE_RECENT};
    tsl_err_t err = {0};
    char next[128];
    int64_t failed_total = 0;
    bool known = false;
    evbuffer_add_printf(b, "<section id=\"overview\">\n<h2>Overview</h2>\n");
    if (items == NULL || recent == NULL || plans == NULL) {
        add_summary(b, c, &w, false);
        evbuffer_add_printf(b, "<p class=\"error\">Out of memory.</p>\n");
        goto out;
    }
    if (c->store != NULL) {
        known = tsl_registry_list(c->store, on_worker, &w, &err) == 0;
        if (!known)
            tsl_html_error(items, "workers", err.msg);
        alert_more(&a, "worker",
                   w.offline > TSL_PAGE_ALERT_LIST ? w.offline - TSL_PAGE_ALERT_LIST : 0,
                   "offline workers (Workers, below)");
        if (tsl_trials_list(c->store, "", TSL_PAGE_MAX_TRIALS, on_trial, &t, &err) != 0)
            tsl_html_error(items, "trials", err.msg);
        if (tsl_trials_count(c->store, "failed", &failed_total, &err) == 0 &&
            (size_t)failed_total >
                (t.failed < TSL_PAGE_ALERT_LIST ? t.failed : TSL_PAGE_ALERT_LIST))
            alert_more(&a, "trial",
                       (size_t)failed_total -
                           (t.failed < TSL_PAGE_ALERT_LIST ? t.failed : TSL_PAGE_ALERT_LIST),
                       "failed trials stored (Trials, below)");
        if (tsl_calibration_list(c->store, "", on_calib, &cal, &err) != 0)
            tsl_html_error(items, "calibrations", err.msg);
        alert_more(&a, "calibration", cal.n > TSL_PAGE_ALERT_LIST ? cal.n - TSL_PAGE_ALERT_LIST : 0,
                   "calibrations out of bounds (Calibration, below)");
        stale_alert(&a, c);
    }
    add_summary(b, c, &w, known);
    if (c->store == NULL)
        goto out;
    evbuffer_add_printf(b, "<h3>Alerts</h3>\n<ul id=\"alerts\">\n");
    if (a.n == 0)
        evbuffer_add_printf(b, "<li class=\"none\">No alerts: no worker offline, no failed "
                               "trial, every calibration within bounds, no stale plan.</li>\n");
    evbuffer_add_buffer(b, items);
    evbuffer_add_printf(b, "</ul>\n");

    evbuffer_add_printf(b, "<h3>Recent plans</h3>\n<table id=\"recent-plans\" class=\"fixed\">"
                           "<colgroup><col style=\"width:16%%\"><col style=\"width:26%%\">"
                           "<col style=\"width:9%%\"><col style=\"width:11%%\">"
                           "<col style=\"width:12%%\"><col style=\"width:10%%\">"
                           "<col style=\"width:16%%\"></colgroup>"
                           "<thead><tr><th>fingerprint</th><th>model</th><th>devices</th>"
                           "<th>samples/s</th><th>peak memory</th><th>stale</th><th>created</th>"
                           "</tr></thead>\n<tbody>\n");
    int rc = tsl_store_list_plans(c->store, &f, on_plan, &p, next, sizeof(next), &err);
    evbuffer_add_buffer(b, plans);
    evbuffer_add_printf(b, "</tbody></table>\n");
    if (rc != 0)
        tsl_html_error(b, "plans", err.msg);
    else if (p.n == 0)
        evbuffer_add_printf(b, "<p>No plans cached yet.</p>\n");

    evbuffer_add_printf(b, "<h3>Recent trials</h3>\n<table id=\"recent-trials\" class=\"fixed\">"
                           "<thead><tr><th>trial</th><th>plan</th><th>status</th>"
                           "<th>iteration measured</th><th>created</th></tr></thead>\n<tbody>\n");
    evbuffer_add_buffer(b, recent);
    evbuffer_add_printf(b, "</tbody></table>\n");
    if (t.n == 0)
        evbuffer_add_printf(b, "<p>No trials run.</p>\n");
out:
    evbuffer_add_printf(b, "</section>\n");
    if (items != NULL)
        evbuffer_free(items);
    if (recent != NULL)
        evbuffer_free(recent);
    if (plans != NULL)
        evbuffer_free(plans);
}
