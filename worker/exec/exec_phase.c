/*
 * exec_phase.c — the phase timings: an event on the compute stream at every
 * change of phase (forward, backward, communication, p2p, ...). Its own file:
 * the engine, the layers and the schedule all mark phases, and none of them
 * should depend on another for it.
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
