/*
 * profile_json.h — reads the profile format of docs/profile-format.md (what
 * `tessel-worker profile --json` writes) into the planner's tsl_profile_t
 * (planner/profile.h).
 *
 * The reader takes what the cost model uses and checks it strictly (every
 * block's shape, times and FLOPs; the hardware key; units as the key names
 * say: _s seconds, _gbps 1e9 bytes/s, _bytes bytes, _tflops 1e12 FLOP/s);
 * keys it does not use are allowed, so that profiles may carry more than this
 * reader knows. Errors name the JSON path and are prefixed with the file.
 *
 * Collectives: intra_busbw is the all_reduce bus bandwidth of the largest group
 * of 2 or more at its largest message. Overlap: overlap_slowdown is the larger
 * of the two sides' slowdowns of an entry that is not a stand-in (a real NCCL
 * all-reduce); stand-ins only set overlap_stand_in.
 *
 * Calibration (docs/profile-format.md): an optional "calibration" object carries corrections
 * fitted from trials on this hardware (planner/calibrate.h); when present the
 * profile is `calibrated` and tsl_profile_attach applies it. Every factor must
 * lie in [1/TSL_PROFILE_CALIB_MAX, TSL_PROFILE_CALIB_MAX]: a factor outside is a
 * broken fit, not hardware.
 *
 * The result is heap-allocated (it is large); free it with free().
 */
#ifndef TSL_PROFILE_JSON_H
#define TSL_PROFILE_JSON_H

#include <jansson.h>

#include "profile.h"

int tsl_profile_json_from(const json_t *root, const char *source, tsl_profile_t **out,
                          tsl_err_t *err);
int tsl_profile_json_load(const char *path, tsl_profile_t **out, tsl_err_t *err);

#define TSL_PROFILE_CALIB_MAX 20.0

/* The "calibration" object: reads one into *c (path names it in errors;
 * every factor within [1/max_factor, max_factor], or any positive number when
 * max_factor is 0 — tesseld's simulated keys, whose trials time the cpu
 * executor against a simulated GPU), and writes one (what the daemon stores
 * and shows: factors, trial counts and the errors before and after,
 * leave-one-out). NULL on out of memory. */
int tsl_profile_json_calib_from(const json_t *o, double max_factor, const char *path,
                                tsl_calib_t *c, tsl_err_t *err);
json_t *tsl_profile_json_calib(const tsl_calib_t *c);

#endif
