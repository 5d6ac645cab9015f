/*
 * agent.h — tessel-worker's agent: the per-node process that registers its GPUs
 * with tesseld, heartbeats, measures profiles and reports them.
 *
 * Modules (one file each):
 *   agent_config.c   configuration: its table of keys (common/cfgtab.h) serves the INI
 *                    file, the flags, --help and --check-config
 *   agent_backoff.c  capped exponential backoff with jitter (pure arithmetic)
 *   agent_spool.c    reports waiting to be sent: one file each under state_dir/spool
 *   agent_measure.c  what the node has and what it measures (worker/profile/ backends)
 *   agent_rpc.c      every RPC the agent makes — the only file that knows the wire
 *   agent_poll.c     the Registry.Assignments long poll, on its own thread
 *   agent_trial.c    one trial rank as a child process: fork, its pipe, its end
 *   agent_trial_run.c  the child's side: the rank run by the stage executor
 *   agent_trial_link.c the child's side of a link probe (kind "link"), and its rows
 *                      as a profile report
 *   agent_trials.c   the ranks on the loop: rendezvous, timeouts, cancel, reports
 *   agent.c          the libevent loop: timers, signals (signalfd), reconnects
 *
 * Units: seconds (double or uint32 _s), bytes, bytes/s. Every fallible function
 * returns 0 / -1 and fills a tsl_err_t.
 */
#ifndef TSL_AGENT_H
#define TSL_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cfgtab.h"
#include "err.h"

#define TSL_AGENT_MAX_DEVICES 64u
#define TSL_AGENT_MAX_LABELS  8u

/* ---- configuration (agent_config.c) -------------------------------------------------------- */

typedef struct tsl_agent_config {
    char server[256]; /* tesseld address: unix:/path or host:port */
    char token[128];  /* bearer token ("" = none); or read from token_file */
    char token_file[256];
    bool tls;            /* TLS to a host:port address (implied by ca_file/cert_file) */
    char ca_file[256];   /* PEM CA tesseld's certificate must chain to; "" = system roots */
    char cert_file[256]; /* PEM node certificate for mutual TLS (with key_file) */
    char key_file[256];
    char node_name[128];   /* "" = hostname */
    char backend[8];       /* "sim" | "cuda" */
    char device_file[256]; /* sim: the device description */
    char gpus[128];        /* "" = all visible; else "0,2,3" */
    char state_dir[256];   /* the spool lives here */
    uint32_t heartbeat_s;
    bool profile_at_start;
    double profile_interval_h; /* 0 = at start only (and on SIGUSR1) */
    char profile_shapes[256];  /* "" = the profiler's defaults; else space-separated */
    char profile_mb[64], profile_tp[64];
    bool profile_quick; /* the profiler's --quick: fewer sizes, shorter loops */
    double rpc_timeout_s;
    double backoff_base_s, backoff_cap_s;
    uint32_t spool_max; /* reports kept at most; the oldest go first */
    char log_level[16];
    bool trials;             /* take trial assignments */
    char trial_address[128]; /* rank 0's tcp rendezvous address; "" = the node name */
    uint32_t trial_port;     /* rank 0's tcp port; rank r listens on trial_port + r */
    double trial_max_s;      /* a rank is killed past this (or the assignment's timeout) */
    double trial_memory_gib; /* cpu device ops' memory; 0 = the device's (sim file) */
    uint32_t trial_poll_s;   /* the Assignments long poll's wait_s */
} tsl_agent_config_t;

void tsl_agent_config_defaults(tsl_agent_config_t *c);
/* An INI file over the current values; errors name file:line and the key. */
int tsl_agent_config_load(tsl_agent_config_t *c, const char *path, tsl_err_t *err);
/* One key by its flag name ("heartbeat") or "section.key"; bounds checked. */
int tsl_agent_config_set(tsl_agent_config_t *c, const char *key, const char *value, tsl_err_t *err);
/* Cross-field checks, the profile options parsed, the token file read, the node
 * name filled from hostname. */
