/*
 * test_agent_trial.c — tessel-worker's trial ranks without tesseld: a plan document
 * back to the model and plan (exec_doc.h); two ranks of a pp = 2 plan forked as the
 * agent forks them (cpu device ops, tcp comm on 127.0.0.1) and their pipe lines
 * turned into reports; an executor refusal reported with its message; a rank run
 * out of its cpu memory reported as oom; a rank killed reported with its signal;
 * the pipe protocol fed by hand (an nccl id, a report split across reads); the
 * [trials] configuration keys.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
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
#include "exec.h"
#include "exec_doc.h"
#include "target.h"
#include "hf_config.h"
#include "plan_json.h"

/* A GPT of 4 blocks, hidden 32, 4 heads, sequence 16, vocabulary 64. */
static const char *HF = "{\"model_type\":\"gpt2\",\"n_layer\":4,\"n_embd\":32,\"n_head\":4,"
                        "\"n_positions\":16,\"vocab_size\":64}";

/* The document the daemon would send: the request naming the model, the plan
 * (pp stages, mbs 2 x 2 micro-batches) and, as alternative 1, a single-device plan. */
static char *make_doc(uint32_t pp)
{
    tsl_model_t m;
    tsl_plan_t *p = malloc(sizeof *p), *one = malloc(sizeof *one);
    tsl_err_t err = {0};
    tsl_exec_plan_spec_t s = {.pp = pp, .tp = 1, .dp = 1, .micro_batch = 2, .n_micro = 2};
    tsl_exec_plan_spec_t s1 = s;
    s1.pp = 1;
    if (tsl_hf_config_parse(HF, "tiny-gpt", 0, &m, &err) ||
        tsl_exec_uniform_plan(&m, &s, p, &err) || tsl_exec_uniform_plan(&m, &s1, one, &err)) {
        fprintf(stderr, "fixture: %s\n", err.msg);
        exit(1);
    }
    json_t *doc = json_object(), *req = json_loads(HF, 0, NULL), *r = json_object();
    json_object_set_new(r, "hf_config", req);
    json_object_set_new(doc, "request", r);
    json_object_set_new(doc, "model", json_pack("{s:s}", "name", "tiny-gpt"));
    json_object_set_new(doc, "plan", tsl_plan_to_json(p));
    json_object_set_new(doc, "alternatives", json_pack("[o]", tsl_plan_to_json(one)));
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    tsl_model_free(&m);
    free(p), free(one);
    return text;
}

