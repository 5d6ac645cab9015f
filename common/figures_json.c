/*
 * figures_json.c — the plan's "figures" object (figures_json.h).
 */
#include "figures_json.h"

#include <stdio.h>

/* The figures a Galvatron import read, GB/s (inter_node_gbps is the one used);
 * null when it read nothing beyond its block times. */
static json_t *galvatron_json(const tsl_galvatron_import_t *g)
{
    if (g == NULL ||
        !(g->memory_layers || g->inter_allreduce_bw > 0 || g->inter_p2p_bw > 0 || g->sp_groups))
        return json_null();
    json_t *sp = json_object();
    for (uint32_t i = 0; sp && i < g->sp_groups; i++) {
        char n[16];
        snprintf(n, sizeof n, "%u", g->sp_n[i]);
        json_object_set_new(sp, n, json_real(g->sp_busbw[i] / 1e9));
    }
    return json_pack("{s:i, s:b, s:f, s:f, s:f, s:f, s:o}", "memory_layers", (int)g->memory_layers,
                     "memory_sp", g->memory_sp, "inter_node_gbps", g->inter_bw / 1e9,
                     "inter_allreduce_gbps", g->inter_allreduce_bw / 1e9, "inter_p2p_gbps",
                     g->inter_p2p_bw / 1e9, "inter_wide_allreduce_gbps",
                     g->inter_wide_allreduce_bw / 1e9, "sp_time_busbw_gbps", sp);
}

static json_t *left_out_json(const tsl_figure_sources_t *fs)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < fs->n_left_out; i++)
        json_array_append_new(a, json_string(fs->left_out[i]));
    return a;
}

json_t *tsl_figures_json(const tsl_figure_sources_t *fs)
{
    const tsl_profile_t *p = fs->profile;
    const tsl_profile_use_t *use = fs->use;
    const tsl_galvatron_import_t *g = fs->gal;
    bool on = p != NULL && use != NULL && use->compute;
    const char *what = !on ? "built-in" : p->simulated ? "simulated" : "measured";
    const char *name = !on ? "" : fs->profile_name ? fs->profile_name : p->source;
    json_t *hw = on ? json_pack("{s:s, s:s}", "gpu", p->gpu, "link", p->link) : json_null();
    json_t *details = fs->details ? json_deep_copy(fs->details) : json_array();
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o}", "line",
        fs->line ? fs->line : "", "compute", what, "host_device",
        on && use->pcie ? what : "built-in", "intra_node", on && use->intra ? what : "built-in",
        "overlap", on && use->overlap ? what : "built-in", "memory",
        g && g->memory_layers ? "measured" : "built-in", "inter_node",
        g && g->inter_bw > 0 ? "measured" : "built-in", "profile", name, "hardware", hw,
        "galvatron", galvatron_json(g), "workers_left_out", left_out_json(fs), "details", details);
}
