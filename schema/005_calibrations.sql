-- 005: corrections fitted from trials, one row per hardware key (docs/cost-model.md
-- "Calibration — from trials"; daemon/calibration.h). calib_json is the "calibration" object
-- of docs/profile-format.md; n_trials the trials it was fitted from.
CREATE TABLE calibrations (
    gpu_model    TEXT    NOT NULL,
    simulated    INTEGER NOT NULL,
    calib_json   TEXT    NOT NULL,
    n_trials     INTEGER NOT NULL,
    updated_unix INTEGER NOT NULL,
    PRIMARY KEY (gpu_model, simulated)
);
