/*
 * config.h — tesseld's configuration: one table of keys (common/cfgtab.h: name,
 * default, bounds, help) serves the INI file, the command-line flags, the --help
 * text and --check-config (Redis config.c style).
 *
 * File format (INI, parsed with inih):
 *   [server]  unix_socket = /run/tessel/tesseld.sock   socket_mode = 0660
 *             tcp = 127.0.0.1:7443 (empty: no TCP)      tls_cert = …  tls_key = …
 *             tls_client_ca = … (mutual TLS: a client certificate required)
 *             http = 127.0.0.1:9464 (empty: off)        pid_file / lock next to the socket
 *   [store]   database = /var/lib/tessel/tessel.db
 *   [search]  pool_size = 0 (= cores)  queue_size = 16  grace_s = 10  search_nice = 19
 *   [limits]  max_request_bytes = 4194304  max_layers = 1024  max_devices = 131072
 *             max_batch = 65536
 *   [log]     level = info
 *   [registry] worker_heartbeat_s = 10  worker_timeout_s = 0 (= 3 heartbeats)
 *   [tokens]  <token> = scheduler | ops | worker      (one line per token)
 * Flags use the same keys: --unix-socket PATH, --tcp ADDR, --database PATH, … and
 * --config FILE; flags override the file.
 */
#ifndef TSL_CONFIG_H
#define TSL_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cfgtab.h"
#include "err.h"

#define TSL_CONFIG_MAX_TOKENS 64
/* Shorter tokens are accepted but warned about at start: guessable. */
#define TSL_CONFIG_MIN_TOKEN_LEN 16u

typedef enum { TSL_ROLE_NONE = 0, TSL_ROLE_SCHEDULER, TSL_ROLE_OPS, TSL_ROLE_WORKER } tsl_role_t;

typedef struct tsl_token {
    char token[128];
    tsl_role_t role;
} tsl_token_t;

typedef struct tsl_config {
    char unix_socket[256];
    uint32_t socket_mode;
    char tcp[128];
    char tls_cert[256];
    char tls_key[256];
    char tls_client_ca[256]; /* mutual TLS: callers' certificates must chain to it */
    bool insecure_tcp;       /* plaintext tcp allowed (warned at every start) */
    char http[128];
    char database[256];
    uint32_t pool_size; /* 0 = number of cores */
    uint32_t queue_size;
    double grace_s;
    uint32_t search_nice; /* search threads' nice steps below the daemon; 0 = none */
    uint64_t max_request_bytes;
    uint32_t max_layers;
    uint32_t max_devices;
    uint32_t max_batch;
    uint32_t idle_connection_s; /* a connection without calls is closed after this */
    char log_level[16];
    uint32_t worker_heartbeat_s; /* interval handed to workers that announce none */
    uint32_t worker_timeout_s;   /* offline after this much silence; 0 = 3 heartbeats */
    uint32_t n_tokens;
    tsl_token_t tokens[TSL_CONFIG_MAX_TOKENS];
} tsl_config_t;

void tsl_config_defaults(tsl_config_t *c);
/* Loads an INI file over the current values; errors name file:line and key. */
int tsl_config_load_file(tsl_config_t *c, const char *path, tsl_err_t *err);
/* Sets one key ("section.key" or the flag name "unix-socket"); bounds checked. */
int tsl_config_set(tsl_config_t *c, const char *key, const char *value, tsl_err_t *err);
/* defaults < o->config_file < argv (--KEY VALUE, --KEY=VALUE; --foreground/-f and
 * cfgtab's shared options skipped), then tsl_config_validate. */
int tsl_config_from_argv(tsl_config_t *c, const tsl_cfg_opts_t *o, int argc, char **argv,
                         tsl_err_t *err);
/* Cross-field checks: TCP without tokens refused, TLS cert without key, ... */
int tsl_config_validate(const tsl_config_t *c, tsl_err_t *err);
/* The flag list with defaults and help, for --help. */
void tsl_config_usage(FILE *out);
/* Writes the effective configuration (tokens masked) — for --check-config. */
void tsl_config_dump(const tsl_config_t *c, FILE *out);
/* Role of a bearer token; TSL_ROLE_NONE if unknown. Constant-time compare. */
tsl_role_t tsl_config_token_role(const tsl_config_t *c, const char *token);
const char *tsl_role_name(tsl_role_t r);

#endif
