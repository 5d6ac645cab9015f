/*
 * agent_config.c — tessel-worker's configuration (agent.h): the table of its keys
 * for common/cfgtab.h, which reads the INI file and the flags and writes --help
 * and --check-config from it, as it does tesseld's, so that a key can never be
 * known to one and not the other. What is the worker's own stays here: the
 * token file, the profiler's options parsed, the cross-field checks.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "cfgtab.h"
#include "prof.h"

#define F(field) TSL_CFG_AT(tsl_agent_config_t, field)

/* The sections and keys of deploy/tessel-worker.conf: [daemon] how to reach tesseld,
 * [node] what this node is, [profile] when and what to measure, [trials] how trial
 * ranks run here. */
static const tsl_cfg_key_t KEYS[] = {
    {"daemon", "address", "server", "ADDR", TSL_CFG_STRING, F(server),
     "unix:/run/tessel/tesseld.sock", 1, 255, NULL, 0, "tesseld address: unix:/path or host:port"},
    {"daemon", "token", "token", "TOKEN", TSL_CFG_STRING, F(token), "", 0, 127, NULL,
     TSL_CFG_SECRET, "bearer token of role worker (prefer token_file: argv is visible to all)"},
    {"daemon", "token_file", "token-file", "FILE", TSL_CFG_STRING, F(token_file), "", 0, 255, NULL,
     0, "file holding the token (first line)"},
    {"daemon", "tls", "tls", "BOOL", TSL_CFG_BOOL, F(tls), "no", 0, 1, NULL, 0,
     "TLS to a host:port address, verifying tesseld's certificate (implied by ca_file)"},
    {"daemon", "ca_file", "ca-file", "FILE", TSL_CFG_STRING, F(ca_file), "", 0, 255, NULL, 0,
     "PEM CA that signed tesseld's certificate; \"\" = the system roots"},
    {"daemon", "cert_file", "cert-file", "FILE", TSL_CFG_STRING, F(cert_file), "", 0, 255, NULL, 0,
     "PEM node certificate for mutual TLS (tesseld's tls_client_ca), with key_file"},
    {"daemon", "key_file", "key-file", "FILE", TSL_CFG_STRING, F(key_file), "", 0, 255, NULL, 0,
     "PEM private key of cert_file"},
    {"daemon", "rpc_timeout_s", "rpc-timeout", "SECONDS", TSL_CFG_DOUBLE, F(rpc_timeout_s), "10",
     0.1, 300, NULL, 0, "deadline of each call to tesseld"},
    {"daemon", "backoff_base_s", "backoff-base", "SECONDS", TSL_CFG_DOUBLE, F(backoff_base_s), "1",
     0.01, 3600, NULL, 0, "first reconnect delay; doubles per failure, with jitter"},
    {"daemon", "backoff_cap_s", "backoff-cap", "SECONDS", TSL_CFG_DOUBLE, F(backoff_cap_s), "60",
     0.01, 86400, NULL, 0, "longest reconnect delay"},
    {"daemon", "spool_max", "spool-max", "N", TSL_CFG_UINT, F(spool_max), "64", 1, 100000, NULL, 0,
     "reports kept while tesseld is unreachable; the oldest are dropped first"},
    {"node", "name", "node-name", "NAME", TSL_CFG_STRING, F(node_name), "", 0, 127, NULL, 0,
     "node name the worker registers as; \"\" = the hostname"},
    {"node", "backend", "backend", "cuda|sim", TSL_CFG_ENUM, F(backend), "cuda", 0, 7, "cuda|sim",
     0, "cuda: the real GPUs; sim: a device file, every figure marked simulated"},
    {"node", "device_file", "device-file", "FILE", TSL_CFG_STRING, F(device_file), "", 0, 255, NULL,
     0, "sim: the device description (deploy/sim/*.json, docs/profile-format.md)"},
    {"node", "gpus", "gpus", "LIST", TSL_CFG_STRING, F(gpus), "", 0, 127, NULL, 0,
     "GPU indices to register, e.g. 0,1,3; \"\" = all visible"},
    {"node", "heartbeat_s", "heartbeat", "SECONDS", TSL_CFG_UINT, F(heartbeat_s), "10", 1, 3600,
     NULL, 0, "heartbeat interval (tesseld marks the worker offline after 3 missed)"},
    {"node", "state_dir", "state-dir", "DIR", TSL_CFG_STRING, F(state_dir),
     "/var/lib/tessel-worker", 1, 255, NULL, 0, "reports not yet sent wait in DIR/spool"},
    {"profile", "at_start", "profile-at-start", "BOOL", TSL_CFG_BOOL, F(profile_at_start), "yes", 0,
     1, NULL, 0, "measure a profile at start"},
    {"profile", "interval_h", "profile-interval", "HOURS", TSL_CFG_DOUBLE, F(profile_interval_h),
     "0", 0, 8760, NULL, 0, "measure again this often; 0 = only at start and on SIGUSR1"},
    {"profile", "shapes", "profile-shapes", "SHAPES", TSL_CFG_STRING, F(profile_shapes), "", 0, 255,
     NULL, 0,
     "layer shapes to time, space-separated h=H,s=S,a=A[,d=D][,f=F][,gated]; \"\" = the "
     "profiler's"},
    {"profile", "micro_batches", "profile-mb", "LIST", TSL_CFG_STRING, F(profile_mb), "", 0, 63,
     NULL, 0, "micro-batch sizes, e.g. 1,2,4,8,16; \"\" = the profiler's"},
    {"profile", "tp", "profile-tp", "LIST", TSL_CFG_STRING, F(profile_tp), "", 0, 63, NULL, 0,
     "TP splits, e.g. 1,2,4,8; \"\" = the profiler's"},
    {"profile", "quick", "profile-quick", "BOOL", TSL_CFG_BOOL, F(profile_quick), "no", 0, 1, NULL,
     0, "fewer micro-batch sizes and TP splits, shorter loops"},
    {"trials", "enabled", "trials", "BOOL", TSL_CFG_BOOL, F(trials), "yes", 0, 1, NULL, 0,
     "take trial assignments (run plan ranks with the stage executor)"},
    {"trials", "address", "trial-address", "ADDR", TSL_CFG_STRING, F(trial_address), "", 0, 127,
     NULL, 0,
     "tcp trials: the address rank 0 listens on and tells the others; \"\" = the node name"},
    {"trials", "port", "trial-port", "PORT", TSL_CFG_UINT, F(trial_port), "29500", 1, 65000, NULL,
     0, "tcp trials: rank 0's port; rank r listens on PORT + r"},
    {"trials", "max_runtime_s", "trial-max-runtime", "SECONDS", TSL_CFG_DOUBLE, F(trial_max_s),
     "3600", 1, 604800, NULL, 0,
     "a rank is killed (and reported failed) past this or the trial's timeout"},
    {"trials", "memory_gib", "trial-memory", "GIB", TSL_CFG_DOUBLE, F(trial_memory_gib), "0", 0,
     1048576, NULL, 0,
     "cpu device ops (sim): the memory a rank may use; 0 = its device's (device file)"},
    {"trials", "poll_s", "trial-poll", "SECONDS", TSL_CFG_UINT, F(trial_poll_s), "20", 1, 60, NULL,
     0, "how long one Assignments long poll waits for work"},
    {"log", "level", "log-level", "LEVEL", TSL_CFG_LEVEL, F(log_level), "info", 0, 15, NULL, 0,
     "error | warn | info | debug"},
};

