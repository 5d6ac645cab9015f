/*
 * galvatron_import.h — the parts of Galvatron's profiles that are not block
 * times (galvatron_profile.h has those): memory per layer and TP degree, and
 * the links between nodes, applied to the model and cluster a plan runs on
 * (docs/profile-format.md, "Galvatron profiles"). Units as Galvatron writes
 * them (its search_engine/cost_model.py reads them so): MB = 2^20 bytes,
 * bandwidths GB/s = 10^9 bytes/s of bus bandwidth, times ms.
 *
 *   memory_profiling_*.json  "layertype_{k}[_sp]" → {"SEQ": {parameter_size,
 *       tp_activation_per_bsz_dict}}: parameter_size is one layer's fp32
 *       parameters in MB (Galvatron's model states are 4 × it), so the layer's
 *       parameter count is parameter_size · 2^20 / 4; the activation dict gives
 *       MB per sample on a device at TP degree t, and "checkpoint" the MB per
 *       sample a checkpointed layer keeps (its boundary, bnd_act_bytes).
 *       Without "_sp" (TP without sequence parallelism) act_repl and act_shard
 *       are the least-squares fit of act(t) = repl + shard / t over the measured
 *       degrees; with "_sp" every part shrinks with t, so the measurement cannot
 *       separate them: the t = 1 total is split in the ratio the shapes give.
 *       Layer type k is the k-th distinct kind of Transformer layer (encoder,
 *       decoder) in model order. "other_memory_pp_on_first[_sp]" and "_last"
 *       ({model_states, activation} per t; model states 16 bytes a parameter)
 *       set the embedding's and the head's parameters and activations.
 *   allreduce_bandwidth_{N}nodes_{G}gpus_per_node.json, N ≥ 2:
 *       allreduce_size_{N}_consec_0, the all-reduce of one GPU per node — the
 *       link Tessel charges every node-spanning group at (cluster.h: slowest
 *       link); the widest consecutive group's figure is reported, not used (a
 *       multi-rail node aggregate the slowest-link model cannot express).
 *   p2p_bandwidth_{N}nodes_{G}gpus_per_node.json: pp_size_{N}, a pipeline of
 *       one stage per node, every stage boundary crossing nodes.
 *       The cluster's inter-node bandwidth becomes the smaller of the two
 *       (both measure one GPU's path between nodes; AMP's slowest link).
 *   sp_time_{N|1}nodes_{G}gpus_per_node.json: allreduce_size_{n}_{M}MB_time in
 *       ms, read as the bus bandwidth 2(n−1)/n · M / t at the largest M of each
 *       n and reported: Tessel prices TP collectives at the node's one bus
 *       bandwidth (the all-reduce file's), with no per-group-size place.
 *
 * Files are looked for as galvatron_profile.h says. N and G are the cluster's
 * node count and the first node's GPU count; a missing file leaves that figure
 * as it was (reported as not imported).
 */
#ifndef TSL_GALVATRON_IMPORT_H
#define TSL_GALVATRON_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster.h"
#include "err.h"
#include "model.h"

#define TSL_GALVATRON_SP_GROUPS 4u

typedef struct tsl_galvatron_import {
    uint32_t memory_layers;         /* layers whose memory figures were replaced */
    bool memory_sp;                 /* they came from a sequence-parallel ("_sp") profile */
    double inter_bw;                /* bytes/s set as the inter-node bandwidth; 0 none */
    double inter_allreduce_bw;      /* one GPU per node all-reduce, bytes/s; 0 absent */
    double inter_p2p_bw;            /* p2p across nodes, bytes/s; 0 absent */
    double inter_wide_allreduce_bw; /* widest consecutive group across nodes (reported) */
    uint32_t sp_groups;             /* group sizes read from sp_time (reported) */
    uint32_t sp_n[TSL_GALVATRON_SP_GROUPS];
    double sp_busbw[TSL_GALVATRON_SP_GROUPS]; /* bytes/s at the largest message */
} tsl_galvatron_import_t;

/* Applies dir's memory profiles to m (its layers' params, act_repl_bytes,
 * act_shard_bytes, bnd_act_bytes) and its bandwidths to c's inter-node links.
 * TSL_E_INVALID (naming file and key) for a malformed file or a memory profile
 * without m's sequence length. m and c are changed only on success. */
int tsl_galvatron_import(const char *dir, tsl_model_t *m, tsl_cluster_t *c,
                         tsl_galvatron_import_t *out, tsl_err_t *err);

/* ", memory galvatron (34 layers, sp profile), inter-node galvatron 7.66 GB/s"
 * (empty when nothing was imported): what the plan's figures line appends. */
size_t tsl_galvatron_import_describe(const tsl_galvatron_import_t *g, char *buf, size_t cap);

#endif
