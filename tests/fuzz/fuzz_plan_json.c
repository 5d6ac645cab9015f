/*
 * fuzz_plan_json.c — the stored plan document → tessel.v1.Plan conversion
 * (tsl_plan_proto_from_json, api/plan_proto.c). A database edited by hand or
 * restored from elsewhere feeds it.
 */
#include <stdlib.h>

#include "arena.h"
#include "plan_proto.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = tsl_fuzz_cstr(data, size);
    tsl_arena_t arena = {0};
    Tessel__V1__Plan *plan = NULL;
    tsl_err_t err = {0};
    if (tsl_plan_proto_from_json(text, &arena, &plan, &err) == 0 && plan) {
        /* The message must pack: every pointer it holds is valid. */
        size_t n = protobuf_c_message_get_packed_size(&plan->base);
        uint8_t *buf = malloc(n ? n : 1);
        if (buf)
            protobuf_c_message_pack(&plan->base, buf);
        free(buf);
    }
    tsl_arena_free(&arena);
    free(text);
    return 0;
}
