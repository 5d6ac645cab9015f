/* Tests for common/args: the one byte-size parser's command-line form (args.h):
 * decimal digits, an optional fraction and a binary unit, a whole number of bytes;
 * hex, exponents and fractions of a byte refused naming the field; and the decimal
 * number parser's hexadecimal refused. */
#include <stdint.h>
#include <string.h>

#include "args.h"
#include "check.h"
#include "err.h"
#include "names.h"

static void accepts(const char *text, uint64_t want)
{
    uint64_t got = 0;
    tsl_err_t err = {0};
    CHECK(tsl_parse_bytes("memory", text, &got, &err) == 0 && got == want,
          "'%s': %llu, want %llu (%s)", text, (unsigned long long)got, (unsigned long long)want,
          err.msg);
}

static void refuses(const char *text, const char *want)
{
    uint64_t got = 0;
    tsl_err_t err = {0};
    CHECK(tsl_parse_bytes("memory-reserve", text, &got, &err) == -1 &&
              strncmp(err.msg, "memory-reserve: ", 16) == 0 && strstr(err.msg, want),
          "'%s': %s", text, err.msg);
}

/* One of n words (tsl_parse_choice): the index, or an error naming the field and all n. */
static void test_choice(void)
{
    static const char *const two[] = {"rope", "yarn"}, *const four[] = {"a", "b", "c", "d"};
    size_t i = 9;
    tsl_err_t err = {0};
    CHECK(tsl_parse_choice("megatron: --rope-type", "yarn", two, 2, &i, &err) == 0 && i == 1,
          "yarn: %zu %s", i, err.msg);
    CHECK(tsl_parse_choice("megatron: --rope-type", "Yarn", two, 2, &i, &err) == -1 &&
              strcmp(err.msg, "megatron: --rope-type: 'Yarn' is not rope or yarn") == 0,
          "two words: %s", err.msg);
    CHECK(tsl_parse_choice("f", NULL, four, 4, &i, &err) == -1 &&
              strcmp(err.msg, "f: '' is not a, b, c or d") == 0,
          "four words, no value: %s", err.msg);
    CHECK(tsl_parse_choice("f", "d", four, 4, &i, &err) == 0 && i == 3, "the last word");
    CHECK(tsl_parse_choice("f", "x", four, 1, &i, &err) == -1 &&
              strcmp(err.msg, "f: 'x' is not a") == 0,
          "one word: %s", err.msg);
    /* A caller that matched its own words refuses as tsl_parse_choice does: the same
     * message, the text shown to the same length (tesselctl's --fp8 and --ckpt once
     * showed 40 bytes where --rope-type showed 64), no escape sequence raw. */
    char word[100] = "\x1b[2J";
    memset(word + 4, 'a', 90);
    tsl_err_t own = {0};
    CHECK(tsl_parse_choice("f", word, four, 4, &i, &err) == -1 &&
              tsl_choice_refused("f", word, "a, b, c or d", &own) == -1 &&
              strcmp(err.msg, own.msg) == 0 && strchr(own.msg, '\x1b') == NULL,
          "one refusal for both: '%s' / '%s'", err.msg, own.msg);
    size_t shown_a = strspn(strstr(own.msg, "aaa"), "a");
    CHECK(shown_a == 60, "the text's first 64 bytes shown: %zu of its 'a's", shown_a);
}

/* names.h: the one rule of tesselctl's --name, the registry's names and an HF
 * config's model name — no control character, no double quote, plus each caller's own */
static void test_name_rule(void)
{
    const char *clean[] = {"Llama3-8B", "node 7 (rack b)", "x'y", "caf\xc3\xa9", ""};
    for (size_t i = 0; i < sizeof clean / sizeof clean[0]; i++)
        CHECK(tsl_name_bad_char(clean[i], NULL) == NULL, "'%s' is a clean name", clean[i]);
    const char *s = "ab\ncd";
    CHECK(tsl_name_bad_char(s, NULL) == s + 2, "a newline at 2");
    CHECK(tsl_name_bad_char("a\x7f", "") != NULL && tsl_name_bad_char("\x1b[2J", NULL) != NULL &&
              tsl_name_bad_char("a\"b", NULL) != NULL && tsl_name_bad_char("\t", NULL) != NULL,
          "DEL, ESC, a quote and a tab are refused");
    /* the Unicode controls a terminal or a viewer acts on: an 8-bit CSI, a line
     * separator, a right-to-left override, an isolate; other non-ASCII stays */
    const char *u = "node\xe2\x80\xae"
                    "1";
    CHECK(tsl_name_bad_char("a\xc2\x9b"
                            "2J",
                            NULL) != NULL &&
              tsl_name_bad_char("a\xe2\x80\xa8"
                                "b",
                                NULL) != NULL &&
              tsl_name_bad_char(u, NULL) == u + 4 &&
              tsl_name_bad_char("\xe2\x81\xa6"
                                "x",
                                NULL) != NULL &&
              tsl_name_bad_char("\xe4\xb8\xad\xc2\xa0\xe2\x80\xa0", NULL) == NULL,
          "C1, U+2028, U+202E, U+2066 refused; CJK, NBSP, a dagger kept");
    char shown[TSL_ERR_SHOWN_MAX(16)];
    CHECK(strcmp(tsl_err_shown(u, 16, shown, sizeof shown), "node\\xe2\\x80\\xae1") == 0,
          "shown escaped byte by byte: %s", shown);
    CHECK(tsl_name_bad_char("a/b", NULL) == NULL && tsl_name_bad_char("a/b", "/") != NULL &&
              tsl_name_bad_char("a\\b", "\\") != NULL,
          "a caller's own characters");
}

