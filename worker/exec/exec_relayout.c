/*
 * exec_relayout.c — runs a move between two layers' layouts (planner/relayout.h's
 * rule, turned into groups by exec_layout.c): a slice is a copy of a range of samples (samples are contiguous
 * rows of seq × hidden), a gather an all-gather over the move's group — straight into
 * the destination when the group's pieces are exactly the wanted samples, else into
 * the workspace mv and the wanted range copied out. On the compute stream: the next
 * layer needs the result at once; the gather is timed as communication.
 */
#include "exec_internal.h"

int tsl_exec_relayout(tsl_exec_t *e, const tsl_exec_move_t *m, tsl_group_t *g, const tsl_buf_t *x,
                      tsl_buf_t *y, tsl_err_t *err)
{
    size_t row = (size_t)e->seq * e->hidden, want = (size_t)m->to_b * row;
    if (x->n != (size_t)m->from_b * row || y->n != want)
        return tsl_err_setc(err, TSL_E_INTERNAL,
                            "exec: a move of %zu rows into %zu, expected %u into %u", x->n / row,
                            y->n / row, m->from_b, m->to_b);
    if (m->kind == TSL_EXEC_MOVE_NONE)
        return x->ptr == y->ptr ? 0 : e->dev->copy(e->dev, y, x, err);
    if (m->kind == TSL_EXEC_MOVE_SLICE) {
        tsl_buf_t part = tsl_buf_view(x, (size_t)m->offset * row, want);
        return e->dev->copy(e->dev, y, &part, err);
    }
    if (!g)
        return tsl_err_setc(err, TSL_E_INTERNAL, "exec: a gather without its group");
    size_t all = (size_t)e->comm->group_size(g) * x->n;
    bool direct = all == want && m->offset == 0;
    tsl_buf_t got = direct ? *y : tsl_buf_view(&e->mv, 0, all);
    int back = e->ph_cur;
    if (tsl_exec_ph(e, PH_COMM, err) ||
        e->comm->all_gather(e->comm, g, x, &got, e->dev->stream(e->dev, TSL_STREAM_COMPUTE), err) ||
        tsl_exec_ph(e, back, err))
        return -1;
    if (direct)
        return 0;
    tsl_buf_t part = tsl_buf_view(&got, (size_t)m->offset * row, want);
    return e->dev->copy(e->dev, y, &part, err);
}