static void test_doc(void)
{
    char *doc = make_doc(2);
    tsl_model_t m;
    tsl_plan_t *p = malloc(sizeof *p);
    tsl_err_t err = {0};
    CHECK(tsl_exec_doc_load(doc, 0, &m, p, &err) == 0, "document loads: %s", err.msg);
    CHECK(p->pp == 2 && p->n_devices == 2 && p->n_micro == 2, "plan: pp %u, %u devices", p->pp,
          p->n_devices);
    CHECK(m.n_layers == p->n_layers, "model %u layers, plan %u", m.n_layers, p->n_layers);
    CHECK(!m.layers[1].unfused_attn, "the request's fused attention");
    tsl_model_free(&m);
    /* a plan priced with the unfused core for its target's stack on the cluster's GPUs
     * (stack_unfused_attn: Megatron-LM on a V100) runs the unfused core, as priced */
    json_t *su = json_loads(doc, 0, NULL);
    json_object_set_new(json_object_get(su, "plan"), "stack_unfused_attn", json_true());
    char *sudoc = json_dumps(su, JSON_COMPACT);
    CHECK(tsl_exec_doc_load(sudoc, 0, &m, p, &err) == 0 && p->stack_unfused_attn &&
              m.layers[1].unfused_attn,
          "stack_unfused_attn: the unfused core: %s", err.msg);
    tsl_model_free(&m);
    free(sudoc);
    json_decref(su);
    CHECK(tsl_exec_doc_load(doc, 1, &m, p, &err) == 0 && p->pp == 1, "alternative 1: %s", err.msg);
    tsl_model_free(&m);
    CHECK(tsl_exec_doc_load(doc, 2, &m, p, &err) != 0 && strstr(err.msg, "1 alternatives"),
          "plan_index past the alternatives: %s", err.msg);
    CHECK(tsl_exec_doc_load("{\"plan\": {}}", 0, &m, p, &err) != 0 && strstr(err.msg, "model"),
          "no model named: %s", err.msg);
    CHECK(tsl_exec_doc_load("{nope", 0, &m, p, &err) != 0 && strstr(err.msg, "document"),
          "not JSON: %s", err.msg);
    /* the model named only by the document's model.name: a preset works, else the
     * error says what the request lacks */
    json_t *j = json_loads(doc, 0, NULL);
    json_object_del(json_object_get(j, "request"), "hf_config");
    char *bare = json_dumps(j, JSON_COMPACT);
    CHECK(tsl_exec_doc_load(bare, 0, &m, p, &err) != 0 &&
              strstr(err.msg, "the request names no model") && !strstr(err.msg, "known presets"),
          "no model in the request: %s", err.msg);
    json_object_set_new(j, "model", json_pack("{s:s, s:i}", "name", "GPT2-345M", "seq_len", 64));
    free(bare);
    bare = json_dumps(j, JSON_COMPACT);
    CHECK(tsl_exec_doc_load(bare, 0, &m, p, &err) == 0 && m.n_layers == 26 &&
              m.tokens_per_sample == 64,
          "a preset by model.name, at its seq_len: %s", err.msg);
    tsl_model_free(&m);
    free(bare);
    json_decref(j);
    /* the request's model switches, as the search applied them: one MTP depth adds its
     * entry, inner layer and head copy (3 layers, mtp.h), unfused_attn marks the
     * blocks; a bad target is named */
    uint32_t base = p->n_layers;
    j = json_loads(doc, 0, NULL);
    json_t *rq = json_object_get(j, "request");
    json_object_set_new(rq, "mtp_layers", json_integer(1));
    json_object_set_new(rq, "unfused_attn", json_true());
    bare = json_dumps(j, JSON_COMPACT);
    CHECK(tsl_exec_doc_load(bare, 0, &m, p, &err) == 0 && m.n_layers == base + 3 &&
              m.layers[1].unfused_attn,
          "request.mtp_layers 1 and unfused_attn: %u layers (%u without): %s", m.n_layers, base,
          err.msg);
    tsl_model_free(&m);
    free(bare);
    json_object_set_new(rq, "target", json_string("caffe"));
    bare = json_dumps(j, JSON_COMPACT);
    CHECK(tsl_exec_doc_load(bare, 0, &m, p, &err) != 0 && strstr(err.msg, "request.target"),
          "an unknown request.target: %s", err.msg);
    free(bare);
    /* the daemon's stored request gives the target as its number (api/request.c) */
    json_object_set_new(rq, "target", json_integer(TSL_TARGET_COUNT));
    bare = json_dumps(j, JSON_COMPACT);
    err.msg[0] = '\0';
    CHECK(tsl_exec_doc_load(bare, 0, &m, p, &err) != 0 && strstr(err.msg, "request.target"),
          "a request.target number out of range: %s", err.msg);
    free(bare);
    json_object_set_new(rq, "target", json_integer(TSL_TARGET_MEGATRON));
    bare = json_dumps(j, JSON_COMPACT);
    CHECK(tsl_exec_doc_load(bare, 0, &m, p, &err) == 0 && m.n_layers == base + 3,
          "request.target by number: %s", err.msg);
    tsl_model_free(&m);
    free(bare);
    json_decref(j);
    free(p);
    free(doc);
}

