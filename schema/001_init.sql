-- 001_init.sql — tesseld's first schema.
--
-- Applied by the store inside one transaction that also sets PRAGMA user_version = 1;
-- a later change is a new file 002_<name>.sql, never an edit of this one.
-- Units are in the column names (_s seconds, _bytes bytes, _unix seconds since the
-- epoch, UTC). Booleans are INTEGER 0/1 with a CHECK.

-- Plans, keyed by the planner's fingerprint of (model, cluster profile, request).
-- The summary columns are copies of figures inside result_json so that listing and
-- the status page never parse JSON.
CREATE TABLE plans (
    fingerprint   TEXT    NOT NULL PRIMARY KEY
                          CHECK (length(fingerprint) BETWEEN 1 AND 16),
    model_name    TEXT    NOT NULL COLLATE NOCASE,
    n_devices     INTEGER NOT NULL CHECK (n_devices >= 0),
    global_batch  INTEGER NOT NULL CHECK (global_batch >= 0),
    iter_time_s   REAL    NOT NULL,
    samples_per_s REAL    NOT NULL,
    peak_bytes    INTEGER NOT NULL CHECK (peak_bytes >= 0),
    search_time_s REAL    NOT NULL,
    created_unix  INTEGER NOT NULL,
    stale         INTEGER NOT NULL DEFAULT 0 CHECK (stale IN (0, 1)),
    request_json  TEXT    NOT NULL,
    result_json   TEXT    NOT NULL
);
-- Listing walks newest first with (created_unix, fingerprint) as the page key.
CREATE INDEX plans_by_created ON plans (created_unix DESC, fingerprint);
CREATE INDEX plans_by_model ON plans (model_name, created_unix DESC, fingerprint);

-- Workers (one tessel-worker per node) and the GPUs each one registered.
CREATE TABLE workers (
    worker_id       TEXT    NOT NULL PRIMARY KEY,
    hostname        TEXT    NOT NULL,
    driver_version  TEXT    NOT NULL DEFAULT '',
    cuda_version    TEXT    NOT NULL DEFAULT '',
    nccl_version    TEXT    NOT NULL DEFAULT '',
    simulated       INTEGER NOT NULL DEFAULT 0 CHECK (simulated IN (0, 1)),
    registered_unix INTEGER NOT NULL,
    last_seen_unix  INTEGER NOT NULL
);

CREATE TABLE devices (
    worker_id    TEXT    NOT NULL REFERENCES workers (worker_id) ON DELETE CASCADE,
    device_index INTEGER NOT NULL CHECK (device_index >= 0),
    model        TEXT    NOT NULL,              -- "NVIDIA H100 80GB HBM3"
    memory_bytes INTEGER NOT NULL CHECK (memory_bytes >= 0),
    sm_count     INTEGER NOT NULL DEFAULT 0 CHECK (sm_count >= 0),
    PRIMARY KEY (worker_id, device_index)
);
CREATE INDEX devices_by_model ON devices (model);

-- Raw measurements exactly as a worker reported them, with their unit and when.
-- device_index is NULL for measurements that belong to the node or a pair of nodes
-- (inter-node bandwidth); labels_json holds shape, group size, message size, ...
CREATE TABLE profiles (
    id            INTEGER PRIMARY KEY,
    worker_id     TEXT    NOT NULL REFERENCES workers (worker_id) ON DELETE CASCADE,
    device_index  INTEGER,
    name          TEXT    NOT NULL,             -- "gemm_fwd", "allreduce_busbw", ...
    unit          TEXT    NOT NULL,             -- "s", "bytes/s", "ratio", "bytes"
    value         REAL    NOT NULL,
    labels_json   TEXT    NOT NULL DEFAULT '{}',
    simulated     INTEGER NOT NULL DEFAULT 0 CHECK (simulated IN (0, 1)),
    measured_unix INTEGER NOT NULL,
    FOREIGN KEY (worker_id, device_index)
        REFERENCES devices (worker_id, device_index) ON DELETE CASCADE
);
CREATE INDEX profiles_by_worker ON profiles (worker_id, name, measured_unix);

-- Figures aggregated from profiles per GPU model and link class: what the planner
-- reads. Simulated figures are kept apart from real ones and never mixed.
CREATE TABLE hardware (
    gpu_model    TEXT    NOT NULL,
    link_class   TEXT    NOT NULL DEFAULT '',   -- '' per-GPU; 'nvlink', 'pcie', 'ib', ...
    name         TEXT    NOT NULL,
    labels_json  TEXT    NOT NULL DEFAULT '{}',
    unit         TEXT    NOT NULL,
    value        REAL    NOT NULL,
    n_samples    INTEGER NOT NULL CHECK (n_samples > 0),
    simulated    INTEGER NOT NULL DEFAULT 0 CHECK (simulated IN (0, 1)),
    updated_unix INTEGER NOT NULL,
    PRIMARY KEY (gpu_model, link_class, name, labels_json, simulated)
);

-- Which GPU models a plan's cluster profile used: a profile change for one of them
-- marks the plan stale.
CREATE TABLE plan_gpus (
    fingerprint TEXT NOT NULL REFERENCES plans (fingerprint) ON DELETE CASCADE,
    gpu_model   TEXT NOT NULL,
    PRIMARY KEY (fingerprint, gpu_model)
);
CREATE INDEX plan_gpus_by_model ON plan_gpus (gpu_model);

-- Trials: a plan (or one of its alternatives) run for real; predicted next to
-- measured. One row per rank in trial_ranks says which worker/GPU ran it.
CREATE TABLE trials (
    trial_id              TEXT    NOT NULL PRIMARY KEY,
    plan_fingerprint      TEXT    NOT NULL REFERENCES plans (fingerprint) ON DELETE CASCADE,
    alternative           INTEGER NOT NULL DEFAULT 0 CHECK (alternative >= 0), -- 0 = best
    status                TEXT    NOT NULL DEFAULT 'pending'
                                  CHECK (status IN ('pending', 'running', 'done', 'failed')),
    iterations            INTEGER NOT NULL DEFAULT 10 CHECK (iterations > 0),
    predicted_iter_time_s REAL,
    measured_iter_time_s  REAL,
    predicted_peak_bytes  INTEGER,
    measured_peak_bytes   INTEGER,
    error                 TEXT    NOT NULL DEFAULT '',
    created_unix          INTEGER NOT NULL,
    finished_unix         INTEGER
);
CREATE INDEX trials_by_plan ON trials (plan_fingerprint);

CREATE TABLE trial_ranks (
    trial_id      TEXT    NOT NULL REFERENCES trials (trial_id) ON DELETE CASCADE,
    rank          INTEGER NOT NULL CHECK (rank >= 0),
    worker_id     TEXT    NOT NULL REFERENCES workers (worker_id),
    device_index  INTEGER NOT NULL,
    iter_time_s   REAL,
    peak_bytes    INTEGER,
    phase_json    TEXT    NOT NULL DEFAULT '{}',  -- {"forward": s, "backward": s, ...}
    error         TEXT    NOT NULL DEFAULT '',
    reported_unix INTEGER,
    PRIMARY KEY (trial_id, rank),
    FOREIGN KEY (worker_id, device_index) REFERENCES devices (worker_id, device_index)
);
CREATE INDEX trial_ranks_by_worker ON trial_ranks (worker_id);
