/*
 * test_cfgtab.c — the shared configuration table (common/cfgtab.h) on a table of
 * its own: every type (string, addr, enum, level, mode, uint, size, double,
 * bool in both spellings), bounds named in errors, the free-form section, flag
 * forms (name, --name, section.key, argv's --k v and --k=v), the INI reader
 * (file:line errors, unknown key and section listing the known ones, duplicates,
 * a bad file changing nothing), the generated --help list and the dump that
 * reads back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>

#include "cfgtab.h"
#include "check.h"

typedef struct demo {
    char name[16];
    char addr[32];
    char backend[8];
    char level[8];
    char secret[32];
    uint32_t mode;
    uint32_t count;
    uint64_t bytes;
    double ratio;
    bool on;
    int n_extra;
    char last_extra[32];
} demo_t;

#define AT(field) TSL_CFG_AT(demo_t, field)

static const tsl_cfg_key_t KEYS[] = {
    {"main", "name", "name", "NAME", TSL_CFG_STRING, AT(name), "demo", 1, 15, NULL, 0, "the name"},
    {"main", "addr", "addr", "HOST:PORT", TSL_CFG_ADDR, AT(addr), "", 0, 31, NULL, 0,
     "where to listen"},
    {"main", "backend", "backend", "cuda|sim", TSL_CFG_ENUM, AT(backend), "cuda", 0, 7, "cuda|sim",
     0, "the backend"},
    {"main", "secret", "secret", "TOKEN", TSL_CFG_STRING, AT(secret), "", 0, 31, NULL,
     TSL_CFG_SECRET, "a secret"},
    {"num", "mode", "mode", "MODE", TSL_CFG_MODE, AT(mode), "0660", 0, 0777, NULL, 0, "bits"},
    {"num", "count", "count", "N", TSL_CFG_UINT, AT(count), "16", 1, 100, NULL, 0, "how many"},
    {"num", "bytes", "bytes", "BYTES", TSL_CFG_SIZE, AT(bytes), "4M", 1024, 1073741824, NULL, 0,
     "how big"},
    {"num", "ratio", "ratio", "R", TSL_CFG_DOUBLE, AT(ratio), "0.5", 0, 2.5, NULL, 0, "a ratio"},
    {"num", "on", "on", "BOOL", TSL_CFG_BOOL, AT(on), "false", 0, 0, NULL, 0, "a switch"},
    {"log", "level", "log-level", "LEVEL", TSL_CFG_LEVEL, AT(level), "info", 0, 7, NULL, 0,
     "error | warn | info | debug"},
};

static int extra_set(void *obj, const char *name, const char *value, tsl_err_t *err)
{
    demo_t *d = obj;
    if (strcmp(value, "ok") != 0)
        return tsl_err_set(err, "extra: '%s' must be ok", value);
    d->n_extra++;
    snprintf(d->last_extra, sizeof d->last_extra, "%s", name);
    return 0;
}

static const tsl_cfgtab_t TAB = {"demo", sizeof(demo_t), KEYS,     sizeof KEYS / sizeof KEYS[0],
                                 0,      "extra",        extra_set};
static const tsl_cfgtab_t TAB_YESNO = {
    "demo", sizeof(demo_t), KEYS, sizeof KEYS / sizeof KEYS[0], TSL_CFGTAB_YESNO, NULL, NULL};

#define SYNTAX "syntax error: expected '[section]', 'key = value' or a comment"

static char tmpdir[256];

static const char *write_conf(const char *name, const char *text)
{
    static char path[400];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static int set(demo_t *d, const char *key, const char *value, tsl_err_t *err)
{
    err->msg[0] = '\0';
    return tsl_cfgtab_set(&TAB, d, key, value, err);
}

static void test_defaults(void)
{
    demo_t d;
    memset(&d, 0xff, sizeof d);
    tsl_cfgtab_defaults(&TAB, &d);
    CHECK(!strcmp(d.name, "demo") && !d.addr[0] && !strcmp(d.backend, "cuda") && !d.secret[0],
          "string defaults");
    CHECK(d.mode == 0660 && d.count == 16 && d.bytes == 4u << 20 && d.ratio == 0.5 && !d.on,
          "number defaults");
    CHECK(!strcmp(d.level, "info") && d.n_extra == 0, "level; the rest zeroed");
}

static void test_strings(void)
{
    demo_t d;
    tsl_err_t err = {0};
    tsl_cfgtab_defaults(&TAB, &d);
    CHECK(set(&d, "name", "n1", &err) == 0 && !strcmp(d.name, "n1"), "flag name");
    CHECK(set(&d, "--name", "n2", &err) == 0 && !strcmp(d.name, "n2"), "--flag");
    CHECK(set(&d, "main.name", "n3", &err) == 0 && !strcmp(d.name, "n3"), "section.key");
    CHECK(set(&d, "name", "", &err) == -1 && strstr(err.msg, "main.name: must not be empty"),
          "min length: %s", err.msg);
    CHECK(set(&d, "name", "0123456789abcdef", &err) == -1 && strstr(err.msg, "main.name") &&
              strstr(err.msg, "16 characters long; at most 15"),
          "max length: %s", err.msg);
    CHECK(!strcmp(d.name, "n3"), "a refused value changes nothing");
    CHECK(set(&d, "addr", "127.0.0.1:80", &err) == 0 && set(&d, "addr", "[::1]:9", &err) == 0,
          "addr: %s", err.msg);
    CHECK(set(&d, "addr", "localhost", &err) == -1 && strstr(err.msg, "main.addr") &&
              strstr(err.msg, "HOST:PORT"),
          "no port: %s", err.msg);
    CHECK(set(&d, "addr", "h:70000", &err) == -1 && set(&d, "addr", ":80", &err) == -1,
          "port bound, empty host");
    CHECK(set(&d, "addr", "", &err) == 0 && !d.addr[0], "addr off");
    CHECK(set(&d, "backend", "SIM", &err) == 0 && !strcmp(d.backend, "sim"), "enum any case");
    CHECK(set(&d, "backend", "rocm", &err) == -1 && strstr(err.msg, "main.backend") &&
              strstr(err.msg, "one of cuda, sim"),
          "enum choices named: %s", err.msg);
    CHECK(set(&d, "backend", "cud", &err) == -1, "a prefix is not a choice");
    CHECK(set(&d, "log-level", "DEBUG", &err) == 0 && !strcmp(d.level, "debug"), "level canonical");
    CHECK(set(&d, "log-level", "warning", &err) == 0 && !strcmp(d.level, "warn"), "warning alias");
    CHECK(set(&d, "log.level", "loud", &err) == -1 && strstr(err.msg, "log.level") &&
              strstr(err.msg, "error, warn, info, debug"),
          "bad level: %s", err.msg);
}

static void test_numbers(void)
{
    demo_t d;
    tsl_err_t err = {0};
    tsl_cfgtab_defaults(&TAB, &d);
    CHECK(set(&d, "mode", "0600", &err) == 0 && d.mode == 0600, "octal");
    CHECK(set(&d, "mode", "432", &err) == -1 && strstr(err.msg, "leading 0"), "decimal mode: %s",
          err.msg);
    CHECK(set(&d, "mode", "0690", &err) == -1 && strstr(err.msg, "num.mode"), "9 is not octal");
    CHECK(set(&d, "mode", "01777", &err) == -1 && strstr(err.msg, "[0, 0777]"), "mode bound: %s",
          err.msg);
    CHECK(set(&d, "count", "100", &err) == 0 && d.count == 100, "uint max");
    CHECK(set(&d, "count", "101", &err) == -1 && strstr(err.msg, "num.count: 101") &&
              strstr(err.msg, "[1, 100]"),
          "uint above: %s", err.msg);
    CHECK(set(&d, "count", "0", &err) == -1 && strstr(err.msg, "[1, 100]"), "uint below");
    /* a negative whole number is one, below the range: said with the range */
    CHECK(set(&d, "count", "-3", &err) == -1 && strstr(err.msg, "-3 is out of range [1, 100]"),
          "negative: %s", err.msg);
    CHECK(set(&d, "count", "1e1", &err) == -1 && set(&d, "count", "12abc", &err) == -1 &&
              set(&d, "count", "", &err) == -1 && set(&d, "count", " 5", &err) == -1 &&
              set(&d, "count", "99999999999999999999999", &err) == -1,
          "not whole numbers");
    CHECK(set(&d, "bytes", "16M", &err) == 0 && d.bytes == 16u << 20, "size suffix");
    CHECK(set(&d, "bytes", "1K", &err) == 0 && d.bytes == 1024, "size min");
    CHECK(set(&d, "bytes", "2G", &err) == -1 && strstr(err.msg, "num.bytes") &&
              strstr(err.msg, "1073741824"),
          "size above: %s", err.msg);
    CHECK(set(&d, "bytes", "1.5G", &err) == -1 && strstr(err.msg, "K, M, G, T"), "size: %s",
          err.msg);
    CHECK(set(&d, "ratio", "2.5", &err) == 0 && d.ratio == 2.5, "double max");
    CHECK(set(&d, "ratio", ".25", &err) == 0 && d.ratio == 0.25, "double .25");
    CHECK(set(&d, "ratio", "2.51", &err) == -1 && strstr(err.msg, "[0, 2.5]"), "double bound: %s",
          err.msg);
    const char *bad[] = {"0x10", "1e1", "inf", "nan", "-1", "1.2.3", "", "."};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(set(&d, "ratio", bad[i], &err) == -1 && strstr(err.msg, "num.ratio"),
              "double '%s' refused: %s", bad[i], err.msg);
    CHECK(set(&d, "on", "true", &err) == 0 && d.on, "true");
    CHECK(set(&d, "on", "false", &err) == 0 && !d.on, "false");
    CHECK(set(&d, "on", "yes", &err) == -1 && strstr(err.msg, "true or false"), "strict bool: %s",
          err.msg);
    CHECK(tsl_cfgtab_set(&TAB_YESNO, &d, "on", "Yes", &err) == 0 && d.on, "yesno: Yes");
    CHECK(tsl_cfgtab_set(&TAB_YESNO, &d, "on", "off", &err) == 0 && !d.on, "yesno: off");
    CHECK(tsl_cfgtab_set(&TAB_YESNO, &d, "on", "1", &err) == 0 && d.on, "yesno: 1");
    CHECK(tsl_cfgtab_set(&TAB_YESNO, &d, "on", "maybe", &err) == -1 && strstr(err.msg, "yes or no"),
          "yesno: maybe: %s", err.msg);
}

