/*
 * test_agent_link.c — the link probe's pure parts and its two ranks without
 * tesseld (agent_trial_link.c): nccl-tests' bandwidth arithmetic for two ranks
 * (send/recv and all-reduce bus bandwidth = algorithm bandwidth), the largest
 * message per comm and memory, the profile rows and their labels; then two rank
 * children forked as the agent forks them (cpu device ops, tcp on 127.0.0.1,
 * memory capped so the sweep stops at 16 KiB) whose "link" lines become rows.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "agent_ranks.h"
#include "check.h"
#include "prof.h"

static void test_bandwidth(void)
{
    double alg = 0, bus = 0;
    tsl_agent_link_bandwidth(TSL_COLL_SEND_RECV, 1u << 30, 0.1, &alg, &bus);
    CHECK_NEAR(alg, 1073741824.0 / 0.1 / 1e9, 1e-12, "send/recv algbw = bytes / time: %g", alg);
    CHECK_NEAR(bus, alg, 1e-12, "send/recv busbw factor 1: %g", bus);
    tsl_agent_link_bandwidth(TSL_COLL_ALL_REDUCE, 1u << 20, 1e-3, &alg, &bus);
    CHECK_NEAR(bus, alg * 2.0 * (2 - 1) / 2, 1e-12, "all-reduce of 2: 2(n-1)/n = 1: %g", bus);
    tsl_agent_link_bandwidth(TSL_COLL_ALL_REDUCE, 1024, 0, &alg, &bus);
    CHECK(alg == 0 && bus == 0, "no time: no bandwidth (not infinity): %g %g", alg, bus);
}

static void test_max_bytes(void)
{
    CHECK(tsl_agent_link_max_bytes("nccl", 0) == 1ull << 30, "nccl: 1 GiB");
    CHECK(tsl_agent_link_max_bytes("tcp", 0) == 64ull << 20, "tcp: 64 MiB");
    CHECK(tsl_agent_link_max_bytes("tcp", 64ull << 20) == 16ull << 20,
          "64 MiB of memory: 16 MiB messages (send + recv with room)");
    CHECK(tsl_agent_link_max_bytes("nccl", 1000) == 1024, "never below 1 KiB");
}

static void test_profile(void)
{
    tsl_agent_link_row_t rows[2] = {{"sendrecv", 1024, 1e-5, 0.1024, 0.1024},
                                    {"allreduce", 1024, 2e-5, 0.0512, 0.0512}};
    tsl_agent_profile_t p;
    tsl_err_t err = {0};
    CHECK(tsl_agent_link_profile(rows, 2, "node-a", "node-b", "tcp", "t-1", &p, &err) == 0, "%s",
          err.msg);
    CHECK(p.n == 6 && !strcmp(p.report_id, "link:t-1"), "3 rows per size, report %s", p.report_id);
    const tsl_agent_measurement_t *m = &p.m[0];
    CHECK(!strcmp(m->name, "sendrecv_busbw") && !strcmp(m->unit, "bytes/s") &&
              m->value == 0.1024e9 && !m->per_device,
          "first row: %s %s %g", m->name, m->unit, m->value);
    const char *want[][2] = {{"op", "sendrecv"},    {"bytes", "1024"},  {"group", "2"},
                             {"node", "node-a"},    {"peer", "node-b"}, {"comm", "tcp"},
                             {"link", "inter-node"}};
    CHECK(m->n_labels == 7, "7 labels: %u", m->n_labels);
    for (uint32_t i = 0; i < 7 && i < m->n_labels; i++)
        CHECK(!strcmp(m->keys[i], want[i][0]) && !strcmp(m->values[i], want[i][1]),
              "label %u: %s=%s", i, m->keys[i], m->values[i]);
    CHECK(!strcmp(p.m[2].name, "sendrecv_time") && !strcmp(p.m[2].unit, "s"), "time row: %s",
          p.m[2].name);
    CHECK(!strcmp(p.m[3].name, "allreduce_busbw"), "all-reduce rows: %s", p.m[3].name);
    free(p.m);
}

static tsl_agent_assignment_t link_assignment(uint32_t rank, const char *peer)
{
    tsl_agent_assignment_t a = {0};
    snprintf(a.trial_id, sizeof a.trial_id, "t-link");
    snprintf(a.kind, sizeof a.kind, "link");
    snprintf(a.peer, sizeof a.peer, "%s", peer);
    snprintf(a.comm, sizeof a.comm, "tcp");
    snprintf(a.devops, sizeof a.devops, "cpu");
    a.rank = rank;
    a.world_size = 2;
    a.iterations = 3;
    a.warmup = 1;
    a.seed = 7;
    return a;
}

static void test_two_ranks(void)
{
    /* 64 KiB of memory: messages up to 16 KiB (1, 2, 4, 8, 16 KiB) */
    tsl_agent_trial_opts_t o = {.address = "127.0.0.1", .timeout_s = 60, .cpu_memory_bytes = 65536};
    o.port = 20000 + (uint32_t)((getpid() * 3) % 20000);
    tsl_agent_assignment_t a[2] = {link_assignment(0, "b"), link_assignment(1, "a")};
    tsl_agent_rank_t rk[2];
    tsl_agent_trial_report_t rep[2];
    run_two_ranks(&o, a, rk, rep);
    CHECK(rep[0].iterations == 3 && rep[0].iter_time_s > 0, "the report: %u rounds, %g s",
          rep[0].iterations, rep[0].iter_time_s);
    CHECK(rk[0].n_link == 10 && !strcmp(rk[0].kind, "link") && !strcmp(rk[0].peer, "b"),
          "5 sizes x 2 ops: %u rows (kind %s, peer %s)", rk[0].n_link, rk[0].kind, rk[0].peer);
    for (uint32_t i = 0; i < rk[0].n_link; i++) {
        const tsl_agent_link_row_t *r = &rk[0].link[i];
        CHECK(r->bytes == 1024ull << (i / 2) && !strcmp(r->op, i % 2 ? "allreduce" : "sendrecv"),
              "row %u: %s %llu", i, r->op, (unsigned long long)r->bytes);
        CHECK(r->time_s > 0 && r->algbw_gbps > 0, "row %u measured", i);
        CHECK_NEAR(r->algbw_gbps, (double)r->bytes / r->time_s / 1e9, 1e-4, "row %u algbw", i);
        CHECK_NEAR(r->busbw_gbps, r->algbw_gbps, 1e-4, "row %u busbw of 2 ranks", i);
    }
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    test_bandwidth();
    test_max_bytes();
    test_profile();
    test_two_ranks();
    return CHECK_DONE();
}
