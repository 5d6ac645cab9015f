/*
 * agent_spool.c — reports waiting for tesseld, one file each (agent.h).
 *
 * A name is <16-digit sequence>-<report id>.report; the sequence continues past
 * the highest one found at open, so files sort oldest first across restarts.
 * Each file is written as NAME.tmp, fsync'd, renamed, and the directory fsync'd:
 * after a crash a report is either whole or absent, never half there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"

#define SUFFIX           ".report"
#define MAX_REPORT_BYTES (64u * 1024 * 1024)

static bool is_report(const char *name)
{
    size_t n = strlen(name), s = strlen(SUFFIX);
    return n > 17 + s && name[16] == '-' && strspn(name, "0123456789") == 16 &&
           strcmp(name + n - s, SUFFIX) == 0;
}

/* Calls fn on each report name in the directory; counts them. */
static int scan(const tsl_spool_t *sp, void (*fn)(void *, const char *), void *ud, uint32_t *count,
                tsl_err_t *err)
{
    DIR *d = opendir(sp->dir);
    struct dirent *e;
    *count = 0;
    if (!d)
        return tsl_err_set(err, "spool %s: %s", sp->dir, strerror(errno));
    while ((e = readdir(d)) != NULL) {
        if (!is_report(e->d_name))
            continue;
        (*count)++;
        if (fn)
            fn(ud, e->d_name);
    }
    closedir(d);
    return 0;
}

static void keep_max_seq(void *ud, const char *name)
{
    uint64_t *seq = ud, v = strtoull(name, NULL, 10);
    if (v >= *seq)
        *seq = v + 1;
}

typedef struct oldest {
    char name[256];
} oldest_t;

static void keep_oldest(void *ud, const char *name)
{
    oldest_t *o = ud;
    if (!o->name[0] || strcmp(name, o->name) < 0)
        snprintf(o->name, sizeof o->name, "%s", name);
}

int tsl_spool_open(tsl_spool_t *sp, const char *dir, uint32_t max_files, tsl_err_t *err)
{
    uint32_t n;
    memset(sp, 0, sizeof *sp);
    if (snprintf(sp->dir, sizeof sp->dir, "%s", dir) >= (int)sizeof sp->dir)
        return tsl_err_set(err, "spool: directory name '%.40s...' too long", dir);
    sp->max_files = max_files ? max_files : 1;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return tsl_err_set(err, "spool: cannot create %s: %s", dir, strerror(errno));
    return scan(sp, keep_max_seq, &sp->seq, &n, err);
}

uint32_t tsl_spool_count(const tsl_spool_t *sp)
{
    uint32_t n = 0;
    return scan(sp, NULL, NULL, &n, NULL) == 0 ? n : 0;
}

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

static int write_file(const tsl_spool_t *sp, const char *name, const void *buf, size_t n,
                      tsl_err_t *err)
{
    char tmp[610], path[600];
    snprintf(path, sizeof path, "%s/%s", sp->dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return tsl_err_set(err, "spool: cannot write %s: %s", tmp, strerror(errno));
    bool ok = write_all(fd, buf, n) == 0 && fsync(fd) == 0;
    int saved = errno;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        saved = ok ? errno : saved;
        unlink(tmp);
        return tsl_err_set(err, "spool: cannot write %s: %s", path, strerror(saved));
    }
    sync_dir(sp->dir);
    return 0;
}

int tsl_spool_put(tsl_spool_t *sp, const char *id, const void *buf, size_t n, uint32_t *dropped,
                  tsl_err_t *err)
{
    char name[256];
    uint32_t count;
    *dropped = 0;
    if (!id[0] || strchr(id, '/') || strlen(id) > 200)
        return tsl_err_set(err, "spool: report id '%.40s' is not a file name", id);
    snprintf(name, sizeof name, "%016llu-%s" SUFFIX, (unsigned long long)sp->seq++, id);
    if (write_file(sp, name, buf, n, err) != 0)
        return -1;
    while (scan(sp, NULL, NULL, &count, err) == 0 && count > sp->max_files) {
        oldest_t o = {""};
        if (scan(sp, keep_oldest, &o, &count, err) != 0 || tsl_spool_remove(sp, o.name, err) != 0)
            return -1;
        (*dropped)++;
    }
    return 0;
}

static int read_file(const char *path, void **buf, size_t *n, tsl_err_t *err)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    *buf = NULL;
    if (!f || fstat(fileno(f), &st) != 0 || st.st_size > MAX_REPORT_BYTES) {
        int e = errno;
        if (f)
            fclose(f);
        return tsl_err_set(err, "spool: cannot read %s: %s", path, f ? "too large" : strerror(e));
    }
    *n = (size_t)st.st_size;
    *buf = malloc(*n ? *n : 1);
    bool ok = *buf && fread(*buf, 1, *n, f) == *n;
    fclose(f);
    if (!ok) {
        free(*buf);
        *buf = NULL;
        return tsl_err_set(err, "spool: cannot read %s", path);
    }
    return 0;
}

int tsl_spool_oldest(tsl_spool_t *sp, char *name, size_t cap, void **buf, size_t *n, tsl_err_t *err)
{
    oldest_t o = {""};
    uint32_t count;
    char path[600];
    if (scan(sp, keep_oldest, &o, &count, err) != 0)
        return -1;
    if (count == 0)
        return 1;
    snprintf(name, cap, "%s", o.name);
    snprintf(path, sizeof path, "%s/%s", sp->dir, o.name);
    return read_file(path, buf, n, err);
}

int tsl_spool_remove(tsl_spool_t *sp, const char *name, tsl_err_t *err)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", sp->dir, name);
    if (unlink(path) != 0 && errno != ENOENT)
        return tsl_err_set(err, "spool: cannot remove %s: %s", path, strerror(errno));
    sync_dir(sp->dir);
    return 0;
}

int tsl_spool_reject(tsl_spool_t *sp, const char *name, tsl_err_t *err)
{
    char path[600], to[620];
    snprintf(path, sizeof path, "%s/%s", sp->dir, name);
    snprintf(to, sizeof to, "%s.rejected", path);
    if (rename(path, to) != 0)
        return tsl_err_set(err, "spool: cannot move %s aside: %s", path, strerror(errno));
    return 0;
}
