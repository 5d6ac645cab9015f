/*
 * http_trials.c — the status page's trials and calibrations (see http_trials.h).
 *
 * Trials are listed with tsl_trials_list on the page's own connection: it
 * copies the ids under that connection's lock and hands each trial (read with
 * its ranks) to the row writer without it, so even a trial of thousands of
 * ranks holds nothing while its row is written.
 */
#include "http_trials.h"

#include <stdio.h>
#include <string.h>

#include "calibration.h"
#include "http_html.h"
#include "http_overview.h"
#include "store_trials.h"

/* A done trial's two iteration times, kept for the plan page's chart. */
typedef struct trial_bar {
    char id[TSL_TRIAL_ID_LEN + 1];
    uint32_t plan_index;
    double pred_s, meas_s;
    bool chosen;
} trial_bar_t;

typedef struct trial_rows {
    struct evbuffer *b;
    int64_t now;
    bool link_plan; /* "/" links each trial to its plan's page */
    size_t n, n_chosen, n_bars;
    char chosen[TSL_TRIAL_ID_LEN + 1];
    trial_bar_t bars[TSL_PAGE_MAX_TRIALS];
} trial_rows_t;

#define TCHART_ROW_H 30
#define TCHART_BAR_W 400.0

/* 15 columns in a fixed layout: their shares of the width, so that an id, a
 * plan, the hosts and a failure reason wrap inside their own column. */
static const char TRIALS_HEAD[] =
    "<colgroup><col style=\"width:8%\"><col style=\"width:11%\"><col style=\"width:5%\">"
    "<col style=\"width:5%\"><col style=\"width:8%\"><col style=\"width:7%\">"
    "<col style=\"width:6%\"><col style=\"width:6%\"><col style=\"width:7%\">"
    "<col style=\"width:6%\"><col style=\"width:6%\"><col style=\"width:6%\">"
    "<col style=\"width:7%\"><col style=\"width:8%\"><col style=\"width:6%\"></colgroup>"
    "<thead><tr><th>trial</th><th>plan</th><th>status</th><th>ranks done</th><th>GPU</th>"
    "<th>iteration predicted</th><th>measured</th><th>error</th>"
    "<th>peak predicted</th><th>measured</th><th>error</th><th>chosen</th>"
    "<th>hosts</th><th>failure</th><th>started</th></tr></thead>\n<tbody>\n";

#define TRIAL_ID_SHOWN 10 /* bytes of a trial id in a cell; the title has it whole */

/* The reason's first TSL_PAGE_REASON_LEN bytes (not cutting a UTF-8 character)
 * and "…"; the whole text in the title, escaped like the rest. */
static void add_reason(struct evbuffer *b, const char *text)
{
    char cut[TSL_PAGE_REASON_LEN + 1];
    size_t n = strlen(text);
    if (n == 0) {
        evbuffer_add_printf(b, "<td></td>");
        return;
    }
    if (n > TSL_PAGE_REASON_LEN) {
        n = TSL_PAGE_REASON_LEN;
        while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80)
            n--; /* text[n] continues a character: cut before it starts */
    }
    memcpy(cut, text, n);
    cut[n] = '\0';
    evbuffer_add_printf(b, "<td class=\"reason\" title=\"");
    tsl_page_escape(b, text);
    evbuffer_add_printf(b, "\">");
    tsl_page_escape(b, cut);
    evbuffer_add_printf(b, "%s</td>", text[n] != '\0' ? "\xE2\x80\xA6" : "");
}

/* The first few distinct hostnames of the ranks, then how many ranks ran elsewhere. */
static void add_hosts(struct evbuffer *b, const tsl_trial_t *t)
{
    const char *shown[TSL_PAGE_TRIAL_HOSTS];
    size_t n_shown = 0, elsewhere = 0;
    evbuffer_add_printf(b, "<td>");
    for (uint32_t i = 0; i < t->n_ranks; i++) {
        const char *h = t->ranks[i].hostname;
        bool seen = false;
        for (size_t k = 0; k < n_shown && !seen; k++)
            seen = strcmp(shown[k], h) == 0;
        if (seen)
            continue;
        if (n_shown == TSL_PAGE_TRIAL_HOSTS) {
            elsewhere++;
            continue;
        }
        if (n_shown > 0)
            evbuffer_add_printf(b, ", ");
        tsl_page_escape(b, h);
        shown[n_shown++] = h;
    }
    if (elsewhere > 0)
        evbuffer_add_printf(b, " +%zu more rank%s", elsewhere, elsewhere == 1 ? "" : "s");
    evbuffer_add_printf(b, "</td>");
}

