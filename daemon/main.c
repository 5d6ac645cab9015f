/*
 * main.c — tesseld: options, start-up order, the signal loop, the stop.
 *
 * Start-up: configuration (defaults < --config file < flags), the lock file
 * next to the unix socket (a second daemon stops here), signals blocked before
 * grpc_init() so every gRPC thread inherits the mask, the store, the gRPC
 * server with its search pool, HTTP when configured, then READY=1 to systemd.
 * This thread then only waits for signals (sigtimedwait), pinging the systemd
 * watchdog in between; SIGTERM/SIGINT start the graceful stop.
 */
#include <grpc/grpc.h>
#ifdef __GLIBC__
#endif
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "cost.h"
#include "http.h"
#include "log.h"
#include "malloc_tune.h"
#include "metrics.h"
#include "server.h"
#include "store.h"

#define EXIT_RUNTIME 1
#define EXIT_CONFIG  2

static void usage(FILE *out)
{
    fputs("NAME\n"
          "  tesseld - the Tessel planning daemon: hybrid-parallel training plans over gRPC\n\n"
          "SYNOPSIS\n"
          "  tesseld [--config FILE] [--KEY VALUE ...]\n"
          "  tesseld --check-config [--config FILE] [--KEY VALUE ...]\n"
          "  tesseld --help | --version\n\n"
          "DESCRIPTION\n"
          "  Serves the tessel.v1.Planner API and grpc.health.v1.Health over gRPC on a\n"
          "  unix socket (and optionally TCP, with TLS when a certificate is set). Plan\n"
          "  searches run on a bounded pool of threads with a bounded queue; finished\n"
          "  plans are kept in SQLite and answered from there for the same request.\n"
          "  Runs in the foreground and logs to stderr (journald under systemd).\n\n"
          "OPTIONS\n"
          "  --config FILE                INI file read before the flags (flags win)\n"
          "  --check-config, -n           print the effective configuration, then\n"
          "                               \"configuration OK\" (exit 0) or the error (exit 2)\n"
          "  --foreground, -f             accepted for compatibility; always the case\n"
          "  --help, -h                   this text\n"
          "  --version                    print the version\n"
          "  Every configuration key is also a flag (--KEY VALUE or --KEY=VALUE):\n",
          out);
    tsl_config_usage(out);
    fputs("\nAUTHENTICATION\n"
          "  With no [tokens] only the unix socket is served and every caller on it is\n"
          "  trusted; guard it with socket_mode and the socket directory. With tokens,\n"
          "  every call needs 'authorization: Bearer TOKEN' metadata: scheduler may\n"
          "  plan and delete, ops may read, worker may use Registry. Health/Check is\n"
          "  always allowed.\n\n"
          "SIGNALS\n"
          "  SIGTERM, SIGINT  stop accepting calls, let running searches finish for\n"
          "                   grace_s seconds, cancel the rest, close the store, exit 0.\n"
          "  SIGHUP           ignored (restart to reload the configuration).\n"
          "  SIGUSR1, SIGUSR2, SIGALRM  ignored (logged); they do not stop tesseld.\n\n"
          "FILES\n"
          "  /etc/tessel/tesseld.conf     the usual --config file\n"
          "  SOCKET.lock                  flock()ed by the running daemon; holds its pid\n"
          "  DATABASE.lock                the same for the database: one daemon per database\n\n"
          "EXIT STATUS\n"
          "  0 stopped by a signal, or configuration OK; 1 could not start (socket in\n"
          "  use, database refused, ...); 2 bad option or configuration.\n\n"
          "EXAMPLES\n"
          "  tesseld --config /etc/tessel/tesseld.conf\n"
          "  tesseld --unix-socket /tmp/t.sock --database /tmp/t.db --pool-size 2\n"
          "  tesseld --check-config --config /etc/tessel/tesseld.conf\n\n"
          "SEE ALSO\n"
          "  tesseld(8), tesselctl(1), tessel-worker(8), docs/operations.md, docs/api.md\n",
          out);
}

