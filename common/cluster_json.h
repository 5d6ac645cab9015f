/*
 * cluster_json.h — cluster descriptions as JSON (jansson); the format is
 * docs/cluster-format.md.
 *
 * Units in the file: bandwidths in GB/s (10^9 bytes/s, bus bandwidth as
 * nccl-tests reports it) under *_gbps keys, or Gb/s under the matching *_gbit
 * keys; memory in GiB (2^30 bytes) under *_gb keys; compute in TFLOP/s (10^12).
 * In the tsl_cluster_t everything is bytes, bytes/s and FLOP/s (cluster.h).
 *
 * Every error names the JSON path of the offending value, e.g.
 * "nodes[1].gpus: must be a positive integer"; errors from a file are prefixed
 * with its path. On failure *out is left empty (freed); on success the caller
 * owns it and frees it with tsl_cluster_free().
 */
#ifndef TSL_CLUSTER_JSON_H
#define TSL_CLUSTER_JSON_H

#include <jansson.h>
#include <stdbool.h>

#include "cluster.h"

/* From the text of a JSON document. */
int tsl_cluster_json_parse(const char *text, tsl_cluster_t *out, tsl_err_t *err);

/* From a file. */
int tsl_cluster_json_load(const char *path, tsl_cluster_t *out, tsl_err_t *err);

/* From a parsed document (e.g. a "cluster" object embedded in a request). */
int tsl_cluster_json_from(const json_t *root, tsl_cluster_t *out, tsl_err_t *err);

/* The cluster a request document names (plan_json.h): its "cluster_spec", the short
 * spec, else its "cluster" object. 0; 1 where it names neither (out left empty); -1
 * with err from the parser. out is initialised either way: free it. */
int tsl_cluster_from_request(const json_t *req, tsl_cluster_t *out, tsl_err_t *err);

/* The one "file or spec?" rule for --cluster: a JSON file when arg ends in
 * ".json" (any case) or names an existing regular file, otherwise a short spec
 * such as "2x8xA100-40G:ib100". tesselctl's local and remote modes both use it. */
bool tsl_cluster_arg_is_file(const char *arg);

/* A command-line argument by that rule: the file loaded, or the spec parsed. */
int tsl_cluster_from_arg(const char *arg, tsl_cluster_t *out, tsl_err_t *err);

/* The cluster in the same format (complete: every node's bandwidth, GPU types
 * that differ from the built-in of their name, the matrix when there is one),
 * so that tsl_cluster_json_from(tsl_cluster_to_json(c)) describes c again.
 * NULL when out of memory. */
json_t *tsl_cluster_to_json(const tsl_cluster_t *c);

#endif
