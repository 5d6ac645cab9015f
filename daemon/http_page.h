/*
 * http_page.h — the status page's HTML (http.c serves it): daemon state,
 * workers, profiles, cached plans, trials and calibrations on "/", and one
 * plan's stages with an inline SVG time/memory chart and its trials on
 * "/plan/FINGERPRINT" (the trial sections: http_trials.h). No script, no
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

#endif