static void test_parse_report(void)
{
    tsl_exec_report_t r = {.rank = 1,
                           .stage = 1,
                           .iters = 3,
                           .iter_median_s = 0.5,
                           .iter_min_s = 0.25,
                           .iter_max_s = 0.75,
                           .fwd_s = 0.1,
                           .bwd_s = 0.2,
                           .comm_s = 0.03,
                           .bubble_s = 0.04,
                           .opt_s = 0.05,
                           .peak_bytes = 123456789,
                           .oom = false,
                           .loss = 4.25};
    char json[1024];
    tsl_agent_trial_report_t rep = {0};
    tsl_err_t err = {0};
    tsl_exec_report_json(&r, json, sizeof json);
    CHECK(tsl_agent_trial_parse_report(json, &rep, &err) == 0, "parses: %s", err.msg);
    CHECK(rep.iter_time_s == 0.5 && rep.iter_min_s == 0.25 && rep.iter_max_s == 0.75,
          "iteration median/min/max: %g %g %g", rep.iter_time_s, rep.iter_min_s, rep.iter_max_s);
    CHECK(rep.fwd_s == 0.1 && rep.bwd_s == 0.2 && rep.comm_s == 0.03 && rep.bubble_s == 0.04 &&
              rep.opt_s == 0.05,
          "phases");
    CHECK(rep.peak_bytes == 123456789 && !rep.oom && rep.iterations == 3 && rep.loss == 4.25,
          "peak %llu, iterations %u, loss %g", (unsigned long long)rep.peak_bytes, rep.iterations,
          rep.loss);
    r.loss = NAN;
    r.oom = true;
    tsl_exec_report_json(&r, json, sizeof json);
    CHECK(tsl_agent_trial_parse_report(json, &rep, &err) == 0 && rep.loss == 0 && rep.oom,
          "no loss off the last stage reads 0; oom read");
    CHECK(tsl_agent_trial_parse_report("{\"iters\": 3}", &rep, &err) != 0 &&
              strstr(err.msg, "iter_median_s"),
          "a missing key is named: %s", err.msg);
    CHECK(tsl_agent_trial_parse_report("[1]", &rep, &err) != 0, "not an object");
}

static void test_exit_reason(void)
{
    char buf[256];
    tsl_agent_exit_reason(1, SIGKILL, buf, sizeof buf); /* wait status of a SIGKILL death */
    CHECK(strstr(buf, "rank 1 exited on signal 9") != NULL, "%s", buf);
    tsl_agent_exit_reason(0, 3 << 8, buf, sizeof buf);
    CHECK(strstr(buf, "rank 0 exited with status 3") != NULL, "%s", buf);
}

static tsl_agent_assignment_t assignment(const char *doc, uint32_t rank, uint32_t world)
{
    tsl_agent_assignment_t a = {.rank = rank,
                                .world_size = world,
                                .iterations = 2,
                                .warmup = 1,
                                .seed = 7,
                                .timeout_s = 60};
    snprintf(a.trial_id, sizeof a.trial_id, "t-test");
    snprintf(a.comm, sizeof a.comm, "tcp");
    snprintf(a.devops, sizeof a.devops, "cpu");
    a.document = strdup(doc);
    return a;
}

static void test_two_ranks(void)
{
    char *doc = make_doc(2);
    tsl_agent_trial_opts_t o = {.address = "127.0.0.1", .timeout_s = 60};
    o.port = 20000 + (uint32_t)(getpid() % 20000);
    tsl_agent_assignment_t a[2] = {assignment(doc, 0, 2), assignment(doc, 1, 2)};
    tsl_agent_rank_t r[2];
    tsl_agent_trial_report_t rep[2];
    run_two_ranks(&o, a, r, rep);
    CHECK(rep[0].iterations == 2 && rep[1].iterations == 2, "measured iterations: %u %u",
          rep[0].iterations, rep[1].iterations);
    CHECK(rep[0].iter_time_s > 0 && rep[0].iter_min_s <= rep[0].iter_time_s &&
              rep[0].iter_time_s <= rep[0].iter_max_s,
          "rank 0 timings ordered: %g %g %g", rep[0].iter_min_s, rep[0].iter_time_s,
          rep[0].iter_max_s);
    CHECK(rep[0].peak_bytes > 0 && rep[1].peak_bytes > 0 && !rep[0].oom && !rep[1].oom,
          "peaks counted");
    CHECK(rep[0].loss == 0 && rep[1].loss > 0, "the last stage has the loss: %g %g", rep[0].loss,
          rep[1].loss);
    CHECK(!strcmp(rep[1].trial_id, "t-test") && rep[1].rank == 1, "report names trial and rank");
    tsl_agent_assignment_free(&a[0]);
    tsl_agent_assignment_free(&a[1]);
    free(doc);
}

