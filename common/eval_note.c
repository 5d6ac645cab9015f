/*
 * eval_note.c — the notes of an import (eval_cfg.h tsl_eval_cfg_note), apart so that the
 * readers of a line's parts (eval_cfg.c, eval_cgraph.c) call it without calling each
 * other.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "eval_cfg.h"

void tsl_eval_cfg_note(tsl_eval_cfg_t *cfg, const char *fmt, ...)
{
    size_t n = strlen(cfg->notes);
    va_list ap;
    if (n + 2 >= sizeof cfg->notes)
        return;
    va_start(ap, fmt);
    vsnprintf(cfg->notes + n, sizeof cfg->notes - n - 1, fmt, ap);
    va_end(ap);
    n = strlen(cfg->notes);
    cfg->notes[n] = '\n';
    cfg->notes[n + 1] = '\0';
}
