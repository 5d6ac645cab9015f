/*
 * galvatron_profile.h — Galvatron's profile files read as a Tessel profile
 * (planner/profile.h), so that Tessel plans on the figures Galvatron's own
 * search uses (docs/profile-format.md, "Galvatron profiles"):
 *
 *   computation_profiling_*.json  "layernum[n]_bsz{b}_seq{s}": forward ms of n
 *       layers at micro-batch b. Two layer counts give one layer's forward time
 *       (their difference over the layer difference, as Galvatron derives it);
 *       backward is twice forward (Galvatron's bct_fct_coe). Each micro-batch
 *       size at the model's sequence length becomes an attention and an FFN
 *       block (TP 1) at the layer's achieved rate, its FLOPs split as the
 *       model's layer splits them, so tsl_profile_layer_s gives back the
 *       measured layer time.
 *   allreduce_bandwidth_{N}nodes_{G}gpus_per_node.json  one node of G GPUs (G the
 *       cluster's GPUs per node, else the widest): allreduce_size_G_consec_1 GB/s
 *       → intra_busbw over G.
 *   overlap_coefficient.json  overlap_coe → overlap_slowdown.
 * Memory profiles, multi-node all-reduce and p2p bandwidths are applied to the
 * model and cluster by tsl_galvatron_import (galvatron_import.h); sp_time_* is
 * read there and reported.
 *
 * The files are looked for in dir, dir/hardware and dir/../hardware (Galvatron
 * keeps model and hardware profiles apart). The profile is for the GPU type of
 * the cluster's first node; source says "galvatron-profile DIR".
 */
#ifndef TSL_GALVATRON_PROFILE_H
#define TSL_GALVATRON_PROFILE_H

#include <jansson.h>

#include "cluster.h"
#include "err.h"
#include "model.h"
#include "profile.h"

/* Loads dir's profiles for model m on cluster c into a new *out (free()).
 * TSL_E_NOTFOUND when dir has no computation profile, TSL_E_INVALID when it
 * holds no two layer counts at m's sequence length, when no micro-batch size's
 * time grows with the layer count, or when a file is malformed. A micro-batch
 * size whose time at more layers is not above its time at fewer (noise larger
 * than a layer) is left out, its rate taken from the other sizes, and note
 * (when not NULL; "" otherwise) names the file and keys for the caller to warn
 * with. */
int tsl_galvatron_profile_load(const char *dir, const tsl_model_t *m, const tsl_cluster_t *c,
                               tsl_profile_t **out, char *note, size_t note_cap, tsl_err_t *err);

/* Shared with galvatron_import.c: calls fn for every DIR, DIR/hardware and
 * DIR/../hardware file named prefix*.json (stops at the first non-zero), and
 * loads one file as a JSON object (NULL with err naming the file). */
typedef int (*tsl_galvatron_file_fn)(void *ud, const char *path, const char *name, tsl_err_t *err);
int tsl_galvatron_each_file(const char *dir, const char *prefix, tsl_galvatron_file_fn fn, void *ud,
                            tsl_err_t *err);
json_t *tsl_galvatron_load_json(const char *path, tsl_err_t *err);

/* The bus bandwidth under key of the hardware file o (read from path), in GB/s:
 * 0 when the key is absent or 0 (not measured), else a number within a cluster's
 * bandwidth bounds, 0.01 .. 100 000 GB/s (api/request.h). Anything else — a
 * string, a negative figure, 1e-9 — is -1 with err naming the file and the key:
 * such a figure was dropped without a word, or priced an iteration at 5·10⁷ s. */
int tsl_galvatron_gbps(json_t *o, const char *path, const char *key, double *gbps, tsl_err_t *err);

/*
 * The one model profile of DIR Galvatron reads, and fn called on it: Galvatron's
 * search opens exactly prefix{mixed_precision}_{model_name}_all.json
 * (Hetu-Galvatron cea12ff, core/search_engine/search_engine.py; its profiler
 * writes that name), never a folder's other profiles, so a folder holding
 * several (a `_seqlen2048_all.json` from another profiling run beside the
 * model's own) must not let directory order decide. The file is DIR's only
 * prefix*.json, or else the one named after the `model_size:` of a Galvatron
 * model config (*.yaml) in DIR. Several candidates left (no config, or several
 * precisions) are refused (TSL_E_INVALID) naming them and the name Galvatron
 * reads; none is TSL_E_NOTFOUND.
 */
int tsl_galvatron_model_profile(const char *dir, const char *prefix, tsl_galvatron_file_fn fn,
                                void *ud, tsl_err_t *err);

#endif
