/*
 * remote.h — what the daemon subcommands of tesselctl (remote.c, remote_plans.c,
 * remote_health.c) share: the connection options they accept after the
 * subcommand name, opening a client, printing JSON, reading small files.
 *
 * Every function that can fail prints one line "tesselctl: <reason>" on stderr and
 * returns a tesselctl exit code (commands.h); 0 means go on.
 */
#ifndef TSL_REMOTE_H
#define TSL_REMOTE_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "commands.h"
#include "rpc_client.h"
#include "status.h"
#include "tessel/v1/planner.pb-c.h"

/* Deadline for every call but Plan when --timeout is not given. */
#define TSL_REMOTE_DEFAULT_TIMEOUT_S 30.0

/* getopt_long ids of the connection options (past any single-letter option). */
enum {
    TSL_OPT_SERVER = 0x100,
    TSL_OPT_TOKEN,
    TSL_OPT_JSON,
    TSL_OPT_TIMEOUT,
    TSL_OPT_HELP, /* subcommands number their own options from TSL_OPT_HELP + 1 */
    /* TLS options: far above any subcommand's own numbers. */
    TSL_OPT_TLS = 0x180,
    TSL_OPT_CA,
    TSL_OPT_CERT,
    TSL_OPT_KEY,
};

/* The connection options as `struct option` entries, for a subcommand's table. */
#define TSL_REMOTE_LONG_OPTS                                                                       \
    {"server", required_argument, NULL, TSL_OPT_SERVER},                                           \
        {"token", required_argument, NULL, TSL_OPT_TOKEN},                                         \
        {"json", no_argument, NULL, TSL_OPT_JSON},                                                 \
        {"timeout", required_argument, NULL, TSL_OPT_TIMEOUT},                                     \
        {"tls", no_argument, NULL, TSL_OPT_TLS}, {"ca", required_argument, NULL, TSL_OPT_CA},      \
        {"cert", required_argument, NULL, TSL_OPT_CERT},                                           \
        {"key", required_argument, NULL, TSL_OPT_KEY},                                             \
    {                                                                                              \
        "help", no_argument, NULL, TSL_OPT_HELP                                                    \
    }

/* Applies one of the connection options to co. Returns 0, or TSL_EXIT_USAGE for a bad
 * --timeout; -1 when `opt` is not a connection option. */
int tsl_remote_common_opt(int opt, const char *arg, tsl_client_opts_t *co);

/* Fills server/token from TESSEL_SERVER / TESSEL_TOKEN where not given, and the
 * default deadline (none for plan, TSL_REMOTE_DEFAULT_TIMEOUT_S otherwise). */
void tsl_remote_defaults(tsl_client_opts_t *co, bool is_plan);

/* Opens the client (TLS with co->tls); on a malformed address or an unreadable
 * --ca/--cert/--key prints why and returns TSL_EXIT_USAGE. */
int tsl_remote_open(const tsl_client_opts_t *co, tsl_rpc_client_t **out);

/* Parses a decimal count in [lo, hi] for option `name`. */
int tsl_remote_parse_u32(const char *name, const char *text, unsigned lo, unsigned hi,
                         unsigned *out);

/* Reads a whole (text) file, at most max_bytes; *out is malloc'd and NUL-terminated.
 * `what` names the option in the error message. */
int tsl_remote_read_file(const char *what, const char *path, size_t max_bytes, char **out);

/* Writes doc as indented JSON plus a newline; steals the reference. */
int tsl_remote_print_json(FILE *out, json_t *doc);

/* Reports a getopt_long failure (unknown option, missing argument) for `cmd` and
 * returns TSL_EXIT_USAGE. Use with opterr = 0 and a leading ':' in optstring. */
int tsl_remote_getopt_error(const char *cmd, int opt, char **argv);

/* Takes exactly one positional argument (`what`, e.g. "FINGERPRINT") left after
 * getopt; returns 0 or TSL_EXIT_USAGE. */
int tsl_remote_one_arg(const char *cmd, const char *what, int argc, char **argv, int optind_,
                       const char **out);

/* One unary call on a fresh client (defaults applied to a copy of co): 0 with *out
 * set, or the exit code after reporting the status on stderr. */
int tsl_remote_call(const tsl_client_opts_t *co, const char *method, const ProtobufCMessage *req,
                    const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out);

/* A Plan's notes on stderr, one "tesselctl: plan: note: ..." line each, the
 * wording plan --local prints them in (plan_local.c). */
void tsl_remote_print_notes(const Tessel__V1__Plan *plan);

/* Prints a plan document (proto_json.h) like a local search result, or as JSON
 * with co->json; steals doc (NULL: out of memory). */
int tsl_remote_print_doc(json_t *doc, const tsl_client_opts_t *co);

/* tesselctl's exit-code mapping of a call's status (api/status.h's table):
 * prints "tesselctl: <message>" (one line) on `err` and returns the exit code. */
int tsl_rpc_report(FILE *err, const tsl_rpc_status_t *st);

/* `--cluster registered` / `--nodes a,b` (remote_cluster.c): req's cluster becomes
 * a RegisteredCluster of the comma-separated names in nodes (NULL: every online
 * worker), which tesseld assembles (where each figure came from comes back in the
 * plan's figures.details). 0, or the exit code after reporting.
 * tsl_remote_registered_free frees the member (NULL: none). */
int tsl_remote_registered_cluster(const char *nodes, Tessel__V1__PlanRequest *req);
void tsl_remote_registered_free(Tessel__V1__RegisteredCluster *r);

/* A PlanRequest's model (--model preset, or the --hf-config text named as
 * --local names it) and cluster ("registered" and --nodes, a description
 * file's text, or a spec), as `plan` sends them (remote.c); eval sends the
 * same. *sources: what a --galvatron-profile import sent and did not (strings,
 * for the client to print), else NULL. 0 or the exit code after reporting.
 * tsl_remote_request_free frees what they set. */
int tsl_remote_request_model(const tsl_plan_opts_t *po, Tessel__V1__PlanRequest *req);
int tsl_remote_request_cluster(const tsl_plan_opts_t *po, Tessel__V1__PlanRequest *req,
                               json_t **sources);
void tsl_remote_request_free(Tessel__V1__PlanRequest *req);

/* ExportPlan of plan fp in format, written to path (stdout when NULL or "-";
 * remote_export.c: `plans export` and `plan --trace FILE` through tesseld).
 * what: the messages' prefix ("plans export", "trace"). A stale plan is written
 * with a warning on stderr, or with fresh refused (exit 4, nothing written). 0, or
 * the exit code after reporting. */
int tsl_remote_export_to(const tsl_client_opts_t *co, const char *what, const char *fp,
                         const char *format, const char *path, bool fresh);

/* "tesselctl: <fmt>" on stderr; returns `code`. */
int tsl_remote_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
