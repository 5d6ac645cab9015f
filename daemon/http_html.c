/*
 * http_html.c — the status pages' shared HTML pieces (see http_html.h).
 */
#include "http_html.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fingerprint.h"

/* Model names, hostnames, GPU models and error texts are whatever a client sent. */
void tsl_page_escape(struct evbuffer *b, const char *s)
{
    for (; s != NULL && *s != '\0'; s++) {
        switch (*s) {
        case '<': evbuffer_add(b, "&lt;", 4); break;
        case '>': evbuffer_add(b, "&gt;", 4); break;
        case '&': evbuffer_add(b, "&amp;", 5); break;
        case '"': evbuffer_add(b, "&quot;", 6); break;
        case '\'': evbuffer_add(b, "&#39;", 5); break;
        default: evbuffer_add(b, s, 1); break;
        }
    }
}

void tsl_html_cell(struct evbuffer *b, bool num, const char *text)
{
    evbuffer_add_printf(b, "<td%s>", num ? " class=\"n\"" : "");
    tsl_page_escape(b, text);
    evbuffer_add(b, "</td>", 5);
}

void tsl_html_cellf(struct evbuffer *b, const char *fmt, double v)
{
    char s[64];
    snprintf(s, sizeof(s), fmt, v);
    tsl_html_cell(b, true, s);
}

void tsl_html_age(char *buf, size_t cap, int64_t now, int64_t then)
{
    if (then <= 0)
        snprintf(buf, cap, "never");
    else if (now - then < 120)
        snprintf(buf, cap, "%lld s ago", (long long)(now > then ? now - then : 0));
    else if (now - then < 7200)
        snprintf(buf, cap, "%lld min ago", (long long)((now - then) / 60));
    else
        snprintf(buf, cap, "%.1f h ago", (double)(now - then) / 3600.0);
}

bool tsl_html_is_fingerprint(const char *s)
{
    return tsl_fingerprint_valid(s);
}

void tsl_html_error(struct evbuffer *b, const char *what, const char *msg)
{
    evbuffer_add_printf(b, "<p class=\"error\">Cannot list %s: ", what);
    tsl_page_escape(b, msg);
    evbuffer_add_printf(b, "</p>\n");
}

void tsl_html_sig3(char *buf, size_t cap, double v)
{
    double a = fabs(v);
    if (!isfinite(v))
        snprintf(buf, cap, "%s", isnan(v) ? "-" : v > 0 ? "\xE2\x88\x9E" : "-\xE2\x88\x9E");
    else if (a == 0)
        snprintf(buf, cap, "0");
    else if (a < 1)
        snprintf(buf, cap, "%.3g", v);
    else if (a < 9.995)
        snprintf(buf, cap, "%.2f", v);
    else if (a < 99.95)
        snprintf(buf, cap, "%.1f", v);
    else
        snprintf(buf, cap, "%.0f", v);
}

/* v scaled down by step until under step (at most n - 1 times), printed with its unit. */
static void scaled(char *buf, size_t cap, double v, double step, const char *const *units, int n,
                   const char *suffix)
{
    char num[32];
    int u = 0;
    while (fabs(v) >= step && u < n - 1) {
        v /= step;
        u++;
    }
    tsl_html_sig3(num, sizeof(num), v);
    snprintf(buf, cap, "%s %s%s", num, units[u], suffix);
}

void tsl_html_bytes(char *buf, size_t cap, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    scaled(buf, cap, bytes, 1024.0, units, 6, "");
}

void tsl_html_si(char *buf, size_t cap, double v, const char *unit)
{
    static const char *const units[] = {"", "k", "M", "G", "T", "P", "E"};
    scaled(buf, cap, v, 1000.0, units, 7, unit);
}

void tsl_html_seconds(char *buf, size_t cap, double s)
{
    char num[32];
    double a = fabs(s);
    static const struct {
        double below, scale;
        const char *unit;
    } steps[] = {{0, 1, "s"},   {1e-6, 1e9, "ns"},       {1e-3, 1e6, "\xC2\xB5s"}, {1, 1e3, "ms"},
                 {120, 1, "s"}, {7200, 1 / 60.0, "min"}, {172800, 1 / 3600.0, "h"}};
    const char *unit = "d";
    double scale = 1 / 86400.0;
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        if (i == 0 ? a == 0 : a < steps[i].below) {
            unit = steps[i].unit;
            scale = steps[i].scale;
            break;
        }
    }
    tsl_html_sig3(num, sizeof(num), s * scale);
    snprintf(buf, cap, "%s %s", num, unit);
}

void tsl_html_value(char *buf, size_t cap, double v, const char *unit)
{
    char num[32];
    if (strcmp(unit, "s") == 0)
        tsl_html_seconds(buf, cap, v);
    else if (strcmp(unit, "bytes") == 0)
        tsl_html_bytes(buf, cap, v);
    else if (strcmp(unit, "bytes/s") == 0)
        tsl_html_si(buf, cap, v, "B/s");
    else if (strcmp(unit, "flop/s") == 0)
        tsl_html_si(buf, cap, v, "FLOP/s");
    else if (strcmp(unit, "flop") == 0)
        tsl_html_si(buf, cap, v, "FLOP");
    else {
        tsl_html_sig3(num, sizeof(num), v);
        snprintf(buf, cap, strcmp(unit, "ratio") == 0 || unit[0] == '\0' ? "%s" : "%s %s", num,
                 unit);
    }
}

void tsl_html_cell_bytes(struct evbuffer *b, double bytes)
{
    char s[32];
    tsl_html_bytes(s, sizeof(s), bytes);
    tsl_html_cell(b, true, s);
}

void tsl_html_cell_seconds(struct evbuffer *b, double sec)
{
    char s[32];
    tsl_html_seconds(s, sizeof(s), sec);
    tsl_html_cell(b, true, s);
}

void tsl_html_cell_id(struct evbuffer *b, const char *cls, const char *id, size_t max)
{
    size_t n = strlen(id);
    evbuffer_add_printf(b, "<td class=\"%s\" title=\"", cls);
    tsl_page_escape(b, id);
    evbuffer_add_printf(b, "\">");
    if (n <= max) {
        tsl_page_escape(b, id);
    } else {
        char cut[64];
        if (max >= sizeof(cut))
            max = sizeof(cut) - 1;
        while (max > 0 && ((unsigned char)id[max] & 0xC0) == 0x80)
            max--;
        memcpy(cut, id, max);
        cut[max] = '\0';
        tsl_page_escape(b, cut);
        evbuffer_add_printf(b, "\xE2\x80\xA6");
    }
    evbuffer_add_printf(b, "</td>");
}
