/*
 * figures_load.h — the measured figures a local run prices on: a Tessel profile
 * (--profile FILE), Galvatron's profiles (--galvatron-profile DIR) or AMP's
 * per-layer profiles (--amp-profile DIR, one per GPU type it has), attached
 * to the model and cluster they describe, with the line that says so. One
 * loader for `plan --local` and `eval`, so that a plan evaluated on the figures
 * it was searched on is priced exactly as the search priced it.
 */
#ifndef TSL_FIGURES_LOAD_H
#define TSL_FIGURES_LOAD_H

#include <jansson.h>

#include "amp_profile.h"
#include "cluster.h"
#include "err.h"
#include "galvatron_import.h"
#include "model.h"
#include "profile.h"

typedef struct tsl_figures_load {
    tsl_profile_t *prof; /* owned, borrowed by the cluster it was attached to */
    tsl_profile_use_t use;
    tsl_galvatron_import_t gal;
    tsl_profile_t *amp[TSL_AMP_MAX_TYPES]; /* --amp-profile: owned, one per GPU type;
                                              prof/use are amp[0]'s */
    tsl_profile_use_t amp_use[TSL_AMP_MAX_TYPES];
    uint32_t n_amp;
    char line[512];     /* the figures line; "" when built-in */
    char warning[1024]; /* what a Galvatron profile's reader left out (printed on
                           stderr by tsl_figures_load); "" when nothing */
} tsl_figures_load_t;

/* Attaches the profile FILE, Galvatron's DIR or AMP's DIR (each may be NULL, at
 * most one set) to m and c; out is zeroed first and must be freed with
 * tsl_figures_load_free after c is no longer used. 0, or -1 with err. A
 * warning (out->warning) is printed on stderr as "tesselctl: warning: ...". */
int tsl_figures_load(const char *profile, const char *galvatron_dir, const char *amp_dir,
                     tsl_model_t *m, tsl_cluster_t *c, tsl_figures_load_t *out, tsl_err_t *err);
void tsl_figures_load_free(tsl_figures_load_t *f);

/* The plan document's "figures" object for them (figures_json.h); NULL only
 * when out of memory. */
json_t *tsl_figures_load_json(const tsl_figures_load_t *f);

#endif