int tsl_agent_config_finish(tsl_agent_config_t *c, tsl_err_t *err);
/* defaults < o->config_file < argv (--KEY VALUE, --KEY=VALUE), then finish. */
int tsl_agent_config_from_argv(tsl_agent_config_t *c, const tsl_cfg_opts_t *o, int argc,
                               char **argv, tsl_err_t *err);
void tsl_agent_config_usage(FILE *out);
void tsl_agent_config_dump(const tsl_agent_config_t *c, FILE *out);

/* ---- backoff (agent_backoff.c) --------------------------------------------------------------- */

/* Delay n (from 0) is drawn uniformly from [d/2, d] with d = min(cap, base·2^n):
 * "equal jitter" — never less than half the ceiling, so a fleet of restarted
 * workers neither hammers the daemon nor waits in lockstep. */
typedef struct tsl_backoff {
    double base_s, cap_s;
    uint32_t attempt;
} tsl_backoff_t;

void tsl_backoff_init(tsl_backoff_t *b, double base_s, double cap_s);
/* The ceiling d of the next delay (without jitter). */
double tsl_backoff_ceiling(const tsl_backoff_t *b);
/* The next delay for a uniform u in [0, 1); counts the attempt. */
double tsl_backoff_next(tsl_backoff_t *b, double u);
void tsl_backoff_reset(tsl_backoff_t *b);

/* ---- spool (agent_spool.c) --------------------------------------------------------------------- */

/* Reports not yet acknowledged by tesseld, one file each, named so that the
 * oldest sorts first: DIR/<16-digit sequence>-<id>.report. Written to a
 * temporary name, fsync'd and renamed, so a crash leaves a whole file or none. */
typedef struct tsl_spool {
    char dir[300];
    uint32_t max_files;
    uint64_t seq; /* next sequence number (past every file found) */
} tsl_spool_t;

/* Creates dir (mode 0700) when missing. */
int tsl_spool_open(tsl_spool_t *sp, const char *dir, uint32_t max_files, tsl_err_t *err);
/* Adds one report; beyond max_files the oldest are dropped (*dropped counts them). */
int tsl_spool_put(tsl_spool_t *sp, const char *id, const void *buf, size_t n, uint32_t *dropped,
                  tsl_err_t *err);
/* The oldest report: 0 (name and malloc'd *buf filled), 1 empty, -1 error. */
int tsl_spool_oldest(tsl_spool_t *sp, char *name, size_t cap, void **buf, size_t *n,
                     tsl_err_t *err);
int tsl_spool_remove(tsl_spool_t *sp, const char *name, tsl_err_t *err);
/* A report the daemon refused for good is kept aside as NAME.rejected. */
int tsl_spool_reject(tsl_spool_t *sp, const char *name, tsl_err_t *err);
uint32_t tsl_spool_count(const tsl_spool_t *sp);

/* ---- the node and its measurements (agent_measure.c) ------------------------------------------ */

typedef struct tsl_agent_device {
    uint32_t index;
    char model[128];
    uint64_t memory_bytes;
    uint32_t sm_count;
    char uuid[96];
} tsl_agent_device_t;

typedef struct tsl_agent_node {
    char hostname[128];
    char driver_version[64], cuda_version[64], nccl_version[64];
    bool simulated;
    uint32_t n_devices;
    tsl_agent_device_t devices[TSL_AGENT_MAX_DEVICES];
} tsl_agent_node_t;

typedef struct tsl_agent_measurement {
    char name[48];
    char unit[16];
    double value;
    bool per_device;
    uint32_t device_index;
    uint32_t n_labels;
    char keys[TSL_AGENT_MAX_LABELS][24];
    char values[TSL_AGENT_MAX_LABELS][48];
} tsl_agent_measurement_t;

typedef struct tsl_agent_profile {
    char report_id[48]; /* "<node>-<unix>-<random>" */
    int64_t measured_unix;
    size_t n;
    tsl_agent_measurement_t *m; /* owned */
} tsl_agent_profile_t;

