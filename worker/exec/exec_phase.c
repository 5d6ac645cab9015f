/*
 * exec_phase.c — the phase timings: an event on the compute stream at every
 * change of phase (forward, backward, communication, p2p, ...). Its own file:
 * the engine, the layers and the schedule all mark phases, and none of them
 * should depend on another for it. The TP sum lives here too: the blocks
 * (exec_layer.c) and the vocabulary layers (exec_vocab.c) both need it.
 */
#include "exec_internal.h"

int tsl_exec_ph(tsl_exec_t *e, int phase, tsl_err_t *err)
{
    if (phase == e->ph_cur)
        return 0;
    e->ph_cur = phase;
    /* Out of events: the rest of the step counts to the last phase recorded. */
    if (e->ev_n + (phase == PH_END ? 0 : 1) >= e->ev_cap)
        return 0;
    e->ev_ph[e->ev_n] = (uint8_t)phase;
    return e->dev->event_record(e->dev, e->ev[e->ev_n++], TSL_STREAM_COMPUTE, err);
}

int tsl_exec_tp_sum(tsl_exec_t *e, const tsl_exec_xl_t *L, tsl_buf_t *x, tsl_err_t *err)
{
    int back = e->ph_cur; /* forward, backward, or recomputation inside backward */
    /* no comm ops: a block timed alone (exec_block.h), one device's 1/tp share */
    if (L->d->tp == 1 || e->comm == NULL)
        return 0;
    if (tsl_exec_ph(e, PH_COMM, err) ||
        e->comm->allreduce(e->comm, L->tp_g, x, e->dev->stream(e->dev, TSL_STREAM_COMPUTE), err))
        return -1;
    return tsl_exec_ph(e, back, err);
}
