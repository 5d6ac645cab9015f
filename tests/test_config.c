/*
 * test_config.c — the configuration table: defaults, every key through the file
 * and through tsl_config_set (section.key and flag names), octal socket_mode,
 * bounds, tokens and roles, cross-field validation, bad files naming file:line,
 * usage/dump, and the example deploy/tesseld.conf (argv[1]). The table's
 * mechanics (every type, the reader, argv) are tested in test_cfgtab.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config.h"

static char tmpdir[256];

static const char *write_conf(const char *name, const char *text)
{
    static char path[400];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_defaults(void)
{
    tsl_config_t c;
    tsl_err_t err = {0};
    tsl_config_defaults(&c);
    CHECK(strcmp(c.unix_socket, "/run/tessel/tesseld.sock") == 0, "unix_socket %s", c.unix_socket);
    CHECK(c.socket_mode == 0660, "mode %o", c.socket_mode);
    CHECK(c.tcp[0] == '\0' && c.http[0] == '\0' && c.tls_cert[0] == '\0', "off by default");
    CHECK(strcmp(c.database, "/var/lib/tessel/tessel.db") == 0, "database");
    CHECK(c.pool_size == 0 && c.queue_size == 16 && c.grace_s == 10 && c.search_nice == 19,
          "search");
    CHECK(c.max_request_bytes == 4194304 && c.max_layers == 1024 && c.max_devices == 131072 &&
              c.max_batch == 65536,
          "limits");
    CHECK(strcmp(c.log_level, "info") == 0 && c.n_tokens == 0, "log, tokens");
    CHECK(tsl_config_validate(&c, &err) == 0, "defaults valid: %s", err.msg);
}

static void test_set(void)
{
    tsl_config_t c;
    tsl_err_t err = {0};
    tsl_config_defaults(&c);
    CHECK(tsl_config_set(&c, "unix-socket", "/tmp/t.sock", &err) == 0, "%s", err.msg);
    CHECK(strcmp(c.unix_socket, "/tmp/t.sock") == 0, "flag name");
    CHECK(tsl_config_set(&c, "server.unix_socket", "/tmp/u.sock", &err) == 0, "%s", err.msg);
    CHECK(strcmp(c.unix_socket, "/tmp/u.sock") == 0, "section.key");
    CHECK(tsl_config_set(&c, "--database", "/tmp/x.db", &err) == 0 &&
              strcmp(c.database, "/tmp/x.db") == 0,
          "--flag form: %s", err.msg);
    CHECK(tsl_config_set(&c, "socket-mode", "0600", &err) == 0 && c.socket_mode == 0600, "octal");
    /* A decimal slip: 432 is 0660 in decimal; without a leading 0 the mode is refused. */
    CHECK(tsl_config_set(&c, "socket-mode", "432", &err) == -1 && strstr(err.msg, "leading 0"),
          "432 refused: %s", err.msg);
    CHECK(tsl_config_set(&c, "socket-mode", "640", &err) == -1, "640 without a leading 0 refused");
    CHECK(tsl_config_set(&c, "socket-mode", "0640", &err) == 0 && c.socket_mode == 0640, "0640");
    CHECK(tsl_config_set(&c, "grace", "0x10", &err) == -1 && strstr(err.msg, "decimal"),
          "grace 0x10 refused: %s", err.msg);
    CHECK(tsl_config_set(&c, "grace", "1e1", &err) == -1, "grace 1e1 refused");
    CHECK(tsl_config_set(&c, "grace", "inf", &err) == -1, "grace inf refused");
    CHECK(tsl_config_set(&c, "grace", "2.5", &err) == 0 && c.grace_s == 2.5, "grace 2.5");
    CHECK(tsl_config_set(&c, "insecure-tcp", "yes", &err) == -1, "bool: true or false only");
    CHECK(tsl_config_set(&c, "socket-mode", "0690", &err) == -1 && strstr(err.msg, "socket_mode"),
          "9 is not octal: %s", err.msg);
    CHECK(tsl_config_set(&c, "socket-mode", "01777", &err) == -1 && strstr(err.msg, "0777"),
          "mode bound: %s", err.msg);
    CHECK(tsl_config_set(&c, "pool-size", "4", &err) == 0 && c.pool_size == 4, "pool");
    CHECK(tsl_config_set(&c, "search.queue_size", "0", &err) == 0 && c.queue_size == 0, "queue 0");
    CHECK(tsl_config_set(&c, "queue-size", "100001", &err) == -1 &&
              strstr(err.msg, "search.queue_size") && strstr(err.msg, "[0, 100000]"),
          "bounds named: %s", err.msg);
    CHECK(tsl_config_set(&c, "max-layers", "0", &err) == -1 &&
              strstr(err.msg, "limits.max_layers") && strstr(err.msg, "[1, 1048576]"),
          "min bound: %s", err.msg);
    CHECK(tsl_config_set(&c, "max-layers", "-3", &err) == -1 &&
              strstr(err.msg, "limits.max_layers: -3 is out of range [1, 1048576]"),
          "negative: below the range, said with it: %s", err.msg);
    CHECK(tsl_config_set(&c, "max-layers", "12abc", &err) == -1, "junk after digits");
    CHECK(tsl_config_set(&c, "max-layers", "", &err) == -1, "empty number");
    CHECK(tsl_config_set(&c, "max-request-bytes", "16M", &err) == 0 &&
              c.max_request_bytes == 16u << 20,
          "M suffix: %s", err.msg);
    CHECK(tsl_config_set(&c, "max-request-bytes", "2G", &err) == -1 &&
              strstr(err.msg, "max_request_bytes"),
          "above 1G: %s", err.msg);
    CHECK(tsl_config_set(&c, "max-request-bytes", "1K", &err) == 0 && c.max_request_bytes == 1024,
          "K");
    CHECK(tsl_config_set(&c, "grace", "2.5", &err) == 0 && c.grace_s == 2.5, "double");
    CHECK(tsl_config_set(&c, "grace", "nan", &err) == -1, "nan refused");
    CHECK(tsl_config_set(&c, "grace", "3601", &err) == -1 && strstr(err.msg, "grace_s"), "%s",
          err.msg);
    CHECK(tsl_config_set(&c, "search-nice", "0", &err) == 0 && c.search_nice == 0, "nice 0");
    CHECK(tsl_config_set(&c, "search.search_nice", "20", &err) == -1 &&
              strstr(err.msg, "search_nice"),
          "nice above 19: %s", err.msg);
    CHECK(tsl_config_set(&c, "log-level", "DEBUG", &err) == 0 && strcmp(c.log_level, "debug") == 0,
          "level canonical: %s", c.log_level);
    CHECK(tsl_config_set(&c, "log.level", "loud", &err) == -1 && strstr(err.msg, "log.level"), "%s",
          err.msg);
    CHECK(tsl_config_set(&c, "http", "127.0.0.1:0", &err) == 0, "http port 0: %s", err.msg);
    /* a port past 65535 is named as out of range, not as a malformed address */
    CHECK(tsl_config_set(&c, "http", "127.0.0.1:99999", &err) == -1 &&
              strstr(err.msg, "server.http: port 99999 of '127.0.0.1:99999' is out of range "
                              "1..65535"),
          "http port 99999: %s", err.msg);
    CHECK(tsl_config_set(&c, "tcp", "[::1]:1234567", &err) == -1 &&
              strstr(err.msg, "port 1234567") && strstr(err.msg, "out of range 1..65535"),
          "tcp port 1234567: %s", err.msg);
    CHECK(tsl_config_set(&c, "http", "127.0.0.1:65535", &err) == 0, "port 65535: %s", err.msg);
    CHECK(tsl_config_set(&c, "http", "[::1]:9464", &err) == 0, "v6: %s", err.msg);
    CHECK(tsl_config_set(&c, "http", "", &err) == 0 && c.http[0] == '\0', "off");
    CHECK(tsl_config_set(&c, "tcp", "localhost", &err) == -1 && strstr(err.msg, "server.tcp"),
          "no port: %s", err.msg);
    CHECK(tsl_config_set(&c, "tcp", "h:70000", &err) == -1, "port > 65535");
    CHECK(tsl_config_set(&c, "tcp", ":80", &err) == -1, "no host");
    CHECK(tsl_config_set(&c, "nope", "1", &err) == -1 && strstr(err.msg, "nope"), "%s", err.msg);
    CHECK(tsl_config_set(&c, "server.nope", "1", &err) == -1 && strstr(err.msg, "nope") &&
              strstr(err.msg, "[server]"),
          "%s", err.msg);
    CHECK(tsl_config_set(&c, "bogus.key", "1", &err) == -1 && strstr(err.msg, "[bogus]") &&
              strstr(err.msg, "known: server, store, search, limits, log, registry, tokens"),
          "unknown section lists the known ones: %s", err.msg);
    CHECK(tsl_config_set(&c, "search.pool", "1", &err) == -1 &&
              strstr(err.msg, "known: pool_size, queue_size, grace_s, search_nice"),
          "unknown key lists the section's keys: %s", err.msg);
    char longpath[200];
    memset(longpath, 'a', sizeof(longpath) - 1);
    longpath[0] = '/';
    longpath[sizeof(longpath) - 1] = '\0';
    CHECK(tsl_config_set(&c, "unix-socket", longpath, &err) == -1 && strstr(err.msg, "107"),
          "sun_path limit: %s", err.msg);
    CHECK(tsl_config_set(&c, "database", "", &err) == -1 && strstr(err.msg, "store.database"),
          "empty database: %s", err.msg);
}

