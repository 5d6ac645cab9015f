/*
 * log.h — one logging module for every program (tmux's log.c style).
 *
 * Lines go to stderr (journald picks them up under systemd) as
 * "LEVEL message". tsl_log_warn appends strerror(errno). gRPC's own log
 * lines are routed here by tsl_log_route_grpc() (in the rpc glue).
 * Thread-safe: one fprintf per line under a mutex.
 */
#ifndef TSL_LOG_H
#define TSL_LOG_H

typedef enum { TSL_LOG_ERROR = 0, TSL_LOG_WARN, TSL_LOG_INFO, TSL_LOG_DEBUG } tsl_log_level_t;

void tsl_log_set_level(tsl_log_level_t level);
tsl_log_level_t tsl_log_get_level(void);
/* "error" | "warn" | "info" | "debug"; returns -1 for anything else. */
int tsl_log_parse_level(const char *text, tsl_log_level_t *out);

void tsl_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tsl_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* + errno */
void tsl_log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tsl_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tsl_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tsl_fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
