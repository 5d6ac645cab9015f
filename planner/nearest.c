/*
 * nearest.c — the known names nearest to an unknown one (nearest.h).
 */
#include "nearest.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define NAME_CAP 63

static unsigned min3(unsigned a, unsigned b, unsigned c)
{
    unsigned m = a < b ? a : b;
    return m < c ? m : c;
}

static inline bool same_char(char x, char y, bool fold_case)
{
    return fold_case ? tolower((unsigned char)x) == tolower((unsigned char)y) : x == y;
}

/* One row of the table, as the names are short. */
unsigned tsl_edit_distance(const char *a, size_t an, const char *b, size_t bn, bool fold_case)
{
    unsigned row[NAME_CAP + 1];
    an = an > NAME_CAP ? NAME_CAP : an;
    bn = bn > NAME_CAP ? NAME_CAP : bn;
    for (size_t j = 0; j <= bn; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= an; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= bn; j++) {
            unsigned up = row[j];
            unsigned differ = !same_char(a[i - 1], b[j - 1], fold_case);
            row[j] = min3(diag + differ, up + 1, row[j - 1] + 1);
            diag = up;
        }
    }
    return row[bn];
}

/* A typed name of 3 characters or more that begins the candidate: the user
 * wrote the family and left out the size ("A100", "mixtral"). */
static bool begins(const char *name, const char *candidate)
{
    size_t n = strlen(name);
    return n >= 3 && strncasecmp(candidate, name, n) == 0;
}

void tsl_nearest_init(tsl_nearest_t *n, const char *name)
{
    memset(n, 0, sizeof *n);
    n->name = name ? name : "";
    /* the bar: within a third of the name's length, at least 1 */
    n->best = (unsigned)strnlen(n->name, NAME_CAP) / 3 + 1;
}

void tsl_nearest_offer(tsl_nearest_t *n, const char *candidate)
{
    if (!candidate || !candidate[0] || !n->name[0])
        return;
    unsigned d = begins(n->name, candidate)
                     ? 1
                     : tsl_edit_distance(n->name, strnlen(n->name, NAME_CAP), candidate,
                                         strnlen(candidate, NAME_CAP), true);
    /* beat the bar to be the first hit; equal the best to join the hits */
    if (n->n_hits == 0 ? d >= n->best : d > n->best)
        return;
    if (d < n->best) {
        n->best = d;
        n->n_hits = 0;
    }
    for (size_t i = 0; i < n->n_hits; i++)
        if (strcasecmp(n->hits[i], candidate) == 0)
            return; /* an alias of one already offered */
    if (n->n_hits < TSL_NEAREST_MAX)
        n->hits[n->n_hits++] = candidate;
}

const char *tsl_nearest_hint(const tsl_nearest_t *n, char *buf, size_t cap)
{
    if (cap == 0)
        return buf;
    buf[0] = '\0';
    if (n->n_hits == 0)
        return buf;
    size_t used = (size_t)snprintf(buf, cap, " (did you mean %s", n->hits[0]);
    for (size_t i = 1; i < n->n_hits && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i + 1 == n->n_hits ? " or " : ", ",
                                 n->hits[i]);
    if (used < cap)
        snprintf(buf + used, cap - used, "?)");
    return buf;
}

const char *tsl_nearest_word(const char *name, const char *list, char *buf, size_t cap)
{
    unsigned best = (unsigned)strlen(name) / 3 + 1; /* farther would mislead */
    buf[0] = '\0';
    for (const char *w = list; *w;) {
        size_t n = strcspn(w, " ");
        unsigned d = tsl_edit_distance(name, strlen(name), w, n, false);
        if (d < best) {
            best = d;
            snprintf(buf, cap, "%.*s", (int)n, w);
        }
        w += n + (w[n] == ' ');
    }
    return buf;
}
