/*
 * http_html.h — the small HTML pieces the status pages share (http_page.c,
 * http_trials.c, http_overview.c): escaping, table cells, ages, fingerprint
 * links, the error paragraph and the one way figures are printed (readable
 * units, three significant figures). Every string that came from the store or a
 * client goes through tsl_page_escape; nothing here emits script or loads
 * anything.
 *
 * Units: every figure on the pages goes through tsl_html_bytes (binary: B, KiB,
 * MiB, GiB, TiB), tsl_html_seconds (ns, µs, ms, s, then min, h, d), tsl_html_si
 * (decimal prefixes: "312 TFLOP/s", "24.5 GB/s") or tsl_html_value (a stored
 * figure by its unit name), so no page shows "0.001317 GiB" (it shows
 * "1.35 MiB"). buf receives at most cap bytes, NUL-terminated; 32 is enough.
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
/* The store's rule (16 hex digits, common/fingerprint.h): safe in an href as it
 * stands; anything else is no plan's (/plan/zzz is 404, not the store's refusal
 * as a 500). */
bool tsl_html_is_fingerprint(const char *s);
/* v with three significant figures and no exponent: "1.35", "13.5", "135", "1350";
 * below 1, "0.5", "0.0123". */
void tsl_html_sig3(char *buf, size_t cap, double v);
void tsl_html_bytes(char *buf, size_t cap, double bytes);
void tsl_html_seconds(char *buf, size_t cap, double s);
/* v with a decimal prefix (k, M, G, T, P) before unit: tsl_html_si(b, n, 3.1e14,
 * "FLOP/s") is "310 TFLOP/s". */
void tsl_html_si(char *buf, size_t cap, double v, const char *unit);
/* A stored figure by its unit ("s", "bytes", "bytes/s", "flop/s", "flop",
 * "ratio"; anything else: the number and the unit as given). */
void tsl_html_value(char *buf, size_t cap, double v, const char *unit);
/* A right-aligned cell of bytes or seconds in readable units. */
void tsl_html_cell_bytes(struct evbuffer *b, double bytes);
void tsl_html_cell_seconds(struct evbuffer *b, double s);
/* A cell of an id cut to max bytes and "…", the whole id in its title: class cls. */
void tsl_html_cell_id(struct evbuffer *b, const char *cls, const char *id, size_t max);

/* <p class="error">Cannot list WHAT: MSG</p>, MSG escaped. */
void tsl_html_error(struct evbuffer *b, const char *what, const char *msg);

#endif
