/*
 * calibration.h — per-hardware corrections fitted from finished trials
 * (docs/cost-model.md "Calibration — from trials"; the fit is planner/calibrate.h).
 *
 * A hardware key is a registered GPU model, simulated or measured (never
 * mixed: a sim worker's trial measures the cpu executor, not a GPU). Each
 * done trial of a key refits the key's calibration from all of that key's
 * done trials (store_trials.h, tsl_trials_calib_samples) and stores it
 * (schema 005). Plans searched afterwards on that key's registered profile
 * (`--cluster registered`, registry_plan.c) are priced with it and say so in
 * their figures line; cached plans are NOT marked stale by a refit, so that a
 * top-k trial's measured choice stays the answer until a new profile or a
 * forced search replaces it. GetProfile's aggregated answer lists the
 * factors and the iteration-time error before and after (leave-one-out) as
 * measurements named calib_* (tesselctl profiles).
 *
 * A calibration is stored with the TSL_COST_MODEL_VERSION it was fitted
 * against (schema 8) and read (get, list) only by a binary of that version: its
 * factors correct that model's predictions, not another's. A refit takes only
 * trials of plans this version priced (store_trials.h).
 *
 * Thread-safety: as store.h. Errors: -1 with err (store failures).
 */
#ifndef TSL_CALIBRATION_H
#define TSL_CALIBRATION_H

#include <stdbool.h>

#include "calibrate.h"
#include "err.h"
#include "store.h"

/* Refits and stores the key's calibration; out gets it (n_samples 0: no
 * usable trial, nothing stored). Only cuda trials are samples: the cpu
 * executor's times say nothing about a GPU's. 1 (err says why, the stored
 * calibration stays as it was) when the fit is refused by tsl_calib_check:
 * a factor outside [0.05, 20] or a leave-one-out error above 50%. */
int tsl_calibration_refit(tsl_store_t *s, const char *gpu_model, bool simulated, tsl_calib_t *out,
                          tsl_err_t *err);

/* The stored calibration of a key: 1 found (out filled), 0 none, -1 error. */
int tsl_calibration_get(tsl_store_t *s, const char *gpu_model, bool simulated, tsl_calib_t *out,
                        tsl_err_t *err);

/* Every stored calibration of gpu_model ("" or NULL: all), by model. */
typedef int (*tsl_calibration_fn)(void *ud, const char *gpu_model, bool simulated,
                                  const tsl_calib_t *c, int64_t updated_unix);
int tsl_calibration_list(tsl_store_t *s, const char *gpu_model, tsl_calibration_fn fn, void *ud,
                         tsl_err_t *err);

#endif
