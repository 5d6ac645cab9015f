/*
 * agent_config.c — tessel-worker's configuration (agent.h): one table serves the
 * INI file (inih), the flags, --help and --check-config, as tesseld's does, so
 * that a key can never be known to one and not the other.
 */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "log.h"
#include "prof.h"

typedef enum { AC_STRING, AC_UINT, AC_DOUBLE, AC_BOOL } ac_type_t;

typedef struct ac_entry {
    const char *section, *key, *flag, *metavar;
    ac_type_t type;
    size_t offset, size;
    const char *def;
    double min, max; /* numbers: bounds; strings: longest length */
    const char *help;
} ac_entry_t;

#define F(field) offsetof(tsl_agent_config_t, field), sizeof(((tsl_agent_config_t *)0)->field)

/* The sections and keys of deploy/tessel-worker.conf: [daemon] how to reach tesseld,
 * [node] what this node is, [profile] when and what to measure, [trials] how trial
 * ranks run here. */
static const ac_entry_t TABLE[] = {
    {"daemon", "address", "server", "ADDR", AC_STRING, F(server), "unix:/run/tessel/tesseld.sock",
     1, 255, "tesseld address: unix:/path or host:port"},
    {"daemon", "token", "token", "TOKEN", AC_STRING, F(token), "", 0, 127,
     "bearer token of role worker (prefer token_file: argv is visible to all)"},
    {"daemon", "token_file", "token-file", "FILE", AC_STRING, F(token_file), "", 0, 255,
     "file holding the token (first line)"},
    {"daemon", "rpc_timeout_s", "rpc-timeout", "SECONDS", AC_DOUBLE, F(rpc_timeout_s), "10", 0.1,
     300, "deadline of each call to tesseld"},
    {"daemon", "backoff_base_s", "backoff-base", "SECONDS", AC_DOUBLE, F(backoff_base_s), "1", 0.01,
     3600, "first reconnect delay; doubles per failure, with jitter"},
    {"daemon", "backoff_cap_s", "backoff-cap", "SECONDS", AC_DOUBLE, F(backoff_cap_s), "60", 0.01,
     86400, "longest reconnect delay"},
    {"daemon", "spool_max", "spool-max", "N", AC_UINT, F(spool_max), "64", 1, 100000,
     "reports kept while tesseld is unreachable; the oldest are dropped first"},
    {"node", "name", "node-name", "NAME", AC_STRING, F(node_name), "", 0, 127,
     "node name the worker registers as; \"\" = the hostname"},
    {"node", "backend", "backend", "cuda|sim", AC_STRING, F(backend), "cuda", 3, 4,
     "cuda: the real GPUs; sim: a device file, every figure marked simulated"},
    {"node", "device_file", "device-file", "FILE", AC_STRING, F(device_file), "", 0, 255,
     "sim: the device description (deploy/sim/*.json, docs/profile-format.md)"},
    {"node", "gpus", "gpus", "LIST", AC_STRING, F(gpus), "", 0, 127,
     "GPU indices to register, e.g. 0,1,3; \"\" = all visible"},
    {"node", "heartbeat_s", "heartbeat", "SECONDS", AC_UINT, F(heartbeat_s), "10", 1, 3600,
     "heartbeat interval (tesseld marks the worker offline after 3 missed)"},
    {"node", "state_dir", "state-dir", "DIR", AC_STRING, F(state_dir), "/var/lib/tessel-worker", 1,
     255, "reports not yet sent wait in DIR/spool"},
    {"profile", "at_start", "profile-at-start", "BOOL", AC_BOOL, F(profile_at_start), "yes", 0, 1,
     "measure a profile at start"},
    {"profile", "interval_h", "profile-interval", "HOURS", AC_DOUBLE, F(profile_interval_h), "0", 0,
     8760, "measure again this often; 0 = only at start and on SIGUSR1"},
    {"profile", "shapes", "profile-shapes", "SHAPES", AC_STRING, F(profile_shapes), "", 0, 255,
     "layer shapes to time, space-separated h=H,s=S,a=A[,d=D][,f=F][,gated]; \"\" = the "
     "profiler's"},
    {"profile", "micro_batches", "profile-mb", "LIST", AC_STRING, F(profile_mb), "", 0, 63,
     "micro-batch sizes, e.g. 1,2,4,8,16; \"\" = the profiler's"},
    {"profile", "tp", "profile-tp", "LIST", AC_STRING, F(profile_tp), "", 0, 63,
     "TP splits, e.g. 1,2,4,8; \"\" = the profiler's"},
    {"profile", "quick", "profile-quick", "BOOL", AC_BOOL, F(profile_quick), "no", 0, 1,
     "fewer micro-batch sizes and TP splits, shorter loops"},
    {"trials", "enabled", "trials", "BOOL", AC_BOOL, F(trials), "yes", 0, 1,
     "take trial assignments (run plan ranks with the stage executor)"},
    {"trials", "address", "trial-address", "ADDR", AC_STRING, F(trial_address), "", 0, 127,
     "tcp trials: the address rank 0 listens on and tells the others; \"\" = the node name"},
    {"trials", "port", "trial-port", "PORT", AC_UINT, F(trial_port), "29500", 1, 65000,
     "tcp trials: rank 0's port; rank r listens on PORT + r"},
    {"trials", "max_runtime_s", "trial-max-runtime", "SECONDS", AC_DOUBLE, F(trial_max_s), "3600",
     1, 604800, "a rank is killed (and reported failed) past this or the trial's timeout"},
    {"trials", "memory_gib", "trial-memory", "GIB", AC_DOUBLE, F(trial_memory_gib), "0", 0, 1048576,
     "cpu device ops (sim): the memory a rank may use; 0 = its device's (device file)"},
    {"trials", "poll_s", "trial-poll", "SECONDS", AC_UINT, F(trial_poll_s), "20", 1, 60,
     "how long one Assignments long poll waits for work"},
    {"log", "level", "log-level", "LEVEL", AC_STRING, F(log_level), "info", 4, 5,
     "error | warn | info | debug"},
};

