/*
 * path_kind.c — a path's kind checked before it is read (path_kind.h).
 */
#include "path_kind.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int tsl_path_writable(const char *what, const char *path, tsl_err_t *err)
{
    struct stat st;
    if (!path || !*path)
        return tsl_err_setc(err, TSL_E_INVALID, "%s: an empty file name", what);
    if (strcmp(path, "-") == 0) /* a file named "-" here, standard output elsewhere */
        return tsl_err_setc(err, TSL_E_INVALID,
                            "%s: '-' is not a file name here (standard output carries the "
                            "result); give a file, or /dev/stdout",
                            what);
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return tsl_err_setc(err, TSL_E_INVALID, "%s '%s': is a directory; give a file", what,
                                path);
        if (access(path, W_OK) != 0)
            return tsl_err_setc(err, TSL_E_INVALID, "%s '%s': cannot be written: %s", what, path,
                                strerror(errno));
        return 0;
    }
    /* absent: its directory must exist and take a new file */
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return tsl_err_setc(err, TSL_E_INVALID, "%s '%s': its directory %s does not exist", what,
                            path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return tsl_err_setc(err, TSL_E_INVALID, "%s '%s': cannot create a file in %s: %s", what,
                            path, dir, strerror(errno));
    return 0;
}
