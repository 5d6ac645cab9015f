/*
 * exec_env.c — the end of what one rank ran with (exec.h, tsl_exec_env_t), shared by
 * tessel-exec-run, the worker's trial ranks and bench/accuracy.
 */
#include "exec.h"

void tsl_exec_env_end(tsl_exec_env_t *e)
{
    if (e->comm)
        e->comm->destroy(e->comm);
    if (e->world)
        tsl_comm_loopback_world_free(e->world);
    if (e->dev)
        e->dev->destroy(e->dev);
    tsl_exec_rank_free(&e->rank);
    e->comm = NULL;
    e->world = NULL;
    e->dev = NULL;
}
