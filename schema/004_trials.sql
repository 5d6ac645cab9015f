-- 004_trials.sql — trials as the daemon runs them (docs/api.md "Trials").
--
-- 001 declared placeholder trials/trial_ranks tables that nothing ever wrote;
-- they are replaced here by the shape the Trials API needs.
--
-- Every column but the id, the plan and the time has a default (the API's own
-- defaults), so that a row can be written by hand for repairs and tests.
--
-- trials: kind "plan" — one plan (the document's "plan", or
-- alternatives[plan_index - 1]) run for real on registered workers, in a batch (a top-k call) run one after
-- another (batch_pos). The predicted figures are copied from the plan document
-- when the trial is made; the measured ones are filled when it is done.
-- plan_json: the plan object as it was when the trial was made (a top-k
-- rewrite or a re-plan may move it inside the document later).
-- kind "link" — a link probe (docs/api.md "Trials", link probes): two workers time
-- send/recv and all-reduce between their nodes; it has no plan, so
-- plan_fingerprint is NULL exactly for link trials.
-- rendezvous / nccl_id: rank 0's, relayed to the other ranks (ready = 1 once
-- rank 0 has sent it).
-- trial_ranks: which worker and GPU run each rank; delivered = its assignment
-- was handed to the worker; cancel_pending = the trial ended while the rank ran
-- and the worker has not been told yet. phase_json: {"fwd": s, "bwd": s, ...}.
DROP TABLE trial_ranks;
DROP TABLE trials;

CREATE TABLE trials (
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
CREATE INDEX trials_by_plan ON trials (plan_fingerprint, created_unix DESC);
CREATE INDEX trials_by_created ON trials (created_unix DESC, trial_id);
CREATE INDEX trials_by_status ON trials (status, created_unix);
CREATE INDEX trials_by_batch ON trials (batch_id, batch_pos);

CREATE TABLE trial_ranks (
    trial_id       TEXT    NOT NULL REFERENCES trials (trial_id) ON DELETE CASCADE,
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
CREATE INDEX trial_ranks_by_worker ON trial_ranks (worker_id, state);
