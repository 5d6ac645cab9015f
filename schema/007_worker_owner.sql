-- 007: a worker id belongs to the credential that registered it (store_registry.h,
-- "Ownership"): "cert:<subject>" of a mutual-TLS client certificate, or
-- "token:<first 16 hex digits of SHA-256(token)>". '' = not bound: rows from before
-- this migration, and workers registered by trusted callers (no [tokens]); the next
-- registration with a credential binds them.
ALTER TABLE workers ADD COLUMN owner TEXT NOT NULL DEFAULT '';