static void test_tokens(void)
{
    tsl_config_t c;
    tsl_err_t err = {0};
    tsl_config_defaults(&c);
    CHECK(tsl_config_token_role(&c, "anything") == TSL_ROLE_NONE, "no tokens");
    CHECK(tsl_config_set(&c, "tokens.sched-token-0123456789", "scheduler", &err) == 0, "%s",
          err.msg);
    CHECK(tsl_config_set(&c, "tokens.ops-token-0123456789", "ops", &err) == 0, "%s", err.msg);
    CHECK(tsl_config_set(&c, "tokens.w", "worker", &err) == 0, "%s", err.msg);
    CHECK(tsl_config_set(&c, "tokens.x", "admin", &err) == -1 && strstr(err.msg, "admin"), "%s",
          err.msg);
    CHECK(tsl_config_set(&c, "tokens.w", "ops", &err) == -1 && strstr(err.msg, "twice"), "%s",
          err.msg);
    CHECK(c.n_tokens == 3, "3 tokens");
    CHECK(tsl_config_token_role(&c, "sched-token-0123456789") == TSL_ROLE_SCHEDULER, "scheduler");
    CHECK(tsl_config_token_role(&c, "ops-token-0123456789") == TSL_ROLE_OPS, "ops");
    CHECK(tsl_config_token_role(&c, "w") == TSL_ROLE_WORKER, "worker");
    CHECK(tsl_config_token_role(&c, "ops-token-012345678") == TSL_ROLE_NONE, "prefix no match");
    CHECK(tsl_config_token_role(&c, "ops-token-01234567890") == TSL_ROLE_NONE, "longer no match");
    CHECK(tsl_config_token_role(&c, "") == TSL_ROLE_NONE, "empty");
    CHECK(tsl_config_token_role(&c, NULL) == TSL_ROLE_NONE, "NULL");
    char huge[300];
    memset(huge, 'w', sizeof(huge) - 1);
    huge[sizeof(huge) - 1] = '\0';
    CHECK(tsl_config_token_role(&c, huge) == TSL_ROLE_NONE, "over-long guess");
    CHECK(strcmp(tsl_role_name(TSL_ROLE_OPS), "ops") == 0 && strcmp(tsl_role_name(99), "none") == 0,
          "role names");
    for (int i = 3; i < TSL_CONFIG_MAX_TOKENS; i++) {
        char key[64];
        snprintf(key, sizeof(key), "tokens.t%d", i);
        tsl_config_set(&c, key, "ops", &err);
    }
    CHECK(c.n_tokens == TSL_CONFIG_MAX_TOKENS, "table full");
    CHECK(tsl_config_set(&c, "tokens.onemore", "ops", &err) == -1 && strstr(err.msg, "64"), "%s",
          err.msg);
    CHECK(tsl_config_token_role(&c, "t63") == TSL_ROLE_OPS, "last token found");
}

