/*
 * test_store_faults.c — the store when the disk fails under it: an SQLite VFS
 * shim (registered as the default, wrapping the real one) makes writes fail
 * with "disk full" (SQLITE_FULL) or an I/O error (SQLITE_IOERR_WRITE) while a
 * plan is stored, at the transaction's first write or after one page went out. Each time: tsl_store_put_plan fails
 * with a message naming the database and the fault, the store stays usable,
 * every plan stored before is still readable, and the file passes
 * integrity_check — after the fault clears and after a reopen.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "store.h"

/* ---- the shim --------------------------------------------------------------------------- */

typedef enum { FAULT_NONE, FAULT_FULL, FAULT_IOERR } fault_t;
static fault_t fault;
static int writes_before_fault; /* > 0: that many writes succeed first (a torn write) */
static int faults_hit;
static sqlite3_vfs *real_vfs;
static sqlite3_vfs shim_vfs;
static sqlite3_io_methods shim_io;

typedef struct shim_file {
    sqlite3_file base;  /* first: SQLite sees this */
    sqlite3_file *real; /* the real VFS's file, allocated after us */
} shim_file_t;

#define REAL(f) (((shim_file_t *)(f))->real)

static int shim_close(sqlite3_file *f)
{
    return REAL(f)->pMethods->xClose(REAL(f));
}
static int shim_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o)
{
    return REAL(f)->pMethods->xRead(REAL(f), b, n, o);
}
static int shim_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
    if ((fault == FAULT_FULL || fault == FAULT_IOERR) && writes_before_fault-- <= 0) {
        faults_hit++;
        return fault == FAULT_FULL ? SQLITE_FULL : SQLITE_IOERR_WRITE;
    }
    return REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}
static int shim_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}
static int shim_sync(sqlite3_file *f, int flags)
{
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int shim_size(sqlite3_file *f, sqlite3_int64 *s)
{
    return REAL(f)->pMethods->xFileSize(REAL(f), s);
}
static int shim_lock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xLock(REAL(f), l);
}
static int shim_unlock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xUnlock(REAL(f), l);
}
static int shim_check(sqlite3_file *f, int *r)
{
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r);
}
static int shim_fcntl(sqlite3_file *f, int op, void *a)
{
    return REAL(f)->pMethods->xFileControl(REAL(f), op, a);
}
static int shim_sector(sqlite3_file *f)
{
    return REAL(f)->pMethods->xSectorSize(REAL(f));
}
static int shim_devchar(sqlite3_file *f)
{
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int shim_shmmap(sqlite3_file *f, int pg, int sz, int ext, void volatile **p)
{
    return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, ext, p);
}
static int shim_shmlock(sqlite3_file *f, int off, int n, int flags)
{
    return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}
static void shim_shmbarrier(sqlite3_file *f)
{
    REAL(f)->pMethods->xShmBarrier(REAL(f));
}
static int shim_shmunmap(sqlite3_file *f, int del)
{
    return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

static int shim_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
    (void)vfs;
    shim_file_t *sf = (shim_file_t *)f;
    sf->real = (sqlite3_file *)(sf + 1);
    int rc = real_vfs->xOpen(real_vfs, name, sf->real, flags, out);
    sf->base.pMethods = rc == SQLITE_OK && sf->real->pMethods ? &shim_io : NULL;
    return rc;
}

static void shim_install(void)
{
    real_vfs = sqlite3_vfs_find(NULL);
    shim_vfs = *real_vfs;
    shim_vfs.zName = "tsl-faulty";
    shim_vfs.szOsFile = (int)sizeof(shim_file_t) + real_vfs->szOsFile;
    shim_vfs.xOpen = shim_open;
    shim_io = (sqlite3_io_methods){
        .iVersion = 2,
        .xClose = shim_close,
        .xRead = shim_read,
        .xWrite = shim_write,
        .xTruncate = shim_truncate,
        .xSync = shim_sync,
        .xFileSize = shim_size,
        .xLock = shim_lock,
        .xUnlock = shim_unlock,
        .xCheckReservedLock = shim_check,
        .xFileControl = shim_fcntl,
        .xSectorSize = shim_sector,
        .xDeviceCharacteristics = shim_devchar,
        .xShmMap = shim_shmmap,
        .xShmLock = shim_shmlock,
        .xShmBarrier = shim_shmbarrier,
        .xShmUnmap = shim_shmunmap,
    };
    sqlite3_vfs_register(&shim_vfs, 1); /* the default: tsl_store_open uses it */
}