#define N_ENTRIES (sizeof TABLE / sizeof TABLE[0])

static int parse_bool(const char *v, bool *out)
{
    static const char *const yes[] = {"1", "yes", "true", "on"}, *const no[] = {"0", "no", "false",
                                                                                "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0 || strcasecmp(v, no[i]) == 0) {
            *out = strcasecmp(v, yes[i]) == 0;
            return 0;
        }
    }
    return -1;
}

static int set_entry(tsl_agent_config_t *c, const ac_entry_t *e, const char *v, tsl_err_t *err)
{
    void *field = (char *)c + e->offset;
    char *end = NULL;
    double d;
    switch (e->type) {
    case AC_STRING:
        if ((double)strlen(v) > e->max || (double)strlen(v) < e->min)
            return tsl_err_set(err, "%s.%s: '%.40s' must be %.0f to %.0f characters", e->section,
                               e->key, v, e->min, e->max);
        memcpy(field, v, strlen(v) + 1);
        return 0;
    case AC_BOOL:
        if (parse_bool(v, field) != 0)
            return tsl_err_set(err, "%s.%s: '%s' is not yes/no", e->section, e->key, v);
        return 0;
    default:
        errno = 0;
        d = strtod(v, &end);
        if (end == v || *end || errno || !isfinite(d) || (e->type == AC_UINT && d != floor(d)))
            return tsl_err_set(err, "%s.%s: '%s' is not %s", e->section, e->key, v,
                               e->type == AC_UINT ? "a whole number" : "a number");
        if (d < e->min || d > e->max)
            return tsl_err_set(err, "%s.%s: %s is out of range [%g, %g]", e->section, e->key, v,
                               e->min, e->max);
        if (e->type == AC_UINT)
            *(uint32_t *)field = (uint32_t)d;
        else
            *(double *)field = d;
        return 0;
    }
}