static void test_validate(void)
{
    tsl_config_t c;
    tsl_err_t err = {0};
    tsl_config_defaults(&c);
    tsl_config_set(&c, "tcp", "0.0.0.0:7443", &err);
    CHECK(tsl_config_validate(&c, &err) == -1 &&
              strcmp(err.msg, "tcp listener configured without [tokens]: refusing to serve an "
                              "unauthenticated TCP port; add tokens or remove tcp") == 0,
          "tcp without tokens: %s", err.msg);
    tsl_config_set(&c, "tokens.abcdefabcdef", "scheduler", &err);
    CHECK(tsl_config_validate(&c, &err) == -1 && strstr(err.msg, "insecure_tcp = true"),
          "plaintext tcp without insecure_tcp: %s", err.msg);
    tsl_config_set(&c, "insecure-tcp", "true", &err);
    CHECK(tsl_config_validate(&c, &err) == 0, "tcp with tokens, insecure_tcp: %s", err.msg);
    tsl_config_set(&c, "tls-cert", "/etc/c.pem", &err);
    CHECK(tsl_config_validate(&c, &err) == -1 && strstr(err.msg, "tls_cert") &&
              strstr(err.msg, "tls_key"),
          "cert without key: %s", err.msg);
    tsl_config_set(&c, "tls-key", "/etc/k.pem", &err);
    CHECK(tsl_config_validate(&c, &err) == 0, "cert and key: %s", err.msg);
    tsl_config_set(&c, "tls-cert", "", &err);
    CHECK(tsl_config_validate(&c, &err) == -1 && strstr(err.msg, "server.tls_key is set"),
          "key without cert: %s", err.msg);
    tsl_config_set(&c, "tls-key", "", &err);
    tsl_config_set(&c, "tcp", "", &err);
    tsl_config_set(&c, "tls-cert", "/c", &err);
    tsl_config_set(&c, "tls-key", "/k", &err);
    CHECK(tsl_config_validate(&c, &err) == -1 && strstr(err.msg, "server.tcp"),
          "tls without tcp: %s", err.msg);
    tsl_config_defaults(&c);
    tsl_config_set(&c, "unix-socket", "", &err);
    CHECK(tsl_config_validate(&c, &err) == -1 && strstr(err.msg, "no listener"), "%s", err.msg);
    /* A socket every local user may open, with every caller trusted: refused. */
    tsl_config_defaults(&c);
    tsl_config_set(&c, "socket-mode", "0666", &err);
    CHECK(tsl_config_validate(&c, &err) == -1 && strstr(err.msg, "every local user"),
          "mode 0666 without tokens: %s", err.msg);
    tsl_config_set(&c, "tokens.abcdefabcdef", "scheduler", &err);
    CHECK(tsl_config_validate(&c, &err) == 0, "mode 0666 with tokens: %s", err.msg);
}

