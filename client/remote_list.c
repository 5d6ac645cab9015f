/*
 * remote_list.c — `tesselctl plans list`: ListPlans with filters and page tokens,
 * printed as a table (or {"plans": [...], "next_page_token"} with --json).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "plan_proto.h"
#include "remote.h"

int tsl_remote_plans_list(int argc, char **argv, tsl_client_opts_t *co);

/* A server that keeps answering pages is cut off here (1000 per page at most). */
#define LIST_MAX_PAGES 100000u

static const char list_usage[] =
    "usage: tesselctl plans list [--model NAME] [--devices N] [--stale | --fresh]\n"
    "                            [--page-size N] [--page-token T] [--all] [--json]\n"
    "\n"
    "List the plans cached in tesseld's store (Planner.ListPlans), newest first, one\n"
    "row each: fingerprint, model, device count, global batch, predicted iteration\n"
    "time, samples/s, peak memory per device, whether the plan is stale (a profile it\n"
    "used has changed since; the next `tesselctl plan` for it searches again) and when\n"
    "it was made. The daemon answers one page at a time; when more remain, the token\n"
    "for the next page is printed on stderr (give it to --page-token), or use --all.\n"
    "\n"
    "Options:\n"
    "  --model NAME     only plans of this model (the preset or config name)\n"
    "  --devices N      only plans for N devices\n"
    "  --stale          only stale plans\n"
    "  --fresh          only fresh plans\n"
    "  --page-size N    rows per page, 1..1000 (default: the daemon's, 50)\n"
    "  --page-token T   start at the page T from an earlier answer\n"
    "  --all            follow the page tokens to the end\n"
    "  --json           {\"plans\": [...], \"next_page_token\": \"...\"}, keys as in the proto\n"
    "  --server ADDR, --token T, --timeout S   as for every subcommand\n"
    "\n"
    "Exit status: 0 ok (also when nothing matches), 2 bad option or page token,\n"
    "4 server error, 5 unavailable.\n"
    "\n"
    "Examples:\n"
    "  tesselctl plans list --model GPT3-15B --fresh\n"
    "  tesselctl plans list --all --json | jq -r '.plans[].fingerprint'\n";

typedef struct list_opts {
    Tessel__V1__ListPlansRequest req;
    bool all;
} list_opts_t;

enum {
    OPT_MODEL = 0x200,
    OPT_DEVICES,
    OPT_STALE,
    OPT_FRESH,
    OPT_PAGE_SIZE,
    OPT_PAGE_TOKEN,
    OPT_ALL
};

static const struct option list_longopts[] = {
    {"model", required_argument, NULL, OPT_MODEL},
    {"devices", required_argument, NULL, OPT_DEVICES},
    {"stale", no_argument, NULL, OPT_STALE},
    {"fresh", no_argument, NULL, OPT_FRESH},
    {"page-size", required_argument, NULL, OPT_PAGE_SIZE},
    {"page-token", required_argument, NULL, OPT_PAGE_TOKEN},
    {"all", no_argument, NULL, OPT_ALL},
    TSL_REMOTE_LONG_OPTS,
    {NULL, 0, NULL, 0},
};

static int set_stale(list_opts_t *lo, Tessel__V1__ListPlansRequest__StaleFilter f)
{
    if (lo->req.stale != TESSEL__V1__LIST_PLANS_REQUEST__STALE_FILTER__ANY && lo->req.stale != f)
        return tsl_remote_fail(TSL_EXIT_USAGE,
                               "plans list: --stale and --fresh exclude each other");
    lo->req.stale = f;
    return 0;
}

