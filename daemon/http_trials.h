/*
 * http_trials.h — what the status page shows of trials and calibrations
 * (docs/operations.md, "HTTP: `/healthz`, `/metrics`, status page"): on "/" a
 * "Trials" section (the newest trials: plan link, status,
 * ranks done of the world, predicted next to measured iteration time and peak
 * memory with the relative errors, the chosen marker, hosts, the failure
 * reason cut short with the whole text in a title attribute) and a
 * "Calibration" section (one row per hardware key: trials fitted, compute
 * factor per token range, comm and memory factors, iteration and memory error
 * before → after, leave-one-out); on "/plan/FP" the plan's own trials.
 *
 * Read through c->store, the HTTP thread's own read-only connection (see
 * http_page.h): a trial's rows are read under that connection's lock only,
 * never the one gRPC handlers write under. Every string is HTML-escaped
 * (hostnames and error texts come from workers). Bounded: at most
 * TSL_PAGE_MAX_TRIALS trials per table, and the page says so; calibrations
 * stop at TSL_PAGE_MAX_ROWS keys. Tables have the fixed layout (class "fixed",
 * column shares in a <colgroup>), trial ids are cut with the whole id in a
 * title, figures are in readable units (http_html.h), and a calibration that
 * raises an alert (tsl_page_calib_alert, http_overview.h) is a red row whose
 * title says why.
 */
#ifndef TSL_HTTP_TRIALS_H
#define TSL_HTTP_TRIALS_H

#include <event2/buffer.h>

#include "http_page.h"

#define TSL_PAGE_MAX_TRIALS  50 /* rows of a trials table */
#define TSL_PAGE_REASON_LEN  60 /* bytes of a failure reason shown; the title has it whole */
#define TSL_PAGE_TRIAL_HOSTS 3  /* hostnames listed per trial, then "+N more" */

/* "/": <h2>Trials</h2> with <table id="trials">, then <h2>Calibration</h2> with
 * <table id="calibration">. c->store must not be NULL. */
void tsl_page_trials(struct evbuffer *b, const tsl_page_ctx_t *c);
void tsl_page_calibrations(struct evbuffer *b, const tsl_page_ctx_t *c);

/* "/plan/FP": <h2 id="trials">Trials of this plan</h2> with <table id="plan-trials">
 * (the plan and its top-k alternatives as run, the chosen one marked). */
void tsl_page_plan_trials(struct evbuffer *b, const tsl_page_ctx_t *c, const char *fingerprint);

#endif
