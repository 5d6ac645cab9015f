/*
 * fuzz.h — the contract every harness in tests/fuzz/ implements: libFuzzer's
 * entry point. Built two ways (tests/fuzz/meson.build):
 *  - with clang and -Dfuzzing=true: linked with -fsanitize=fuzzer (bench/fuzz
 *    runs them long);
 *  - otherwise (gcc): linked with replay.c, which feeds each corpus file and a
 *    bounded number of deterministic mutations of it (the tests/run smoke test).
 * A harness must not leak, must not keep state between inputs and must treat
 * any input as possible: a crash, a sanitizer report or a hang is a bug.
 */
#ifndef TSL_FUZZ_H
#define TSL_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated malloc'd copy of the input (parsers take C strings). */
char *tsl_fuzz_cstr(const uint8_t *data, size_t size);

#endif
