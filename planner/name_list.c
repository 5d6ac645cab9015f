/*
 * name_list.c — a bitmask as a comma-separated list of names (name_list.h).
 */
#include "name_list.h"

#include <stdio.h>

size_t tsl_name_list_format(const char *const *names, uint32_t count, uint32_t mask, char *buf,
                            size_t cap)
{
    size_t len = 0;
    if (cap > 0)
        buf[0] = '\0';
    for (uint32_t i = 0; i < count && i < 32; i++) {
        if (!(mask & (1u << i)))
            continue;
        int k = snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, "%s%s",
                         len ? "," : "", names[i]);
        len += k > 0 ? (size_t)k : 0;
    }
    return len;
}
