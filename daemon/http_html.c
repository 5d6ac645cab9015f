/*
 * http_html.c — the status pages' shared HTML pieces (see http_html.h).
 */
#include "http_html.h"

#include <ctype.h>
#include <stdio.h>

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
    size_t n = 0;
    while (n <= 16 && isalnum((unsigned char)s[n]))
        n++;
    return n > 0 && n <= 16 && s[n] == '\0';
}

void tsl_html_error(struct evbuffer *b, const char *what, const char *msg)
{
    evbuffer_add_printf(b, "<p class=\"error\">Cannot list %s: ", what);
    tsl_page_escape(b, msg);
    evbuffer_add_printf(b, "</p>\n");
}