void tsl_agent_config_defaults(tsl_agent_config_t *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < N_ENTRIES; i++)
        if (set_entry(c, &TABLE[i], TABLE[i].def, NULL) != 0)
            tsl_fatalx("tessel-worker: default of %s.%s is invalid", TABLE[i].section,
                       TABLE[i].key);
}

int tsl_agent_config_set(tsl_agent_config_t *c, const char *key, const char *value, tsl_err_t *err)
{
    const char *dot = strchr(key, '.');
    for (size_t i = 0; i < N_ENTRIES; i++) {
        const ac_entry_t *e = &TABLE[i];
        bool hit = dot ? strncmp(key, e->section, (size_t)(dot - key)) == 0 &&
                             e->section[dot - key] == '\0' && strcmp(dot + 1, e->key) == 0
                       : strcmp(key, e->flag) == 0;
        if (hit)
            return set_entry(c, e, value, err);
    }
    return tsl_err_set(err, "unknown option '%s' (see tessel-worker --help)", key);
}

typedef struct ini_ctx {
    tsl_agent_config_t work;
    tsl_err_t err;
    bool failed;
} ini_ctx_t;

static int on_ini(void *user, const char *section, const char *name, const char *value)
{
    ini_ctx_t *x = user;
    char key[96];
    if (x->failed)
        return 0;
    snprintf(key, sizeof key, "%s.%s", section, name);
    if (tsl_agent_config_set(&x->work, key, value, &x->err) == 0)
        return 1;
    x->failed = true;
    return 0;
}

int tsl_agent_config_load(tsl_agent_config_t *c, const char *path, tsl_err_t *err)
{
    ini_ctx_t *x = calloc(1, sizeof *x);
    if (!x)
        return tsl_err_setc(err, TSL_E_NOMEM, "%s: out of memory", path);
    x->work = *c;
    int line = ini_parse(path, on_ini, x), rc = -1;
    if (line < 0)
        tsl_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    else if (x->failed)
        tsl_err_set(err, "%s:%d: %s", path, line, x->err.msg);
    else if (line > 0)
        tsl_err_set(err, "%s:%d: syntax error: expected '[section]', 'key = value' or a comment",
                    path, line);
    else {
        *c = x->work;
        rc = 0;
    }
    memset(x, 0, sizeof *x); /* it held the token */
    free(x);
    return rc;
}

/* The first line of the token file, without surrounding blanks. */
static int read_token_file(tsl_agent_config_t *c, tsl_err_t *err)
{
    FILE *f = fopen(c->token_file, "r");
    char line[sizeof c->token + 2] = "";
    if (!f)
        return tsl_err_set(err, "daemon.token_file: cannot open '%s': %s", c->token_file,
                           strerror(errno));
    bool got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    size_t n = got ? strlen(line) : 0;
    while (n && isspace((unsigned char)line[n - 1]))
        line[--n] = '\0';
    char *p = line;
    while (*p && isspace((unsigned char)*p))
        p++;
    if (!*p || strlen(p) >= sizeof c->token)
        return tsl_err_set(err,
                           "daemon.token_file: '%s' holds no token on its first line (or "
                           "one over %zu characters)",
                           c->token_file, sizeof c->token - 1);
    snprintf(c->token, sizeof c->token, "%s", p);
    memset(line, 0, sizeof line);
    return 0;
}

/* Space-separated shapes into o (at most TSL_PROF_MAX_SHAPES). */
static int parse_shapes(const char *text, struct tsl_prof_opts *o, tsl_err_t *err)
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", text);
    o->n_shapes = 0;
    for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        if (o->n_shapes == TSL_PROF_MAX_SHAPES)
            return tsl_err_set(err, "profile.shapes: more than %u shapes", TSL_PROF_MAX_SHAPES);
        if (tsl_prof_parse_shape(tok, &o->shapes[o->n_shapes++], err) != 0)
            return tsl_err_prefix(err, "profile.shapes");
    }
    return 0;
}