/* Predicted next to measured; a trial not done has no measured figures. */
static void add_figures(struct evbuffer *b, const tsl_trial_t *t)
{
    bool done = strcmp(t->status, "done") == 0;
    tsl_html_cell_seconds(b, t->predicted_iter_time_s);
    if (done) {
        tsl_html_cell_seconds(b, t->measured_iter_time_s);
        tsl_html_cellf(b, "%+.1f%%", t->time_error * 100);
    } else {
        evbuffer_add_printf(b, "<td class=\"n\">-</td><td class=\"n\">-</td>");
    }
    tsl_html_cell_bytes(b, (double)t->predicted_peak_bytes);
    if (done) {
        tsl_html_cell_bytes(b, (double)t->measured_peak_bytes);
        tsl_html_cellf(b, "%+.1f%%", t->memory_error * 100);
    } else {
        evbuffer_add_printf(b, "<td class=\"n\">-</td><td class=\"n\">-</td>");
    }
}

static void add_plan_cell(struct evbuffer *b, const tsl_trial_t *t, bool link)
{
    evbuffer_add_printf(b, "<td class=\"fp\">");
    if (link && tsl_html_is_fingerprint(t->plan_fingerprint))
        evbuffer_add_printf(b, "<a href=\"/plan/%s#trials\">%s</a> ", t->plan_fingerprint,
                            t->plan_fingerprint);
    else if (link)
        tsl_page_escape(b, t->plan_fingerprint);
    evbuffer_add_printf(b, "#%u ", t->plan_index);
    tsl_page_escape(b, t->plan_label);
    if (t->plan_stale) /* its prediction is the stored one (Trial.plan_stale) */
        evbuffer_add_printf(b, " (stale)");
    evbuffer_add_printf(b, "</td>");
}

static int add_trial_row(void *ud, const tsl_trial_t *t)
{
    trial_rows_t *r = ud;
    char s[160];
    uint32_t done = 0;
    for (uint32_t i = 0; i < t->n_ranks; i++)
        done += strcmp(t->ranks[i].state, "done") == 0;
    if (t->chosen && r->n_chosen++ == 0)
        snprintf(r->chosen, sizeof(r->chosen), "%s", t->trial_id);
    r->n++;
    if (strcmp(t->status, "done") == 0 && r->n_bars < TSL_PAGE_MAX_TRIALS) {
        trial_bar_t *bar = &r->bars[r->n_bars++];
        snprintf(bar->id, sizeof(bar->id), "%s", t->trial_id);
        bar->plan_index = t->plan_index;
        bar->pred_s = t->predicted_iter_time_s;
        bar->meas_s = t->measured_iter_time_s;
        bar->chosen = t->chosen;
    }
    evbuffer_add_printf(r->b, "<tr%s>",
                        t->chosen                          ? " class=\"chosen\""
                        : strcmp(t->status, "failed") == 0 ? " class=\"alert\""
                                                           : "");
    tsl_html_cell_id(r->b, "id", t->trial_id, TRIAL_ID_SHOWN);
    add_plan_cell(r->b, t, r->link_plan);
    tsl_html_cell(r->b, false, t->status);
    snprintf(s, sizeof(s), "%u/%u", done, t->world_size);
    tsl_html_cell(r->b, true, s);
    snprintf(s, sizeof(s), "%.120s%s", t->gpu_model, t->simulated ? " (simulated)" : "");
    tsl_html_cell(r->b, false, s);
    add_figures(r->b, t);
    tsl_html_cell(r->b, false, t->chosen ? "chosen" : "");
    add_hosts(r->b, t);
    add_reason(r->b, t->error);
    tsl_html_age(s, sizeof(s), r->now, t->started_unix);
    tsl_html_cell(r->b, false, s);
    evbuffer_add_printf(r->b, "</tr>\n");
    return 0;
}

void tsl_page_trials(struct evbuffer *b, const tsl_page_ctx_t *c)
{
    trial_rows_t r = {.b = b, .now = c->now, .link_plan = true};
    tsl_err_t err = {0};
    int64_t total = 0;
    evbuffer_add_printf(b,
                        "<section id=\"trials-section\">\n<h2>Trials</h2>\n<table id=\"trials\" "
                        "class=\"fixed\">%s",
                        TRIALS_HEAD);
    int rc = tsl_trials_list(c->store, "", TSL_PAGE_MAX_TRIALS, add_trial_row, &r, &err);
    evbuffer_add_printf(b, "</tbody></table>\n");
    if (rc != 0 || tsl_trials_count(c->store, "", &total, &err) != 0)
        tsl_html_error(b, "trials", err.msg);
    else if (r.n == 0)
        evbuffer_add_printf(b, "<p>No trials run (<code>tesselctl trial start FP</code>).</p>\n");
    else
        evbuffer_add_printf(b,
                            "<p>%zu shown of %lld stored (newest first, at most %d). Errors are "
                            "(predicted &minus; measured) / measured.</p>\n",
                            r.n, (long long)total, TSL_PAGE_MAX_TRIALS);
    evbuffer_add_printf(b, "</section>\n");
}

