/*
 * pidlock.h — an exclusive lock file holding its holder's pid: what keeps a
 * second tesseld off a unix socket (server_listen.c) and off a database
 * (store.c). flock on "<path>.lock", opened without following a symbolic link
 * (a planted "<path>.lock -> victim" must not get the victim truncated) and
 * refused unless a regular file; the lock lasts while the descriptor is open.
 */
#ifndef TSL_PIDLOCK_H
#define TSL_PIDLOCK_H

#include <stddef.h>
#include <sys/types.h>

#include "err.h"

/* Takes lock (created with mode). 0: held by us, *fd_out open; 1: another
 * process holds it, its pid (as it wrote it, "" if none) in holder; -1: err
 * says why, prefixed by what ("unix_socket", "database PATH"). */
int tsl_pidlock_take(const char *lock, mode_t mode, const char *what, int *fd_out, char *holder,
                     size_t cap, tsl_err_t *err);

/* Writes our pid into a lock taken: 0, or -1 with errno set. */
int tsl_pidlock_write_pid(int fd);

#endif
