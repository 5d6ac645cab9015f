-- 007: a worker id belongs to the credential that registered it (store_registry.h,
-- "Ownership"): "cert:<subject>" of a mutual-TLS client certificate, or
-- "token:<first 16 hex digits of SHA-256(token)>". A worker without a row here is
-- not bound: rows from before this migration, and workers registered by trusted
-- callers (no [tokens]); the next registration with a credential binds them.
-- A table of its own (not a column of workers) so that running it again is harmless.
CREATE TABLE IF NOT EXISTS worker_owners (
    worker_id TEXT PRIMARY KEY REFERENCES workers (worker_id) ON DELETE CASCADE,
    owner     TEXT NOT NULL CHECK (owner <> '')
);