/* The devices the backend sees, filtered by cfg->gpus; hostname from node_name. */
int tsl_agent_discover(const tsl_agent_config_t *cfg, tsl_agent_node_t *node, tsl_err_t *err);
/* The profiler's options from the [profile] keys (checked by config_finish). */
struct tsl_prof_opts;
int tsl_agent_prof_opts(const tsl_agent_config_t *cfg, bool quick, struct tsl_prof_opts *o,
                        tsl_err_t *err);
/* One profile of node (the backend's measurements, with units and labels). */
int tsl_agent_measure(const tsl_agent_config_t *cfg, const tsl_agent_node_t *node,
                      tsl_agent_profile_t *p, tsl_err_t *err);
void tsl_agent_profile_free(tsl_agent_profile_t *p);

/* ---- the wire (agent_rpc.c) ------------------------------------------------------------------- */

typedef enum {
    TSL_AGENT_RPC_OK = 0,
    TSL_AGENT_RPC_RETRY,   /* unreachable, deadline, shutting down: try again later */
    TSL_AGENT_RPC_UNKNOWN, /* the daemon does not know this worker_id: register again */
    TSL_AGENT_RPC_REFUSED, /* token, role or request refused: retrying will not help */
} tsl_agent_rpc_rc_t;

typedef struct tsl_agent_rpc tsl_agent_rpc_t;

tsl_agent_rpc_t *tsl_agent_rpc_open(const tsl_agent_config_t *cfg, tsl_err_t *err);
void tsl_agent_rpc_close(tsl_agent_rpc_t *r);

typedef struct tsl_agent_identity {
    char worker_id[64];
    uint32_t heartbeat_s; /* what the daemon expects */
    bool known;           /* the daemon had this id before */
} tsl_agent_identity_t;

tsl_agent_rpc_rc_t tsl_agent_rpc_register(tsl_agent_rpc_t *r, const tsl_agent_node_t *node,
                                          uint32_t heartbeat_s, tsl_agent_identity_t *id,
                                          tsl_err_t *err);
tsl_agent_rpc_rc_t tsl_agent_rpc_heartbeat(tsl_agent_rpc_t *r, const char *worker_id,
                                           bool deregister, tsl_err_t *err);
/* The bytes a report is spooled as (a packed ReportProfileRequest); malloc'd. */
int tsl_agent_rpc_pack_report(const char *worker_id, const tsl_agent_profile_t *p, void **buf,
                              size_t *n, tsl_err_t *err);
/* Sends spooled bytes under worker_id; *stale: plans the daemon marked stale. */
tsl_agent_rpc_rc_t tsl_agent_rpc_send_report(tsl_agent_rpc_t *r, const char *worker_id,
                                             const void *buf, size_t n, uint32_t *stale,
                                             tsl_err_t *err);

/* ---- trials (agent_poll.c, agent_trial*.c, agent_trials.c) ------------------------------------ */

/* One Registry.Assignment (registry.proto defines every field). */
typedef struct tsl_agent_assignment {
    char trial_id[64];
    char plan_fingerprint[80];
    uint32_t rank, world_size, iterations, warmup, device_index, plan_index;
    bool has_nccl_id;
    uint8_t nccl_id[128];
    char comm[16], devops[16];
    char rendezvous[160]; /* tcp, ranks > 0: "host:port" */
    char *document;       /* owned: the stored plan document */
    bool cancel;
    uint64_t seed;
    double timeout_s;
    char kind[8];   /* "" or "plan": run the plan; "link": a link probe (no document) */
    char peer[128]; /* link: the other rank's hostname */
} tsl_agent_assignment_t;

void tsl_agent_assignment_free(tsl_agent_assignment_t *a);

/* One ReportTrial: rank 0's rendezvous (ready) or a rank's result (error "" = ran). */
typedef struct tsl_agent_trial_report {
    char trial_id[64];
    uint32_t rank;
    bool ready;
    char rendezvous[160];
    bool has_nccl_id;
    uint8_t nccl_id[128];
    double iter_time_s, iter_min_s, iter_max_s;
    uint64_t peak_bytes;
    double fwd_s, bwd_s, comm_s, bubble_s, opt_s;
    bool oom;
    uint32_t iterations;
    double loss; /* 0 off the last stage */
    char error[512];
} tsl_agent_trial_report_t;

