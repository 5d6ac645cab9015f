-- 008: which cost model priced each plan (TSL_COST_MODEL_VERSION, planner/cost.h).
-- The version is part of the fingerprint, so a request to a newer tesseld never
-- finds an older plan; but the older plans themselves stayed in the store, listed
-- as fresh and served by GetPlan / ExportPlan / StartTrial with figures the
-- running binary no longer computes. tesseld now marks every plan whose version
-- is not its own stale when it starts (tsl_store_mark_cost_model, store.h).
-- 0 = stored before this migration: the version is unknown, so such plans are
-- marked stale at the first start of a binary with this migration.
ALTER TABLE plans ADD COLUMN cost_model_version INTEGER NOT NULL DEFAULT 0
    CHECK (cost_model_version >= 0);
-- The same for calibrations (005): a fit is measured / predicted, so one fitted
-- against another cost model's predictions is not applied to this one's
-- (daemon/calibration.h); 0 = fitted before this migration.
ALTER TABLE calibrations ADD COLUMN cost_model_version INTEGER NOT NULL DEFAULT 0
    CHECK (cost_model_version >= 0);
