/*
 * tessel_worker.c — tessel-worker's entry point: the subcommand, then its main.
 * `run` (also with no subcommand) is the agent (agent_main.c); `profile` is the
 * standalone measuring command (worker/profile/, when built in).
 */
#include <stdio.h>
#include <string.h>

#include "agent.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "run") == 0)
        return tsl_agent_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "profile") == 0) {
        fprintf(stderr, "tessel-worker: profile: the standalone profiler is not built into this "
                        "tessel-worker\n");
        return 2;
    }
    return tsl_agent_main(argc, argv);
}