/* What a rank child needs besides its assignment. */
typedef struct tsl_agent_trial_opts {
    char address[128];         /* rank 0's tcp address */
    uint32_t port;             /* rank 0's tcp port */
    uint64_t cpu_memory_bytes; /* cpu device ops' limit (0: none) */
    double timeout_s;          /* the rank's limit: comm rendezvous waits at most this */
} tsl_agent_trial_opts_t;

/* The child (agent_trial_run.c): runs the rank and writes its lines to fd —
 * "nccl-id HEX" (rank 0 of nccl, before it waits for the others), then
 * "report JSON" (tsl_exec_report_json) or "error MESSAGE". Returns 0 when it
 * wrote a report, 1 after an error line. */
int tsl_agent_trial_child(const tsl_agent_trial_opts_t *o, const tsl_agent_assignment_t *a, int fd);

/* One size of a link probe, as the child wrote it ("link OP BYTES T ALGBW BUSBW"). */
typedef struct tsl_agent_link_row {
    char op[12]; /* "sendrecv", "allreduce" */
    uint64_t bytes;
    double time_s, algbw_gbps, busbw_gbps;
} tsl_agent_link_row_t;
#define TSL_AGENT_LINK_ROWS 64

/* The link probe (agent_trial_link.c): the child's side of an assignment of kind
 * "link" over dev and comm (2 ranks), writing "link ..." lines then "report". */
struct tsl_devops;
struct tsl_commops;
int tsl_agent_link_probe(const tsl_agent_assignment_t *a, struct tsl_devops *dev,
                         struct tsl_commops *comm, uint64_t memory_limit, int fd, tsl_err_t *err);
/* Its pure parts, for tests: algorithm and bus bandwidth (GB/s) of one 2-rank
 * op (op: a tsl_coll_t of prof.h; nccl-tests' factors); the largest message
 * for comm ("nccl": 1 GiB, else 64 MiB), halved until 4× fits the limit. */
void tsl_agent_link_bandwidth(int op, uint64_t bytes, double time_s, double *algbw_gbps,
                              double *busbw_gbps);
uint64_t tsl_agent_link_max_bytes(const char *comm, uint64_t memory_limit);
/* The link rows as profile measurements (sendrecv_/allreduce_ busbw, algbw,
 * time; labels op, bytes, group=2, node (this one), peer, comm, link=inter-node);
 * 0 or -1. */
int tsl_agent_link_profile(const tsl_agent_link_row_t *rows, uint32_t n, const char *node,
                           const char *peer, const char *comm, const char *trial_id,
                           tsl_agent_profile_t *p, tsl_err_t *err);

