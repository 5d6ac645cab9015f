/*
 * store_registry.h — the worker registry in tesseld's SQLite store: workers and
 * their GPUs, liveness, raw profile reports and the per-hardware aggregate.
 *
 * Identity: a worker's id is derived from its hostname and its GPUs' UUIDs
 * (tsl_registry_worker_id), so a restarted worker registering the same GPUs gets
 * the same id and its history back; the same host with other GPUs is another
 * worker (the old one stays, offline).
 *
 * Liveness: a worker is "online" from its registration or heartbeat on, "offline"
 * once no heartbeat came for timeout_s (0: three of the heartbeat intervals it
 * announced), "stopped" after a deregistering heartbeat. The state is stored and
 * brought up to date by tsl_registry_sweep(), which every Registry call runs
 * first, so a listing never shows a worker online past its timeout.
 *
 * Profiles: a report is stored raw (profiles, with unit, labels and time) under
 * its report_id — the same id again is a duplicate and changes nothing — then the
 * hardware table is rebuilt for each GPU model of the worker from every worker's
 * newest report of the same kind (simulated or measured: never mixed). Plans
 * whose request names the profile key (tsl_registry_profile_key) or that
 * plan_gpus links to the model are marked stale.
 *
 * Ownership: a worker id is bound to the credential that registered it first
 * (owner: "cert:<subject>" or "token:<hash>", server_auth.h); "" = not bound
 * (registered by a trusted caller, or before bindings were stored), bound by the
 * next registration that has a credential. Registering a bound id with another
 * owner is refused (2); the handlers check the other calls (tsl_auth_worker).
 *
 * Thread-safety: as store.h (the store's lock is held for each call).
 * Ownership: strings in callbacks' structs live until the callback returns.
 */
#ifndef TSL_STORE_REGISTRY_H
#define TSL_STORE_REGISTRY_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "store.h"

#define TSL_WORKER_ID_LEN        18 /* "w-" + 16 hex digits */
#define TSL_REGISTRY_MAX_DEVICES 64u
#define TSL_REGISTRY_OWNER_MAX   256 /* bytes of an owner, NUL included */

typedef struct tsl_reg_device {
    uint32_t index;
    const char *model; /* "NVIDIA H100 80GB HBM3" */
    uint64_t memory_bytes;
    uint32_t sm_count;
    const char *uuid; /* "" when the backend has none */
} tsl_reg_device_t;

typedef struct tsl_reg_worker {
    char worker_id[TSL_WORKER_ID_LEN + 1];
    const char *hostname;
    const char *driver_version, *cuda_version, *nccl_version, *version;
    bool simulated;
    uint32_t heartbeat_s;
    uint32_t n_devices;
    const tsl_reg_device_t *devices;
    const char *owner; /* register: the caller's identity ("" or NULL: none) */
    /* listings only: */
    const char *state; /* "online", "offline", "stopped" */
    int64_t registered_unix, last_seen_unix, profile_unix;
    uint32_t n_measurements; /* in the newest report */
} tsl_reg_worker_t;

typedef struct tsl_reg_measurement {
    const char *name; /* "gemm_fwd", "pcie_h2d", ... */
    const char *unit; /* "s", "bytes/s", "ratio", "bytes", "flop/s" */
    double value;
    const char *labels_json; /* a JSON object, keys sorted ("{}" for none) */
    const char *link_class;  /* "" per GPU; "nvlink", "pcie", "ib", ... */
    bool per_device;
    uint32_t device_index;
    /* answers only: */
    int64_t measured_unix;
    bool simulated;
    const char *gpu_model;
    const char *hostname; /* raw answers */
    uint32_t n_samples;   /* aggregated answers */
} tsl_reg_measurement_t;

typedef struct tsl_reg_report_result {
    bool duplicate;
    uint32_t stored;
    uint32_t plans_marked_stale;
} tsl_reg_report_result_t;

/* The stable id for a hostname and its GPUs (UUIDs, or index:model where a
 * device has none), independent of the order the devices are given in. */
void tsl_registry_worker_id(const char *hostname, const tsl_reg_device_t *devs, size_t n,
                            char out[TSL_WORKER_ID_LEN + 1]);

/* The text a plan request carries when its cluster used the aggregated profile
 * of gpu_model: "profile:<gpu_model>|measured" or "...|simulated". */
void tsl_registry_profile_key(const char *gpu_model, bool simulated, char *buf, size_t cap);

/* Registers (or re-registers) w; w->worker_id is filled from the identity.
 * *known: the id was registered before. 0, 2 when the id is bound to another
 * owner than w->owner (nothing changed), -1 error. */
int tsl_registry_register(tsl_store_t *s, tsl_reg_worker_t *w, int64_t now, bool *known,
                          tsl_err_t *err);

/* The owner worker_id is bound to ("" = none) into owner: 0, 1 unknown id, -1 error. */
int tsl_registry_owner(tsl_store_t *s, const char *worker_id, char *owner, size_t cap,
                       tsl_err_t *err);

/* Whether owner may read hostname's raw figures: 1 when a worker on that host
 * is bound to owner, or none of its workers is bound to anyone else (unbound
 * or unknown host); 0 when they all belong to other credentials; -1 error. */
int tsl_registry_host_readable(tsl_store_t *s, const char *hostname, const char *owner,
                               tsl_err_t *err);

/* 0 recorded, 1 unknown worker_id, -1 error. *came_back: it was offline or stopped. */
int tsl_registry_heartbeat(tsl_store_t *s, const char *worker_id, bool deregister, int64_t now,
                           bool *came_back, tsl_err_t *err);

/* Marks online workers silent for longer than their timeout offline; fn (may be
 * NULL) is called for each, after the store's lock is released. */
typedef void (*tsl_registry_offline_fn)(void *ud, const char *worker_id, const char *hostname);
int tsl_registry_sweep(tsl_store_t *s, int64_t now, uint32_t timeout_s, tsl_registry_offline_fn fn,
                       void *ud, tsl_err_t *err);

/* Every worker with its devices, by hostname; fn returning non-zero stops (-1). */
typedef int (*tsl_registry_worker_fn)(void *ud, const tsl_reg_worker_t *w);
int tsl_registry_list(tsl_store_t *s, tsl_registry_worker_fn fn, void *ud, tsl_err_t *err);

/* Stores a report: 0 (res filled), 1 unknown worker_id, -1 error. measured_unix 0 = now. */
int tsl_registry_report(tsl_store_t *s, const char *worker_id, const char *report_id,
                        int64_t measured_unix, int64_t now, const tsl_reg_measurement_t *m,
                        size_t n, tsl_reg_report_result_t *res, tsl_err_t *err);

/* Aggregated figures of gpu_model ("" or NULL: all), or with hostname the newest
 * raw report of each of that host's workers. */
typedef int (*tsl_registry_measurement_fn)(void *ud, const tsl_reg_measurement_t *m);
int tsl_registry_profile(tsl_store_t *s, const char *gpu_model, const char *hostname,
                         tsl_registry_measurement_fn fn, void *ud, tsl_err_t *err);

/* store.c: the connection, under the store's lock (paired calls). */
sqlite3 *tsl_store_lock_db(tsl_store_t *s);
void tsl_store_unlock_db(tsl_store_t *s);

#endif
