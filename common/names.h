/*
 * names.h — the one rule for a name a person or a peer gives that Tessel writes
 * again where a line or a string ends: a model's name (tesselctl --name, an HF
 * config's _name_or_path), a worker's hostname, GPU model and versions, a metric's
 * name and labels. Such a name becomes a cell of a table, a line of a log, a
 * profile's key, a comment line of an export, a JSON or Python string; a control
 * character or a double quote would end that line or string there
 * ("x\nimport os" wrote a live line of Python), so none may hold one.
 *
 * Each caller adds the characters its own uses forbid ('/' in a model name, the
 * last component of a path; '\\' in the registry's names, read back as escapes)
 * and words its own message (its field, its remedy).
 */
#ifndef TSL_NAMES_H
#define TSL_NAMES_H

/* The first character of s that may not stand in a name — a control character
 * (below 0x20, or DEL 0x7f), a double quote, a Unicode control a terminal or viewer
 * acts on (err.h tsl_err_unicode_control: C1 controls, line separators, bidi
 * overrides; "node\u202e1" shows reversed in a table), or one of extra (may be
 * NULL or "") — or NULL where s (NUL-terminated) holds none. */
const char *tsl_name_bad_char(const char *s, const char *extra);
/* The first control character of s (NUL-terminated) by the same rule — below 0x20,
 * DEL, or a Unicode control (err.h tsl_err_unicode_control) — or NULL: for text that
 * may hold a double quote but no character that would end a message's line or act on
 * the terminal (a file name: tesselctl's tsl_path_opt). */
const char *tsl_control_char(const char *s);

#endif
