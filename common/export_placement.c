/*
 * export_placement.c — a heterogeneous plan's node order said in words, for the
 * exports whose stacks cannot take it as an argument, and the notes the JSON
 * formats travel beside (export.h).
 */
#include <stdbool.h>
#include <stdio.h>

#include "export.h"

size_t tsl_export_placement(const tsl_plan_t *p, char *buf, size_t cap)
{
    bool moved = false;
    for (uint32_t k = 0; k < p->n_nodes && k < TSL_PLAN_MAX_ORDER_NODES; k++)
        moved |= p->node_order[k] != k;
    if (cap)
        buf[0] = '\0';
    if (!moved || cap == 0)
        return 0;
    size_t n = (size_t)snprintf(buf, cap,
                                "heterogeneous placement: the stages take the cluster's nodes in "
                                "the order ");
    for (uint32_t k = 0; k < p->n_nodes && k < TSL_PLAN_MAX_ORDER_NODES && n < cap; k++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%u", k ? ", " : "", p->node_order[k]);
    if (n < cap)
        n += (size_t)snprintf(buf + n, cap - n,
                              " (as the cluster lists them, from 0); list the hosts to the "
                              "launcher, and the cluster to tesselctl eval, in this order");
    return n < cap ? n : cap - 1;
}

/* The JSON formats hold no comment: what the others write as one travels beside them. */
size_t tsl_export_side_notes(tsl_export_format_t f, const tsl_plan_t *p,
                             char (*notes)[TSL_EXPORT_NOTE_CAP])
{
    size_t n = 0;
    bool json = f == TSL_EXPORT_DEEPSPEED || f == TSL_EXPORT_GALVATRON;
    if (json && tsl_export_placement(p, notes[n], TSL_EXPORT_NOTE_CAP))
        n++;
    if (f == TSL_EXPORT_DEEPSPEED && tsl_export_tf32(p, notes[n], TSL_EXPORT_NOTE_CAP))
        n++;
    return n;
}