static void test_lookup(void)
{
    demo_t d;
    tsl_err_t err = {0};
    tsl_cfgtab_defaults(&TAB, &d);
    CHECK(set(&d, "nope", "1", &err) == -1 && strstr(err.msg, "unknown option '--nope'") &&
              strstr(err.msg, "; see demo --help"),
          "unknown flag: %s", err.msg);
    CHECK(set(&d, "num.nope", "1", &err) == -1 &&
              strstr(err.msg, "unknown key 'nope' in section [num]") &&
              strstr(err.msg, "known: mode, count, bytes, ratio, on"),
          "unknown key lists the section's keys: %s", err.msg);
    CHECK(set(&d, "bogus.key", "1", &err) == -1 && strstr(err.msg, "unknown section [bogus]") &&
              strstr(err.msg, "known: main, num, log, extra"),
          "unknown section lists the sections: %s", err.msg);
    CHECK(set(&d, "extra.e1", "ok", &err) == 0 && d.n_extra == 1 && !strcmp(d.last_extra, "e1"),
          "free-form section");
    CHECK(set(&d, "extra.e2", "no", &err) == -1 && strstr(err.msg, "must be ok"),
          "free-form section's own error: %s", err.msg);
    CHECK(tsl_cfgtab_set(&TAB_YESNO, &d, "extra.e1", "ok", &err) == -1 &&
              strstr(err.msg, "unknown section [extra]") && strstr(err.msg, "main, num, log)"),
          "a table without one: %s", err.msg);
    CHECK(tsl_cfgtab_find(&TAB, "num", "count") == &KEYS[5] &&
              !tsl_cfgtab_find(&TAB, "main", "count"),
          "find");
}