static void block_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
    /* Their default action kills the process: a stray kill -USR1 must not. */
    sigaddset(set, SIGUSR1);
    sigaddset(set, SIGUSR2);
    sigaddset(set, SIGALRM);
    pthread_sigmask(SIG_BLOCK, set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* Waits for SIGTERM/SIGINT; pings the systemd watchdog meanwhile. */
static int wait_for_stop(const sigset_t *set)
{
    uint64_t wd_usec = 0;
    bool watchdog = sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec > 0;
    uint64_t tick_usec = watchdog ? wd_usec / 2 : 1000000;
    if (tick_usec > 1000000)
        tick_usec = 1000000;
    struct timespec tick = {(time_t)(tick_usec / 1000000), (long)(tick_usec % 1000000) * 1000};
    for (;;) {
        siginfo_t info;
        int sig = sigtimedwait(set, &info, &tick);
        if (sig == SIGTERM || sig == SIGINT)
            return sig;
        if (sig == SIGHUP)
            tsl_log_info("SIGHUP ignored: restart tesseld to reload its configuration");
        else if (sig > 0)
            tsl_log_info("%s ignored (from pid %ld)", strsignal(sig), (long)info.si_pid);
        if (watchdog)
            sd_notify(0, "WATCHDOG=1");
    }
}

static int http_health(void *ud)
{
    return tsl_server_serving(ud) ? 1 : 0;
}

typedef struct daemon_state {
    tsl_store_t *store;
    tsl_metrics_t *metrics;
    tsl_server_t *server;
    tsl_http_t *http;
    tsl_store_t *http_store; /* read-only, the HTTP thread's */
} daemon_state_t;

static int start(const tsl_config_t *cfg, daemon_state_t *d, tsl_err_t *err)
{
    if (tsl_store_open(cfg->database, &d->store, err) != 0)
        return -1;
    /* Plans an older (or newer) cost model priced are not what this binary
     * answers; unmarked they were listed fresh and served as current. */
    int64_t marked = tsl_store_mark_cost_model(d->store, TSL_COST_MODEL_VERSION, err);
    if (marked < 0)
        return -1;
    if (marked > 0)
        tsl_log_info("%lld cached plan(s) priced by another cost model than this tesseld's "
                     "(version %u) marked stale; the next request for each searches again",
                     (long long)marked, TSL_COST_MODEL_VERSION);
    /* The HTTP thread reads through its own connection: a slow scraper never
     * holds the lock gRPC reads take. */
    if (cfg->http[0] && tsl_store_open_reader(cfg->database, &d->http_store, err) != 0)
        return -1;
    d->metrics = tsl_metrics_new();
    if (d->metrics)
        tsl_metrics_set_plans(d->metrics, tsl_store_count_plans(d->store));
    if (tsl_server_start(cfg, d->store, d->metrics, &d->server, err) != 0)
        return -1;
    if (cfg->http[0] && tsl_http_start(cfg->http, d->metrics, d->http_store, http_health, d->server,
                                       &d->http, err) != 0)
        return -1;
    return 0;
}

static void stop(const tsl_config_t *cfg, daemon_state_t *d)
{
    tsl_server_stop(d->server, cfg->grace_s);
    tsl_http_stop(d->http);
    tsl_server_free(d->server);
    tsl_store_close(d->http_store);
    tsl_store_close(d->store);
    tsl_metrics_free(d->metrics);
}

/* What an operator should hear once at start: nothing here stops tesseld, but
 * each weakens it (docs/operations.md, "Hardening"). */
static void warn_weak_setup(const tsl_config_t *cfg)
{
    uint32_t short_tokens = 0;
    for (uint32_t i = 0; i < cfg->n_tokens; i++)
        short_tokens += strlen(cfg->tokens[i].token) < TSL_CONFIG_MIN_TOKEN_LEN;
    if (short_tokens)
        tsl_log_warnx("tokens: %u of %u shorter than %u characters, which can be guessed; use "
                      "random ones (e.g. openssl rand -hex 16)",
                      short_tokens, cfg->n_tokens, TSL_CONFIG_MIN_TOKEN_LEN);
    if (geteuid() == 0)
        tsl_log_warnx("running as root: tesseld needs no privilege; run it as its own user "
                      "(systemd/tesseld.service does)");
}

static int run(const tsl_config_t *cfg)
{
    tsl_err_t err = {0};
    sigset_t set;
    int lock_fd = -1, db_lock_fd = -1;
    if (tsl_server_lock(cfg, &lock_fd, &err) != 0) {
        tsl_log_error("%s", err.msg);
        return EXIT_RUNTIME;
    }
    /* The socket lock alone lets a second daemon on another socket share the
     * database and fail the first one's trials. */
    if (tsl_store_lock(cfg->database, &db_lock_fd, &err) != 0) {
        tsl_log_error("%s", err.msg);
        if (lock_fd >= 0)
            close(lock_fd);
        return EXIT_RUNTIME;
    }
    warn_weak_setup(cfg);
    block_signals(&set);
    tsl_server_route_grpc_log();
    grpc_init();
    daemon_state_t d = {0};
    int rc = EXIT_RUNTIME;
    if (start(cfg, &d, &err) != 0) {
        tsl_log_error("%s", err.msg);
    } else {
        tsl_log_info("tesseld %s ready: %s; database %s; http %s", TSL_VERSION,
                     tsl_server_listening(d.server), cfg->database,
                     cfg->http[0] ? cfg->http : "off");
        sd_notifyf(0, "READY=1\nSTATUS=serving on %s", tsl_server_listening(d.server));
        int sig = wait_for_stop(&set);
        tsl_log_info("%s: stopping (grace %.1f s)", strsignal(sig), cfg->grace_s);
        sd_notify(0, "STOPPING=1");
        rc = 0;
    }
    stop(cfg, &d);
    grpc_shutdown();
    if (lock_fd >= 0)
        close(lock_fd);
    close(db_lock_fd);
    if (rc == 0)
        tsl_log_info("stopped");
    return rc;
}

/* --help, --version, --check-config, or bad options: the exit status; -1 to run. */
static int before_run(int argc, char **argv, tsl_config_t *cfg)
{
    tsl_cfg_opts_t o = {0};
    tsl_err_t err = {0};
    if (tsl_cfgtab_opts(argc, argv, &o, &err) != 0) {
        fprintf(stderr, "tesseld: %s\n", err.msg);
        return EXIT_CONFIG;
    }
    if (o.help) {
        usage(stdout);
        return 0;
    }
    if (o.version) {
        printf("tesseld %s\n", TSL_VERSION);
        return 0;
    }
    if (tsl_config_from_argv(cfg, &o, argc, argv, &err) != 0) {
        fprintf(stderr, "tesseld: %s\n", err.msg);
        return EXIT_CONFIG;
    }
    if (o.check && tsl_server_check_tls(cfg, &err) != 0) {
        fprintf(stderr, "tesseld: %s\n", err.msg);
        return EXIT_CONFIG;
    }
    if (o.check) {
        tsl_config_dump(cfg, stdout);
        printf("configuration OK\n");
        return 0;
    }
    return -1;
}

/*
 * A search allocates tens of MB (DP tables, the 750 KB result) on its pool
 * thread's malloc arena and frees them when it ends. glibc's default
 * thresholds adapt upwards after such frees (up to 32 MB mmap / 64 MB trim),
 * after which a non-main arena keeps all of that resident for good and
 * malloc_trim() does not reach it: each search thread pinned ~20 MB. Fixed
 * thresholds (tsl_malloc_tune, common/malloc_tune.h) keep large blocks in mmap
 * and trim arena tops, so the daemon goes back to its idle size after a search.
 * An operator's own GLIBC_TUNABLES / MALLOC_*_ wins.
 */
int main(int argc, char **argv)
{
    tsl_malloc_tune();
    tsl_config_t *cfg = calloc(1, sizeof *cfg);
    if (!cfg) {
        fprintf(stderr, "tesseld: out of memory\n");
        return EXIT_RUNTIME;
    }
    int rc = before_run(argc, argv, cfg);
    if (rc < 0) {
        tsl_log_level_t level;
        if (tsl_log_parse_level(cfg->log_level, &level) == 0)
            tsl_log_set_level(level);
        rc = run(cfg);
    }
    memset(cfg, 0, sizeof *cfg); /* it held the tokens */
    free(cfg);
    return rc;
}
