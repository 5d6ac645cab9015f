/*
 * figures_json.h — the plan document's "figures" object: where each cost figure
 * came from (docs/plan-format.md, "figures"). The same object for a plan made
 * in-process (tesselctl plan --local) and in tesseld (tessel.v1.FigureSources:
 * the keys are that message's field names, every key present, so the document
 * maps to the message and back unchanged).
 *
 * Each source is "built-in", "measured" or "simulated" (a simulated profile).
 */
#ifndef TSL_FIGURES_JSON_H
#define TSL_FIGURES_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "galvatron_import.h"
#include "profile.h"

typedef struct tsl_figure_sources {
    const tsl_profile_t *profile;      /* attached to the cluster; NULL = built-in */
    const tsl_profile_use_t *use;      /* what attaching it replaced (with profile) */
    const tsl_galvatron_import_t *gal; /* what a Galvatron import read; NULL = none */
    const char *profile_name;          /* "profile": NULL = profile->source */
    const char *line;                  /* the line printed under the plan */
    const char *const *left_out;       /* registered workers left out, "host (why)" */
    size_t n_left_out;
    const json_t *details; /* strings: where each figure of an assembled cluster came from */
} tsl_figure_sources_t;

/* A new object in FigureSources' field order; NULL only when out of memory. */
json_t *tsl_figures_json(const tsl_figure_sources_t *fs);

#endif
