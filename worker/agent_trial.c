/*
 * agent_trial.c — one trial rank as a child process (agent.h).
 *
 * Why a child: the executor allocates what the plan asks for and runs kernels; an
 * OOM kill, a crash or a hang in it must cost the rank, never the agent (its
 * heartbeats, its other ranks). The child is forked (not exec'd: it runs the
 * executor linked into tessel-worker), takes the default signal dispositions and
 * an empty mask back, dies with the agent (PR_SET_PDEATHSIG), keeps only its pipe
 * of the agent's descriptors, and writes lines (agent_trial_run.c) that the agent
 * reads without blocking. How it ended decides the report when it wrote none.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"

void tsl_agent_assignment_free(tsl_agent_assignment_t *a)
{
    free(a->document);
    a->document = NULL;
}

void tsl_agent_exit_reason(uint32_t rank, int status, char *buf, size_t cap)
{
    if (WIFSIGNALED(status))
        snprintf(buf, cap, "rank %u exited on signal %d (%s)%s", rank, WTERMSIG(status),
                 strsignal(WTERMSIG(status)),
                 WTERMSIG(status) == SIGKILL ? ": killed, perhaps for memory (the OOM killer)"
                                             : "");
    else if (WIFEXITED(status))
        snprintf(buf, cap, "rank %u exited with status %d and no report", rank,
                 WEXITSTATUS(status));
    else
        snprintf(buf, cap, "rank %u ended (wait status %#x)", rank, (unsigned)status);
}

static double num(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

int tsl_agent_trial_parse_report(const char *json, tsl_agent_trial_report_t *rep, tsl_err_t *err)
{
    json_error_t je;
    json_t *o = json_loads(json, 0, &je);
    if (!json_is_object(o)) {
        json_decref(o);
        return tsl_err_set(err, "rank report: not a JSON object: %s", o ? "" : je.text);
    }
    static const char *const need[] = {"iters", "iter_median_s", "peak_bytes", "oom"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!json_object_get(o, need[i])) {
            json_decref(o);
            return tsl_err_set(err, "rank report: no \"%s\"", need[i]);
        }
    rep->iterations = (uint32_t)json_integer_value(json_object_get(o, "iters"));
    rep->iter_time_s = num(o, "iter_median_s");
    rep->iter_min_s = num(o, "iter_min_s");
    rep->iter_max_s = num(o, "iter_max_s");
    rep->fwd_s = num(o, "fwd_s");
    rep->bwd_s = num(o, "bwd_s");
    rep->comm_s = num(o, "comm_s");
    rep->bubble_s = num(o, "bubble_s");
    rep->opt_s = num(o, "opt_s");
    rep->peak_bytes = (uint64_t)json_integer_value(json_object_get(o, "peak_bytes"));
    rep->oom = json_is_true(json_object_get(o, "oom"));
    double loss = num(o, "loss"); /* null off the last stage: 0 on the wire */
    rep->loss = isfinite(loss) ? loss : 0;
    json_decref(o);
    return 0;
}

/* The child: nothing of the agent's but the pipe, then the rank. Never returns. */
static void child(const tsl_agent_trial_opts_t *o, const tsl_agent_assignment_t *a, int fd,
                  pid_t parent)
{
    sigset_t none;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* the agent died before the line above */
        _exit(1);
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    signal(SIGPIPE, SIG_IGN); /* a closed pipe is an error to write, not a death */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (fd != 3) {
        dup2(fd, 3);
        close(fd);
    }
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) {
        dup2(null, 0);
        close(null);
    }
    closefrom(4);
    _exit(tsl_agent_trial_child(o, a, 3));
}

int tsl_agent_rank_start(const tsl_agent_trial_opts_t *o, const tsl_agent_assignment_t *a,
                         tsl_agent_rank_t *rk, tsl_err_t *err)
{
    int p[2];
    memset(rk, 0, sizeof *rk);
    rk->fd = rk->pid = -1;
    snprintf(rk->trial_id, sizeof rk->trial_id, "%s", a->trial_id);
    rk->rank = a->rank;
    snprintf(rk->kind, sizeof rk->kind, "%s", a->kind);
    snprintf(rk->peer, sizeof rk->peer, "%s", a->peer);
    snprintf(rk->comm, sizeof rk->comm, "%s", a->comm);
    if (pipe2(p, O_CLOEXEC) != 0)
        return tsl_err_set(err, "rank %u: pipe: %s", a->rank, strerror(errno));
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        close(p[0]);
        child(o, a, p[1], parent);
    }
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        return tsl_err_set(err, "rank %u: fork: %s", a->rank, strerror(errno));
    }
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    rk->pid = pid;
    rk->fd = p[0];
    return 0;
}

