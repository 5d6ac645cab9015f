/*
 * remote_util.c — the plumbing shared by tesselctl's daemon subcommands.
 */
#include "remote.h"

#include "args.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int tsl_remote_fail(int code, const char *fmt, ...)
{
    va_list ap;

    fputs("tesselctl: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

/* One bound for --timeout wherever it stands on the command line. */
static int parse_timeout(const char *arg, double *out)
{
    tsl_err_t err;
    if (tsl_parse_double("--timeout", arg, 0.001, 86400 * 7, out, &err) != 0)
        return tsl_remote_fail(TSL_EXIT_USAGE, "%s (seconds)", err.msg);
    return 0;
}

int tsl_remote_common_opt(int opt, const char *arg, tsl_client_opts_t *co)
{
    switch (opt) {
    case TSL_OPT_SERVER:
        /* an empty address is an unset shell variable, not a choice: falling back
         * to the default socket would talk to another daemon than the one meant */
        if (arg[0] == '\0')
            return tsl_remote_fail(TSL_EXIT_USAGE,
                                   "--server: empty; give unix:/path or host:port (or leave "
                                   "--server out: TESSEL_SERVER, else %s)",
                                   TSL_DEFAULT_SERVER);
        co->server = arg;
        co->server_given = true;
        return 0;
    case TSL_OPT_TOKEN: co->token = arg; return 0;
    case TSL_OPT_JSON: co->json = true; return 0;
    case TSL_OPT_TIMEOUT: return parse_timeout(arg, &co->timeout_s);
    case TSL_OPT_TLS: co->tls = true; return 0;
    case TSL_OPT_CA:
        co->ca_file = arg;
        co->tls = true;
        return 0;
    case TSL_OPT_CERT:
        co->cert_file = arg;
        co->tls = true;
        return 0;
    case TSL_OPT_KEY:
        co->key_file = arg;
        co->tls = true;
        return 0;
    default: return -1;
    }
}

void tsl_remote_defaults(tsl_client_opts_t *co, bool is_plan)
{
    const char *env;

    if (!co->server || !*co->server) {
        env = getenv("TESSEL_SERVER");
        co->server = (env && *env) ? env : TSL_DEFAULT_SERVER;
    }
    if (!co->token || !*co->token) {
        env = getenv("TESSEL_TOKEN");
        co->token = (env && *env) ? env : NULL;
    }
    if (co->timeout_s <= 0 && !is_plan)
        co->timeout_s = TSL_REMOTE_DEFAULT_TIMEOUT_S;
}

int tsl_remote_open(const tsl_client_opts_t *co, tsl_rpc_client_t **out)
{
    char err[TSL_RPC_MSG_MAX];

    tsl_rpc_tls_t tls = {.ca_file = co->ca_file,
                         .cert_file = co->cert_file,
                         .key_file = co->key_file,
                         .ca_name = "--ca",
                         .cert_name = "--cert",
                         .key_name = "--key"};

    *out = tsl_rpc_client_open_tls(co->server, co->token, co->timeout_s, co->tls ? &tls : NULL, err,
                                   sizeof(err));
    if (!*out)
        return tsl_remote_fail(TSL_EXIT_USAGE, "%s", err);
    return 0;
}

int tsl_remote_parse_u32(const char *name, const char *text, unsigned lo, unsigned hi,
                         unsigned *out)
{
    tsl_err_t err;
    uint32_t v;
    if (tsl_parse_u32(name, text, lo, hi, &v, &err) != 0)
        return tsl_remote_fail(TSL_EXIT_USAGE, "%s", err.msg);
    *out = v;
    return 0;
}

static int read_stream(FILE *f, size_t max_bytes, char **out, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);

    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (ferror(f) || n > max_bytes)
            break;
        if (feof(f)) {
            buf[n] = '\0';
            *out = buf;
            *len = n;
            return 0;
        }
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
    }
    free(buf);
    return -1;
}

int tsl_remote_read_file(const char *what, const char *path, size_t max_bytes, char **out)
{
    FILE *f = fopen(path, "rb");
    size_t len = 0;
    int rc;

    *out = NULL;
    if (!f)
        return tsl_remote_fail(TSL_EXIT_USAGE, "%s: cannot open '%s': %s", what, path,
                               strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) { /* fopen takes one on Linux */
        fclose(f);
        return tsl_remote_fail(TSL_EXIT_USAGE, "%s: '%s' is a directory", what, path);
    }
    rc = read_stream(f, max_bytes, out, &len);
    fclose(f);
    if (rc != 0)
        return tsl_remote_fail(TSL_EXIT_USAGE,
                               "%s: cannot read '%s' (unreadable, or over %zu bytes)", what, path,
                               max_bytes);
    if (strlen(*out) != len) {
        free(*out);
        *out = NULL;
        return tsl_remote_fail(TSL_EXIT_USAGE, "%s: '%s' is not a text file (NUL byte)", what,
                               path);
    }
    return 0;
}

int tsl_remote_print_json(FILE *out, json_t *doc)
{
    int rc;

    if (!doc)
        return tsl_remote_fail(TSL_EXIT_SERVER, "out of memory building the JSON output");
    rc = json_dumpf(doc, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', out);
    json_decref(doc);
    /* a write error (a full disk) is reported once, by main's check of stdout */
    return rc == 0 || out == stdout
               ? TSL_EXIT_OK
               : tsl_remote_fail(TSL_EXIT_SERVER, "cannot write the JSON output");
}

int tsl_remote_getopt_error(const char *cmd, int opt, char **argv)
{
    const char *arg = argv[optind - 1];

    if (opt == ':')
        return tsl_remote_fail(TSL_EXIT_USAGE,
                               "%s: option '%s' needs a value; see tesselctl %s --help", cmd, arg,
                               cmd);
    return tsl_remote_fail(TSL_EXIT_USAGE, "%s: unknown option '%s'; see tesselctl %s --help", cmd,
                           arg, cmd);
}

int tsl_remote_one_arg(const char *cmd, const char *what, int argc, char **argv, int optind_,
                       const char **out)
{
    if (optind_ >= argc || !argv[optind_][0])
        return tsl_remote_fail(TSL_EXIT_USAGE, "%s: give the %s; see tesselctl %s --help", cmd,
                               what, cmd);
    if (optind_ + 1 < argc)
        return tsl_remote_fail(TSL_EXIT_USAGE, "%s: unexpected argument '%s' after the %s", cmd,
                               argv[optind_ + 1], what);
    *out = argv[optind_];
    return 0;
}

/* Runs one unary call with a fresh client; reports failures. */
int tsl_remote_call(const tsl_client_opts_t *co, const char *method, const ProtobufCMessage *req,
                    const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out)
{
    tsl_client_opts_t eff = *co;
    tsl_rpc_client_t *c;
    tsl_rpc_status_t st = {0};
    int rc;

    tsl_remote_defaults(&eff, false);
    if ((rc = tsl_remote_open(&eff, &c)) != 0)
        return rc;
    if (tsl_rpc_unary(c, method, req, desc, out, &st) != 0)
        rc = tsl_rpc_report(stderr, &st);
    tsl_rpc_client_close(c);
    return rc;
}

int tsl_rpc_report(FILE *err, const tsl_rpc_status_t *st)
{
    int rc = tsl_status_exit(st->code);

    if (rc == TSL_EXIT_OK)
        return rc;
    if (st->message[0])
        fprintf(err, "tesselctl: %s\n", st->message);
    else
        fprintf(err, "tesselctl: %s\n", tsl_status_name(st->code));
    return rc;
}
