-- 002_fingerprint_hex.sql — one rule for a fingerprint: 16 hex digits.
--
-- 001's CHECK accepts 1 to 16 characters, looser than the planner writes and the
-- daemon accepts (common/fingerprint.h). SQLite cannot change a CHECK in place
-- without rebuilding the table, so these triggers hold the rule for every row
-- written from now on; every row written before came through the daemon, which
-- already required 16 hex digits.
CREATE TRIGGER plans_fingerprint_hex_insert BEFORE INSERT ON plans
WHEN length(NEW.fingerprint) <> 16 OR NEW.fingerprint GLOB '*[^0-9A-Fa-f]*'
BEGIN
    SELECT RAISE(ABORT, 'plans.fingerprint must be 16 hex digits');
END;

CREATE TRIGGER plans_fingerprint_hex_update BEFORE UPDATE OF fingerprint ON plans
WHEN length(NEW.fingerprint) <> 16 OR NEW.fingerprint GLOB '*[^0-9A-Fa-f]*'
BEGIN
    SELECT RAISE(ABORT, 'plans.fingerprint must be 16 hex digits');
END;