/* Bools are yes/no here (true/false, on/off, 1/0 too), as the example file writes them. */
static const tsl_cfgtab_t TABLE = {
    .program = "tessel-worker",
    .obj_size = sizeof(tsl_agent_config_t),
    .keys = KEYS,
    .n_keys = sizeof KEYS / sizeof KEYS[0],
    .flags = TSL_CFGTAB_YESNO,
};

void tsl_agent_config_defaults(tsl_agent_config_t *c)
{
    tsl_cfgtab_defaults(&TABLE, c);
}

int tsl_agent_config_set(tsl_agent_config_t *c, const char *key, const char *value, tsl_err_t *err)
{
    return tsl_cfgtab_set(&TABLE, c, key, value, err);
}

int tsl_agent_config_load(tsl_agent_config_t *c, const char *path, tsl_err_t *err)
{
    return tsl_cfgtab_load(&TABLE, c, path, err);
}

void tsl_agent_config_usage(FILE *out)
{
    tsl_cfgtab_usage(&TABLE, out);
}

void tsl_agent_config_dump(const tsl_agent_config_t *c, FILE *out)
{
    tsl_cfgtab_dump(&TABLE, c, out);
}

/* The first line of the token file, without surrounding blanks. */
static int read_token_file(tsl_agent_config_t *c, tsl_err_t *err)
{
    FILE *f = fopen(c->token_file, "r");
    char line[sizeof c->token + 2] = "";
    struct stat st;
    if (!f)
        return tsl_err_set(err, "daemon.token_file: cannot open '%s': %s", c->token_file,
                           strerror(errno));
    /* the token is a credential: as ssh treats a private key, a file any user
     * can read (or its group change) is refused rather than used; the group
     * may read it (docs/worker.md installs it root:tessel-worker 0640) */
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 027)) {
        fclose(f);
        return tsl_err_set(err,
                           "daemon.token_file: '%s' is open to others (mode %04o); the token "
                           "is a credential: chmod 600 (or 0640 for the worker's group) '%s'",
                           c->token_file, (unsigned)(st.st_mode & 07777), c->token_file);
    }
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
    return tsl_prof_opts_check(o, "profile.micro_batches", "profile.tp", err);
}

