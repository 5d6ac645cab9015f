/*
 * test_plan_json.c — common/plan_json.h: the request object follows
 * planner/request_fields.h (every field, in the list's order, under its key)
 * and reads back; a search result document carries the fingerprint it is given.
 */
#include <string.h>

#include "check.h"
#include "plan_json.h"

static void test_request_round_trip(void)
{
    tsl_request_t r, back;
    tsl_request_init(&r);
    uint32_t k = 1;
#define SET_(name, kind, ...) r.name = (TSL_REQUEST_CTYPE_##kind)(k += 3);
    TSL_REQUEST_FIELDS(SET_)
#undef SET_
    r.mem_budget_bytes = 80ull << 30; /* past 32 bits */
    json_t *o = tsl_request_to_json(&r);
    CHECK(o != NULL, "request JSON");
    const char *key;
    json_t *v;
    size_t i = 0;
    static const char *const keys[] = {
#define KEY_(name, kind, flag, metavar, min, max, help, proto, json) json,
        TSL_REQUEST_FIELDS(KEY_)
#undef KEY_
    };
    json_object_foreach(o, key, v)
    {
        CHECK(i < sizeof keys / sizeof keys[0] && strcmp(key, keys[i]) == 0,
              "key %zu is %s, in the list's order", i, key);
        i++;
    }
    CHECK(i == sizeof keys / sizeof keys[0], "%zu keys", i);
    CHECK(json_is_boolean(json_object_get(o, "no_pp")) &&
              json_integer_value(json_object_get(o, "memory_bytes")) == (json_int_t)(80ll << 30),
          "kinds: switches are booleans, sizes integers");
    tsl_request_from_json(o, &back);
    CHECK(memcmp(&r, &back, sizeof r) == 0, "request → JSON → request is the same request");
    json_decref(o);

    json_t *partial = json_pack("{s:I}", "top_k", (json_int_t)7);
    tsl_request_from_json(partial, &back);
    CHECK(back.top_k == 7 && back.global_batch == 0 && !back.no_pp, "missing keys read 0");
    json_decref(partial);
}

int main(void)
{
    test_request_round_trip();
    return CHECK_DONE();
}
