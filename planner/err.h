/*
 * err.h — the error buffer every fallible Tessel function fills.
 *
 * Contract: a function that fails returns -1 (or a non-zero status) and, when
 * given a non-NULL tsl_err_t, writes one line a person can act on: it names the
 * field and says what was wrong ("memory: 0 is not a valid budget; give e.g. 16G").
 * The buffer is fixed-size so that reporting an error never allocates.
 *
 * Beside the message, an error carries a code: what kind of failure it is, so
 * that callers decide on the code (fall back to H3T when nothing fits, answer
 * INVALID_ARGUMENT or RESOURCE_EXHAUSTED, exit 2 or 3) and never on the text.
 * tsl_err_set() means "bad input" (TSL_E_INVALID), the common case; other kinds
 * go through tsl_err_setc(). tsl_err_prefix() keeps the code.
 */
#ifndef TSL_ERR_H
#define TSL_ERR_H

#include <stddef.h>

#define TSL_ERR_MAX 512

typedef enum tsl_errcode {
    TSL_E_NONE = 0,     /* no error recorded */
    TSL_E_INVALID,      /* bad input: the message names the field and the limit */
    TSL_E_NOFIT,        /* valid input, but no plan fits the memory budget */
    TSL_E_NOTFOUND,     /* no such plan, worker, profile, file */
    TSL_E_CANCELLED,    /* the caller cancelled or its deadline passed */
    TSL_E_EXHAUSTED,    /* a queue or quota is full: try again later */
    TSL_E_NOMEM,        /* an allocation failed */
    TSL_E_UNAVAILABLE,  /* a peer, a device or the store cannot be reached now */
    TSL_E_PRECONDITION, /* the system is not in a state to do it (no profile...) */
    TSL_E_UNSUPPORTED,  /* valid, but not something Tessel does (yet) */
    TSL_E_DEVICE,       /* a CUDA, cuBLAS or NCCL call failed */
    TSL_E_INTERNAL,     /* a bug: an invariant did not hold */
    TSL_E_COUNT
} tsl_errcode_t;

/* `tsl_err_t e = {0};` zeroes it all. */
typedef struct tsl_err {
    char msg[TSL_ERR_MAX];
    tsl_errcode_t code;
} tsl_err_t;

/* Formats into err (when non-NULL) and returns -1, so callers can write
 * `return tsl_err_set(err, "...")`. */
int tsl_err_set(tsl_err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* As tsl_err_set, with the kind of failure given explicitly. */
int tsl_err_setc(tsl_err_t *err, tsl_errcode_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The code of err; TSL_E_NONE for NULL or a cleared error. */
tsl_errcode_t tsl_err_code(const tsl_err_t *err);

/* "invalid", "nofit", ... (stable names, for logs and JSON). */
const char *tsl_errcode_name(tsl_errcode_t code);

/* Prefixes an existing message with "prefix: " (e.g. the file being read). */
int tsl_err_prefix(tsl_err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * s as a message may show it (for "unknown preset \"%s\"" and every other echo of
 * a name a caller gave): its first max_in bytes, a newline, tab or carriage return
 * as \n \t \r, any other control character (below 0x20, DEL) as \xNN, a double
 * quote and a backslash as \" and \\ — a raw newline would end the message's line
 * there and a log or a terminal would show the rest as a line of its own. Written
 * into buf (cap bytes, cap >= 1), cut at a whole character; returns buf.
 */
#define TSL_ERR_SHOWN_MAX(max_in) (4 * (max_in) + 1) /* a buffer that holds it all */
/* The byte length (2 or 3) of the UTF-8 character at s when it is one a terminal or a
 * viewer acts on rather than shows — a C1 control (U+0080..U+009F; U+009B is CSI
 * to a terminal that reads 8-bit controls), a line or paragraph separator (U+2028,
 * U+2029), a bidi embedding, override or isolate (U+202A..U+202E, U+2066..U+2069:
 * a table cell displayed in another order than its bytes) — else 0. tsl_err_shown
 * shows each of its bytes as \xNN; names.h refuses them in a name. */
size_t tsl_err_unicode_control(const char *s);
/* The first byte of s that no token Tessel parses from a line (a cluster spec, a
 * strategy) is spelt with — a control byte, a blank, a double quote, a backslash or a
 * byte past ASCII — or NULL where s holds none: text with one is refused whole and
 * shown through tsl_err_shown, so no message carries it raw. */
const char *tsl_err_token_bad_byte(const char *s);
const char *tsl_err_shown(const char *s, size_t max_in, char *buf, size_t cap);

#endif
