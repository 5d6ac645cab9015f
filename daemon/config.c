/*
 * config.c — tesseld's configuration (see config.h): one table serves the INI
 * file, the flags, --help and --check-config, Redis config.c style, so that a key
 * can never be accepted by one and unknown to another.
 *
 * The file is read with inih through our own line reader: it counts lines (the
 * Debian build of inih does not pass line numbers to the handler), refuses lines
 * longer than inih's buffer instead of letting inih split them silently, and stops
 * the parse at the first error. The file is applied to a copy, so a bad file
 * leaves the caller's configuration untouched.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "log.h"

typedef enum {
    CFG_STRING, /* char[] field; max = longest value accepted */
    CFG_ADDR,   /* char[] "host:port" or "" (off) */
    CFG_LEVEL,  /* char[] holding a log level name */
    CFG_MODE,   /* uint32_t, octal permission bits */
    CFG_UINT32,
    CFG_BYTES,  /* uint64_t, with an optional K/M/G suffix (binary) */
    CFG_DOUBLE, /* decimal only: "0x10", "1e3", "inf" are refused */
    CFG_BOOL,   /* bool: true | false */
} cfg_type_t;

typedef struct cfg_entry {
    const char *section;
    const char *key;
    const char *flag;    /* --flag */
    const char *metavar; /* for --help */
    cfg_type_t type;
    size_t offset;
    size_t size;
    const char *def;
    double min, max; /* numbers: bounds; strings: max = longest length */
    const char *help;
} cfg_entry_t;

#define F(field) offsetof(tsl_config_t, field), sizeof(((tsl_config_t *)0)->field)

/* sun_path holds 108 bytes including the NUL. */
#define UNIX_PATH_MAX_LEN 107

static const cfg_entry_t CONFIG_TABLE[] = {
    {"server", "unix_socket", "unix-socket", "PATH", CFG_STRING, F(unix_socket),
     "/run/tessel/tesseld.sock", 0, UNIX_PATH_MAX_LEN,
     "unix socket for gRPC; \"\" = none (trusted callers unless [tokens])"},
    {"server", "socket_mode", "socket-mode", "MODE", CFG_MODE, F(socket_mode), "0660", 0, 0777,
     "permission bits of the unix socket, octal with a leading 0 (0660)"},
    {"server", "tcp", "tcp", "HOST:PORT", CFG_ADDR, F(tcp), "", 0, 127,
     "TCP address for gRPC; \"\" = off; needs [tokens]"},
    {"server", "tls_cert", "tls-cert", "FILE", CFG_STRING, F(tls_cert), "", 0, 255,
     "PEM certificate chain for the TCP listener (with tls_key)"},
    {"server", "tls_key", "tls-key", "FILE", CFG_STRING, F(tls_key), "", 0, 255,
     "PEM private key for the TCP listener (with tls_cert)"},
    {"server", "insecure_tcp", "insecure-tcp", "BOOL", CFG_BOOL, F(insecure_tcp), "false", 0, 0,
     "allow tcp without TLS (tokens cross the network in clear; warned at start)"},
    {"server", "http", "http", "HOST:PORT", CFG_ADDR, F(http), "", 0, 127,
     "/healthz, /metrics and status page; \"\" = off"},
    {"store", "database", "database", "PATH", CFG_STRING, F(database), "/var/lib/tessel/tessel.db",
     1, 255, "SQLite database file (created and migrated on start)"},
    {"search", "pool_size", "pool-size", "N", CFG_UINT32, F(pool_size), "0", 0, 1024,
     "search threads; 0 = one per CPU core"},
    {"search", "queue_size", "queue-size", "N", CFG_UINT32, F(queue_size), "16", 0, 100000,
     "searches waiting for a thread; past it Plan is RESOURCE_EXHAUSTED"},
    {"search", "grace_s", "grace", "SECONDS", CFG_DOUBLE, F(grace_s), "10", 0, 3600,
     "on SIGTERM, seconds running searches get before cancellation"},
    {"search", "search_nice", "search-nice", "N", CFG_UINT32, F(search_nice), "19", 0, 19,
     "search threads run N nice steps below the daemon (SCHED_BATCH); 0 = same priority"},
    {"limits", "max_request_bytes", "max-request-bytes", "BYTES", CFG_BYTES, F(max_request_bytes),
     "4194304", 1024, 1073741824, "largest request message accepted (K/M/G suffixes allowed)"},
    {"limits", "max_layers", "max-layers", "N", CFG_UINT32, F(max_layers), "1024", 1, 1048576,
     "most layers a model in a request may have"},
    {"limits", "max_devices", "max-devices", "N", CFG_UINT32, F(max_devices), "16384", 1, 1048576,
     "most devices a cluster in a request may have"},
    {"limits", "max_batch", "max-batch", "N", CFG_UINT32, F(max_batch), "65536", 1, 16777216,
     "largest global batch size a request may ask for"},
    {"limits", "idle_connection_s", "idle-connection", "SECONDS", CFG_UINT32, F(idle_connection_s),
     "120", 1, 86400, "a connection with no call open is closed after this"},
    {"log", "level", "log-level", "LEVEL", CFG_LEVEL, F(log_level), "info", 0, 15,
     "error | warn | info | debug"},
    {"registry", "worker_heartbeat_s", "worker-heartbeat", "SECONDS", CFG_UINT32,
     F(worker_heartbeat_s), "10", 1, 3600,
     "heartbeat interval for workers that do not choose their own"},
    {"registry", "worker_timeout_s", "worker-timeout", "SECONDS", CFG_UINT32, F(worker_timeout_s),
     "0", 0, 86400, "a worker silent this long is offline; 0 = three of its heartbeat intervals"},
};

