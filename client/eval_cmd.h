/*
 * eval_cmd.h — `tesselctl eval`: its options (eval_opts.c) and the local run
 * (eval_local.c).
 */
#ifndef TSL_EVAL_CMD_H
#define TSL_EVAL_CMD_H

#include "commands.h"
#include "eval_cfg.h"

typedef struct tsl_eval_opts {
    const char *model, *hf_config, *cluster;
    uint32_t seq_len;
    uint64_t mem_budget_bytes; /* --memory */
    tsl_eval_cfg_t cfg;        /* --tp, --pp, ... */
    bool have_flags;           /* some plan flag given */
    const char *strategy;      /* --strategy TEXT: every layer's, instead of the degrees */
    const char *plan_file;     /* --plan FILE */
    const char *megatron_args; /* --megatron-args "..." */
    const char *torchtitan;    /* --torchtitan FILE */
    bool no_search;
} tsl_eval_opts_t;

int tsl_eval_local(const tsl_eval_opts_t *eo, const tsl_client_opts_t *co);

#endif
