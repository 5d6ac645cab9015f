/*
 * trial_cmd.h — `tesselctl trial start|show|list|watch|cancel` (remote_trials.c)
 * over tesseld's Trials service (proto/tessel/v1/trials.proto), the printing
 * of trials (trial_print.c), and the "measured" section of `plans show`.
 */
#ifndef TSL_TRIAL_CMD_H
#define TSL_TRIAL_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "commands.h"
#include "tessel/v1/trials.pb-c.h"

/* `tesselctl trial ACTION ...`: argv[0] is "trial". */
int tsl_cmd_trial(int argc, char **argv, const tsl_client_opts_t *co);

/* One trial in full: status, plan, predicted vs measured time and memory with
 * the errors, the failure, the ranks' table. */
void tsl_trial_print(FILE *out, const Tessel__V1__Trial *t);
/* Trials as a table, one row each (with_plan: a column with the fingerprint). */
void tsl_trial_print_table(FILE *out, Tessel__V1__Trial *const *ts, size_t n, bool with_plan);

/* `plans show`'s section under the plan: the plan's trials (lt, may be NULL),
 * and the document's "measured" object when the daemon made a measured plan
 * the answer. Prints nothing when there is neither. */
void tsl_trial_print_measured(FILE *out, json_t *doc, const Tessel__V1__ListTrialsResponse *lt);

/* ListTrials for one plan, for `plans show`: NULL (nothing said) when the
 * daemon does not serve Trials or answers otherwise than OK — the plan is
 * shown all the same. Free with protobuf_c_message_free_unpacked. */
Tessel__V1__ListTrialsResponse *tsl_trial_list_quiet(const tsl_client_opts_t *co, const char *fp);

#endif
