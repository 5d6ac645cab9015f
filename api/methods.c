/*
 * methods.c — the method table (methods.h).
 */
#include "methods.h"

const tsl_rpc_method_t tsl_rpc_methods[TSL_RPC_ID_COUNT] = {
#define TSL_RPC_ROW_(id, path, name) [TSL_RPC_ID_##id] = {path, name},
    TSL_RPC_METHODS(TSL_RPC_ROW_)
#undef TSL_RPC_ROW_
};