#define CONFIG_N (sizeof(CONFIG_TABLE) / sizeof(CONFIG_TABLE[0]))

static const char *const LEVEL_NAMES[] = {
    [TSL_LOG_ERROR] = "error",
    [TSL_LOG_WARN] = "warn",
    [TSL_LOG_INFO] = "info",
    [TSL_LOG_DEBUG] = "debug",
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

/* ---- parsing one value --------------------------------------------------------------- */

static int parse_uint(const char *v, unsigned long long *out)
{
    char *end = NULL;
    if (v[0] < '0' || v[0] > '9')
        return -1;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0')
        return -1;
    *out = n;
    return 0;
}

/* Sizes: common/args.h's parser with its strict rule (whole numbers, K/M/G/T). */
static int parse_size(const char *v, unsigned long long *out)
{
    uint64_t b;
    if (tsl_parse_size("size", v, TSL_SIZE_STRICT, &b, NULL) != 0)
        return -1;
    *out = b;
    return 0;
}

/* Permission bits: octal digits with a leading 0 ("0660"), so a decimal slip
 * like "432" (which is 0660 in decimal, and 0432 read as octal) is refused
 * rather than misread. */
static int parse_mode(const char *v, unsigned long *out)
{
    size_t n = strlen(v);
    if (n < 2 || n > 5 || v[0] != '0' || strspn(v, "01234567") != n)
        return -1;
    *out = strtoul(v, NULL, 8);
    return 0;
}

static int check_addr(const char *name, const char *v, tsl_err_t *err)
{
    const char *colon = strrchr(v, ':');
    if (v[0] == '\0')
        return 0;
    size_t plen = colon ? strlen(colon + 1) : 0;
    bool ok = colon != NULL && colon != v && plen >= 1 && plen <= 5 &&
              strspn(colon + 1, "0123456789") == plen && atol(colon + 1) <= 65535;
    if (ok && v[0] == '[')
        ok = colon[-1] == ']';
    if (!ok)
        return tsl_err_set(err, "%s: '%s' is not HOST:PORT (e.g. 127.0.0.1:9464 or [::1]:9464)",
                           name, v);
    return 0;
}

static int out_of_range(const cfg_entry_t *e, const char *v, tsl_err_t *err)
{
    if (e->type == CFG_MODE)
        return tsl_err_set(err, "%s.%s: %s is out of range [0, 0777]", e->section, e->key, v);
    return tsl_err_set(err, "%s.%s: %s is out of range [%.15g, %.15g]", e->section, e->key, v,
                       e->min, e->max);
}

static int set_string(const cfg_entry_t *e, char *field, const char *v, tsl_err_t *err)
{
    size_t n = strlen(v);
    if ((double)n > e->max)
        return tsl_err_set(err, "%s.%s: value is %zu characters long; at most %.0f", e->section,
                           e->key, n, e->max);
    if ((double)n < e->min)
        return tsl_err_set(err, "%s.%s: must not be empty", e->section, e->key);
    memcpy(field, v, n + 1);
    return 0;
}

static int set_number(const cfg_entry_t *e, void *field, const char *v, tsl_err_t *err)
{
    unsigned long long u = 0;
    unsigned long mode = 0;
    double d = 0;
    char *end = NULL;
    switch (e->type) {
    case CFG_MODE:
        if (parse_mode(v, &mode) != 0)
            return tsl_err_set(err, "%s.%s: '%s' is not an octal mode with a leading 0, like 0660",
                               e->section, e->key, v);
        if (mode > 0777)
            return out_of_range(e, v, err);
        *(uint32_t *)field = (uint32_t)mode;
        return 0;
    case CFG_UINT32:
    case CFG_BYTES:
        if ((e->type == CFG_BYTES ? parse_size(v, &u) : parse_uint(v, &u)) != 0)
            return tsl_err_set(err, "%s.%s: '%s' is not a whole number%s", e->section, e->key, v,
                               e->type == CFG_BYTES ? " (K, M, G, T suffixes allowed)" : "");
        if ((double)u < e->min || (double)u > e->max)
            return out_of_range(e, v, err);
        if (e->type == CFG_UINT32)
            *(uint32_t *)field = (uint32_t)u;
        else
            *(uint64_t *)field = u;
        return 0;
    case CFG_BOOL:
        if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
            return tsl_err_set(err, "%s.%s: '%s' is not true or false", e->section, e->key, v);
        *(bool *)field = v[0] == 't';
        return 0;
    default:
        /* strtod would also take hex ("0x10" = 16), exponents, "inf" and "nan". */
        if (strspn(v, "0123456789.") != strlen(v) || strchr(v, '.') != strrchr(v, '.'))
            return tsl_err_set(err, "%s.%s: '%s' is not a decimal number like 2.5", e->section,
                               e->key, v);
        d = strtod(v, &end);
        if (end == v || *end != '\0' || !isfinite(d))
            return tsl_err_set(err, "%s.%s: '%s' is not a number", e->section, e->key, v);
        if (d < e->min || d > e->max)
            return out_of_range(e, v, err);
        *(double *)field = d;
        return 0;
    }
}

static int entry_set(tsl_config_t *c, const cfg_entry_t *e, const char *v, tsl_err_t *err)
{
    void *field = (char *)c + e->offset;
    char name[64];
    tsl_log_level_t lvl;
    switch (e->type) {
    case CFG_STRING: return set_string(e, field, v, err);
    case CFG_ADDR:
        snprintf(name, sizeof(name), "%s.%s", e->section, e->key);
        if (check_addr(name, v, err) != 0)
            return -1;
        return set_string(e, field, v, err);
    case CFG_LEVEL:
        if (tsl_log_parse_level(v, &lvl) != 0)
            return tsl_err_set(err, "%s.%s: '%s' is not one of error, warn, info, debug",
                               e->section, e->key, v);
        /* Stored canonical, so --check-config shows what the logger will use. */
        return set_string(e, field, LEVEL_NAMES[lvl], err);
    default: return set_number(e, field, v, err);
    }
}

/* ---- tokens --------------------------------------------------------------------------- */

static tsl_role_t parse_role(const char *v)
{
    for (int r = TSL_ROLE_SCHEDULER; r <= TSL_ROLE_WORKER; r++)
        if (strcmp(v, ROLE_NAMES[r]) == 0)
            return (tsl_role_t)r;
    return TSL_ROLE_NONE;
}

static int token_add(tsl_config_t *c, const char *token, const char *role, tsl_err_t *err)
{
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

/* ---- lookup and set --------------------------------------------------------------------- */

static const cfg_entry_t *find_key(const char *section, const char *key)
{
    for (size_t i = 0; i < CONFIG_N; i++)
        if (strcmp(CONFIG_TABLE[i].section, section) == 0 && strcmp(CONFIG_TABLE[i].key, key) == 0)
            return &CONFIG_TABLE[i];
    return NULL;
}

static bool known_section(const char *section)
{
    for (size_t i = 0; i < CONFIG_N; i++)
        if (strcmp(CONFIG_TABLE[i].section, section) == 0)
            return true;
    return strcmp(section, "tokens") == 0;
}

static int set_in_section(tsl_config_t *c, const char *section, const char *key, const char *value,
                          tsl_err_t *err)
{
    if (strcmp(section, "tokens") == 0)
        return token_add(c, key, value, err);
    const cfg_entry_t *e = find_key(section, key);
    if (e != NULL)
        return entry_set(c, e, value, err);
    if (section[0] == '\0')
        return tsl_err_set(err, "key '%s' is outside any [section]", key);
    if (!known_section(section))
        return tsl_err_set(err,
                           "unknown section [%s] (known: server, store, search, limits, "
                           "log, registry, tokens)",
                           section);
    return tsl_err_set(err, "unknown key '%s' in section [%s]", key, section);
}

void tsl_config_defaults(tsl_config_t *c)
{
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < CONFIG_N; i++)
        if (entry_set(c, &CONFIG_TABLE[i], CONFIG_TABLE[i].def, NULL) != 0)
            tsl_fatalx("config: default of %s.%s is invalid", CONFIG_TABLE[i].section,
                       CONFIG_TABLE[i].key);
}

int tsl_config_set(tsl_config_t *c, const char *key, const char *value, tsl_err_t *err)
{
    if (key == NULL || value == NULL)
        return tsl_err_set(err, "config: missing key or value");
    if (strncmp(key, "--", 2) == 0)
        key += 2;
    const char *dot = strchr(key, '.');
    if (dot != NULL) {
        char section[32];
        size_t n = (size_t)(dot - key);
        if (n >= sizeof(section))
            return tsl_err_set(err, "unknown option '%s'", key);
        memcpy(section, key, n);
        section[n] = '\0';
        return set_in_section(c, section, dot + 1, value, err);
    }
    for (size_t i = 0; i < CONFIG_N; i++)
        if (strcmp(CONFIG_TABLE[i].flag, key) == 0)
            return entry_set(c, &CONFIG_TABLE[i], value, err);
    return tsl_err_set(err, "unknown option '%s' (see --help)", key);
}

/* ---- the file ---------------------------------------------------------------------------- */

typedef struct cfg_parse {
    tsl_config_t work;
    FILE *fp;
    int lineno;
    int err_line; /* 0: no error of ours */
    tsl_err_t err;
    int seen_line[CONFIG_N]; /* where each key was set: a second setting is an error */
} cfg_parse_t;

static char *cfg_reader(char *buf, int cap, void *stream)
{
    cfg_parse_t *p = stream;
    if (p->err_line != 0 || fgets(buf, cap, p->fp) == NULL)
        return NULL;
    p->lineno++;
    size_t n = strlen(buf);
    if (n == (size_t)cap - 1 && buf[n - 1] != '\n' && !feof(p->fp)) {
        p->err_line = p->lineno;
        tsl_err_set(&p->err, "line longer than %d characters", cap - 2);
        return NULL;
    }
    return buf;
}

static int cfg_handler(void *user, const char *section, const char *name, const char *value)
{
    cfg_parse_t *p = user;
    if (p->err_line != 0)
        return 0;
    const cfg_entry_t *e = find_key(section, name);
    if (e != NULL && p->seen_line[e - CONFIG_TABLE] != 0) {
        p->err_line = p->lineno;
        tsl_err_set(&p->err, "%s.%s is already set on line %d (a key may appear once)", section,
                    name, p->seen_line[e - CONFIG_TABLE]);
        return 0;
    }
    if (e != NULL)
        p->seen_line[e - CONFIG_TABLE] = p->lineno;
    if (set_in_section(&p->work, section, name, value, &p->err) == 0)
        return 1;
    p->err_line = p->lineno;
    return 0;
}

/* The whole file in memory: a regular file (not /dev/zero, a FIFO or a
 * directory) of at most CONFIG_FILE_MAX bytes without NUL bytes (inih would cut
 * the value there). *lineno gets the line of a NUL. */
#define CONFIG_FILE_MAX (1u << 20)

static char *read_config(const char *path, size_t *len, int *nul_line, tsl_err_t *err)
{
    char *buf = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0) {
        tsl_err_set(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > CONFIG_FILE_MAX) {
        tsl_err_set(err, "%s: not a regular file of at most %u bytes", path, CONFIG_FILE_MAX);
        goto out;
    }
    buf = malloc((size_t)st.st_size + 1);
    ssize_t n = buf ? read(fd, buf, (size_t)st.st_size + 1) : -1;
    if (n < 0 || n > st.st_size) {
        tsl_err_set(err, "%s: cannot read: %s", path, n < 0 ? strerror(errno) : "it grew");
        free(buf);
        buf = NULL;
        goto out;
    }
    *len = (size_t)n;
    *nul_line = 0;
    const char *z = memchr(buf, '\0', *len);
    for (const char *q = buf; z && q <= z; q++)
        *nul_line += q == buf || q[-1] == '\n';
out:
    close(fd);
    return buf;
}

int tsl_config_load_file(tsl_config_t *c, const char *path, tsl_err_t *err)
{
    size_t len = 0;
    int nul_line = 0;
    char *text = read_config(path, &len, &nul_line, err);
    if (text == NULL)
        return -1;
    if (nul_line != 0) {
        free(text);
        return tsl_err_set(err, "%s:%d: a NUL byte in the file", path, nul_line);
    }
    cfg_parse_t *p = calloc(1, sizeof(*p));
    int rc = -1;
    if (p == NULL) {
        free(text);
        return tsl_err_set(err, "%s: out of memory", path);
    }
    p->fp = len ? fmemopen(text, len, "r") : fopen("/dev/null", "r");
    if (p->fp == NULL) {
        tsl_err_set(err, "%s: cannot read: %s", path, strerror(errno));
        goto out;
    }
    p->work = *c;
    int line = ini_parse_stream(cfg_reader, p, cfg_handler, p);
    if (p->err_line != 0) {
        tsl_err_set(err, "%s:%d: %s", path, p->err_line, p->err.msg);
        goto out;
    }
    if (line != 0 || ferror(p->fp)) {
        tsl_err_set(err,
                    "%s:%d: syntax error: expected '[section]', 'key = value' or a "
                    "comment",
                    path, line > 0 ? line : p->lineno);
        goto out;
    }
    *c = p->work;
    rc = 0;
out:
    if (p->fp != NULL)
        fclose(p->fp);
    memset(p, 0, sizeof(*p)); /* the copy held tokens */
    free(p);
    memset(text, 0, len);
    free(text);
    return rc;
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
    if (c->unix_socket[0] == '\0' && c->tcp[0] == '\0')
        return tsl_err_set(err, "server: no listener (set unix_socket, tcp or both)");
    if (c->database[0] == '\0')
        return tsl_err_set(err, "store.database: must not be empty");
    return 0;
}

static void format_default(const cfg_entry_t *e, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", e->def[0] ? e->def : "\"\"");
}