static int list_opt(int opt, list_opts_t *lo, tsl_client_opts_t *co, char **argv)
{
    int rc;

    switch (opt) {
    case OPT_MODEL: /* "" filters nothing: an unset shell variable listed every plan */
        if (optarg[0] == '\0')
            return tsl_remote_fail(TSL_EXIT_USAGE, "plans list: --model: empty; give a model's "
                                                   "name (as the MODEL column shows it) or leave "
                                                   "--model out");
        lo->req.model_name = optarg;
        return 0;
    case OPT_DEVICES:
        return tsl_remote_parse_u32("--devices", optarg, 1, 1u << 20, &lo->req.n_devices);
    case OPT_STALE: return set_stale(lo, TESSEL__V1__LIST_PLANS_REQUEST__STALE_FILTER__STALE_ONLY);
    case OPT_FRESH: return set_stale(lo, TESSEL__V1__LIST_PLANS_REQUEST__STALE_FILTER__FRESH_ONLY);
    case OPT_PAGE_SIZE:
        return tsl_remote_parse_u32("--page-size", optarg, 1, 1000, &lo->req.page_size);
    case OPT_PAGE_TOKEN: lo->req.page_token = optarg; return 0;
    case OPT_ALL: lo->all = true; return 0;
    default:
        rc = tsl_remote_common_opt(opt, optarg, co);
        return rc != -1 ? rc : tsl_remote_getopt_error("plans list", opt, argv);
    }
}

/* -1 on --help (printed), else an exit code. */
static int parse_list(int argc, char **argv, list_opts_t *lo, tsl_client_opts_t *co)
{
    int opt, rc;

    optind = 0;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":h", list_longopts, NULL)) != -1) {
        if (opt == 'h' || opt == TSL_OPT_HELP) {
            fputs(list_usage, stdout);
            return -1;
        }
        if ((rc = list_opt(opt, lo, co, argv)) != 0)
            return rc;
    }
    if (optind < argc)
        return tsl_remote_fail(TSL_EXIT_USAGE, "plans list: unexpected argument '%s'",
                               argv[optind]);
    return 0;
}

/* ---- table ----------------------------------------------------------------- */

static void fmt_time(char *buf, size_t n, double s)
{
    if (s < 1.0)
        snprintf(buf, n, "%.1f ms", s * 1e3);
    else
        snprintf(buf, n, "%.3f s", s);
}

static void fmt_created(char *buf, size_t n, int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;

    if (t <= 0 || !localtime_r(&tt, &tm) || strftime(buf, n, "%Y-%m-%d %H:%M", &tm) == 0)
        snprintf(buf, n, "-");
}

/* The MODEL column: 18 wide, or the longest name of the first page (an HF
 * directory's name such as Meta-Llama-3.1-70B-Instruct pushed every column after
 * it out of line); names are at most 63 characters. */
static int model_width(const Tessel__V1__ListPlansResponse *r)
{
    size_t w = 18;
    for (size_t i = 0; i < r->n_plans; i++) {
        size_t n = r->plans[i]->model_name ? strlen(r->plans[i]->model_name) : 0;
        w = n > w ? n : w;
    }
    return (int)(w > 63 ? 63 : w);
}

static void print_header(int width)
{
    printf("%-16s  %-*s %7s %6s %10s %10s %10s  %-5s  %s\n", "FINGERPRINT", width, "MODEL",
           "DEVICES", "BATCH", "ITER TIME", "SAMPLES/S", "PEAK MEM", "STATE", "CREATED");
}

static void print_row(const Tessel__V1__PlanSummary *s, int width)
{
    char peak[32], iter[32], created[32];

    tsl_format_bytes(s->peak_bytes, peak, sizeof(peak));
    fmt_time(iter, sizeof(iter), s->iter_time_s);
    fmt_created(created, sizeof(created), s->created_unix);
    printf("%-16s  %-*s %7u %6u %10s %10.1f %10s  %-5s  %s\n", s->fingerprint, width, s->model_name,
           s->n_devices, s->global_batch, iter, s->samples_per_s, peak,
           s->stale ? "stale" : "fresh", created);
}

/* ---- paging ------------------------------------------------------------------ */

