-- 003_registry.sql — what the worker registry needs beyond 001's tables.
--
-- workers: the liveness state (online / offline after missed heartbeats / stopped
-- after a deregistering heartbeat), the heartbeat interval the worker announced
-- (the offline timeout defaults to three of them) and its version.
-- devices: the GPU UUID, part of the worker's identity.
-- profiles: which report a row came from and its link class, so that the hardware
-- table is rebuilt from each worker's newest report only.
-- profile_reports: one row per report received; a report sent twice (a worker
-- replaying its spool after a lost answer) is recognised by its id.
ALTER TABLE workers ADD COLUMN state TEXT NOT NULL DEFAULT 'online'
    CHECK (state IN ('online', 'offline', 'stopped'));
ALTER TABLE workers ADD COLUMN heartbeat_s INTEGER NOT NULL DEFAULT 10 CHECK (heartbeat_s > 0);
ALTER TABLE workers ADD COLUMN version TEXT NOT NULL DEFAULT '';
CREATE INDEX workers_by_hostname ON workers (hostname);

ALTER TABLE devices ADD COLUMN uuid TEXT NOT NULL DEFAULT '';

CREATE TABLE profile_reports (
    report_id     TEXT    NOT NULL PRIMARY KEY CHECK (length(report_id) BETWEEN 1 AND 64),
    worker_id     TEXT    NOT NULL REFERENCES workers (worker_id) ON DELETE CASCADE,
    measured_unix INTEGER NOT NULL,
    received_unix INTEGER NOT NULL,
    n_measurements INTEGER NOT NULL CHECK (n_measurements >= 0),
    simulated     INTEGER NOT NULL DEFAULT 0 CHECK (simulated IN (0, 1))
);
CREATE INDEX profile_reports_by_worker ON profile_reports (worker_id, received_unix);

ALTER TABLE profiles ADD COLUMN report_id TEXT REFERENCES profile_reports (report_id)
    ON DELETE CASCADE;
ALTER TABLE profiles ADD COLUMN link_class TEXT NOT NULL DEFAULT '';
CREATE INDEX profiles_by_report ON profiles (report_id);
