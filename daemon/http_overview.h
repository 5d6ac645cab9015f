/*
 * http_overview.h — the top of the status page ("/"): what an operator reads
 * first (docs/operations.md, "Status page"). A summary (serving, version,
 * uptime, the search queue, workers online/offline/stopped), the alerts, the
 * newest plans and the newest trials, each linked to its plan's page.
 *
 * Alerts (<ul id="alerts">, one <li class="alert"> each; "No alerts." when none):
 *   - a registered worker offline (hostname, last seen);
 *   - a failed trial among the newest TSL_PAGE_MAX_TRIALS (id, plan, reason cut
 *     short), and how many failed trials are stored;
 *   - a calibration with a factor outside [TSL_PAGE_CALIB_MIN, TSL_PAGE_CALIB_MAX]
 *     or a leave-one-out error above TSL_PAGE_CALIB_MAX_LOO (tsl_page_calib_alert);
 *   - stale plans (a profile they were priced from changed since, or
 *     another cost model priced them): how many, and
 *     the newest TSL_PAGE_ALERT_LIST linked.
 * Each kind lists at most TSL_PAGE_ALERT_LIST items, then "and N more".
 *
 * Read through c->store (the HTTP thread's own connection, see http_page.h);
 * every string is HTML-escaped.
 */
#ifndef TSL_HTTP_OVERVIEW_H
#define TSL_HTTP_OVERVIEW_H

#include <event2/buffer.h>
#include <stddef.h>

#include "calibration.h"
#include "http_page.h"

#define TSL_PAGE_RECENT        5   /* plans and trials in the overview */
#define TSL_PAGE_ALERT_LIST    5   /* items listed per kind of alert */
#define TSL_PAGE_CALIB_MIN     0.5 /* a factor below: the model is off by 2x or more */
#define TSL_PAGE_CALIB_MAX     2.0
#define TSL_PAGE_CALIB_MAX_LOO 0.25 /* leave-one-out error (relative) above: an alert */

/* <section id="overview">…</section>. c->store may be NULL (summary only). */
void tsl_page_overview(struct evbuffer *b, const tsl_page_ctx_t *c);

/* 1 when the calibration c deserves an alert, with why (plain text, at most cap
 * bytes, NUL-terminated: the first figure out of bounds with its value and the
 * bound, then whether the planner refuses the fit); 0 when not (a key with no
 * trials fitted never alerts). Pure. */
int tsl_page_calib_alert(const tsl_calib_t *c, char *why, size_t cap);

#endif
