/*
 * commands.h — tesselctl's subcommands and the options they share.
 *
 * Exit codes (documented in tesselctl --help and docs/tesselctl.md) are
 * api/status.h's TSL_EXIT_*: 0 ok, 2 usage or invalid input, 3 not found,
 * 4 server error, 5 unavailable (daemon not reachable / deadline).
 */
#ifndef TSL_COMMANDS_H
#define TSL_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "search.h"

#include "rpc_client.h" /* TSL_DEFAULT_SERVER */
#include "status.h"     /* TSL_EXIT_* */

/* Connection options shared by every remote subcommand. */
typedef struct tsl_client_opts {
    const char *server;    /* --server ADDR ("unix:/path" or "host:port"); env TESSEL_SERVER */
    const char *token;     /* --token T; env TESSEL_TOKEN */
    double timeout_s;      /* --timeout S; 0 = none for plan, 30 s for the rest */
    bool json;             /* --json */
    bool server_given;     /* --server or TESSEL_SERVER named one (eval runs there then) */
    bool tls;              /* --tls, or implied by --ca/--cert/--key: TLS to a host:port */
    const char *ca_file;   /* --ca FILE: the CA tesseld's certificate must chain to */
    const char *cert_file; /* --cert FILE / --key FILE: a client certificate (mutual TLS) */
    const char *key_file;
} tsl_client_opts_t;

/* `tesselctl plan` options, parsed once for the local and the remote mode. The
 * request's own options (--batch, --memory, --no-pp, ...) are the fields of
 * planner/request_fields.h, parsed into req by its table (plan_opts.c). */
typedef struct tsl_plan_opts {
    const char *model;             /* --model NAME (preset) */
    const char *hf_config;         /* --hf-config PATH */
    const char *model_name;        /* --name NAME: the --hf-config model's name */
    uint32_t seq_len;              /* --seq-len N */
    const char *cluster;           /* --cluster SPEC|FILE.json|registered */
    const char *nodes;             /* --nodes a,b: these registered workers (implies registered) */
    tsl_request_t req;             /* --batch N (0 with --sweep), --memory 16G, --no-pp, ... */
    bool force;                    /* --force: ignore the daemon's cached plan */
    bool local;                    /* --local: run the planner in-process */
    bool sweep;                    /* --sweep given (an error beside --batch N) */
    const char *export_format;     /* --export FORMAT: print the plan as that stack takes it */
    const char *trace;             /* --trace FILE: the simulated 1F1B timeline (Chrome trace) */
    const char *profile;           /* --profile FILE: measured figures (local mode) */
    const char *galvatron_profile; /* --galvatron-profile DIR: Galvatron's profiles (local) */
    const char *amp_profile;       /* --amp-profile DIR: AMP's known_cost profiles (local) */
    const char *te_prec_file;      /* --te-precision-config-file PATH: into req.module_prec */
} tsl_plan_opts_t;

/* --name's value (plan and eval): 0, or -1 with err naming "name". */
int tsl_model_name_check(const char *name, tsl_err_t *err);

/* A file or folder flag's value into *dst (plan and eval: --profile, --plan, ...):
 * 0, or -1 with err naming the flag where it is empty (an unset shell variable,
 * which would read as "cannot open : No such file or directory") or holds a control
 * character (every message naming the file would end its line at a newline). */
int tsl_path_opt(const char *flag, const char *arg, const char **dst, tsl_err_t *err);

/* --te-precision-config-file PATH into po->req.module_prec (plan_te_prec.c): noted and
 * dropped where no FP8 plan is weighed, refused where the search would refuse it,
 * naming the flag. 0, or an exit code (reported). */
int tsl_plan_te_prec(tsl_plan_opts_t *po);
/* The note that the file's overrides are not used, and why ("--no-fp8 weighs no FP8
 * plan"): plan --local's, and remote.c's where tesseld finds no FP8 plan weighed. */
void tsl_plan_te_prec_unused(const char *why);

/* `tesselctl plan ...` (client/plan_opts.c): parses the options, then runs the
 * local or the remote mode. */
int tsl_cmd_plan(int argc, char **argv, tsl_client_opts_t *co);

/* Whose copy of the word embedding a later stage holds, for the line of a plan's
 * embedding-group all-reduce (tie_s; planner/search_eval.c tied_allreduce_s): a
 * tied head's, the MTP depths' (mtp.h: their entries read it; Megatron-LM's
 * embedding group), or not known to the printer (a plan from tesseld, whose
 * document does not say). */
typedef enum tsl_print_tie {
    TSL_PRINT_TIE_UNKNOWN = 0,
    TSL_PRINT_TIE_HEAD,
    TSL_PRINT_TIE_MTP,
} tsl_print_tie_t;
/* Of model m: HEAD for a tied LM head (with or without MTP), MTP for MTP depths
 * without one, else HEAD (no copy: tie_s is 0 and nothing is printed). */
tsl_print_tie_t tsl_print_tie_of(const tsl_model_t *m);

/* Human output of a search-result document (plan_json.h shape). */
void tsl_print_result(FILE *out, json_t *doc, tsl_print_tie_t tie);
/* A parameter count for people: "6.74B", "124.44M" (below 10^8), "9.5K", "512". */
const char *tsl_format_params(double n, char *buf, size_t cap);
/* A duration: "%.4f s" from 1 ms up (and 0), "%.3f ms" or "%.2f us" below, so that a
 * small model's figures do not print as 0.0000 s. */
const char *tsl_format_seconds(double s, char *buf, size_t cap);
/* The table of one <plan> object of that document (client/print.c); req holds the
 * request's memory_bytes and memory_reserve_bytes, which the budget line names (a
 * default budget: the device less the reserve), or NULL; cluster the document's
 * cluster object (its description names the GPUs a named attention kernel is
 * priced on), or NULL; target the stack it was priced as ("megatron", ...; NULL or
 * "any" none), which says whether a tf32 switch changed anything. */
void tsl_print_plan(FILE *out, json_t *plan, json_t *req, json_t *cluster, const char *target,
                    tsl_print_tie_t tie);

/* `tesselctl eval ...` (client/eval_opts.c): a given plan's predicted figures,
 * beside the search's (docs/tesselctl.md "eval"). */
int tsl_cmd_eval(int argc, char **argv, tsl_client_opts_t *co);

/* Local mode (client/plan_local.c). */
int tsl_plan_local(const tsl_plan_opts_t *po, const tsl_client_opts_t *co);
/* The model named by --model or --hf-config (err names the option on failure). */
struct tsl_model;
struct tsl_err;
int tsl_plan_load_model(const tsl_plan_opts_t *po, struct tsl_model *m, struct tsl_err *err);
/* --galvatron-profile through tesseld: the cluster with the imported hardware
 * figures as cluster JSON text (*json_text, free()) and what was and was not
 * sent (*sources, strings). 0, or the exit code after reporting. */
int tsl_plan_galvatron_cluster(const tsl_plan_opts_t *po, char **json_text, json_t **sources);

/* Remote mode and the daemon subcommands (client/remote.c). argv[0] is the
 * subcommand name. */
int tsl_plan_remote(const tsl_plan_opts_t *po, const tsl_client_opts_t *co);
int tsl_cmd_plans(int argc, char **argv, const tsl_client_opts_t *co);
int tsl_cmd_health(int argc, char **argv, const tsl_client_opts_t *co);
/* `tesselctl workers`, `tesselctl profiles` (client/remote_workers.c). */
int tsl_cmd_workers(int argc, char **argv, const tsl_client_opts_t *co);
int tsl_cmd_profiles(int argc, char **argv, const tsl_client_opts_t *co);

#endif
