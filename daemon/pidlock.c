/*
 * pidlock.c — lock files that name their holder (pidlock.h).
 */
#include "pidlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The pid is read for a message only; an empty or unreadable file gives "". */
static void read_holder(int fd, char *buf, size_t cap)
{
    ssize_t n = pread(fd, buf, cap - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
}

int tsl_pidlock_take(const char *lock, mode_t mode, const char *what, int *fd_out, char *holder,
                     size_t cap, tsl_err_t *err)
{
    *fd_out = -1;
    holder[0] = '\0';
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode);
    if (fd < 0)
        return tsl_err_set(err, "%s: cannot open lock file %s: %s%s", what, lock, strerror(errno),
                           errno == ELOOP ? " (it is a symbolic link; remove it)" : "");
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return tsl_err_set(err, "%s: lock file %s is not a regular file; remove it", what, lock);
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        read_holder(fd, holder, cap);
        close(fd);
        if (e == EWOULDBLOCK)
            return 1;
        return tsl_err_set(err, "%s: cannot lock %s: %s", what, lock, strerror(e));
    }
    *fd_out = fd;
    return 0;
}

int tsl_pidlock_write_pid(int fd)
{
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    return ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) == n ? 0 : -1;
}