/* path ends in name, and the message is "PATH" followed by want. */
static void expect_bad(const char *name, const char *text, const char *want)
{
    demo_t e;
    tsl_err_t err = {0};
    tsl_cfgtab_defaults(&TAB, &e);
    const char *path = write_conf(name, text);
    size_t n = strlen(path);
    int rc = tsl_cfgtab_load(&TAB, &e, path, &err);
    CHECK(rc == -1 && strncmp(err.msg, path, n) == 0 && strcmp(err.msg + n, want) == 0,
          "%s refused naming file:line and why: %s", name, err.msg);
    CHECK(e.count == 16 && e.n_extra == 0, "%s: a bad file changes nothing", name);
}

static void test_file(void)
{
    demo_t d;
    tsl_err_t err = {0};
    tsl_cfgtab_defaults(&TAB, &d);
    const char *good = write_conf("good.conf", "; comment\n# another\n\n[main]\nname = n1\n"
                                               "addr = 127.0.0.1:0  ; inline\n[num]\ncount=7\n"
                                               "bytes = 1M\nratio = 1.5\non = true\n"
                                               "[extra]\nx1 = ok\nx2 = ok\n[log]\nlevel = warn\n");
    CHECK(tsl_cfgtab_load(&TAB, &d, good, &err) == 0, "good file: %s", err.msg);
    CHECK(!strcmp(d.name, "n1") && !strcmp(d.addr, "127.0.0.1:0") && d.count == 7 &&
              d.bytes == 1u << 20 && d.ratio == 1.5 && d.on && d.n_extra == 2 &&
              !strcmp(d.level, "warn"),
          "file values");
    /* Each bad file: refused with "FILE:LINE: why", and the values untouched. */
    expect_bad("unknown_key.conf", "[num]\ncount = 2\ncounts = 3\n",
               ":3: unknown key 'counts' in section [num] (known: mode, count, bytes, ratio, on)");
    expect_bad("unknown_section.conf", "[main]\n\n[mian]\nx = 1\n",
               ":3: unknown section [mian] (known: main, num, log, extra)");
    /* a misspelled section with no key under it (inih never reports it) */
    expect_bad("empty_section.conf", "[main]\nname = a\n[mian]\n",
               ":3: unknown section [mian] (known: main, num, log, extra)");
    expect_bad("range.conf", "[num]\ncount = 101\n", ":2: num.count: 101 is out of range [1, 100]");
    /* a negative or overlong whole number is one, out of range (--pool-size -1) */
    expect_bad("negative.conf", "[num]\ncount = -1\n",
               ":2: num.count: -1 is out of range [1, 100]");
    expect_bad("huge.conf", "[num]\ncount = 99999999999999999999\n",
               ":2: num.count: 99999999999999999999 is out of range [1, 100]");
    expect_bad("syntax.conf", "[main]\nname n1\n", ":2: " SYNTAX);
    expect_bad("section.conf", "[main\n", ":1: " SYNTAX);
    expect_bad("nosection.conf", "name = x\n", ":1: key 'name' is outside any [section]");
    expect_bad("dup.conf", "[num]\ncount = 2\n\ncount = 3\n",
               ":4: num.count is already set on line 2 (a key may appear once)");
    expect_bad("extra.conf", "[extra]\na = ok\nb = bad\n", ":3: extra: 'bad' must be ok");
    char text[600];
    snprintf(text, sizeof text, "[main]\nname = /%0300d\n", 0);
    CHECK(tsl_cfgtab_load(&TAB, &d, write_conf("long.conf", text), &err) == -1 &&
              strstr(err.msg, ":2:") && strstr(err.msg, "longer than"),
          "long line: %s", err.msg);
    const char *path = write_conf("nul.conf", "");
    FILE *f = fopen(path, "w");
    fwrite("[main]\nname = a\0b\n", 1, 18, f);
    fclose(f);
    CHECK(tsl_cfgtab_load(&TAB, &d, path, &err) == -1 && strstr(err.msg, ":2:") &&
              strstr(err.msg, "NUL"),
          "NUL byte: %s", err.msg);
    CHECK(tsl_cfgtab_load(&TAB, &d, "/dev/zero", &err) == -1 && strstr(err.msg, "regular file"),
          "/dev/zero: %s", err.msg);
    CHECK(tsl_cfgtab_load(&TAB, &d, "/nonexistent/x.conf", &err) == -1 &&
              strstr(err.msg, "/nonexistent/x.conf: cannot open"),
          "missing: %s", err.msg);
    CHECK(tsl_cfgtab_load(&TAB, &d, write_conf("empty.conf", ""), &err) == 0 && d.count == 7,
          "an empty file changes nothing: %s", err.msg);
}

