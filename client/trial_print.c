/*
 * trial_print.c — trials (proto/tessel/v1/trials.proto) as people read them:
 * one trial in full (`trial show`, the end of `trial start --wait`), a list of
 * trials as a table (`trial list`; a skipped trial's reason under it), and the
 * "measured" section `plans show` adds under a plan that was run. Errors are (predicted - measured) /
 * measured, as the proto defines them, printed as signed percentages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "trial_cmd.h"

static const char *bytes(uint64_t b, char *buf, unsigned cap)
{
    return b ? tsl_format_bytes(b, buf, cap) : "-";
}

/* "0.1234 s" or "-" when not measured yet. */
static const char *secs(double s, char *buf, size_t cap)
{
    if (s > 0)
        snprintf(buf, cap, "%.4f s", s);
    else
        snprintf(buf, cap, "-");
    return buf;
}

static const char *pct(double e, bool done, char *buf, size_t cap)
{
    if (done)
        snprintf(buf, cap, "%+.1f%%", 100.0 * e);
    else
        snprintf(buf, cap, "-");
    return buf;
}

static bool measured(const Tessel__V1__Trial *t)
{
    return strcmp(t->status, "done") == 0 && t->measured_iter_time_s > 0;
}

/* "fwd 0.0412 bwd 0.0811 comm 0.0100 ..." in the proto's order of names. */
static void phases(const Tessel__V1__TrialRank *r, char *buf, size_t cap)
{
    static const char *const order[] = {"fwd", "bwd", "comm", "bubble", "opt"};
    size_t n = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        for (size_t i = 0; i < r->n_phase_s && n < cap; i++)
            if (strcmp(r->phase_s[i]->key, order[k]) == 0)
                n += (size_t)snprintf(buf + n, cap - n, "%s%s %.4f", n ? " " : "", order[k],
                                      r->phase_s[i]->value);
    for (size_t i = 0; i < r->n_phase_s && n < cap; i++) { /* names the list above lacks */
        bool known = false;
        for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
            known |= strcmp(r->phase_s[i]->key, order[k]) == 0;
        if (!known)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s %.4f", n ? " " : "", r->phase_s[i]->key,
                                  r->phase_s[i]->value);
    }
    if (n == 0)
        snprintf(buf, cap, "-");
}

static void print_ranks(FILE *out, const Tessel__V1__Trial *t)
{
    char a[32], b[32], c[32], m[32], ph[256];
    if (t->n_ranks == 0)
        return;
    fprintf(out, "\n  %-4s %-20s %-3s %-8s %-10s %-10s %-10s %-10s %s\n", "rank", "host", "GPU",
            "state", "median", "min", "max", "peak", "phases (s/iteration)");
    for (size_t i = 0; i < t->n_ranks; i++) {
        const Tessel__V1__TrialRank *r = t->ranks[i];
        phases(r, ph, sizeof ph);
        fprintf(out, "  %-4u %-20s %-3u %-8s %-10s %-10s %-10s %-10s %s%s\n", r->rank,
                r->hostname[0] ? r->hostname : r->worker_id, r->device_index, r->state,
                secs(r->iter_time_s, a, sizeof a), secs(r->iter_min_s, b, sizeof b),
                secs(r->iter_max_s, c, sizeof c), bytes(r->peak_bytes, m, sizeof m), ph,
                r->oom ? "  (out of memory)" : "");
        if (r->error[0])
            fprintf(out, "       error: %s\n", r->error);
    }
}

/* A skipped trial no online workers fit when its batch was made (docs/api.md, "Trials":
 * its reason "skipped: plan I: no online workers fit it: ..."), not one the executor
 * cannot run. */
static bool skipped_unplaced(const Tessel__V1__Trial *t)
{
    return strstr(t->error, ": no online workers fit it: ") != NULL;
}

/* Why it ended early or never ran: a failure, the cancel's reason ("cancelled: ..."),
 * or why the plan did not run ("skipped: ...": the executor cannot run it, or no
 * online workers fit it). */
static void print_error(FILE *out, const Tessel__V1__Trial *t)
{
    const char *label = strcmp(t->status, "cancelled") == 0 ? "ended:    "
                        : strcmp(t->status, "skipped") == 0 ? "not run:  "
                                                            : "failed:   ";
    if (t->error[0])
        fprintf(out, "  %s %s\n", label, t->error);
}

/* A trial whose plan is stale now (Trial.plan_stale): its prediction is the stored one,
 * as `plans show` says of the plan itself */
#define STALE_NOTE                                                                                 \
    " STALE: a profile it was priced from changed since, or another cost model priced it; "        \
    "the prediction is the stored one"