static void test_file(void)
{
    tsl_config_t c;
    tsl_err_t err = {0};
    tsl_config_defaults(&c);
    const char *good = write_conf(
        "good.conf",
        "; a comment\n# another\n\n[server]\nunix_socket = /tmp/tessel-test.sock\n"
        "socket_mode = 0600\ntcp = 127.0.0.1:7443\ninsecure_tcp = true\nhttp = 127.0.0.1:0  ; "
        "inline comment\n"
        "[store]\ndatabase=/tmp/t.db\n[search]\npool_size = 2\nqueue_size = 3\ngrace_s = 1.5\n"
        "[limits]\nmax_request_bytes = 1M\nmax_layers = 64\nmax_devices = 128\nmax_batch = 512\n"
        "[log]\nlevel = warn\n[tokens]\ns3cr3t-token-for-tests = scheduler\nro-token = ops\n");
    CHECK(tsl_config_load_file(&c, good, &err) == 0, "good file: %s", err.msg);
    CHECK(strcmp(c.unix_socket, "/tmp/tessel-test.sock") == 0 && c.socket_mode == 0600, "server");
    CHECK(strcmp(c.http, "127.0.0.1:0") == 0, "inline comment stripped: '%s'", c.http);
    CHECK(strcmp(c.database, "/tmp/t.db") == 0 && c.pool_size == 2 && c.queue_size == 3 &&
              c.grace_s == 1.5,
          "store/search");
    CHECK(c.max_request_bytes == 1 << 20 && c.max_layers == 64 && c.max_devices == 128 &&
              c.max_batch == 512,
          "limits");
    CHECK(strcmp(c.log_level, "warn") == 0 && c.n_tokens == 2, "log, tokens");
    CHECK(tsl_config_token_role(&c, "ro-token") == TSL_ROLE_OPS, "file token");
    CHECK(tsl_config_validate(&c, &err) == 0, "valid: %s", err.msg);
    /* Flags applied after the file win. */
    CHECK(tsl_config_set(&c, "pool-size", "9", &err) == 0 && c.pool_size == 9, "flag overrides");

    struct {
        const char *name, *text, *want1, *want2;
    } bad[] = {
        {"unknown_key.conf", "[server]\nunix_socket = /a\nsocket_modes = 0600\n",
         ":3:", "socket_modes"},
        {"unknown_section.conf", "[server]\n\n[serverr]\nx = 1\n", ":3:", "[serverr]"},
        /* a misspelled section with no key under it: on its own line (inih skips it) */
        {"empty_section.conf", "[server]\n[serverr]\n", ":2:", "unknown section [serverr]"},
        {"range.conf", "[search]\npool_size = 2\nqueue_size = 999999\n", ":3:", "[0, 100000]"},
        {"octal.conf", "[server]\nsocket_mode = 0668\n", ":2:", "octal"},
        {"syntax.conf", "[server]\nunix_socket /a\n", ":2:", "syntax"},
        {"section.conf", "[server\n", ":1:", "syntax"},
        {"nosection.conf", "database = /x\n", ":1:", "outside any [section]"},
        {"role.conf", "[tokens]\nabc = root\n", ":2:", "root"},
        {"addr.conf", "[server]\nhttp = 9464\n", ":2:", "HOST:PORT"},
        {"hex.conf", "[search]\ngrace_s = 0x10\n", ":2:", "decimal"},
        {"dup.conf", "[search]\npool_size = 2\n\npool_size = 3\n", ":4:", "line 2"},
        {"mode432.conf", "[server]\nsocket_mode = 432\n", ":2:", "leading 0"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tsl_config_t d;
        tsl_config_defaults(&d);
        const char *path = write_conf(bad[i].name, bad[i].text);
        err.msg[0] = '\0';
        CHECK(tsl_config_load_file(&d, path, &err) == -1, "%s refused", bad[i].name);
        CHECK(strstr(err.msg, bad[i].name) && strstr(err.msg, bad[i].want1) &&
                  strstr(err.msg, bad[i].want2),
              "%s: message names file:line and the reason: %s", bad[i].name, err.msg);
        CHECK(strcmp(d.unix_socket, "/run/tessel/tesseld.sock") == 0 && d.pool_size == 0,
              "%s: a bad file changes nothing", bad[i].name);
    }
    /* A line longer than inih's buffer is refused, not split. */
    char text[600];
    snprintf(text, sizeof(text), "[store]\ndatabase = /%0300d\n", 0);
    const char *path = write_conf("long.conf", text);
    CHECK(tsl_config_load_file(&c, path, &err) == -1 && strstr(err.msg, ":2:") &&
              strstr(err.msg, "longer than"),
          "long line: %s", err.msg);
    /* A NUL byte would cut the value short in inih: refused with its line. */
    path = write_conf("nul.conf", "");
    FILE *nf = fopen(path, "w");
    fwrite("[server]\nunix_socket = /a\0evil\n", 1, 31, nf);
    fclose(nf);
    CHECK(tsl_config_load_file(&c, path, &err) == -1 && strstr(err.msg, ":2:") &&
              strstr(err.msg, "NUL"),
          "NUL byte: %s", err.msg);
    /* Not a regular file: refused at once instead of reading forever. */
    CHECK(tsl_config_load_file(&c, "/dev/zero", &err) == -1 && strstr(err.msg, "regular file"),
          "/dev/zero: %s", err.msg);
    CHECK(tsl_config_load_file(&c, tmpdir, &err) == -1, "a directory: %s", err.msg);
    CHECK(tsl_config_load_file(&c, "/nonexistent/tesseld.conf", &err) == -1 &&
              strstr(err.msg, "/nonexistent/tesseld.conf") && strstr(err.msg, "No such file"),
          "missing file: %s", err.msg);
}

static void test_usage_dump(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tsl_config_usage(f);
    fclose(f);
    const char *flags[] = {"--unix-socket", "--socket-mode",       "--tcp",
                           "--tls-cert",    "--tls-key",           "--http",
                           "--database",    "--pool-size",         "--queue-size",
                           "--grace",       "--max-request-bytes", "--max-layers",
                           "--max-devices", "--max-batch",         "--log-level",
                           "[tokens]"};
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        CHECK(strstr(text, flags[i]) != NULL, "usage lists %s", flags[i]);
    CHECK(strstr(text, "[search] queue_size, default 16, range 0..100000") != NULL,
          "defaults, bounds");
    free(text);

    tsl_config_t c;
    tsl_err_t err = {0};
    tsl_config_defaults(&c);
    tsl_config_set(&c, "tokens.very-secret-token-value", "scheduler", &err);
    f = open_memstream(&text, &len);
    tsl_config_dump(&c, f);
    fclose(f);
    CHECK(strstr(text, "very-secret") == NULL, "token masked");
    CHECK(strstr(text, "socket_mode = 0660") && strstr(text, "[limits]") &&
              strstr(text, "= scheduler"),
          "dump content:\n%s", text);
    /* The dump reads back as the same configuration. */
    tsl_config_t back;
    tsl_config_defaults(&back);
    tsl_config_set(&back, "socket-mode", "0777", &err);
    const char *path = write_conf("dump.conf", text);
    CHECK(tsl_config_load_file(&back, path, &err) == 0, "dump loads: %s", err.msg);
    CHECK(back.socket_mode == 0660 && back.max_request_bytes == c.max_request_bytes &&
              back.n_tokens == 0,
          "round trip");
    free(text);
}

static void test_example(const char *path)
{
    tsl_config_t c;
    tsl_err_t err = {0};
    tsl_config_defaults(&c);
    CHECK(tsl_config_load_file(&c, path, &err) == 0, "example loads: %s", err.msg);
    CHECK(tsl_config_validate(&c, &err) == 0, "example valid: %s", err.msg);
    CHECK(strcmp(c.http, "127.0.0.1:9464") == 0, "example turns http on");
    CHECK(c.unix_socket[0] != '\0' && c.tcp[0] == '\0', "example: unix socket, no tcp");
}

int main(int argc, char **argv)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/tsl-config-XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL)
        SKIP_ALL("cannot create a temporary directory");
    test_defaults();
    test_set();
    test_tokens();
    test_validate();
    test_file();
    test_usage_dump();
    if (argc > 1)
        test_example(argv[1]);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return CHECK_DONE();
}