static void test_argv(void)
{
    demo_t d;
    tsl_err_t err = {0};
    tsl_cfg_opts_t o = {0};
    const char *conf = write_conf("argv.conf", "[num]\ncount = 5\nratio = 2\n");
    char cf[420];
    snprintf(cf, sizeof cf, "--config=%s", conf);
    char *argv[] = {"demo",    "--count", "9",    "--name=x y", cf,  "-n",
                    "--quiet", "--on",    "true", "num.bytes",  NULL};
    CHECK(tsl_cfgtab_opts(9, argv, &o, &err) == 0 && o.check && !o.help && !o.version &&
              o.config_file && !strcmp(o.config_file, conf),
          "shared options found");
    static const char *const own[] = {"--quiet", NULL};
    CHECK(tsl_cfgtab_from_argv(&TAB, &d, &o, 9, argv, own, &err) == 0, "from argv: %s", err.msg);
    CHECK(d.count == 9 && d.ratio == 2 && !strcmp(d.name, "x y") && d.on,
          "defaults < file < flags, both forms");
    CHECK(tsl_cfgtab_apply_argv(&TAB, &d, 10, argv, own, &err) == -1 &&
              strstr(err.msg, "unexpected argument 'num.bytes'"),
          "a bare word: %s", err.msg);
    CHECK(tsl_cfgtab_apply_argv(&TAB, &d, 8, argv, NULL, &err) == -1 &&
              strstr(err.msg, "unknown option '--quiet'; see demo --help"),
          "another program's option is unknown: %s", err.msg);
    char *tail[] = {"demo", "--count", NULL};
    CHECK(tsl_cfgtab_apply_argv(&TAB, &d, 2, tail, NULL, &err) == -1 &&
              strstr(err.msg, "option '--count' needs a value; see demo --help"),
          "no value: %s", err.msg);
    /* the last word an unknown flag: unknown, as with a value after it (it said
     * "--bogus needs a value") */
    char *unknown[] = {"demo", "--bogus", NULL};
    CHECK(tsl_cfgtab_apply_argv(&TAB, &d, 2, unknown, NULL, &err) == -1 &&
              strstr(err.msg, "unknown option '--bogus'; see demo --help") &&
              !strstr(err.msg, "needs a value"),
          "an unknown last flag: %s", err.msg);
    /* named as typed, dashes and all (it said 'bogus', and '-x' was an "argument") */
    char *valued[] = {"demo", "--bogus", "1", NULL};
    CHECK(tsl_cfgtab_apply_argv(&TAB, &d, 3, valued, NULL, &err) == -1 &&
              strstr(err.msg, "unknown option '--bogus'; see demo --help"),
          "an unknown flag with a value: %s", err.msg);
    char *eqform[] = {"demo", "--bogus=1", NULL};
    CHECK(tsl_cfgtab_apply_argv(&TAB, &d, 2, eqform, NULL, &err) == -1 &&
              strstr(err.msg, "unknown option '--bogus'; see demo --help"),
          "an unknown --flag=value: %s", err.msg);
    char *shortopt[] = {"demo", "-x", NULL};
    CHECK(tsl_cfgtab_apply_argv(&TAB, &d, 2, shortopt, NULL, &err) == -1 &&
              strstr(err.msg, "unknown option '-x'; see demo --help"),
          "an unknown short option: %s", err.msg);
    char *sect[] = {"demo", "--num.count=3", "--extra.k", "ok", NULL};
    CHECK(tsl_cfgtab_apply_argv(&TAB, &d, 4, sect, NULL, &err) == 0 && d.count == 3 &&
              !strcmp(d.last_extra, "k"),
          "--section.key: %s", err.msg);
    char *noconf[] = {"demo", "--help", "--config", NULL};
    tsl_cfg_opts_t o2 = {0};
    CHECK(tsl_cfgtab_opts(3, noconf, &o2, &err) == -1 && strstr(err.msg, "--config needs a FILE"),
          "--config without a file: %s", err.msg);
}

