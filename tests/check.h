/*
 * check.h — the tiny assertion kit the unit tests share.
 *
 * CHECK(cond, fmt, ...) records a pass or a failure (with file:line and the
 * message) and goes on; CHECK_DONE() prints "N passed, M failed" and returns the
 * exit status meson expects (0 all passed, 1 otherwise). SKIP_ALL(why) exits 77,
 * which meson reports as skipped.
 */
#ifndef TSL_TEST_CHECK_H
#define TSL_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int check_passed, check_failed;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            check_passed++;                                                                        \
        } else {                                                                                   \
            check_failed++;                                                                        \
            fprintf(stderr, "%s:%d: FAIL: %s: ", __FILE__, __LINE__, #cond);                       \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, rel, ...)                                                                 \
    CHECK(fabs((double)(a) - (double)(b)) <= (rel)*fmax(fabs((double)(a)), fabs((double)(b))),     \
          __VA_ARGS__)

#define CHECK_DONE()                                                                               \
    (printf("%d passed, %d failed\n", check_passed, check_failed), check_failed ? 1 : 0)

#define SKIP_ALL(why)                                                                              \
    do {                                                                                           \
        printf("SKIP: %s\n", why);                                                                 \
        exit(77);                                                                                  \
    } while (0)

#endif
