/*
 * exec_seed.c — seeded initial values, span by span (exec_internal.h
 * tsl_exec_fill_span): the dense layers' vectors (exec_engine.c) and the routed
 * experts' (exec_moe_setup.c) are both made this way, each element from (seed,
 * stream, its offset in the full vector), so that any split of a layer holds the
 * values the whole layer would.
 */
#include "exec_internal.h"

void tsl_exec_fill_span(void *ud, size_t part, size_t full, size_t len, float center, float amp)
{
    tsl_exec_fill_t *f = ud;
    tsl_buf_t v = tsl_buf_view(f->dst, part, len);
    if (!f->rc)
        f->rc = f->e->dev->fill_uniform(f->e->dev, &v, f->e->o.seed, f->stream, full, center, amp,
                                        f->err);
}