static void test_usage_dump(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tsl_cfgtab_usage(&TAB, f);
    fclose(f);
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
        char want[96];
        snprintf(want, sizeof want, "--%s %s", KEYS[i].flag, KEYS[i].metavar);
        CHECK(strstr(text, want) && strstr(text, KEYS[i].help), "usage lists %s", want);
    }
    CHECK(strstr(text, "[num] count, default 16, range 1..100\n") &&
              strstr(text, "[num] ratio, default 0.5, range 0..2.5\n") &&
              strstr(text, "[main] backend, default cuda, one of cuda, sim\n") &&
              strstr(text, "[main] addr, default \"\"\n") &&
              strstr(text, "  --count N                    how many\n"),
          "defaults, bounds, layout:\n%s", text);
    free(text);

    demo_t d, back;
    tsl_err_t err = {0};
    tsl_cfgtab_defaults(&TAB, &d);
    set(&d, "secret", "very-secret-value", &err);
    set(&d, "ratio", "1.25", &err);
    set(&d, "on", "true", &err);
    f = open_memstream(&text, &len);
    tsl_cfgtab_dump(&TAB, &d, f);
    fclose(f);
    CHECK(!strstr(text, "very-secret") && strstr(text, "secret = (set, masked)"), "masked:\n%s",
          text);
    CHECK(strstr(text, "[num]\nmode = 0660\n") && strstr(text, "bytes = 4194304") &&
              strstr(text, "ratio = 1.25") && strstr(text, "on = true"),
          "dump:\n%s", text);
    /* Without the masked secret, the dump reads back as the same values. */
    char *s = strstr(text, "secret = ");
    memcpy(s, ";", 1);
    tsl_cfgtab_defaults(&TAB, &back);
    CHECK(tsl_cfgtab_load(&TAB, &back, write_conf("dump.conf", text), &err) == 0, "reads back: %s",
          err.msg);
    CHECK(back.ratio == 1.25 && back.on && back.mode == 0660 && back.bytes == d.bytes,
          "round trip");
    free(text);
    f = open_memstream(&text, &len);
    tsl_cfgtab_dump(&TAB_YESNO, &d, f);
    fclose(f);
    CHECK(strstr(text, "on = yes"), "yes/no tables dump yes/no");
    free(text);
}

/* The directory holds only the flat files write_conf made. */
static void remove_tmpdir(void)
{
    DIR *dir = opendir(tmpdir);
    char path[600];
    for (struct dirent *e = dir ? readdir(dir) : NULL; e != NULL; e = readdir(dir)) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
        if (e->d_name[0] != '.')
            unlink(path);
    }
    if (dir != NULL)
        closedir(dir);
    if (rmdir(tmpdir) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    /* The files the reader is shown live in a private directory, removed at the end. */
    int n = snprintf(tmpdir, sizeof tmpdir, "%s/tsl-cfgtab-XXXXXX", base && *base ? base : "/tmp");
    if (n <= 0 || (size_t)n >= sizeof tmpdir || mkdtemp(tmpdir) == NULL)
        SKIP_ALL("cannot create a temporary directory (TMPDIR or /tmp)");
    test_defaults();
    test_strings();
    test_numbers();
    test_lookup();
    test_file();
    test_argv();
    test_usage_dump();
    remove_tmpdir();
    return CHECK_DONE();
}
