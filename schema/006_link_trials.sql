-- 006_link_trials.sql — link probes as trials (issue 8, "Between nodes"; docs/api.md
-- "Trials"): a trial has a kind, "plan" (a stored plan run for real) or "link"
-- (two workers time send/recv and all-reduce between their nodes; no plan).
-- A link trial has no plan, so plan_fingerprint becomes NULL-able (NULL exactly
-- for link trials). SQLite cannot change a column's constraints: both tables are
-- copied into new ones and renamed (trial_ranks first, so nothing cascades).

CREATE TABLE trials_v6 (
    trial_id              TEXT    NOT NULL PRIMARY KEY CHECK (length(trial_id) BETWEEN 1 AND 40),
    batch_id              TEXT    NOT NULL DEFAULT '',
    batch_pos             INTEGER NOT NULL DEFAULT 0 CHECK (batch_pos >= 0),
    plan_fingerprint      TEXT             REFERENCES plans (fingerprint) ON DELETE CASCADE,
    kind                  TEXT    NOT NULL DEFAULT 'plan' CHECK (kind IN ('plan', 'link')),
    plan_index            INTEGER NOT NULL DEFAULT 0 CHECK (plan_index >= 0),
    plan_label            TEXT    NOT NULL DEFAULT '',
    status                TEXT    NOT NULL DEFAULT 'pending'
                                  CHECK (status IN ('pending', 'running', 'done', 'failed')),
    world_size            INTEGER NOT NULL DEFAULT 1 CHECK (world_size > 0),
    iterations            INTEGER NOT NULL DEFAULT 10 CHECK (iterations > 0),
    warmup                INTEGER NOT NULL DEFAULT 3 CHECK (warmup >= 0),
    timeout_s             REAL    NOT NULL DEFAULT 600 CHECK (timeout_s > 0),
    comm                  TEXT    NOT NULL DEFAULT 'tcp' CHECK (comm IN ('nccl', 'tcp')),
    devops                TEXT    NOT NULL DEFAULT 'cpu' CHECK (devops IN ('cuda', 'cpu')),
    simulated             INTEGER NOT NULL DEFAULT 0 CHECK (simulated IN (0, 1)),
    gpu_model             TEXT    NOT NULL DEFAULT '',
    global_batch          INTEGER NOT NULL DEFAULT 0 CHECK (global_batch >= 0),
    predicted_iter_time_s REAL    NOT NULL DEFAULT 0,
    predicted_peak_bytes  INTEGER NOT NULL DEFAULT 0,
    measured_iter_time_s  REAL    NOT NULL DEFAULT 0,
    measured_peak_bytes   INTEGER NOT NULL DEFAULT 0,
    measured_samples_per_s REAL   NOT NULL DEFAULT 0,
    time_error            REAL    NOT NULL DEFAULT 0,
    memory_error          REAL    NOT NULL DEFAULT 0,
    any_oom               INTEGER NOT NULL DEFAULT 0 CHECK (any_oom IN (0, 1)),
    chosen                INTEGER NOT NULL DEFAULT 0 CHECK (chosen IN (0, 1)),
    error                 TEXT    NOT NULL DEFAULT '',
    ready                 INTEGER NOT NULL DEFAULT 0 CHECK (ready IN (0, 1)),
    rendezvous            TEXT    NOT NULL DEFAULT '',
    nccl_id               BLOB,
    seed                  INTEGER NOT NULL DEFAULT 0,
    plan_json             TEXT    NOT NULL DEFAULT '{}',
    created_unix          INTEGER NOT NULL,
    started_unix          INTEGER NOT NULL DEFAULT 0,
    finished_unix         INTEGER NOT NULL DEFAULT 0,
    CHECK ((kind = 'plan') = (plan_fingerprint IS NOT NULL))
);

CREATE TABLE trial_ranks_v6 (
    trial_id       TEXT    NOT NULL REFERENCES trials_v6 (trial_id) ON DELETE CASCADE,
    rank           INTEGER NOT NULL CHECK (rank >= 0),
    worker_id      TEXT    NOT NULL,
    hostname       TEXT    NOT NULL DEFAULT '',
    device_index   INTEGER NOT NULL CHECK (device_index >= 0),
    state          TEXT    NOT NULL DEFAULT 'assigned'
                           CHECK (state IN ('assigned', 'running', 'done', 'failed')),
    delivered      INTEGER NOT NULL DEFAULT 0 CHECK (delivered IN (0, 1)),
    cancel_pending INTEGER NOT NULL DEFAULT 0 CHECK (cancel_pending IN (0, 1)),
    iter_time_s    REAL    NOT NULL DEFAULT 0,
    iter_min_s     REAL    NOT NULL DEFAULT 0,
    iter_max_s     REAL    NOT NULL DEFAULT 0,
    peak_bytes     INTEGER NOT NULL DEFAULT 0,
    phase_json     TEXT    NOT NULL DEFAULT '{}',
    oom            INTEGER NOT NULL DEFAULT 0 CHECK (oom IN (0, 1)),
    loss           REAL    NOT NULL DEFAULT 0,
    error          TEXT    NOT NULL DEFAULT '',
    reported_unix  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (trial_id, rank)
);

INSERT INTO trials_v6 (trial_id, batch_id, batch_pos, plan_fingerprint, plan_index, plan_label, status, world_size, iterations, warmup, timeout_s, comm, devops, simulated, gpu_model, global_batch, predicted_iter_time_s, predicted_peak_bytes, measured_iter_time_s, measured_peak_bytes, measured_samples_per_s, time_error, memory_error, any_oom, chosen, error, ready, rendezvous, nccl_id, seed, plan_json, created_unix, started_unix, finished_unix, kind)
    SELECT trial_id, batch_id, batch_pos, plan_fingerprint, plan_index, plan_label, status, world_size, iterations, warmup, timeout_s, comm, devops, simulated, gpu_model, global_batch, predicted_iter_time_s, predicted_peak_bytes, measured_iter_time_s, measured_peak_bytes, measured_samples_per_s, time_error, memory_error, any_oom, chosen, error, ready, rendezvous, nccl_id, seed, plan_json, created_unix, started_unix, finished_unix, 'plan' FROM trials;
INSERT INTO trial_ranks_v6 (trial_id, rank, worker_id, hostname, device_index, state, delivered, cancel_pending, iter_time_s, iter_min_s, iter_max_s, peak_bytes, phase_json, oom, loss, error, reported_unix)
    SELECT trial_id, rank, worker_id, hostname, device_index, state, delivered, cancel_pending, iter_time_s, iter_min_s, iter_max_s, peak_bytes, phase_json, oom, loss, error, reported_unix FROM trial_ranks;

DROP TABLE trial_ranks;
DROP TABLE trials;
ALTER TABLE trials_v6 RENAME TO trials;
ALTER TABLE trial_ranks_v6 RENAME TO trial_ranks;

CREATE INDEX trials_by_plan ON trials (plan_fingerprint, created_unix DESC);
CREATE INDEX trials_by_created ON trials (created_unix DESC, trial_id);
CREATE INDEX trials_by_status ON trials (status, created_unix);
CREATE INDEX trials_by_batch ON trials (batch_id, batch_pos);
CREATE INDEX trial_ranks_by_worker ON trial_ranks (worker_id, state);