void tsl_config_usage(FILE *out)
{
    char def[300];
    for (size_t i = 0; i < CONFIG_N; i++) {
        const cfg_entry_t *e = &CONFIG_TABLE[i];
        char lhs[64];
        snprintf(lhs, sizeof(lhs), "--%s %s", e->flag, e->metavar);
        format_default(e, def, sizeof(def));
        fprintf(out, "  %-28s %s\n", lhs, e->help);
        fprintf(out, "  %-28s [%s] %s, default %s", "", e->section, e->key, def);
        if (e->type == CFG_UINT32 || e->type == CFG_BYTES || e->type == CFG_DOUBLE)
            fprintf(out, ", range %.15g..%.15g", e->min, e->max);
        fputc('\n', out);
    }
    fprintf(out, "  %-28s %s\n", "[tokens] TOKEN = ROLE",
            "bearer tokens, one per line; ROLE is scheduler, ops or worker");
}

static void dump_value(const tsl_config_t *c, const cfg_entry_t *e, FILE *out)
{
    const void *field = (const char *)c + e->offset;
    switch (e->type) {
    case CFG_MODE: fprintf(out, "%04o", *(const uint32_t *)field); break;
    case CFG_UINT32: fprintf(out, "%u", *(const uint32_t *)field); break;
    case CFG_BYTES: fprintf(out, "%llu", (unsigned long long)*(const uint64_t *)field); break;
    case CFG_DOUBLE: fprintf(out, "%g", *(const double *)field); break;
    case CFG_BOOL: fputs(*(const bool *)field ? "true" : "false", out); break;
    default: fprintf(out, "%s", (const char *)field); break;
    }
}

void tsl_config_dump(const tsl_config_t *c, FILE *out)
{
    const char *section = "";
    for (size_t i = 0; i < CONFIG_N; i++) {
        const cfg_entry_t *e = &CONFIG_TABLE[i];
        if (strcmp(section, e->section) != 0) {
            fprintf(out, "%s[%s]\n", section[0] ? "\n" : "", e->section);
            section = e->section;
        }
        fprintf(out, "%s = ", e->key);
        dump_value(c, e, out);
        fputc('\n', out);
    }
    /* Tokens are secrets: only their count, length and role are shown. */
    fprintf(out, "\n[tokens]\n; %u token(s)%s\n", c->n_tokens,
            c->n_tokens ? ", masked" : ": unix socket callers are trusted, tcp is refused");
    for (uint32_t i = 0; i < c->n_tokens; i++)
        fprintf(out, "; token %u (%zu characters) = %s\n", i + 1, strlen(c->tokens[i].token),
                tsl_role_name(c->tokens[i].role));
}