void tsl_trial_print(FILE *out, const Tessel__V1__Trial *t)
{
    char p[32], m[32], e1[32], e2[32];
    bool done = measured(t);
    fprintf(out, "Trial %s: %s\n", t->trial_id, t->status);
    if (strcmp(t->kind, "link") == 0) { /* a link probe: no plan, no prediction */
        fprintf(out,
                "  link probe: %s (rank 0) <-> %s (rank 1), %s comm%s; %u rounds per size "
                "after %u warm-up\n",
                t->n_ranks > 0 ? t->ranks[0]->hostname : "-",
                t->n_ranks > 1 ? t->ranks[1]->hostname : "-", t->comm[0] ? t->comm : "-",
                t->simulated ? " (simulated workers)" : "", t->iterations, t->warmup);
        if (strcmp(t->status, "done") == 0)
            fprintf(out, "  figures:   reported by rank 0's worker as inter-node profile rows "
                         "(tesselctl profiles)\n");
        print_error(out, t);
        print_ranks(out, t);
        return;
    }
    fprintf(out, "  plan:      %s #%u%s%s%s%s\n", t->plan_fingerprint, t->plan_index,
            t->plan_label[0] ? " (" : "", t->plan_label, t->plan_label[0] ? ")" : "",
            t->plan_stale ? STALE_NOTE : "");
    if (strcmp(t->status, "skipped") == 0) /* no ranks: it never ran (the reason below) */
        fprintf(out, "  run:       none (a plan of %u devices %s)\n", t->world_size,
                skipped_unplaced(t) ? "no online workers fit" : "the executor cannot run");
    else
        fprintf(out,
                "  run:       %u ranks, %s comm, %s device ops%s; %u iterations after %u "
                "warm-up\n",
                t->world_size, t->comm[0] ? t->comm : "-", t->devops[0] ? t->devops : "-",
                t->simulated ? " (simulated workers: the cpu executor, not GPUs)" : "",
                t->iterations, t->warmup);
    fprintf(out, "  iteration: predicted %s, measured %s, error %s\n",
            secs(t->predicted_iter_time_s, p, sizeof p), secs(t->measured_iter_time_s, m, sizeof m),
            pct(t->time_error, done, e1, sizeof e1));
    fprintf(out, "  memory:    predicted %s, measured %s, error %s (peak per device)\n",
            bytes(t->predicted_peak_bytes, p, sizeof p), bytes(t->measured_peak_bytes, m, sizeof m),
            pct(t->memory_error, done, e2, sizeof e2));
    if (t->measured_samples_per_s > 0)
        fprintf(out, "  measured:  %.2f samples/s\n", t->measured_samples_per_s);
    if (t->chosen)
        fprintf(out, "  chosen:    the measured best of batch %s, now the plan's answer\n",
                t->batch_id);
    print_error(out, t);
    print_ranks(out, t);
}

void tsl_trial_print_table(FILE *out, Tessel__V1__Trial *const *ts, size_t n, bool with_plan)
{
    char p[32], m[32], e1[32], pm[32], mm[32], e2[32];
    if (n == 0) {
        fprintf(out, "no trials\n");
        return;
    }
    fprintf(out, "%-18s %-8s %s%-4s %-10s %-10s %-8s %-10s %-10s %s\n", "trial", "status",
            with_plan ? "plan             " : "", "#", "predicted", "measured", "error",
            "pred.peak", "meas.peak", "error");
    size_t stale = 0;
    for (size_t i = 0; i < n; i++) {
        const Tessel__V1__Trial *t = ts[i];
        bool done = measured(t);
        fprintf(out, "%-18s %-8s ", t->trial_id, t->status);
        if (with_plan)
            fprintf(out, "%-16s ",
                    strcmp(t->kind, "link") == 0 ? "(link probe)" : t->plan_fingerprint);
        fprintf(
            out, "%-4u %-10s %-10s %-8s %-10s %-10s %s%s%s\n", t->plan_index,
            secs(t->predicted_iter_time_s, p, sizeof p), secs(t->measured_iter_time_s, m, sizeof m),
            pct(t->time_error, done, e1, sizeof e1), bytes(t->predicted_peak_bytes, pm, sizeof pm),
            bytes(t->measured_peak_bytes, mm, sizeof mm), pct(t->memory_error, done, e2, sizeof e2),
            t->chosen ? "   chosen" : "", t->plan_stale ? "   STALE" : "");
        stale += t->plan_stale;
    }
    for (size_t i = 0; i < n; i++) /* why, under the table: a reason is too long for a row */
        if (strcmp(ts[i]->status, "skipped") == 0)
            fprintf(out, "%s %s\n", ts[i]->trial_id, ts[i]->error);
    if (stale)
        fprintf(out,
                "STALE: the trial's plan is stale now (a profile it was priced from changed since, "
                "or another cost model priced it): its prediction is the stored one; `tesselctl "
                "plan` with its options prices it afresh\n");
}

/* A plan document's "measured" object (the answer a top-k trial chose): its
 * keys one per line, as the daemon wrote them. */
static void print_measured_object(FILE *out, json_t *measured)
{
    const char *k;
    json_t *v;
    fprintf(out, "  the plan's answer is measured:\n");
    json_object_foreach(measured, k, v)
    {
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(6));
        fprintf(out, "    %-22s %s\n", k, text ? text : "?");
        free(text);
    }
}

void tsl_trial_print_measured(FILE *out, json_t *doc, const Tessel__V1__ListTrialsResponse *lt)
{
    json_t *measured = json_object_get(doc, "measured");
    if ((lt == NULL || lt->n_trials == 0) && !json_is_object(measured))
        return;
    fprintf(out, "\nMeasured (trials of this plan; error = (predicted - measured) / measured)\n");
    if (lt && lt->n_trials)
        tsl_trial_print_table(out, lt->trials, lt->n_trials, false);
    if (json_is_object(measured))
        print_measured_object(out, measured);
}