typedef struct list_out {
    bool json;
    size_t rows;
    int width;     /* the MODEL column's, from the first page */
    json_t *plans; /* --json: collected rows */
} list_out_t;

static void emit_page(list_out_t *lo, const Tessel__V1__ListPlansResponse *r)
{
    for (size_t i = 0; i < r->n_plans; i++) {
        if (lo->json) {
            json_array_append_new(lo->plans, tsl_proto_summary_to_json(r->plans[i]));
            continue;
        }
        if (lo->rows == 0 && i == 0) {
            lo->width = model_width(r);
            print_header(lo->width);
        }
        print_row(r->plans[i], lo->width);
    }
    lo->rows += r->n_plans;
}

/* Takes the reply's next token; the old one (maybe lo->req.page_token) is freed
 * only after the comparison that catches a daemon repeating itself. */
static int next_page(list_opts_t *lo, const Tessel__V1__ListPlansResponse *r, char **next_token)
{
    char *tok = strdup(r->next_page_token ? r->next_page_token : "");

    if (!tok)
        return tsl_remote_fail(TSL_EXIT_SERVER, "out of memory");
    if (lo->all && *tok && lo->req.page_token && strcmp(lo->req.page_token, tok) == 0) {
        free(tok);
        return tsl_remote_fail(TSL_EXIT_SERVER,
                               "plans list: the daemon returned the same page token twice");
    }
    free(*next_token);
    *next_token = tok;
    lo->req.page_token = tok;
    return 0;
}

/* Fetches pages into out; next_token gets the token left after the last page read. */
static int fetch_pages(tsl_rpc_client_t *c, list_opts_t *lo, list_out_t *out, char **next_token)
{
    tsl_rpc_status_t st = {0};
    ProtobufCMessage *reply;
    int rc;

    for (unsigned page = 0; page < LIST_MAX_PAGES; page++) {
        if (tsl_rpc_unary(c, TSL_RPC_LIST_PLANS, &lo->req.base,
                          &tessel__v1__list_plans_response__descriptor, &reply, &st) != 0)
            return tsl_rpc_report(stderr, &st);
        emit_page(out, (Tessel__V1__ListPlansResponse *)reply);
        rc = next_page(lo, (Tessel__V1__ListPlansResponse *)reply, next_token);
        protobuf_c_message_free_unpacked(reply, NULL);
        if (rc != 0 || !lo->all || !**next_token)
            return rc;
    }
    return tsl_remote_fail(TSL_EXIT_SERVER, "plans list: more than %u pages; stopped",
                           LIST_MAX_PAGES);
}

static int finish_output(list_out_t *out, const char *next_token)
{
    if (out->json)
        return tsl_remote_print_json(
            stdout, json_pack("{s:O, s:s}", "plans", out->plans, "next_page_token", next_token));
    if (out->rows == 0)
        printf("no cached plans match\n");
    if (*next_token)
        fprintf(stderr, "more plans: tesselctl plans list --page-token %s (or --all)\n",
                next_token);
    return TSL_EXIT_OK;
}

int tsl_remote_plans_list(int argc, char **argv, tsl_client_opts_t *co)
{
    list_opts_t lo = {.req = TESSEL__V1__LIST_PLANS_REQUEST__INIT};
    list_out_t out = {.json = false};
    tsl_rpc_client_t *c = NULL;
    char *next_token = NULL;
    int rc = parse_list(argc, argv, &lo, co);

    if (rc != 0)
        return rc < 0 ? TSL_EXIT_OK : rc;
    tsl_remote_defaults(co, false);
    out.json = co->json;
    out.plans = json_array();
    if ((rc = tsl_remote_open(co, &c)) != 0)
        goto out;
    rc = fetch_pages(c, &lo, &out, &next_token);
    if (rc == 0)
        rc = finish_output(&out, next_token ? next_token : "");
out:
    tsl_rpc_client_close(c);
    json_decref(out.plans);
    free(next_token);
    return rc;
}
