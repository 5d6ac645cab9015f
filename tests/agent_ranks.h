/*
 * agent_ranks.h — running trial ranks (agent.h's tsl_agent_rank_*) to their end,
 * shared by test_agent_trial.c and test_agent_link.c. Header-only so that its
 * CHECKs count in the including test (check.h keeps per-file counters).
 */
#ifndef TSL_TEST_AGENT_RANKS_H
#define TSL_TEST_AGENT_RANKS_H

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/wait.h>

#include "agent.h"
#include "check.h"

/* Reads the rank's pipe to its end, waits for it; its report. */
static inline void rank_finish(tsl_agent_rank_t *rk, tsl_agent_trial_report_t *out)
{
    tsl_agent_trial_report_t ready;
    bool got = false;
    for (;;) {
        struct pollfd pfd = {rk->fd, POLLIN, 0};
        poll(&pfd, 1, 60000);
        if (tsl_agent_rank_read(rk, &got, &ready) == 1)
            break;
    }
    int st = 0;
    while (waitpid(rk->pid, &st, 0) < 0 && errno == EINTR) {
    }
    tsl_agent_rank_end(rk, st, out);
}

/* Starts ranks a[0] and a[1] on o (rank 1 meets rank 0 at 127.0.0.1:o->port)
 * and runs both to their end: r[] the ranks, rep[] their reports. */
static inline void run_two_ranks(const tsl_agent_trial_opts_t *o, tsl_agent_assignment_t a[2],
                                 tsl_agent_rank_t r[2], tsl_agent_trial_report_t rep[2])
{
    tsl_err_t err = {0};
    snprintf(a[1].rendezvous, sizeof a[1].rendezvous, "127.0.0.1:%u", o->port);
    CHECK(tsl_agent_rank_start(o, &a[0], &r[0], &err) == 0, "rank 0 starts: %s", err.msg);
    CHECK(tsl_agent_rank_start(o, &a[1], &r[1], &err) == 0, "rank 1 starts: %s", err.msg);
    rank_finish(&r[0], &rep[0]);
    rank_finish(&r[1], &rep[1]);
    CHECK(!rep[0].error[0] && !rep[1].error[0], "both ran: '%s' '%s'", rep[0].error, rep[1].error);
}

#endif
