/*
 * http_html.h — the small HTML pieces the status pages share (http_page.c,
 * http_trials.c): escaping, table cells, ages, fingerprint links and the
 * error paragraph. Every string that came from the store or a client goes
 * through tsl_page_escape; nothing here emits script or loads anything.
 */
#ifndef TSL_HTTP_HTML_H
#define TSL_HTTP_HTML_H

#include <event2/buffer.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* < > & " ' as entities: safe in element text and in quoted attributes. */
void tsl_page_escape(struct evbuffer *b, const char *s);
/* <td>text</td>, escaped; num right-aligns it. */
void tsl_html_cell(struct evbuffer *b, bool num, const char *text);
/* A right-aligned cell of one number printed with fmt ("%.2f"). */
void tsl_html_cellf(struct evbuffer *b, const char *fmt, double v);
/* "42 s ago", "5 min ago", "3.1 h ago"; then <= 0 reads "never". */
void tsl_html_age(char *buf, size_t cap, int64_t now, int64_t then);
/* The store's rule (1–16 letters or digits): safe in an href as it stands. */
bool tsl_html_is_fingerprint(const char *s);
/* <p class="error">Cannot list WHAT: MSG</p>, MSG escaped. */
void tsl_html_error(struct evbuffer *b, const char *what, const char *msg);

#endif
