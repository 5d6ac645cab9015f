/*
 * log.c — the one logging module (see log.h; tmux's log.c in spirit).
 *
 * Line format: "LEVEL message\n" on stderr, one write per line under a mutex so
 * that lines from many threads never interleave.
 *
 * No timestamp: under systemd, journald stamps every line itself (with more
 * precision than we would), and a second stamp only makes lines longer. When
 * stderr *is* the journal ($JOURNAL_STREAM names stderr's device:inode), each line
 * also gets the sd-daemon "<N>" priority prefix, which journald strips and turns
 * into the entry's priority, so `journalctl -p warning` works. Run by hand, the
 * lines are plain "LEVEL message".
 */
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define LOG_LINE_MAX 2048

static atomic_int log_level = TSL_LOG_INFO;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static int log_journal; /* stderr is connected to journald */

static const struct {
    const char *name;  /* as parsed */
    const char *label; /* as printed */
    int syslog_prio;   /* sd-daemon prefix */
} LEVELS[] = {
    [TSL_LOG_ERROR] = {"error", "ERROR", 3},
    [TSL_LOG_WARN] = {"warn", "WARN", 4},
    [TSL_LOG_INFO] = {"info", "INFO", 6},
    [TSL_LOG_DEBUG] = {"debug", "DEBUG", 7},
};

static void log_detect_journal(void)
{
    const char *js = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    if (js == NULL || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st) != 0)
        return;
    log_journal = (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void tsl_log_set_level(tsl_log_level_t level)
{
    if (level < TSL_LOG_ERROR)
        level = TSL_LOG_ERROR;
    if (level > TSL_LOG_DEBUG)
        level = TSL_LOG_DEBUG;
    atomic_store(&log_level, (int)level);
}

tsl_log_level_t tsl_log_get_level(void)
{
    return (tsl_log_level_t)atomic_load(&log_level);
}

int tsl_log_parse_level(const char *text, tsl_log_level_t *out)
{
    for (int i = TSL_LOG_ERROR; text != NULL && i <= TSL_LOG_DEBUG; i++) {
        if (strcasecmp(text, LEVELS[i].name) == 0) {
            *out = (tsl_log_level_t)i;
            return 0;
        }
    }
    if (text != NULL && strcasecmp(text, "warning") == 0) {
        *out = TSL_LOG_WARN;
        return 0;
    }
    return -1;
}

/* Formats and writes one line; errnum > 0 appends ": strerror(errnum)". Newlines
 * inside a message become spaces: one event, one line. */
static void log_vwrite(tsl_log_level_t level, int errnum, const char *fmt, va_list ap)
{
    char line[LOG_LINE_MAX];
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    if (n < 0)
        snprintf(line, sizeof(line), "(unprintable log message)");
    if (errnum > 0) {
        size_t len = strlen(line);
        char ebuf[128];
        snprintf(line + len, sizeof(line) - len, ": %s", strerror_r(errnum, ebuf, sizeof(ebuf)));
    }
    for (char *p = line; *p != '\0'; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    pthread_once(&log_once, log_detect_journal);
    pthread_mutex_lock(&log_mu);
    if (log_journal)
        fprintf(stderr, "<%d>%s %s\n", LEVELS[level].syslog_prio, LEVELS[level].label, line);
    else
        fprintf(stderr, "%s %s\n", LEVELS[level].label, line);
    fflush(stderr);
    pthread_mutex_unlock(&log_mu);
}

/* Every entry point saves errno first and restores it last: logging must never
 * change the error the caller is about to act on. */
#define LOG_BODY(level, errnum)                                                                    \
    do {                                                                                           \
        int saved = errno;                                                                         \
        if ((int)(level) <= atomic_load(&log_level)) {                                             \
            va_list ap;                                                                            \
            va_start(ap, fmt);                                                                     \
            log_vwrite((level), (errnum) ? saved : 0, fmt, ap);                                    \
            va_end(ap);                                                                            \
        }                                                                                          \
        errno = saved;                                                                             \
    } while (0)

void tsl_log_error(const char *fmt, ...)
{
    LOG_BODY(TSL_LOG_ERROR, 0);
}

void tsl_log_warn(const char *fmt, ...)
{
    LOG_BODY(TSL_LOG_WARN, 1);
}

void tsl_log_warnx(const char *fmt, ...)
{
    LOG_BODY(TSL_LOG_WARN, 0);
}

void tsl_log_info(const char *fmt, ...)
{
    LOG_BODY(TSL_LOG_INFO, 0);
}

void tsl_log_debug(const char *fmt, ...)
{
    LOG_BODY(TSL_LOG_DEBUG, 0);
}

void tsl_fatalx(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vwrite(TSL_LOG_ERROR, 0, fmt, ap);
    va_end(ap);
    exit(1);
}
