/*
 * commands.h — tesselctl's subcommands and the options they share.
 *
 * Exit codes (documented in tesselctl --help and docs/tesselctl.md):
 *   0 ok, 2 usage or invalid input, 3 not found, 4 server error, 5 unavailable
 *   (daemon not reachable / deadline).
 */
#ifndef TSL_COMMANDS_H
#define TSL_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

enum {
    TSL_EXIT_OK = 0,
    TSL_EXIT_USAGE = 2,
    TSL_EXIT_NOT_FOUND = 3,
    TSL_EXIT_SERVER = 4,
    TSL_EXIT_UNAVAILABLE = 5,
};

#define TSL_DEFAULT_SERVER "unix:/run/tessel/tesseld.sock"

/* Connection options shared by every remote subcommand. */
typedef struct tsl_client_opts {
    const char *server;      /* --server ADDR ("unix:/path" or "host:port"); env TESSEL_SERVER */
    const char *token;       /* --token T; env TESSEL_TOKEN */
    double timeout_s;        /* --timeout S; 0 = none for plan, 30 s for the rest */
    bool json;               /* --json */
} tsl_client_opts_t;

/* `tesselctl plan` options, parsed once for the local and the remote mode. */
typedef struct tsl_plan_opts {
    const char *model;       /* --model NAME (preset) */
    const char *hf_config;   /* --hf-config PATH */
    uint32_t seq_len;        /* --seq-len N */
    const char *cluster;     /* --cluster SPEC|FILE.json */
    uint64_t memory_bytes;   /* --memory 16G */
    uint32_t batch;          /* --batch N; 0 with --sweep */
    uint32_t max_batch;      /* --max-batch N */
    uint32_t top_k;          /* --top-k N */
    uint32_t pp;             /* --pp N: fixed pipeline stages */
    bool no_pp, no_tp, no_dp, no_sdp, no_ckpt, no_baselines;
    bool no_placement, no_memopt, no_bi_objective, no_sublayer, no_slicer;
    bool force;              /* --force: ignore the daemon's cached plan */
    /* issue-10 cost-model switches (local mode; tesseld's request lacks them yet) */
    bool unfused_attn, no_seq_par, no_zero, no_selective;
    bool local;              /* --local: run the planner in-process */
} tsl_plan_opts_t;

/* Human output of a search-result document (plan_json.h shape). */
void tsl_print_result(FILE *out, json_t *doc);

/* Local mode (client/plan_local.c). */
int tsl_plan_local(const tsl_plan_opts_t *po, const tsl_client_opts_t *co);
/* The model named by --model or --hf-config (err names the option on failure). */
struct tsl_model;
struct tsl_err;
int tsl_plan_load_model(const tsl_plan_opts_t *po, struct tsl_model *m, struct tsl_err *err);
/* The planner request the options describe. */
struct tsl_request;
void tsl_plan_fill_request(const tsl_plan_opts_t *po, struct tsl_request *r);

/* Remote mode and the daemon subcommands (client/remote.c). argv[0] is the
 * subcommand name. */
int tsl_plan_remote(const tsl_plan_opts_t *po, const tsl_client_opts_t *co);
int tsl_cmd_plans(int argc, char **argv, const tsl_client_opts_t *co);
int tsl_cmd_health(int argc, char **argv, const tsl_client_opts_t *co);

#endif
