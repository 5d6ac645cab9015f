/*
 * progress.c — the bar (progress.h).
 */
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void tsl_progress_init(tsl_progress_t *pg)
{
    memset(pg, 0, sizeof *pg);
    pg->on = isatty(STDERR_FILENO) == 1;
    pg->last_pct = -1;
}

void tsl_progress_draw(tsl_progress_t *pg, double fraction, const char *phase)
{
    enum { WIDTH = 30 };
    double f = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
    int pct = (int)(f * 100.0 + 0.5), fill = (int)(f * WIDTH + 0.5);
    char bar[WIDTH + 1];

    if (!phase)
        phase = "";
    if (!pg->on || (pct == pg->last_pct && strcmp(phase, pg->last_phase) == 0))
        return;
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, '.', (size_t)(WIDTH - fill));
    bar[WIDTH] = '\0';
    fprintf(stderr, "\r\033[K%-10.10s [%s] %3d%%", phase, bar, pct);
    fflush(stderr);
    pg->drawn = true;
    pg->last_pct = pct;
    snprintf(pg->last_phase, sizeof(pg->last_phase), "%s", phase);
}

void tsl_progress_clear(tsl_progress_t *pg)
{
    if (pg->drawn)
        fputs("\r\033[K", stderr);
    pg->drawn = false;
}