/* ---- the test ------------------------------------------------------------------------------ */

static tsl_stored_plan_t plan(int i)
{
    static char fps[64][17];
    tsl_stored_plan_t p;
    memset(&p, 0, sizeof p);
    snprintf(fps[i], sizeof fps[i], "%016x", 0xabc000 + i);
    memcpy(p.fingerprint, fps[i], 17);
    snprintf(p.model_name, sizeof p.model_name, "model-%d", i);
    p.n_devices = 8;
    p.global_batch = 64;
    p.iter_time_s = 1.0 + i;
    p.samples_per_s = 10;
    p.search_time_s = 0.1;
    p.request_json = (char *)"{\"model\":\"x\"}";
    p.result_json =
        (char *)"{\"plan\":{\"padding\":\"................................................\"}}";
    return p;
}

static void check_readable(tsl_store_t *s, int n, const char *when)
{
    int found = 0;
    for (int i = 0; i < n; i++) {
        tsl_stored_plan_t p = plan(i), got;
        tsl_err_t err = {0};
        memset(&got, 0, sizeof got);
        if (tsl_store_get_plan(s, p.fingerprint, &got, &err) == 0 && got.iter_time_s == 1.0 + i)
            found++;
        tsl_stored_plan_clear(&got);
    }
    CHECK(found == n, "%s: %d of %d earlier plans readable", when, found, n);
    tsl_err_t err = {0};
    CHECK(tsl_store_check(s, &err) == 0, "%s: integrity_check: %s", when, err.msg);
}

static void one_fault(const char *path, fault_t f, int after, const char *name, const char *want)
{
    tsl_store_t *s = NULL;
    tsl_err_t err = {0};
    unlink(path);
    CHECK(tsl_store_open(path, &s, &err) == 0, "%s: open: %s", name, err.msg);
    if (!s)
        return;
    for (int i = 0; i < 20; i++) {
        tsl_stored_plan_t p = plan(i);
        CHECK(tsl_store_put_plan(s, &p, &err) == 0, "%s: put %d: %s", name, i, err.msg);
    }
    fault = f;
    writes_before_fault = after;
    faults_hit = 0;
    tsl_stored_plan_t p = plan(20);
    int rc = tsl_store_put_plan(s, &p, &err);
    fault = FAULT_NONE;
    CHECK(faults_hit > 0, "%s: the fault was hit", name);
    CHECK(rc == -1 && strstr(err.msg, path) && strstr(err.msg, want),
          "%s: put fails naming the database and '%s': %s", name, want, err.msg);
    check_readable(s, 20, name);
    p = plan(21);
    CHECK(tsl_store_put_plan(s, &p, &err) == 0, "%s: the store works again: %s", name, err.msg);
    tsl_store_close(s);
    s = NULL;
    CHECK(tsl_store_open(path, &s, &err) == 0, "%s: reopen: %s", name, err.msg);
    if (s) {
        check_readable(s, 20, name);
        tsl_store_close(s);
    }
}

int main(void)
{
    char dir[256], path[300];
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tsl-faults-XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(dir) == NULL)
        SKIP_ALL("cannot create a temporary directory");
    snprintf(path, sizeof path, "%s/t.db", dir);
    shim_install();
    one_fault(path, FAULT_FULL, 0, "disk full", "free space on its file system");
    one_fault(path, FAULT_FULL, 1, "disk full after one page", "free space on its file system");
    one_fault(path, FAULT_IOERR, 0, "write error", "check the disk");
    one_fault(path, FAULT_IOERR, 1, "write error after one page", "check the disk");
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return CHECK_DONE();
}
