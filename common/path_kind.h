/*
 * path_kind.h — whether a path a person gave is the kind of thing the option
 * takes, said before it is read: a directory opens and reads as nothing, so a
 * JSON reader would report "'[' or '{' expected near end of file", and a
 * directory reader that skips what it cannot open would report the files it
 * did not find. Both name the path and what is wrong with it instead.
 */
#ifndef TSL_PATH_KIND_H
#define TSL_PATH_KIND_H

#include "err.h"

/* 0 when path is not a directory (a missing file is left to the reader, which
 * names the open error); else -1 with err "WHAT PATH: is a directory; give
 * the file" (TSL_E_INVALID). what: the message's prefix, e.g. "profile". */
int tsl_path_not_dir(const char *what, const char *path, tsl_err_t *err);

/* 0 when path is a directory; else -1 with err "WHAT PATH: <strerror>"
 * (TSL_E_NOTFOUND where it does not exist) or "WHAT PATH: not a directory;
 * give the directory that holds HOLDS" (TSL_E_INVALID). */
int tsl_path_is_dir(const char *what, const char *path, const char *holds, tsl_err_t *err);

/* 0 when a file could be written at path: not empty, not "-" (a file of that
 * name in one mode, standard output in another), not a directory, and
 * either writable or absent in a writable directory; else -1 with err "WHAT
 * 'PATH': <why>" (TSL_E_INVALID). For an output named on the command line,
 * checked before a long computation whose result it is to hold. */
int tsl_path_writable(const char *what, const char *path, tsl_err_t *err);

#endif