/* One rank of a one-device plan, with assignment tweaks; its report. */
static void run_one(const char *doc, const char *devops, const char *comm, uint64_t mem,
                    tsl_agent_trial_report_t *rep)
{
    tsl_agent_trial_opts_t o = {
        .address = "127.0.0.1", .port = 29999, .timeout_s = 60, .cpu_memory_bytes = mem};
    tsl_agent_assignment_t a = assignment(doc, 0, 1);
    tsl_agent_rank_t rk;
    tsl_err_t err = {0};
    a.plan_index = 1;
    snprintf(a.devops, sizeof a.devops, "%s", devops);
    snprintf(a.comm, sizeof a.comm, "%s", comm);
    CHECK(tsl_agent_rank_start(&o, &a, &rk, &err) == 0, "starts: %s", err.msg);
    rank_finish(&rk, rep);
    tsl_agent_assignment_free(&a);
}

static void test_refusals(void)
{
    char *doc = make_doc(2);
    tsl_agent_trial_report_t rep;
    run_one(doc, "cpu", "tcp", 0, &rep);
    CHECK(!rep.error[0] && rep.iterations == 2 && rep.loss > 0, "one rank runs: %s", rep.error);
    run_one(doc, "cuda", "tcp", 0, &rep);
    CHECK(strstr(rep.error, "rank 0: assignment: devops cuda with comm tcp") != NULL, "%s",
          rep.error);
    run_one(doc, "cpu", "carrier-pigeon", 0, &rep);
    CHECK(strstr(rep.error, "comm") && strstr(rep.error, "carrier-pigeon"), "%s", rep.error);
    run_one("{\"plan\": 3}", "cpu", "tcp", 0, &rep);
    CHECK(strstr(rep.error, "rank 0: document") != NULL, "bad document: %s", rep.error);
    run_one(doc, "cpu", "tcp", 4096, &rep);
    CHECK(!rep.error[0] && rep.oom, "4 KiB of cpu memory: oom reported, not an error: '%s' oom %d",
          rep.error, rep.oom);
    free(doc);
}

static void test_killed(void)
{
    char *doc = make_doc(2);
    tsl_agent_trial_opts_t o = {.address = "127.0.0.1", .timeout_s = 60};
    tsl_agent_assignment_t a = assignment(doc, 1, 2);
    tsl_agent_rank_t rk;
    tsl_agent_trial_report_t rep;
    tsl_err_t err = {0};
    /* rank 1 waits for a rank 0 that never comes: kill it meanwhile */
    snprintf(a.rendezvous, sizeof a.rendezvous, "127.0.0.1:%u", 40000 + getpid() % 20000);
    CHECK(tsl_agent_rank_start(&o, &a, &rk, &err) == 0, "starts: %s", err.msg);
    kill(rk.pid, SIGKILL);
    rank_finish(&rk, &rep);
    CHECK(strstr(rep.error, "rank 1 exited on signal 9") != NULL, "%s", rep.error);
    snprintf(a.rendezvous, sizeof a.rendezvous, "no-port-here");
    CHECK(tsl_agent_rank_start(&o, &a, &rk, &err) == 0, "starts: %s", err.msg);
    rank_finish(&rk, &rep);
    CHECK(strstr(rep.error, "rendezvous") && strstr(rep.error, "host:port"), "%s", rep.error);
    tsl_agent_assignment_free(&a);
    free(doc);
}