/* Predicted (light) over measured (dark) iteration time per done trial, both
 * scaled to the largest; the chosen one's label in bold. Plain SVG like the
 * stage chart. */
static void add_trial_chart(struct evbuffer *b, const trial_rows_t *r)
{
    double top = 0;
    for (size_t i = 0; i < r->n_bars; i++) {
        top = r->bars[i].pred_s > top ? r->bars[i].pred_s : top;
        top = r->bars[i].meas_s > top ? r->bars[i].meas_s : top;
    }
    if (r->n_bars == 0 || !(top > 0))
        return;
    int h = 24 + TCHART_ROW_H * (int)r->n_bars;
    evbuffer_add_printf(b,
                        "<svg id=\"trial-chart\" xmlns=\"http://www.w3.org/2000/svg\" "
                        "width=\"680\" height=\"%d\" viewBox=\"0 0 680 %d\" role=\"img\">\n"
                        "<text x=\"4\" y=\"14\">iteration time: predicted (light) and "
                        "measured (dark), done trials</text>\n",
                        h, h);
    for (size_t i = 0; i < r->n_bars; i++) {
        const trial_bar_t *t = &r->bars[i];
        int y = 22 + TCHART_ROW_H * (int)i;
        double pw = TCHART_BAR_W * t->pred_s / top, mw = TCHART_BAR_W * t->meas_s / top;
        char ps[32], ms[32];
        tsl_html_seconds(ps, sizeof(ps), t->pred_s);
        tsl_html_seconds(ms, sizeof(ms), t->meas_s);
        evbuffer_add_printf(b, "<g class=\"trial\"><text x=\"4\" y=\"%d\"%s>#%u%s<title>", y + 17,
                            t->chosen ? " font-weight=\"bold\"" : "", t->plan_index,
                            t->chosen ? " chosen" : "");
        tsl_page_escape(b, t->id);
        evbuffer_add_printf(b,
                            "</title></text>"
                            "<rect class=\"pred\" x=\"120\" y=\"%d\" width=\"%.1f\" "
                            "height=\"11\"><title>predicted %s</title></rect>"
                            "<rect class=\"meas\" x=\"120\" y=\"%d\" width=\"%.1f\" "
                            "height=\"11\"><title>measured %s</title></rect>"
                            "<text x=\"%.1f\" y=\"%d\">%s / %s</text></g>\n",
                            y, pw, ps, y + 12, mw, ms, 124 + (pw > mw ? pw : mw), y + 17, ps, ms);
    }
    evbuffer_add_printf(b, "</svg>\n");
}

void tsl_page_plan_trials(struct evbuffer *b, const tsl_page_ctx_t *c, const char *fingerprint)
{
    trial_rows_t r = {.b = b, .now = c->now};
    tsl_err_t err = {0};
    evbuffer_add_printf(b,
                        "<h2 id=\"trials\">Trials of this plan</h2>\n<table id=\"plan-trials\" "
                        "class=\"fixed trials\">%s",
                        TRIALS_HEAD);
    int rc = tsl_trials_list(c->store, fingerprint, TSL_PAGE_MAX_TRIALS, add_trial_row, &r, &err);
    evbuffer_add_printf(b, "</tbody></table>\n");
    if (rc != 0) {
        tsl_html_error(b, "the plan's trials", err.msg);
        return;
    }
    if (r.n == 0) {
        evbuffer_add_printf(b,
                            "<p>Not run for real yet (<code>tesselctl trial start %s</code>)."
                            "</p>\n",
                            fingerprint);
        return;
    }
    evbuffer_add_printf(b,
                        "<p>The newest %zu (at most %d): #0 ran this plan, #1 and on its "
                        "alternatives (a top-k trial).",
                        r.n, TSL_PAGE_MAX_TRIALS);
    if (r.n_chosen > 0) {
        evbuffer_add_printf(b, " Measured best, now this plan's answer: <b>");
        tsl_page_escape(b, r.chosen);
        evbuffer_add_printf(b, "</b>.");
    }
    evbuffer_add_printf(b, "</p>\n");
    add_trial_chart(b, &r);
}

/* ---- calibrations ---------------------------------------------------------------------------- */

typedef struct calib_rows {
    struct evbuffer *b;
    int64_t now;
    size_t n;
} calib_rows_t;

