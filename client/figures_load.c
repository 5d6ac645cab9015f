/*
 * figures_load.c — a profile or a Galvatron import attached for a local run
 * (figures_load.h).
 */
#include "figures_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures_json.h"
#include "galvatron_profile.h"
#include "profile_json.h"

int tsl_figures_load(const char *profile, const char *galvatron_dir, const char *amp_dir,
                     tsl_model_t *m, tsl_cluster_t *c, tsl_figures_load_t *out, tsl_err_t *err)
{
    memset(out, 0, sizeof(*out));
    if (profile != NULL && (tsl_profile_json_load(profile, &out->prof, err) != 0 ||
                            tsl_profile_attach(c, out->prof, &out->use, err) != 0))
        return -1;
    const char *g = galvatron_dir;
    if (g != NULL && (tsl_galvatron_profile_load(g, m, c, &out->prof, out->warning,
                                                 sizeof out->warning, err) != 0 ||
                      tsl_profile_attach(c, out->prof, &out->use, err) != 0 ||
                      tsl_galvatron_import(g, m, c, &out->gal, err) != 0))
        return -1;
    /* what the profile's reader left out is said where the user sees it, once */
    if (out->warning[0])
        fprintf(stderr, "tesselctl: warning: %s\n", out->warning);
    if (amp_dir != NULL) {
        if (tsl_amp_profile_load(amp_dir, m, c, out->amp, &out->n_amp, err) != 0)
            return -1;
        for (uint32_t i = 0; i < out->n_amp; i++)
            if (tsl_profile_attach(c, out->amp[i], &out->amp_use[i], err) != 0)
                return -1;
        out->prof = out->amp[0];
        out->use = out->amp_use[0];
    }
    size_t n = tsl_profile_describe(out->prof, &out->use, out->line, sizeof(out->line));
    for (uint32_t i = 1; i < out->n_amp && n < sizeof(out->line) - 2; i++) {
        n += (size_t)snprintf(out->line + n, sizeof(out->line) - n, "; ");
        if (n < sizeof(out->line))
            n += tsl_profile_describe(out->amp[i], &out->amp_use[i], out->line + n,
                                      sizeof(out->line) - n);
    }
    if (n < sizeof(out->line))
        tsl_galvatron_import_describe(&out->gal, out->line + n, sizeof(out->line) - n);
    return 0;
}

void tsl_figures_load_free(tsl_figures_load_t *f)
{
    if (f->n_amp == 0)
        free(f->prof);
    for (uint32_t i = 0; i < f->n_amp; i++)
        free(f->amp[i]);
    f->n_amp = 0;
    f->prof = NULL;
}

json_t *tsl_figures_load_json(const tsl_figures_load_t *f)
{
    tsl_figure_sources_t fs = {.profile = f->prof, .use = &f->use, .gal = &f->gal, .line = f->line};
    return tsl_figures_json(&fs);
}
