/*
 * config.c — tesseld's configuration (see config.h): the table of its keys for
 * common/cfgtab.h, which reads the file and the flags and writes --help and
 * --check-config from it, so that a key can never be accepted by one and unknown
 * to another. What is tesseld's own stays here: the [tokens] section, the
 * constant-time token lookup and the cross-field checks.
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "cfgtab.h"

#define F(field) TSL_CFG_AT(tsl_config_t, field)

/* sun_path holds 108 bytes including the NUL. */
#define UNIX_PATH_MAX_LEN 107

static const tsl_cfg_key_t KEYS[] = {
    {"server", "unix_socket", "unix-socket", "PATH", TSL_CFG_STRING, F(unix_socket),
     "/run/tessel/tesseld.sock", 0, UNIX_PATH_MAX_LEN, NULL, 0,
     "unix socket for gRPC; \"\" = none (trusted callers unless [tokens])"},
    {"server", "socket_mode", "socket-mode", "MODE", TSL_CFG_MODE, F(socket_mode), "0660", 0, 0777,
     NULL, 0, "permission bits of the unix socket, octal with a leading 0 (0660)"},
    {"server", "tcp", "tcp", "HOST:PORT", TSL_CFG_ADDR, F(tcp), "", 0, 127, NULL, 0,
     "TCP address for gRPC; \"\" = off; needs [tokens]"},
    {"server", "tls_cert", "tls-cert", "FILE", TSL_CFG_STRING, F(tls_cert), "", 0, 255, NULL, 0,
     "PEM certificate chain for the TCP listener (with tls_key)"},
    {"server", "tls_key", "tls-key", "FILE", TSL_CFG_STRING, F(tls_key), "", 0, 255, NULL, 0,
     "PEM private key for the TCP listener (with tls_cert)"},
    {"server", "tls_client_ca", "tls-client-ca", "FILE", TSL_CFG_STRING, F(tls_client_ca), "", 0,
     255, NULL, 0,
     "PEM CA: TLS callers must present a certificate it signed (mutual TLS); \"\" = none asked"},
    {"server", "insecure_tcp", "insecure-tcp", "BOOL", TSL_CFG_BOOL, F(insecure_tcp), "false", 0, 0,
     NULL, 0, "allow tcp without TLS (tokens cross the network in clear; warned at start)"},
    {"server", "http", "http", "HOST:PORT", TSL_CFG_ADDR, F(http), "", 0, 127, NULL, 0,
     "/healthz, /metrics and status page; \"\" = off"},
    {"store", "database", "database", "PATH", TSL_CFG_STRING, F(database),
     "/var/lib/tessel/tessel.db", 1, 255, NULL, 0,
     "SQLite database file (created and migrated on start)"},
    {"search", "pool_size", "pool-size", "N", TSL_CFG_UINT, F(pool_size), "0", 0, 1024, NULL, 0,
     "search threads; 0 = one per CPU core"},
    {"search", "queue_size", "queue-size", "N", TSL_CFG_UINT, F(queue_size), "16", 0, 100000, NULL,
     0, "searches waiting for a thread; past it Plan is RESOURCE_EXHAUSTED"},
    {"search", "grace_s", "grace", "SECONDS", TSL_CFG_DOUBLE, F(grace_s), "10", 0, 3600, NULL, 0,
     "on SIGTERM, seconds running searches get before cancellation"},
    {"search", "search_nice", "search-nice", "N", TSL_CFG_UINT, F(search_nice), "19", 0, 19, NULL,
     0, "search threads run N nice steps below the daemon (SCHED_BATCH); 0 = same priority"},
    {"limits", "max_request_bytes", "max-request-bytes", "BYTES", TSL_CFG_SIZE,
     F(max_request_bytes), "4194304", 1024, 1073741824, NULL, 0,
     "largest request message accepted (K/M/G suffixes allowed)"},
    {"limits", "max_layers", "max-layers", "N", TSL_CFG_UINT, F(max_layers), "1024", 1, 1048576,
     NULL, 0, "most layers a model in a request may have"},
    {"limits", "max_devices", "max-devices", "N", TSL_CFG_UINT, F(max_devices), "131072", 1,
     1048576, NULL, 0, "most devices a cluster in a request may have"},
    {"limits", "max_batch", "max-batch", "N", TSL_CFG_UINT, F(max_batch), "65536", 1, 16777216,
     NULL, 0, "largest global batch size a request may ask for"},
    {"limits", "idle_connection_s", "idle-connection", "SECONDS", TSL_CFG_UINT,
     F(idle_connection_s), "120", 1, 86400, NULL, 0,
     "a connection with no call open is closed after this"},
    {"log", "level", "log-level", "LEVEL", TSL_CFG_LEVEL, F(log_level), "info", 0, 15, NULL, 0,
     "error | warn | info | debug"},
    {"registry", "worker_heartbeat_s", "worker-heartbeat", "SECONDS", TSL_CFG_UINT,
     F(worker_heartbeat_s), "10", 1, 3600, NULL, 0,
     "heartbeat interval for workers that do not choose their own"},
    {"registry", "worker_timeout_s", "worker-timeout", "SECONDS", TSL_CFG_UINT, F(worker_timeout_s),
     "0", 0, 86400, NULL, 0,
     "a worker silent this long is offline; 0 = three of its heartbeat intervals"},
};