static void hex_id(const char *hex, tsl_agent_trial_report_t *rep)
{
    rep->has_nccl_id = strlen(hex) == 2 * sizeof rep->nccl_id;
    for (size_t i = 0; rep->has_nccl_id && i < sizeof rep->nccl_id; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            rep->has_nccl_id = false;
        rep->nccl_id[i] = (uint8_t)v;
    }
}

/* One line from the child; *ready after an nccl id. */
static void on_line(tsl_agent_rank_t *rk, char *line, bool *ready, tsl_agent_trial_report_t *rep)
{
    tsl_err_t err = {0};
    tsl_agent_trial_report_t *res = &rk->result;
    if (!strncmp(line, "nccl-id ", 8)) {
        memset(rep, 0, sizeof *rep);
        snprintf(rep->trial_id, sizeof rep->trial_id, "%s", rk->trial_id);
        rep->rank = rk->rank;
        rep->ready = true;
        hex_id(line + 8, rep);
        *ready = rep->has_nccl_id;
        return;
    }
    if (!strncmp(line, "link ", 5)) { /* one size of a link probe: not the result */
        tsl_agent_link_row_t *r = &rk->link[rk->n_link];
        unsigned long long bytes = 0;
        if (rk->n_link < TSL_AGENT_LINK_ROWS &&
            sscanf(line + 5, "%11s %llu %lf %lf %lf", r->op, &bytes, &r->time_s, &r->algbw_gbps,
                   &r->busbw_gbps) == 5) {
            r->bytes = bytes;
            rk->n_link++;
        }
        return;
    }
    memset(res, 0, sizeof *res);
    snprintf(res->trial_id, sizeof res->trial_id, "%s", rk->trial_id);
    res->rank = rk->rank;
    rk->got_result = true;
    if (!strncmp(line, "report ", 7)) {
        if (tsl_agent_trial_parse_report(line + 7, res, &err))
            snprintf(res->error, sizeof res->error, "rank %u: %.480s", rk->rank, err.msg);
    } else if (!strncmp(line, "error ", 6)) {
        snprintf(res->error, sizeof res->error, "rank %u: %.480s", rk->rank, line + 6);
    } else {
        snprintf(res->error, sizeof res->error, "rank %u: unexpected line from the executor: %.80s",
                 rk->rank, line);
    }
}

int tsl_agent_rank_read(tsl_agent_rank_t *rk, bool *ready, tsl_agent_trial_report_t *rep)
{
    *ready = false;
    for (;;) {
        if (rk->n_line == sizeof rk->line - 1) /* an overlong line: keep its start */
            rk->n_line--;
        ssize_t k = read(rk->fd, rk->line + rk->n_line, sizeof rk->line - 1 - rk->n_line);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return 0; /* EAGAIN: later */
        if (k == 0)
            return 1;
        rk->n_line += (size_t)k;
        char *nl;
        while ((nl = memchr(rk->line, '\n', rk->n_line))) {
            *nl = '\0';
            on_line(rk, rk->line, ready, rep);
            size_t used = (size_t)(nl + 1 - rk->line);
            memmove(rk->line, nl + 1, rk->n_line - used);
            rk->n_line -= used;
        }
    }
}

void tsl_agent_rank_end(tsl_agent_rank_t *rk, int status, tsl_agent_trial_report_t *out)
{
    tsl_agent_trial_report_t ignored;
    bool ready = false;
    if (rk->fd >= 0) { /* the child is gone: what it wrote is all in the pipe */
        tsl_agent_rank_read(rk, &ready, &ignored);
        close(rk->fd);
        rk->fd = -1;
    }
    if (rk->got_result) {
        *out = rk->result;
        return;
    }
    memset(out, 0, sizeof *out);
    snprintf(out->trial_id, sizeof out->trial_id, "%s", rk->trial_id);
    out->rank = rk->rank;
    tsl_agent_exit_reason(rk->rank, status, out->error, sizeof out->error);
}
