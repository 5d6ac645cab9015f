/*
 * profile_history.h — ReportProfile's checks against the physical bounds and
 * the reporting worker's own stored figures (api/profile_check.h), with the
 * history read from the store.
 */
#ifndef TSL_PROFILE_HISTORY_H
#define TSL_PROFILE_HISTORY_H

#include <stdbool.h>

#include "handlers.h"
#include "tessel/v1/registry.pb-c.h"

/* True when req may be stored; false after answering the call
 * (INVALID_ARGUMENT naming the figure, or INTERNAL when the store failed).
 * labels: each measurement's tsl_profile_labels_json text, as the handler stores it. */
bool tsl_profile_check_call(tsl_call_t *call, const Tessel__V1__ReportProfileRequest *req,
                            const char *const *labels);

#endif
