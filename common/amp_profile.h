/*
 * amp_profile.h — AMP's profiled layer times read as Tessel profiles
 * (planner/profile.h), so that Tessel prices a plan on the per-layer compute
 * times AMP's own cost model uses (Li et al., AMP, NeurIPS 2022, Sec. 3.4;
 * docs/profile-format.md, "AMP profiles").
 *
 * AMP ships one NumPy file per model, instance type and TP degree in its
 * known_cost directory: `{model}_{instance}_{tp}.npy`, a 1-D float64 (or
 * float32) array with one forward time per AMP unit, in seconds for ONE
 * sample (AMP multiplies by the micro-batch size), measured on one GPU of a
 * TP group of tp in Megatron-LM at that degree — the TP all-reduce inside.
 * For model "gpt2" the units are: embedding, a no-op, the L Transformer layers,
 * two no-ops, the LM head, a no-op (L + 6 entries). AMP's backward is twice the
 * forward (its cost model charges 3 × forward).
 *
 * What is read: the `gpt2_*` files. Instances: G4 (g4dn: T4-16G) and P3
 * (p3.8xlarge: V100-16G). Per instance one profile: for every TP degree
 * present, the mean of the L layer units becomes an attention and an FFN block
 * (micro-batch 1, that TP split, the model's decoder layer shape, forward FLOPs
 * per device split as the model's layer splits them), so tsl_profile_layer_s
 * gives back AMP's measured layer time; more samples scale the time linearly,
 * as AMP's model does. Embedding and head units are not read (they price at
 * the profiled FFN rate, profile.h). Bandwidths are not in AMP's files.
 *
 * Errors name the file and the field: the magic and version, `descr`,
 * `fortran_order`, `shape` (must be (L + 6,) for the model's L layers), an
 * element that is not a positive finite time.
 */
#ifndef TSL_AMP_PROFILE_H
#define TSL_AMP_PROFILE_H

#include "cluster.h"
#include "err.h"
#include "model.h"
#include "profile.h"

#define TSL_AMP_MAX_TYPES 2u /* G4, P3 */
#define TSL_AMP_MAX_TP    8u /* TP degrees 1..8 looked for */

/* Loads dir's gpt2 profiles for model m into new profiles (free() each), one per
 * AMP instance whose GPU type the cluster c has, in out[0 .. *n). TSL_E_NOTFOUND
 * when dir has no gpt2_{G4,P3}_{tp}.npy; TSL_E_PRECONDITION when it has some
 * but c has none of their GPU types; TSL_E_INVALID for a malformed file. */
int tsl_amp_profile_load(const char *dir, const tsl_model_t *m, const tsl_cluster_t *c,
                         tsl_profile_t *out[TSL_AMP_MAX_TYPES], uint32_t *n, tsl_err_t *err);

/* Reads one .npy file of a 1-D float array into vals (up to cap entries); *len
 * is its length. 0, or -1 with err naming the file and field. */
int tsl_amp_npy_read(const char *path, double *vals, uint32_t cap, uint32_t *len, tsl_err_t *err);

#endif
