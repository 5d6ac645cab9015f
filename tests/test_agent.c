/*
 * test_agent.c — tessel-worker's pure parts: the backoff arithmetic (ceilings,
 * the cap, the jitter bounds, reset), the spool (order across reopen, the size
 * cap, atomic files, reject, bad ids) and the configuration table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "check.h"

static void test_backoff(void)
{
    tsl_backoff_t b;
    tsl_backoff_init(&b, 0.5, 8);
    const double ceil[] = {0.5, 1, 2, 4, 8, 8, 8};
    for (size_t i = 0; i < sizeof ceil / sizeof ceil[0]; i++) {
        CHECK(tsl_backoff_ceiling(&b) == ceil[i], "ceiling %zu: %g, want %g", i,
              tsl_backoff_ceiling(&b), ceil[i]);
        double lo = tsl_backoff_next(&(tsl_backoff_t){b.base_s, b.cap_s, b.attempt}, 0);
        double hi = tsl_backoff_next(&(tsl_backoff_t){b.base_s, b.cap_s, b.attempt}, 0.999999);
        CHECK(lo == ceil[i] / 2, "u=0 gives half the ceiling: %g", lo);
        CHECK(hi < ceil[i] && hi > ceil[i] * 0.99, "u~1 gives just under the ceiling: %g", hi);
        double mid = tsl_backoff_next(&b, 0.5);
        CHECK(mid == ceil[i] * 0.75, "u=0.5 gives 3/4 of the ceiling: %g", mid);
    }
    CHECK(b.attempt == 7, "attempts counted: %u", b.attempt);
    tsl_backoff_reset(&b);
    CHECK(tsl_backoff_ceiling(&b) == 0.5, "reset starts over");
    /* Out-of-range draws are clamped into [d/2, d); thousands of failures do not overflow. */
    CHECK(tsl_backoff_next(&b, -3) == 0.25, "u<0 clamps to 0");
    CHECK(tsl_backoff_next(&b, 7) < 1.0, "u>=1 stays under the ceiling");
    b.attempt = 100000;
    CHECK(tsl_backoff_ceiling(&b) == 8, "many doublings stay at the cap");
    double d = tsl_backoff_next(&b, 0.3);
    CHECK(d >= 4 && d <= 8, "capped delay within [cap/2, cap]: %g", d);
    tsl_backoff_init(&b, 5, 1);
    CHECK(b.cap_s == 5, "a cap below the base is raised to the base");
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static void test_spool(const char *root)
{
    char dir[300], name[256];
    tsl_spool_t sp;
    tsl_err_t err = {0};
    uint32_t dropped = 0;
    void *buf = NULL;
    size_t n = 0;
    snprintf(dir, sizeof dir, "%s/spool", root);
    CHECK(tsl_spool_open(&sp, dir, 3, &err) == 0, "open creates the directory: %s", err.msg);
    CHECK(tsl_spool_oldest(&sp, name, sizeof name, &buf, &n, &err) == 1, "empty spool");
    CHECK(tsl_spool_put(&sp, "r1", "one", 3, &dropped, &err) == 0 && dropped == 0, "put r1");
    CHECK(tsl_spool_put(&sp, "r2", "two!", 4, &dropped, &err) == 0, "put r2");
    /* Reopened (a restart): the order carries on after the files found. */
    CHECK(tsl_spool_open(&sp, dir, 3, &err) == 0, "reopen");
    CHECK(tsl_spool_count(&sp) == 2, "two waiting: %u", tsl_spool_count(&sp));
    CHECK(tsl_spool_put(&sp, "r3", "3", 1, &dropped, &err) == 0, "put r3");
    CHECK(tsl_spool_put(&sp, "r4", "four", 4, &dropped, &err) == 0 && dropped == 1,
          "past spool_max the oldest is dropped (%u)", dropped);
    CHECK(tsl_spool_oldest(&sp, name, sizeof name, &buf, &n, &err) == 0, "oldest: %s", err.msg);
    CHECK(strstr(name, "-r2.report") && n == 4 && memcmp(buf, "two!", 4) == 0,
          "r1 dropped, r2 the oldest: %s", name);
    free(buf);
    CHECK(tsl_spool_reject(&sp, name, &err) == 0, "reject r2");
    CHECK(tsl_spool_oldest(&sp, name, sizeof name, &buf, &n, &err) == 0 && strstr(name, "-r3."),
          "then r3: %s", name);
    free(buf);
    CHECK(tsl_spool_remove(&sp, name, &err) == 0 && tsl_spool_count(&sp) == 1, "remove r3");
    /* Leftovers of a crash mid-write (.tmp) and rejected files are not reports. */
    char junk[400];
    snprintf(junk, sizeof junk, "%s/0000000000000099-x.report.tmp", dir);
    CHECK(write_text(junk, "half") == 0, "write a .tmp");
    CHECK(tsl_spool_count(&sp) == 1, "a .tmp or .rejected file is not counted");
    CHECK(tsl_spool_put(&sp, "a/b", "x", 1, &dropped, &err) != 0 && strstr(err.msg, "file name"),
          "an id with a slash is refused: %s", err.msg);
    CHECK(tsl_spool_put(&sp, "", "x", 1, &dropped, &err) != 0, "an empty id is refused");
}