/* node.gpus: comma-separated GPU indices (0..1023), or for cuda the GPU-/MIG-
 * UUIDs CUDA_VISIBLE_DEVICES also takes; none empty, none twice. An entry that
 * is none of those passed --check-config and failed at run ("selects none"), and
 * "0,0" registered GPU 0 twice on the sim backend. */
static int check_gpus(const char *list, bool cuda, tsl_err_t *err)
{
    char seen[TSL_AGENT_MAX_DEVICES][64];
    uint32_t n = 0;
    for (const char *p = list; *list;) {
        size_t len = strcspn(p, ",");
        char item[64];
        if (len == 0)
            return tsl_err_set(err, "node.gpus: an empty entry in '%s'", list);
        if (len >= sizeof item)
            return tsl_err_set(err, "node.gpus: an entry of '%s' is over %zu characters", list,
                               sizeof item - 1);
        memcpy(item, p, len);
        item[len] = '\0';
        size_t digits = strspn(item, "0123456789");
        bool index = digits == len && len <= 4 && atoi(item) < 1024;
        bool uuid = cuda && (strncmp(item, "GPU-", 4) == 0 || strncmp(item, "MIG-", 4) == 0);
        if (!index && !uuid)
            return tsl_err_set(err, "node.gpus: '%s' is not a GPU index (0 to 1023)%s", item,
                               cuda ? " or a GPU-/MIG- UUID" : "");
        if (index) /* "01" and "1" name one GPU */
            snprintf(item, sizeof item, "%d", atoi(item));
        for (uint32_t i = 0; i < n; i++)
            if (strcmp(seen[i], item) == 0)
                return tsl_err_set(err, "node.gpus: GPU %s is named twice in '%s'", item, list);
        if (n == sizeof seen / sizeof *seen)
            return tsl_err_set(err, "node.gpus: more than %zu GPUs in '%s'",
                               sizeof seen / sizeof *seen, list);
        snprintf(seen[n++], sizeof *seen, "%s", item);
        if (p[len] == '\0')
            break;
        p += len + 1;
        if (*p == '\0')
            return tsl_err_set(err, "node.gpus: an empty entry in '%s'", list);
    }
    return 0;
}

int tsl_agent_config_finish(tsl_agent_config_t *c, tsl_err_t *err)
{
    tsl_prof_opts_t o;
    if (strcmp(c->backend, "sim") == 0 && !c->device_file[0])
        return tsl_err_set(err, "node.device_file: the sim backend needs a device file "
                                "(--device-file FILE; see docs/worker.md)");
    if (c->backoff_cap_s < c->backoff_base_s)
        return tsl_err_set(err, "daemon.backoff_cap_s: %g is below backoff_base_s %g",
                           c->backoff_cap_s, c->backoff_base_s);
    if (tsl_agent_prof_opts(c, c->profile_quick, &o, err) != 0)
        return -1;
    if (check_gpus(c->gpus, strcmp(c->backend, "cuda") == 0, err) != 0)
        return -1;
    if (c->token[0] && c->token_file[0])
        return tsl_err_set(err, "daemon.token and daemon.token_file: give one, not both");
    if (c->token_file[0] && read_token_file(c, err) != 0)
        return -1;
    if (!c->cert_file[0] != !c->key_file[0])
        return tsl_err_set(err, "daemon.%s: needs %s too (the node certificate and its key)",
                           c->cert_file[0] ? "cert_file" : "key_file",
                           c->cert_file[0] ? "key_file" : "cert_file");
    c->tls = c->tls || c->ca_file[0] || c->cert_file[0];
    if (c->tls && (c->server[0] == '/' || strncmp(c->server, "unix:", 5) == 0))
        return tsl_err_set(err,
                           "daemon.address: TLS (tls, ca_file, cert_file) needs a "
                           "host:port address, not '%s'",
                           c->server);
    if (!c->node_name[0] && gethostname(c->node_name, sizeof c->node_name - 1) != 0)
        return tsl_err_set(err, "node.name: not set and gethostname failed: %s", strerror(errno));
    return 0;
}

int tsl_agent_config_from_argv(tsl_agent_config_t *c, const tsl_cfg_opts_t *o, int argc,
                               char **argv, tsl_err_t *err)
{
    if (tsl_cfgtab_from_argv(&TABLE, c, o, argc, argv, NULL, err) != 0)
        return -1;
    return tsl_agent_config_finish(c, err);
}