/* A value's escape sequence or newline is shown escaped (err.h tsl_err_shown), never
 * raw: tesselctl printed "tp: '1<ESC>[2J' is not a whole number", which cleared the
 * screen it was read on (found by tests/cli_fuzz.py). */
static void test_value_shown(void)
{
    const char *bad = "1\x1b[2J\nINFO x";
    uint32_t u = 0;
    uint64_t b = 0;
    double d = 0;
    size_t i = 0;
    const char *const one[] = {"a"};
    tsl_err_t e[5];
    memset(e, 0, sizeof e);
    CHECK(tsl_parse_u32("tp", bad, 1, 8, &u, &e[0]) == -1 &&
              tsl_parse_bytes("memory", bad, &b, &e[1]) == -1 &&
              tsl_parse_size("memory", bad, TSL_SIZE_STRICT, &b, &e[2]) == -1 &&
              tsl_parse_double("moe-imbalance", bad, 1, 8, &d, &e[3]) == -1 &&
              tsl_parse_choice("f", bad, one, 1, &i, &e[4]) == -1,
          "refused");
    for (int k = 0; k < 5; k++)
        CHECK(!strchr(e[k].msg, '\x1b') && !strchr(e[k].msg, '\n') &&
                  strstr(e[k].msg, "'1\\x1b[2J\\nINFO x'"),
              "shown escaped: %s", e[k].msg);
}

int main(void)
{
    test_value_shown();
    test_choice();
    test_name_rule();
    accepts("1048576", 1048576);
    accepts("16G", 16ull << 30);
    accepts("16GiB", 16ull << 30);
    accepts("512m", 512ull << 20);
    accepts("1.5G", 3ull << 29);
    accepts("0.25M", 1ull << 18);
    accepts("79.5G", 159ull << 29);
    accepts("1.000000000000000000000000000000T", 1ull << 40);
    accepts("0.0009765625K", 1); /* 2^-10 K: one byte */
    accepts("7B", 7);
    accepts("18446744073709551615", UINT64_MAX);
    /* a fraction that is no whole number of bytes: truncated before (1.5 -> 1 byte) */
    refuses("1.5", "'1.5' is not a whole number of bytes; a fraction needs a unit");
    refuses("0.1G", "not a whole number of bytes");
    refuses("2.5B", "not a whole number of bytes");
    /* hex, exponents, signs, blanks, inf: strtod took "0x10G" as 16 GiB, "1e3" as 1000 */
    const char *not_sizes[] = {"0x10G", "0X10", "1e3", "1E3G", "+16G", " 16G", "16G ",
                               "inf",   "nan",  ".5G", "1.",   "1.G",  "16 G", "1,5G"};
    for (size_t i = 0; i < sizeof not_sizes / sizeof not_sizes[0]; i++)
        refuses(not_sizes[i], "is not a size; write decimal digits, an optional fraction and a "
                              "unit, e.g. 16G, 1.5G, 512M or 1048576 (bytes)");
    refuses("80GB", "is ambiguous");
    refuses("1.5GB", "write 1.5G or 1.5GiB");
    refuses("-3G", "negative");
    refuses("0", "greater than zero");
    refuses("0.0G", "greater than zero");
    refuses("18446744073709551616", "too large");
    refuses("16777216T", "too large");
    refuses("", "missing size");
    /* the decimal numbers of --moe-imbalance, --moe-capacity-factor, ...: strtod read
     * C's hexadecimal floats, "0x10" as 16 and "0x1p2" as 4 */
    double d = 0;
    tsl_err_t err = {0};
    const char *not_numbers[] = {"0x10", "0X2", "-0x1", "0x1p2", "nan", "2 ", "1,5", ""};
    for (size_t i = 0; i < sizeof not_numbers / sizeof not_numbers[0]; i++)
        CHECK(tsl_parse_double("moe-imbalance", not_numbers[i], 1, 1024, &d, &err) == -1 &&
                  strstr(err.msg, "moe-imbalance: "),
              "'%s' refused naming the flag: %s", not_numbers[i], err.msg);
    const char *numbers[] = {"2", "2.5", "1e1", "1.5E1", "+3"};
    const double values[] = {2, 2.5, 10, 15, 3};
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++)
        CHECK(tsl_parse_double("moe-imbalance", numbers[i], 1, 1024, &d, &err) == 0 &&
                  d == values[i],
              "'%s': %g (%s)", numbers[i], d, err.msg);
    return CHECK_DONE();
}