static void test_config(const char *root)
{
    tsl_agent_config_t c;
    tsl_err_t err = {0};
    char path[300], tok[300];
    tsl_agent_config_defaults(&c);
    CHECK(c.heartbeat_s == 10 && strcmp(c.backend, "cuda") == 0 && c.profile_at_start, "defaults");
    CHECK(tsl_agent_config_set(&c, "heartbeat", "0", &err) != 0 && strstr(err.msg, "heartbeat_s"),
          "heartbeat 0 refused: %s", err.msg);
    CHECK(tsl_agent_config_set(&c, "node.heartbeat_s", "2", &err) == 0 && c.heartbeat_s == 2,
          "section.key form");
    CHECK(tsl_agent_config_set(&c, "nope", "1", &err) != 0 && strstr(err.msg, "unknown"),
          "unknown key");
    snprintf(tok, sizeof tok, "%s/token", root);
    CHECK(write_text(tok, "  s3cret-token \n") == 0 && chmod(tok, 0644) == 0, "token file");
    snprintf(path, sizeof path, "%s/w.conf", root);
    char text[800];
    snprintf(text, sizeof text,
             "[daemon]\naddress = unix:/x.sock\ntoken_file = %s\n[node]\n"
             "backend = sim\ndevice_file = /dev/null\nname = n1\n[profile]\ninterval_h = 0.5\n"
             "shapes = h=1024,s=1024,a=16  h=2048,s=512,a=16,gated\n",
             tok);
    CHECK(write_text(path, text) == 0, "config file");
    CHECK(tsl_agent_config_load(&c, path, &err) == 0, "load: %s", err.msg);
    CHECK(tsl_agent_config_finish(&c, &err) == -1 && strstr(err.msg, "daemon.token_file") &&
              strstr(err.msg, "open to others (mode 0644)") && strstr(err.msg, "chmod 600"),
          "a token file others can read is refused: %s", err.msg);
    CHECK(chmod(tok, 0600) == 0, "chmod 600");
    CHECK(tsl_agent_config_finish(&c, &err) == 0, "finish: %s", err.msg);
    CHECK(strcmp(c.token, "s3cret-token") == 0, "token read and trimmed: '%s'", c.token);
    char *dump = NULL;
    size_t dlen = 0;
    FILE *f = open_memstream(&dump, &dlen);
    tsl_agent_config_dump(&c, f);
    fclose(f);
    CHECK(!strstr(dump, "s3cret") && strstr(dump, "token = (set, masked)") &&
              strstr(dump, "at_start = yes") && strstr(dump, "backend = sim"),
          "dump, the token masked:\n%s", dump);
    free(dump);
    CHECK(c.profile_interval_h == 0.5 && strcmp(c.node_name, "n1") == 0, "file values");
    tsl_agent_config_set(&c, "profile-shapes", "h=1024,s=1024", &err);
    CHECK(tsl_agent_config_finish(&c, &err) != 0 && strstr(err.msg, "profile.shapes"),
          "a bad shape is a configuration error: %s", err.msg);
    CHECK(write_text(path, "[node]\nbackend = sim\nbogus = 1\n") == 0, "bad file");
    CHECK(tsl_agent_config_load(&c, path, &err) != 0 && strstr(err.msg, ":3:") &&
              strstr(err.msg, "unknown key 'bogus' in section [node] (known: name, backend"),
          "error names the line and the known keys: %s", err.msg);
    CHECK(tsl_agent_config_set(&c, "backend", "rocm", &err) != 0 &&
              strstr(err.msg, "node.backend: 'rocm' is not one of cuda, sim"),
          "backend: %s", err.msg);
    CHECK(tsl_agent_config_set(&c, "profile.quick", "On", &err) == 0 && c.profile_quick &&
              tsl_agent_config_set(&c, "trials", "0", &err) == 0 && !c.trials,
          "bools: yes/no, on/off, 1/0");
    CHECK(tsl_agent_config_set(&c, "log-level", "loud", &err) != 0 && strstr(err.msg, "log.level"),
          "log level: %s", err.msg);
    CHECK(tsl_agent_config_set(&c, "rpc-timeout", "1e1", &err) != 0 &&
              strstr(err.msg, "daemon.rpc_timeout_s"),
          "decimal numbers: %s", err.msg);
    tsl_agent_config_defaults(&c);
    tsl_agent_config_set(&c, "backend", "sim", &err);
    CHECK(tsl_agent_config_finish(&c, &err) != 0 && strstr(err.msg, "device_file"),
          "sim without a device file: %s", err.msg);
    /* node.gpus: indices (or, for cuda, UUIDs), none empty, none twice; "0,0"
     * registered GPU 0 twice on sim, "-1" and "0,,1" passed --check-config and
     * failed at run */
    static const struct {
        const char *backend, *gpus, *want; /* want NULL: accepted */
    } gpus[] = {
        {"sim", "0,1,3", NULL},
        {"sim", "0,0", "node.gpus: GPU 0 is named twice in '0,0'"},
        {"sim", "2,02", "node.gpus: GPU 2 is named twice"},
        {"sim", "-1", "node.gpus: '-1' is not a GPU index (0 to 1023)"},
        {"sim", "0,,1", "node.gpus: an empty entry in '0,,1'"},
        {"sim", "0,", "node.gpus: an empty entry in '0,'"},
        {"sim", "GPU-8a1b", "node.gpus: 'GPU-8a1b' is not a GPU index (0 to 1023)"},
        {"cuda", "GPU-8a1b,MIG-0c2d", NULL},
        {"cuda", "x", "node.gpus: 'x' is not a GPU index (0 to 1023) or a GPU-/MIG- UUID"},
    };
    for (size_t i = 0; i < sizeof gpus / sizeof *gpus; i++) {
        tsl_agent_config_defaults(&c);
        tsl_agent_config_set(&c, "backend", gpus[i].backend, &err);
        tsl_agent_config_set(&c, "device-file", "/dev/null", &err);
        tsl_agent_config_set(&c, "node-name", "n1", &err);
        CHECK(tsl_agent_config_set(&c, "gpus", gpus[i].gpus, &err) == 0, "set gpus %s: %s",
              gpus[i].gpus, err.msg);
        int rc = tsl_agent_config_finish(&c, &err);
        CHECK(gpus[i].want ? rc != 0 && strstr(err.msg, gpus[i].want) != NULL : rc == 0,
              "%s gpus '%s': %s", gpus[i].backend, gpus[i].gpus, rc ? err.msg : "accepted");
    }
}

/* The example node config in deploy/ parses (finish is not run: it names
 * /etc paths that a build machine lacks). */
static void test_example(const char *path)
{
    tsl_agent_config_t c;
    tsl_err_t err = {0};
    tsl_agent_config_defaults(&c);
    CHECK(tsl_agent_config_load(&c, path, &err) == 0, "%s: %s", path, err.msg);
    CHECK(strcmp(c.state_dir, "/var/lib/tessel-worker") == 0 && c.heartbeat_s == 10,
          "example values");
}

int main(int argc, char **argv)
{
    char root[] = "/tmp/tessel-test-agent.XXXXXX";
    if (!mkdtemp(root))
        SKIP_ALL("mkdtemp failed");
    test_backoff();
    test_spool(root);
    test_config(root);
    if (argc > 1)
        test_example(argv[1]);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", root);
    return CHECK_DONE();
}
