/*
 * progress.h — tesselctl's one progress bar, for a local search (the planner's
 * progress callback) and a remote one (the Plan stream's progress events):
 *   "search     [##########....................]  33%"
 * drawn on stderr only when stderr is a terminal, redrawn only when the
 * percentage or the phase changes, and erased before the result is printed.
 */
#ifndef TSL_PROGRESS_H
#define TSL_PROGRESS_H

#include <stdbool.h>

typedef struct tsl_progress {
    bool on; /* stderr is a terminal */
    bool drawn;
    int last_pct;
    char last_phase[32];
} tsl_progress_t;

void tsl_progress_init(tsl_progress_t *pg);
/* fraction is clamped to [0, 1]; phase may be NULL. */
void tsl_progress_draw(tsl_progress_t *pg, double fraction, const char *phase);
void tsl_progress_clear(tsl_progress_t *pg);

#endif