int tsl_agent_prof_opts(const tsl_agent_config_t *cfg, bool quick, struct tsl_prof_opts *o,
                        tsl_err_t *err)
{
    tsl_prof_opts_default(o, quick);
    o->device_file = cfg->device_file[0] ? cfg->device_file : NULL;
    if (cfg->profile_shapes[0] && parse_shapes(cfg->profile_shapes, o, err) != 0)
        return -1;
    if (cfg->profile_mb[0] &&
        tsl_prof_parse_list(cfg->profile_mb, o->mb, &o->n_mb, "profile.micro_batches", err) != 0)
        return -1;
    if (cfg->profile_tp[0] &&
        tsl_prof_parse_list(cfg->profile_tp, o->tp, &o->n_tp, "profile.tp", err) != 0)
        return -1;
    return 0;
}

int tsl_agent_config_finish(tsl_agent_config_t *c, tsl_err_t *err)
{
    tsl_prof_opts_t o;
    tsl_log_level_t lvl;
    if (strcmp(c->backend, "sim") != 0 && strcmp(c->backend, "cuda") != 0)
        return tsl_err_set(err, "node.backend: '%s' is not cuda or sim", c->backend);
    if (strcmp(c->backend, "sim") == 0 && !c->device_file[0])
        return tsl_err_set(err, "node.device_file: the sim backend needs a device file "
                                "(--device-file FILE; see docs/worker.md)");
    if (tsl_log_parse_level(c->log_level, &lvl) != 0)
        return tsl_err_set(err, "log.level: '%s' is not error, warn, info or debug", c->log_level);
    if (c->backoff_cap_s < c->backoff_base_s)
        return tsl_err_set(err, "daemon.backoff_cap_s: %g is below backoff_base_s %g",
                           c->backoff_cap_s, c->backoff_base_s);
    if (tsl_agent_prof_opts(c, c->profile_quick, &o, err) != 0)
        return -1;
    if (c->token[0] && c->token_file[0])
        return tsl_err_set(err, "daemon.token and daemon.token_file: give one, not both");
    if (c->token_file[0] && read_token_file(c, err) != 0)
        return -1;
    if (!c->node_name[0] && gethostname(c->node_name, sizeof c->node_name - 1) != 0)
        return tsl_err_set(err, "node.name: not set and gethostname failed: %s", strerror(errno));
    return 0;
}

void tsl_agent_config_usage(FILE *out)
{
    for (size_t i = 0; i < N_ENTRIES; i++) {
        const ac_entry_t *e = &TABLE[i];
        char lhs[64];
        snprintf(lhs, sizeof lhs, "--%s %s", e->flag, e->metavar);
        fprintf(out, "  %-26s %s\n  %-26s [%s] %s, default %s\n", lhs, e->help, "", e->section,
                e->key, e->def[0] ? e->def : "\"\"");
    }
}

void tsl_agent_config_dump(const tsl_agent_config_t *c, FILE *out)
{
    const char *section = "";
    for (size_t i = 0; i < N_ENTRIES; i++) {
        const ac_entry_t *e = &TABLE[i];
        const void *field = (const char *)c + e->offset;
        if (strcmp(section, e->section) != 0) {
            fprintf(out, "%s[%s]\n", section[0] ? "\n" : "", e->section);
            section = e->section;
        }
        fprintf(out, "%s = ", e->key);
        if (field == c->token)
            fprintf(out, "%s\n", c->token[0] ? "(set, masked)" : "");
        else if (e->type == AC_STRING)
            fprintf(out, "%s\n", (const char *)field);
        else if (e->type == AC_BOOL)
            fprintf(out, "%s\n", *(const bool *)field ? "yes" : "no");
        else if (e->type == AC_UINT)
            fprintf(out, "%u\n", *(const uint32_t *)field);
        else
            fprintf(out, "%g\n", *(const double *)field);
    }
}
