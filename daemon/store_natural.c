/*
 * store_natural.c — the natural collation (store_natural.h).
 */
#include "store_natural.h"

#include <string.h>

static size_t digit_run(const char *s, size_t i, size_t n)
{
    size_t j = i;
    while (j < n && s[j] >= '0' && s[j] <= '9')
        j++;
    return j - i;
}

/* Two digit runs by value: leading zeros skipped, then the longer is larger, then
 * the digits in order. */
static int run_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    while (an > 1 && *a == '0')
        a++, an--;
    while (bn > 1 && *b == '0')
        b++, bn--;
    if (an != bn)
        return an < bn ? -1 : 1;
    return memcmp(a, b, an);
}

int tsl_natural_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    size_t i = 0, j = 0;
    while (i < an && j < bn) {
        size_t ra = digit_run(a, i, an), rb = digit_run(b, j, bn);
        if (ra && rb) {
            int c = run_cmp(a + i, ra, b + j, rb);
            if (c != 0)
                return c;
            i += ra;
            j += rb;
            continue;
        }
        if (a[i] != b[j])
            return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
        i++, j++;
    }
    if (i < an || j < bn)
        return i < an ? 1 : -1;
    /* equal by value ("02" and "2"): the text order, so that the order is total */
    size_t n = an < bn ? an : bn;
    int c = memcmp(a, b, n);
    return c ? c : (an > bn) - (an < bn);
}

static int collate(void *ud, int an, const void *a, int bn, const void *b)
{
    (void)ud;
    return tsl_natural_cmp(a, (size_t)an, b, (size_t)bn);
}

int tsl_store_natural_register(sqlite3 *db)
{
    return sqlite3_create_collation(db, "tsl_natural", SQLITE_UTF8, NULL, collate);
}