/* One line per token range: "tokens < 4096: ×1.120 (3 trials)". */
static void add_ranges(struct evbuffer *b, const tsl_calib_t *c)
{
    char s[128], f[32];
    evbuffer_add_printf(b, "<td>");
    for (uint32_t i = 0; i < TSL_CALIB_RANGES; i++) {
        if (i + 1 < TSL_CALIB_RANGES)
            snprintf(s, sizeof(s), "tokens < %u", c->range_max[i]);
        else
            snprintf(s, sizeof(s), "tokens \xE2\x89\xA5 %u", i > 0 ? c->range_max[i - 1] : 0);
        tsl_page_escape(b, s);
        tsl_html_sig3(f, sizeof(f), c->compute_scale[i]);
        snprintf(s, sizeof(s), ": \xC3\x97%s (%u trial%s)", f, c->range_samples[i],
                 c->range_samples[i] == 1 ? "" : "s");
        tsl_page_escape(b, s);
        evbuffer_add_printf(b, "%s", i + 1 < TSL_CALIB_RANGES ? "<br>" : "");
    }
    evbuffer_add_printf(b, "</td>");
}

static int add_calib_row(void *ud, const char *gpu_model, bool simulated, const tsl_calib_t *c,
                         int64_t updated_unix)
{
    calib_rows_t *r = ud;
    char s[96], why[320];
    if (r->n++ >= TSL_PAGE_MAX_ROWS)
        return 0; /* keep counting */
    if (tsl_page_calib_alert(c, why, sizeof(why))) {
        evbuffer_add_printf(r->b, "<tr class=\"alert\" title=\"");
        tsl_page_escape(r->b, why);
        evbuffer_add_printf(r->b, "\">");
    } else {
        evbuffer_add_printf(r->b, "<tr>");
    }
    tsl_html_cell(r->b, false, gpu_model);
    tsl_html_cell(r->b, false, simulated ? "simulated" : "measured");
    snprintf(s, sizeof(s), "%u", c->n_samples);
    tsl_html_cell(r->b, true, s);
    add_ranges(r->b, c);
    tsl_html_sig3(s + 2, sizeof(s) - 2, c->comm_scale);
    memcpy(s, "\xC3\x97", 2);
    tsl_html_cell(r->b, true, s);
    tsl_html_sig3(s + 2, sizeof(s) - 2, c->mem_scale);
    memcpy(s, "\xC3\x97", 2);
    tsl_html_cell(r->b, true, s);
    snprintf(s, sizeof(s), "%.1f%% \xE2\x86\x92 %.1f%%", c->mae_before * 100, c->mae_after * 100);
    tsl_html_cell(r->b, true, s);
    snprintf(s, sizeof(s), "%.1f%% \xE2\x86\x92 %.1f%%", c->mem_mae_before * 100,
             c->mem_mae_after * 100);
    tsl_html_cell(r->b, true, s);
    tsl_html_age(s, sizeof(s), r->now, updated_unix);
    tsl_html_cell(r->b, false, s);
    evbuffer_add_printf(r->b, "</tr>\n");
    return 0;
}

void tsl_page_calibrations(struct evbuffer *b, const tsl_page_ctx_t *c)
{
    calib_rows_t r = {.b = b, .now = c->now};
    tsl_err_t err = {0};
    evbuffer_add_printf(b, "<section id=\"calibration-section\">\n<h2>Calibration</h2>\n"
                           "<table id=\"calibration\" class=\"fixed\"><thead><tr>"
                           "<th>GPU model</th><th>source</th><th>trials fitted</th>"
                           "<th>compute factor</th><th>comm factor</th><th>memory factor</th>"
                           "<th>iteration error before &rarr; after</th>"
                           "<th>memory error before &rarr; after</th><th>refitted</th></tr>"
                           "</thead>\n<tbody>\n");
    int rc = tsl_calibration_list(c->store, "", add_calib_row, &r, &err);
    evbuffer_add_printf(b, "</tbody></table>\n");
    if (rc != 0)
        tsl_html_error(b, "calibrations", err.msg);
    else if (r.n == 0)
        evbuffer_add_printf(b, "<p>No calibration yet: each done trial refits its hardware "
                               "key's.</p>\n");
    else
        evbuffer_add_printf(b,
                            "<p>Errors are the mean absolute relative error over the fitted "
                            "trials, after = leave-one-out (no trial calibrates itself). A row "
                            "in red has a factor outside [%.1f, %.0f] or a leave-one-out error "
                            "above %.0f%% (hover for which; Alerts, above).</p>\n",
                            TSL_PAGE_CALIB_MIN, TSL_PAGE_CALIB_MAX, TSL_PAGE_CALIB_MAX_LOO * 100);
    if (r.n > TSL_PAGE_MAX_ROWS)
        evbuffer_add_printf(b, "<p>%zu more not shown.</p>\n", r.n - TSL_PAGE_MAX_ROWS);
    evbuffer_add_printf(b, "</section>\n");
}