static const char *const ROLE_NAMES[] = {
    [TSL_ROLE_NONE] = "none",
    [TSL_ROLE_SCHEDULER] = "scheduler",
    [TSL_ROLE_OPS] = "ops",
    [TSL_ROLE_WORKER] = "worker",
};

const char *tsl_role_name(tsl_role_t r)
{
    if ((unsigned)r >= sizeof(ROLE_NAMES) / sizeof(ROLE_NAMES[0]))
        return "none";
    return ROLE_NAMES[r];
}

/* ---- tokens --------------------------------------------------------------------------- */

static tsl_role_t parse_role(const char *v)
{
    for (int r = TSL_ROLE_SCHEDULER; r <= TSL_ROLE_WORKER; r++)
        if (strcmp(v, ROLE_NAMES[r]) == 0)
            return (tsl_role_t)r;
    return TSL_ROLE_NONE;
}

/* The [tokens] section: "TOKEN = ROLE" lines (the table's free-form section). */
static int token_add(void *obj, const char *token, const char *role, tsl_err_t *err)
{
    tsl_config_t *c = obj;
    size_t n = strlen(token);
    tsl_role_t r = parse_role(role);
    if (n == 0 || n >= sizeof(c->tokens[0].token))
        return tsl_err_set(err, "tokens: a token must be 1 to %zu characters (this one has %zu)",
                           sizeof(c->tokens[0].token) - 1, n);
    for (size_t i = 0; i < n; i++)
        if (token[i] <= ' ' || token[i] > '~' || token[i] == '=' || token[i] == ';')
            return tsl_err_set(err, "tokens: a token may hold printable characters other than "
                                    "space, '=' and ';' only");
    if (r == TSL_ROLE_NONE)
        return tsl_err_set(err, "tokens: role '%s' is not one of scheduler, ops, worker", role);
    for (uint32_t i = 0; i < c->n_tokens; i++)
        if (strcmp(c->tokens[i].token, token) == 0)
            return tsl_err_set(err, "tokens: the same token is listed twice");
    if (c->n_tokens == TSL_CONFIG_MAX_TOKENS)
        return tsl_err_set(err, "tokens: more than %d tokens", TSL_CONFIG_MAX_TOKENS);
    tsl_token_t *t = &c->tokens[c->n_tokens++];
    memset(t, 0, sizeof(*t));
    memcpy(t->token, token, n);
    t->role = r;
    return 0;
}

/* Compares the whole fixed-size buffer of every token, whatever matches, so that
 * neither where a guess first differs nor which token matched shows in the time
 * taken. Stored tokens are zero-padded (token_add), and so is the guess here. */
tsl_role_t tsl_config_token_role(const tsl_config_t *c, const char *token)
{
    enum { W = sizeof(c->tokens[0].token) };
    unsigned char guess[W] = {0};
    size_t n = token ? strlen(token) : 0;
    unsigned too_long = n >= W;
    memcpy(guess, token ? token : "", too_long ? W : n);
    unsigned role = TSL_ROLE_NONE;
    for (uint32_t i = 0; i < c->n_tokens; i++) {
        const unsigned char *t = (const unsigned char *)c->tokens[i].token;
        unsigned diff = too_long | (n == 0);
        for (size_t k = 0; k < W; k++)
            diff |= (unsigned)(guess[k] ^ t[k]);
        unsigned match = (diff == 0); /* 1 or 0 */
        role |= (0u - match) & (unsigned)c->tokens[i].role;
    }
    return (tsl_role_t)role;
}

