/*
 * test_plan_json.c — common/plan_json.h: the request object follows
 * planner/request_fields.h (every field, in the list's order, under its key)
 * and reads back, and a hand-edited one is checked by the same list; a search
 * result document carries the fingerprint it is given.
 */
#include <string.h>

#include "check.h"
#include "cuda_graph.h"
#include "name_list.h"
#include "plan_json.h"
#include "recompute.h"

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

    /* module_precision: a list as --module-precision takes it, read back to its nibbles
       (linear_proj bf16, out_proj mxfp8); tessel.v1's nibbles read as such */
    tsl_request_init(&r);
    r.module_prec = 0x500010;
    o = tsl_request_to_json(&r);
    CHECK(json_is_string(json_object_get(o, "module_precision")) &&
              strcmp(json_string_value(json_object_get(o, "module_precision")),
                     "linear_proj=bf16,out_proj=mxfp8") == 0,
          "module_precision as the list");
    tsl_request_from_json(o, &back);
    CHECK(back.module_prec == 0x500010, "the list read back: 0x%x", back.module_prec);
    json_object_set_new(o, "module_precision", json_integer(0x1001));
    tsl_request_from_json(o, &back);
    CHECK(back.module_prec == 0x1001, "the nibbles read back: 0x%x", back.module_prec);
    json_decref(o);

    json_t *partial = json_pack("{s:I}", "top_k", (json_int_t)7);
    tsl_request_from_json(partial, &back);
    CHECK(back.top_k == 7 && back.global_batch == 0 && !back.no_pp, "missing keys read 0");
    json_decref(partial);
}

/* The request object checked by request_fields.h (tsl_request_json_check): what
 * tsl_request_to_json writes for a request in range passes, and each kind's
 * wrong type or out-of-range value is refused naming the key (each read loosely
 * before: "no_mtp": 1 as false, "mtp_layers": -1 as 0, "host_op_us": 1e300 or
 * "moe_imbalance": "2" passed to the pricing). */
static void test_request_json_check(void)
{
    tsl_request_t r;
    tsl_request_init(&r);
    json_t *o = tsl_request_to_json(&r);
    tsl_err_t err = {0};
    CHECK(tsl_request_json_check(o, &err) == 0, "a default request's JSON: %s", err.msg);
    r.mtp_layers = 16;
    r.host_op_us = 57.2;
    r.moe_imbalance = 1.5;
    r.no_mtp = true;
    r.target = TSL_TARGET_MEGATRON;
    r.mem_budget_bytes = 80ull << 30;
    json_decref(o);
    o = tsl_request_to_json(&r);
    CHECK(tsl_request_json_check(o, &err) == 0, "a request in range: %s", err.msg);
    static const struct {
        const char *key, *value, *msg;
    } bad[] = {
        {"no_mtp", "1", "request.no_mtp: expected true or false, got a number"},
        {"mtp_layers", "-1", "request.mtp_layers: -1 is out of range; expected 0..16"},
        {"mtp_layers", "17", "request.mtp_layers: 17 is out of range; expected 0..16"},
        {"mtp_layers", "\"2\"", "request.mtp_layers: expected a whole number 0..16, got a string"},
        {"mtp_layers", "2.5", "request.mtp_layers: expected a whole number 0..16, got a number"},
        {"host_op_us", "1e300", "request.host_op_us: 1e+300 is not from 1 to 100000"},
        {"moe_imbalance", "\"2\"", "request.moe_imbalance: expected a number, got a string"},
        {"moe_capacity_factor", "-1", "request.moe_capacity_factor: -1 is not from 0 to 64"},
        {"memory_bytes", "-5", "request.memory_bytes: expected a whole number of bytes"},
        {"recompute_modules", "\"mlp\"", "request.recompute_modules: expected an array"},
        {"loss_impl", "true", "request.loss_impl: expected an implementation's name"},
        {"loss_impl", "\"xentropy\"", "request.loss_impl: 'xentropy' is not exec, torch"},
        {"loss_impl", "9223372036854775807", "request.loss_impl: 9223372036854775807 is not an"},
        {"recompute_modules", "9223372036854775807",
         "request.recompute_modules: 9223372036854775807 is not a module bitmask"},
        {"recompute_modules", "[1.5]",
         "request.recompute_modules[0]: expected a module's name, got a number"},
        {"module_precision", "\"qkv=bf16\"",
         "request: module_precision: 'qkv' names no module Tessel prices"},
        {"module_precision", "\"linear_qkv=delayed\"",
         "request: module_precision: linear_qkv: 'delayed' is not a precision"},
        {"module_precision", "7", "request: module_precision: 0x7: linear_qkv's value 7 is no"},
        {"module_precision", "-1", "request.module_precision: expected a list of module"},
        {"module_precision", "[\"linear_qkv=bf16\"]",
         "request.module_precision: expected a list of module=precision items (or tessel.v1's "
         "nibbles), got an array"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *c = json_deep_copy(o);
        json_object_set_new(c, bad[i].key, json_loads(bad[i].value, JSON_DECODE_ANY, NULL));
        err.msg[0] = '\0';
        CHECK(tsl_request_json_check(c, &err) == -1 && strstr(err.msg, bad[i].msg), "%s %s: '%s'",
              bad[i].key, bad[i].value, err.msg);
        json_decref(c);
    }
    json_object_set_new(o, "mtp_layers", json_null());
    CHECK(tsl_request_json_check(o, &err) == 0, "null reads as the default: %s", err.msg);
    json_decref(o);
}

/* A bitmask's names as the document and the stack line write them (name_list.h):
 * in the table's order, comma-separated, the whole length returned where the buffer
 * cuts the list, and bits past the table ignored. */
static void test_name_list_format(void)
{
    static const char *const names[3] = {"a", "bb", "ccc"};
    char buf[64];
    CHECK(tsl_name_list_format(names, 3, 0x5, buf, sizeof buf) == 5 && strcmp(buf, "a,ccc") == 0,
          "bits 0 and 2: '%s'", buf);
    CHECK(tsl_name_list_format(names, 3, 0, buf, sizeof buf) == 0 && buf[0] == '\0', "no bit");
    CHECK(tsl_name_list_format(names, 3, 0x8 | 0x2, buf, sizeof buf) == 2 && strcmp(buf, "bb") == 0,
          "a bit past the table ignored: '%s'", buf);
    CHECK(tsl_name_list_format(names, 3, 0x7, buf, 4) == 8 && strcmp(buf, "a,b") == 0,
          "cut at the buffer, the whole length returned: '%s'", buf);
    CHECK(tsl_cuda_graph_modules_format(TSL_CUDA_GRAPH_ATTN | TSL_CUDA_GRAPH_MOE_ROUTER, buf,
                                        sizeof buf) > 0 &&
              strcmp(buf, "attn,moe_router") == 0,
          "cuda_graph_modules: '%s'", buf);
    CHECK(tsl_recompute_modules_format(TSL_RECOMPUTE_MLP | TSL_RECOMPUTE_MOE, buf, sizeof buf) >
                  0 &&
              strcmp(buf, "mlp,moe") == 0,
          "recompute_modules: '%s'", buf);
}

int main(void)
{
    test_request_round_trip();
    test_name_list_format();
    test_request_json_check();
    return CHECK_DONE();
}
