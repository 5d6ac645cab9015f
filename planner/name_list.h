/*
 * name_list.h — a bitmask of named items written as the comma-separated list a
 * person types (recompute_modules' "mlp,moe", cuda_graph_modules'
 * "attn,moe_router"): bit i is names[i], in the table's order.
 */
#ifndef TSL_NAME_LIST_H
#define TSL_NAME_LIST_H

#include <stddef.h>
#include <stdint.h>

/* Writes the names of mask's bits below count, comma-separated, into buf (cap bytes,
 * always NUL-terminated when cap > 0, truncated where it does not fit) and returns
 * the length the whole list needs, as snprintf does; "" for no bit. */
size_t tsl_name_list_format(const char *const *names, uint32_t count, uint32_t mask, char *buf,
                            size_t cap);

#endif
