/*
 * agent_main.c — `tessel-worker [run]`: the agent's options and --help
 * (defaults < --config file < flags), then the loop (agent.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "log.h"
#include "rpc_client.h"

#ifndef TSL_VERSION
#define TSL_VERSION "0"
#endif

#define EXIT_RUNTIME 1
#define EXIT_CONFIG  2

static void usage(FILE *out)
{
    fputs("NAME\n"
          "  tessel-worker - the Tessel node agent: registers this node's GPUs with tesseld,\n"
          "  heartbeats, measures GPU profiles and reports them\n\n"
          "SYNOPSIS\n"
          "  tessel-worker [run] [--config FILE] [--KEY VALUE ...]\n"
          "  tessel-worker [run] --check-config [--config FILE] [--KEY VALUE ...]\n"
          "  tessel-worker profile ...      measure once and print (see tessel-worker profile "
          "--help)\n"
          "  tessel-worker --help | --version\n\n"
          "DESCRIPTION\n"
          "  One tessel-worker runs on each GPU node, normally under systemd\n"
          "  (tessel-worker.service, Type=notify). It finds the node's GPUs through its\n"
          "  backend — cuda for the real devices, sim for a device description file —\n"
          "  and registers them with tesseld (Registry.RegisterWorker). The daemon\n"
          "  derives the worker's id from the node name and the GPU UUIDs, so a\n"
          "  restarted worker gets its identity back. READY=1 goes to systemd once the\n"
          "  first registration succeeded.\n\n"
          "  It then heartbeats every heartbeat_s seconds; tesseld shows it offline after\n"
          "  three missed heartbeats (the daemon's worker_timeout_s) and online again at\n"
          "  the next one. Profiles are measured at start, every profile.interval_h and on\n"
          "  SIGUSR1; each is written to the spool (state_dir/spool) first and removed\n"
          "  only once tesseld acknowledged it, so measurements survive an unreachable\n"
          "  daemon and restarts. When tesseld cannot be reached, the worker retries\n"
          "  with capped exponential backoff: delay n is uniform in [d/2, d] with\n"
          "  d = min(backoff_cap_s, backoff_base_s * 2^n).\n\n"
          "OPTIONS\n"
          "  --config FILE                INI file read before the flags (flags win)\n"
          "  --check-config, -n           print the effective configuration (the token\n"
          "                               masked), then \"configuration OK\" or the error\n"
          "  --help, -h                   this text\n"
          "  --version                    print the version\n"
          "  Every configuration key is also a flag (--KEY VALUE or --KEY=VALUE):\n",
          out);
    tsl_agent_config_usage(out);
    fputs("\nSIGNALS\n"
          "  SIGTERM, SIGINT  deregister from tesseld (it shows the worker as stopped at\n"
          "                   once), then exit 0\n"
          "  SIGUSR1          measure and report a profile now\n"
          "  SIGHUP           ignored (restart to reload the configuration)\n\n"
          "FILES\n"
          "  /etc/tessel/tessel-worker.conf   the usual --config file\n"
          "  STATE_DIR/spool/*.report         reports not yet acknowledged by tesseld\n"
          "  STATE_DIR/spool/*.rejected       reports tesseld refused (kept for a person)\n\n"
          "EXIT STATUS\n"
          "  0 stopped by a signal, or configuration OK; 1 could not run (no GPUs, the\n"
          "  device file unreadable, the token or the registration refused by tesseld);\n"
          "  2 bad option or configuration.\n\n"
          "EXAMPLES\n"
          "  tessel-worker --config /etc/tessel/tessel-worker.conf\n"
          "  tessel-worker --server unix:/tmp/t.sock --backend sim \\\n"
          "      --device-file deploy/sim/h100-80g.json --state-dir /tmp/w1 --node-name sim-a\n"
          "  kill -USR1 $(pidof tessel-worker)      # profile now\n\n"
          "SEE ALSO\n"
          "  tesseld(8), tesselctl(1) workers, docs/worker.md, docs/api.md\n",
          out);
}

int tsl_agent_main(int argc, char **argv)
{
    tsl_cfg_opts_t o = {0};
    tsl_err_t err = {0};
    tsl_agent_config_t *cfg = calloc(1, sizeof *cfg);
    tsl_log_level_t level;
    int rc = EXIT_CONFIG;
    if (!cfg)
        goto out;
    if (tsl_cfgtab_opts(argc, argv, &o, &err) != 0) {
        fprintf(stderr, "tessel-worker: %s\n", err.msg);
        goto out;
    }
    rc = 0;
    if (o.help || o.version) {
        if (o.help)
            usage(stdout);
        else
            printf("tessel-worker %s\n", TSL_VERSION);
        goto out;
    }
    char addr_err[TSL_ERR_MAX];
    if (tsl_agent_config_from_argv(cfg, &o, argc, argv, &err) != 0) {
        fprintf(stderr, "tessel-worker: %s\n", err.msg);
        rc = EXIT_CONFIG;
    } else if (tsl_rpc_target_check(cfg->server, addr_err, sizeof addr_err) != 0) {
        /* the address as the transport will read it, so that --check-config says
         * what run would fail on (a port past 65535 was dialled modulo 2^16) */
        const char *why = strncmp(addr_err, "server: ", 8) == 0 ? addr_err + 8 : addr_err;
        fprintf(stderr, "tessel-worker: daemon.address: %s\n", why);
        rc = EXIT_CONFIG;
    } else if (o.check) {
        tsl_agent_config_dump(cfg, stdout);
        printf("configuration OK\n");
    } else {
        if (tsl_log_parse_level(cfg->log_level, &level) == 0)
            tsl_log_set_level(level);
        if (tsl_agent_run(cfg, &err) != 0) {
            tsl_log_error("%s", err.msg);
            rc = EXIT_RUNTIME;
        } else {
            tsl_log_info("stopped");
        }
    }
out:
    if (cfg)
        memset(cfg, 0, sizeof *cfg); /* it held the token */
    free(cfg);
    return rc;
}