/* One line "kind text\n" to fd, whole (the agent splits on newlines). */
int tsl_agent_put_line(int fd, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A running rank (agent_trial.c): a child process and the read end of its pipe. */
typedef struct tsl_agent_rank {
    int pid, fd;
    char trial_id[64];
    uint32_t rank;
    char line[8192]; /* a partial line from the pipe */
    size_t n_line;
    bool got_result;
    tsl_agent_trial_report_t result;   /* filled by the "report" / "error" line */
    char kind[8], peer[128], comm[16]; /* the assignment's (a link probe's rows below) */
    uint32_t n_link;
    tsl_agent_link_row_t link[TSL_AGENT_LINK_ROWS];
} tsl_agent_rank_t;

/* Forks the child (it dies with the agent: PR_SET_PDEATHSIG). rk->fd is non-blocking. */
int tsl_agent_rank_start(const tsl_agent_trial_opts_t *o, const tsl_agent_assignment_t *a,
                         tsl_agent_rank_t *rk, tsl_err_t *err);
/* Reads what the pipe holds. Returns 1 at end of file, 0 otherwise; *ready is set
 * (and filled) when the child sent its nccl id. */
int tsl_agent_rank_read(tsl_agent_rank_t *rk, bool *ready, tsl_agent_trial_report_t *rep);
/* After waitpid: the rank's report from what it wrote, else from how it ended. */
void tsl_agent_rank_end(tsl_agent_rank_t *rk, int status, tsl_agent_trial_report_t *out);
/* One "report" JSON (tsl_exec_report_json) into rep's measured fields. */
int tsl_agent_trial_parse_report(const char *json, tsl_agent_trial_report_t *rep, tsl_err_t *err);
/* "rank 1 exited on signal 9 (Killed)", "rank 0 exited with status 3". */
void tsl_agent_exit_reason(uint32_t rank, int status, char *buf, size_t cap);

/* The long poll (agent_poll.c): a thread with its own channel calls Assignments
 * while the loop has a worker id, and queues what arrives; the loop watches fd. */
typedef struct tsl_agent_poll tsl_agent_poll_t;

tsl_agent_poll_t *tsl_agent_poll_start(const tsl_agent_config_t *cfg, tsl_err_t *err);
int tsl_agent_poll_fd(const tsl_agent_poll_t *p);
/* "" pauses the poll (not registered). */
void tsl_agent_poll_set_worker(tsl_agent_poll_t *p, const char *worker_id);
/* 1: *a filled (owned by the caller); 2: the daemon forgot the worker (why filled),
 * register again; 0: nothing waiting. */
int tsl_agent_poll_take(tsl_agent_poll_t *p, tsl_agent_assignment_t *a, char *why, size_t cap);
void tsl_agent_poll_stop(tsl_agent_poll_t *p);

/* The ranks on the loop (agent_trials.c). lost() is told when a report finds the
 * daemon gone (now: it forgot the worker) — the loop then registers again. */
struct event_base;
typedef struct tsl_agent_trials tsl_agent_trials_t;
typedef void (*tsl_agent_lost_fn)(void *ud, bool now, const char *why);

tsl_agent_trials_t *tsl_agent_trials_new(struct event_base *base, const tsl_agent_config_t *cfg,
                                         const tsl_agent_node_t *node, tsl_agent_rpc_t *rpc,
                                         const char *worker_id, tsl_agent_lost_fn lost, void *ud,
                                         tsl_err_t *err);
/* Starts (or, cancel = true, stops) the assignment's rank; takes a->document. */
void tsl_agent_trials_assign(tsl_agent_trials_t *t, tsl_agent_assignment_t *a);
/* SIGCHLD: reaps the ranks that ended and reports them. */
void tsl_agent_trials_reap(tsl_agent_trials_t *t);
/* Sends the reports waiting (after a reconnect, say). */
void tsl_agent_trials_flush(tsl_agent_trials_t *t);
uint32_t tsl_agent_trials_running(const tsl_agent_trials_t *t);
/* Kills every rank (SIGKILL) and waits for them. */
void tsl_agent_trials_free(tsl_agent_trials_t *t);

/* The poll's channel: deadline timeout_s per call (the long poll's wait and more). */
tsl_agent_rpc_t *tsl_agent_rpc_open_deadline(const tsl_agent_config_t *cfg, double timeout_s,
                                             tsl_err_t *err);
/* Cancels the Assignments stream in flight (from another thread). */
void tsl_agent_rpc_cancel(tsl_agent_rpc_t *r);
/* One long poll: each assignment is handed to take() (which owns its document). */
tsl_agent_rpc_rc_t tsl_agent_rpc_assignments(tsl_agent_rpc_t *r, const char *worker_id,
                                             uint32_t wait_s,
                                             void (*take)(void *ud, tsl_agent_assignment_t *a),
                                             void *ud, tsl_err_t *err);
tsl_agent_rpc_rc_t tsl_agent_rpc_report_trial(tsl_agent_rpc_t *r, const char *worker_id,
                                              const tsl_agent_trial_report_t *rep, bool *cancelled,
                                              tsl_err_t *err);

/* ---- the loop (agent.c) ------------------------------------------------------------------------ */

/* Runs until SIGTERM/SIGINT (0: deregistered and stopped) or a permanent error
 * (-1, err filled: the token refused, the device file unreadable, ...). */
int tsl_agent_run(const tsl_agent_config_t *cfg, tsl_err_t *err);

/* `tessel-worker run` (and the default): options, then tsl_agent_run. */
int tsl_agent_main(int argc, char **argv);

#endif
