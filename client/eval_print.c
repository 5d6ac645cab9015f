/*
 * eval_print.c — prints the document of common/eval_doc.h, the one answer of
 * `tesselctl eval` whether it ran here or in tesseld (Planner.EvaluatePlan):
 * the given plan's table, then what the search found for the same batch. Only
 * the document is read, so both modes print the same.
 */
#include <stdio.h>

#include "eval_cmd.h"
#include "remote.h"

static double num(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

static unsigned uint_of(const json_t *o, const char *key)
{
    return (unsigned)json_integer_value(json_object_get(o, key));
}

/* "Search at the same batch ...": the search's plan and the throughput ratio. */
static void print_search(const json_t *given, const json_t *search, const char *target)
{
    const json_t *b = json_object_get(search, "plan");
    if (!json_is_object(b)) {
        printf("\nSearch at the same batch: %s\n",
               json_string_value(json_object_get(search, "why")) ?: "nothing found");
        return;
    }
    double gs = num(given, "samples_per_s"), bs = num(b, "samples_per_s");
    printf("\nSearch at the same batch (%u), memory budget and cluster%s%s\n",
           uint_of(given, "global_batch"), target ? ", within " : "", target ? target : "");
    printf("  found:     %.4f s/iteration, %.2f samples/s; pp %u, %u micro-batches of %u%s\n",
           num(b, "iter_time_s"), bs, uint_of(b, "pp"), uint_of(b, "n_micro"),
           uint_of(b, "micro_batch"), uint_of(b, "interleave") > 1 ? ", interleaved" : "");
    printf("  given/search throughput: %.3f (the search's plan is %.2fx %s)\n", gs / bs,
           bs >= gs ? bs / gs : gs / bs, bs >= gs ? "faster" : "slower");
}

int tsl_eval_print(json_t *doc, tsl_print_tie_t tie, const tsl_client_opts_t *co)
{
    if (doc == NULL)
        return tsl_remote_fail(TSL_EXIT_SERVER, "eval: out of memory building the answer");
    if (co->json)
        return tsl_remote_print_json(stdout, doc);
    json_t *jm = json_object_get(doc, "model"), *plan = json_object_get(doc, "plan");
    char np[32];
    printf(
        "Given plan for %s (%lld layers, %s parameters) on %s\n",
        json_string_value(json_object_get(jm, "name")),
        (long long)json_integer_value(json_object_get(jm, "layers")),
        tsl_format_params((double)json_integer_value(json_object_get(jm, "params")), np, sizeof np),
        json_string_value(json_object_get(json_object_get(doc, "cluster"), "description")));
    const char *target = json_string_value(json_object_get(doc, "target"));
    if (target)
        printf("  stack:     %s: priced with its defaults, within its rules (--target or the "
               "plan's)\n",
               target);
    tsl_print_plan(stdout, plan, json_object_get(doc, "memory"), json_object_get(doc, "cluster"),
                   target, tie);
    const char *line = json_string_value(json_object_get(json_object_get(doc, "figures"), "line"));
    if (line && line[0])
        printf("%s\n", line);
    if (json_object_get(doc, "search"))
        print_search(plan, json_object_get(doc, "search"), target);
    json_decref(doc);
    return TSL_EXIT_OK;
}
