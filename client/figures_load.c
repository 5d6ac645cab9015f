/*
 * figures_load.c — a profile or a Galvatron import attached for a local run
 * (figures_load.h).
 */
#include "figures_load.h"

#include <stdlib.h>
#include <string.h>

#include "figures_json.h"
#include "galvatron_profile.h"
#include "profile_json.h"

int tsl_figures_load(const char *profile, const char *galvatron_dir, tsl_model_t *m,
                     tsl_cluster_t *c, tsl_figures_load_t *out, tsl_err_t *err)
{
    memset(out, 0, sizeof(*out));
    if (profile != NULL && (tsl_profile_json_load(profile, &out->prof, err) != 0 ||
                            tsl_profile_attach(c, out->prof, &out->use, err) != 0))
        return -1;
    const char *g = galvatron_dir;
    if (g != NULL && (tsl_galvatron_profile_load(g, m, c, &out->prof, err) != 0 ||
                      tsl_profile_attach(c, out->prof, &out->use, err) != 0 ||
                      tsl_galvatron_import(g, m, c, &out->gal, err) != 0))
        return -1;
    size_t n = tsl_profile_describe(out->prof, &out->use, out->line, sizeof(out->line));
    if (n < sizeof(out->line))
        tsl_galvatron_import_describe(&out->gal, out->line + n, sizeof(out->line) - n);
    return 0;
}

void tsl_figures_load_free(tsl_figures_load_t *f)
{
    free(f->prof);
    f->prof = NULL;
}

json_t *tsl_figures_load_json(const tsl_figures_load_t *f)
{
    tsl_figure_sources_t fs = {.profile = f->prof, .use = &f->use, .gal = &f->gal, .line = f->line};
    return tsl_figures_json(&fs);
}
