/*
 * path_kind.c — a path's kind checked before it is read (path_kind.h).
 */
#include "path_kind.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

int tsl_path_not_dir(const char *what, const char *path, tsl_err_t *err)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    return tsl_err_setc(err, TSL_E_INVALID, "%s %s: is a directory; give the file", what, path);
}

int tsl_path_is_dir(const char *what, const char *path, const char *holds, tsl_err_t *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return tsl_err_setc(err, errno == ENOENT ? TSL_E_NOTFOUND : TSL_E_INVALID, "%s %s: %s",
                            what, path, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return tsl_err_setc(err, TSL_E_INVALID,
                            "%s %s: not a directory; give the directory that holds %s", what, path,
                            holds);
    return 0;
}
