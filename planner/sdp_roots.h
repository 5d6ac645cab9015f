/*
 * sdp_roots.h — an SDP (FSDP) level run as fairscale 0.4.5's FullyShardedDataParallel
 * with each layer its own root and its attention and MLP as FSDP units inside, as
 * Galvatron-BMW wraps its layers (PKU-DAIR/Hetu df32daa tools/Galvatron/utils/
 * parallel_utils.py wrap_module_fsdp_manually l.21-52; cost.h knobs.sdp_layer_roots;
 * docs/cost-model.md "FSDP with a root per layer").
 *
 * Every root's forward waits for the compute stream before its first gather
 * (fairscale 6b2f992 fully_sharded_data_parallel.py _lazy_init →
 * _wait_for_previous_optim_step, l.1141-1153, 1323-1334), so the layer's first unit's
 * all-gather is exposed; each later unit's gather is queued behind the one before on
 * the gather stream with no wait on compute (_rebuild_full_params l.1874-1931: only
 * the compute stream waits on it), so it runs under the earlier units' compute.
 *
 * Units, in forward order (what the forward gathers before its compute can start):
 *   encoder  attention, MLP                            (bert_enc, vit_enc, t5_enc)
 *   decoder  self-attention, cross-attention, MLP      (t5_dec)
 *   anything else one unit: its gather exposed whole.
 * A unit's share of the layer's gathered weights is its share of the layer's
 * parameters; its share of the forward's compute is its share of the layer's
 * roofline forward time (the caller's fwd_s callback); both sum to 1 exactly (the
 * attention unit takes what the others leave: norms, extras).
 */
#ifndef TSL_SDP_ROOTS_H
#define TSL_SDP_ROOTS_H

#include <stdint.h>

#include "model.h"

#define TSL_SDP_UNITS_MAX 3u

typedef struct tsl_sdp_units {
    uint32_t n;                  /* 1, 2 (encoder) or 3 (decoder) */
    double w[TSL_SDP_UNITS_MAX]; /* each unit's share of the layer's weights */
    double c[TSL_SDP_UNITS_MAX]; /* each unit's share of its forward compute */
} tsl_sdp_units_t;

/* The forward time of layer l (a roofline's): the caller's. */
typedef double (*tsl_sdp_fwd_fn)(const tsl_layer_t *l, void *ctx);

/* Splits derived layer l into its FSDP units (above). A layer whose parts cannot be
 * derived from its shape (a hand-written layer, MoE, latent attention, a sub-layer
 * block) is one unit. Never fails. */
void tsl_sdp_root_units(const tsl_layer_t *l, tsl_sdp_fwd_fn fwd_s, void *ctx,
                        tsl_sdp_units_t *out);

/* The forward of one layer under a root per layer: unit i's gather g[i] on the gather
 * stream, back to back from the layer's start; unit i's compute c[i] on the compute
 * stream once its own gather and unit i−1's compute are done. Where compute runs
 * beside a gather it is slowed as tsl_cost_overlap_s slows it ((k − 1) × the time both
 * run). Returns the forward's time: g[0] + ... for one unit, g[0] + overlap(c[0],
 * g[1]) + c[1] for two. */
double tsl_sdp_root_fwd_s(const double *g, const double *c, uint32_t n, double k);

#endif /* TSL_SDP_ROOTS_H */
