/*
 * fuzz_hf_config.c — the HuggingFace config.json reader (common/hf_config.c):
 * what a client sends as hf_config_json.
 */
#include <stdlib.h>

#include "fuzz.h"
#include "hf_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = tsl_fuzz_cstr(data, size);
    tsl_model_t *m = calloc(1, sizeof *m);
    tsl_err_t err = {0};
    uint32_t seq = size > 0 && data[0] == 's' ? 4096 : 0; /* both paths */
    if (m) {
        tsl_hf_config_parse(text, "fuzz", seq, m, &err);
        tsl_model_free(m); /* safe after a failure too (model.h) */
    }
    free(m);
    free(text);
    return 0;
}