/* The agent's side of the pipe protocol, fed by hand: rank 0 of an nccl trial
 * writes its unique id (the agent reports it as ready) before its report. */
static void test_pipe_lines(void)
{
    int p[2];
    tsl_agent_rank_t rk = {.pid = -1, .rank = 0};
    tsl_agent_trial_report_t ready, rep;
    bool got = false;
    char hex[2 * 128 + 1], buf[2048];
    CHECK(pipe(p) == 0, "pipe");
    rk.fd = p[0];
    snprintf(rk.trial_id, sizeof rk.trial_id, "t-nccl");
    for (int i = 0; i < 128; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned)(i * 7 + 1) & 0xff);
    int n = snprintf(buf, sizeof buf, "nccl-id %s\nrep", hex);
    CHECK(write(p[1], buf, (size_t)n) == n, "write");
    int flags = O_NONBLOCK;
    fcntl(p[0], F_SETFL, flags);
    CHECK(tsl_agent_rank_read(&rk, &got, &ready) == 0, "no end yet");
    CHECK(got && ready.ready && ready.has_nccl_id && ready.rank == 0 &&
              !strcmp(ready.trial_id, "t-nccl") && ready.nccl_id[0] == 1 &&
              ready.nccl_id[127] == (uint8_t)((127 * 7 + 1) & 0xff),
          "the id became a ready report");
    tsl_exec_report_t r = {.iters = 4,
                           .iter_median_s = 1,
                           .iter_min_s = 1,
                           .iter_max_s = 1,
                           .peak_bytes = 10,
                           .loss = NAN};
    char json[1024];
    tsl_exec_report_json(&r, json, sizeof json);
    n = snprintf(buf, sizeof buf, "ort %s\n", json); /* the rest of "report", split */
    CHECK(write(p[1], buf, (size_t)n) == n, "write");
    close(p[1]);
    CHECK(tsl_agent_rank_read(&rk, &got, &ready) == 1 && !got, "end of file, no second id");
    tsl_agent_rank_end(&rk, 0, &rep);
    CHECK(!rep.error[0] && rep.iterations == 4 && rep.peak_bytes == 10 && !rep.ready,
          "a report split across reads: '%s'", rep.error);
    CHECK(rk.fd == -1, "the pipe is closed");
}

/* The [trials] keys: defaults, flags and section keys, bounds named. */
static void test_config(void)
{
    tsl_agent_config_t c;
    tsl_err_t err = {0};
    tsl_agent_config_defaults(&c);
    CHECK(c.trials && c.trial_port == 29500 && !c.trial_address[0] && c.trial_max_s == 3600 &&
              c.trial_memory_gib == 0 && c.trial_poll_s == 20,
          "defaults");
    CHECK(tsl_agent_config_set(&c, "trial-port", "70000", &err) != 0 &&
              strstr(err.msg, "trials.port"),
          "port out of range: %s", err.msg);
    CHECK(tsl_agent_config_set(&c, "trials.poll_s", "0", &err) != 0 &&
              strstr(err.msg, "trials.poll_s"),
          "poll_s 0: %s", err.msg);
    CHECK(tsl_agent_config_set(&c, "trials.enabled", "no", &err) == 0 && !c.trials, "off");
    CHECK(tsl_agent_config_set(&c, "trial-address", "10.1.2.3", &err) == 0 &&
              !strcmp(c.trial_address, "10.1.2.3"),
          "address");
    CHECK(tsl_agent_config_set(&c, "trial-memory", "0.5", &err) == 0 && c.trial_memory_gib == 0.5,
          "memory");
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    test_doc();
    test_parse_report();
    test_exit_reason();
    test_pipe_lines();
    test_config();
    test_two_ranks();
    test_refusals();
    test_killed();
    return CHECK_DONE();
}