/* ---- the table's services -------------------------------------------------------------- */

static const tsl_cfgtab_t TABLE = {
    .program = "tesseld",
    .obj_size = sizeof(tsl_config_t),
    .keys = KEYS,
    .n_keys = sizeof KEYS / sizeof KEYS[0],
    .extra_section = "tokens",
    .extra_set = token_add,
};

void tsl_config_defaults(tsl_config_t *c)
{
    tsl_cfgtab_defaults(&TABLE, c);
}

int tsl_config_set(tsl_config_t *c, const char *key, const char *value, tsl_err_t *err)
{
    return tsl_cfgtab_set(&TABLE, c, key, value, err);
}

int tsl_config_load_file(tsl_config_t *c, const char *path, tsl_err_t *err)
{
    return tsl_cfgtab_load(&TABLE, c, path, err);
}

int tsl_config_from_argv(tsl_config_t *c, const tsl_cfg_opts_t *o, int argc, char **argv,
                         tsl_err_t *err)
{
    /* Valueless options of tesseld's own. */
    static const char *const own[] = {"--foreground", "-f", NULL};
    if (tsl_cfgtab_from_argv(&TABLE, c, o, argc, argv, own, err) != 0)
        return -1;
    return tsl_config_validate(c, err);
}

/* ---- checks, help, dump ---------------------------------------------------------------- */

int tsl_config_validate(const tsl_config_t *c, tsl_err_t *err)
{
    if (c->tcp[0] != '\0' && c->n_tokens == 0)
        return tsl_err_set(err, "tcp listener configured without [tokens]: refusing to serve an "
                                "unauthenticated TCP port; add tokens or remove tcp");
    if (c->tcp[0] != '\0' && c->tls_cert[0] == '\0' && !c->insecure_tcp)
        return tsl_err_set(
            err, "tcp listener without TLS: tokens would cross the network in "
                 "clear; set tls_cert and tls_key, or insecure_tcp = true to accept that");
    if ((c->socket_mode & 0007) != 0 && c->n_tokens == 0 && c->unix_socket[0] != '\0')
        return tsl_err_set(err,
                           "server.socket_mode %04o lets every local user in, and without "
                           "[tokens] every caller is trusted; use 0660 or 0600, or add tokens",
                           c->socket_mode);
    if ((c->tls_cert[0] != '\0') != (c->tls_key[0] != '\0'))
        return tsl_err_set(err,
                           "server.%s is set but server.%s is not: TLS needs both the "
                           "certificate and its key",
                           c->tls_cert[0] ? "tls_cert" : "tls_key",
                           c->tls_cert[0] ? "tls_key" : "tls_cert");
    if (c->tls_cert[0] != '\0' && c->tcp[0] == '\0')
        return tsl_err_set(err, "server.tls_cert: TLS applies to the TCP listener, but "
                                "server.tcp is not set");
    if (c->tls_client_ca[0] != '\0' && c->tls_cert[0] == '\0')
        return tsl_err_set(err, "server.tls_client_ca: client certificates need the TLS "
                                "listener; set tls_cert and tls_key too");
    if (c->unix_socket[0] == '\0' && c->tcp[0] == '\0')
        return tsl_err_set(err, "server: no listener (set unix_socket, tcp or both)");
    if (c->database[0] == '\0')
        return tsl_err_set(err, "store.database: must not be empty");
    return 0;
}

void tsl_config_usage(FILE *out)
{
    tsl_cfgtab_usage(&TABLE, out);
    fprintf(out, "  %-28s %s\n", "[tokens] TOKEN = ROLE",
            "bearer tokens, one per line; ROLE is scheduler, ops or worker");
}

void tsl_config_dump(const tsl_config_t *c, FILE *out)
{
    tsl_cfgtab_dump(&TABLE, c, out);
    /* Tokens are secrets: only their count, length and role are shown. */
    fprintf(out, "\n[tokens]\n; %u token(s)%s\n", c->n_tokens,
            c->n_tokens ? ", masked" : ": unix socket callers are trusted, tcp is refused");
    for (uint32_t i = 0; i < c->n_tokens; i++)
        fprintf(out, "; token %u (%zu characters) = %s\n", i + 1, strlen(c->tokens[i].token),
                tsl_role_name(c->tokens[i].role));
}
