/*
 * http_page.h — the status page's HTML (http.c serves it): on "/" the overview
 * (http_overview.h: daemon state, workers online, queue, alerts, recent plans
 * and trials), then workers, cached plans, trials, calibrations and the
 * profiles (one collapsed <details> per GPU model and source, each figure
 * labelled with its shape); on "/plan/FINGERPRINT" one plan's stages (layers,
 * devices, the strategies of their runs of layers, time, p2p, memory) with an
 * inline SVG time/memory chart and its trials (the trial sections:
 * http_trials.h). Every table has the class "fixed" (table-layout: fixed,
 * width 100%, cells wrap anywhere), so none is wider than the window; figures
 * in readable units (http_html.h). No script, no
 * external assets; every string from the store is HTML-escaped (http_html.h);
 * tables are bounded.
 *
 * store is the HTTP thread's own read connection (never the gRPC store), m the
 * daemon's metrics; both borrowed. Split from http.c so tests can render pages
 * without a socket.
 */
#ifndef TSL_HTTP_PAGE_H
#define TSL_HTTP_PAGE_H

#include <event2/buffer.h>
#include <stdbool.h>
#include <stdint.h>

#include "http_html.h"
#include "metrics.h"
#include "store.h"

#define TSL_PAGE_MAX_ROWS 1000 /* per table */

typedef struct tsl_page_ctx {
    tsl_store_t *store; /* may be NULL: the page says so */
    tsl_metrics_t *m;
    bool healthy;
    int64_t now; /* Unix seconds, for ages */
} tsl_page_ctx_t;

void tsl_page_status(struct evbuffer *b, const tsl_page_ctx_t *c);
/* 0 rendered, 1 no such plan (b untouched), -1 the store failed (b holds the reason). */
int tsl_page_plan(struct evbuffer *b, const tsl_page_ctx_t *c, const char *fingerprint);

/* A plan's strategy in words: "tp2-dp4+ckpt" → "TP 2 × DP 4, recompute", "sdp8" →
 * "SDP (ZeRO-3) 8", "single" → "one GPU"; unknown tokens stand as written. */
void tsl_page_strategy(char *buf, size_t cap, const char *strategy);
/* A profile figure's labels (a JSON object) as its shape, escaped:
 * "tokens/micro-batch 8192 · TP 2 · hidden 1024 · seq 2048 · micro-batch 4 · ...". */
void tsl_page_shape(struct evbuffer *b, const char *labels_json);

#endif
