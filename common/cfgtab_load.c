/*
 * cfgtab_load.c — where a configuration's values come from (cfgtab.h): the INI
 * file and argv, both applied key by key through cfgtab.c.
 *
 * The file is read with inih through our own line reader: it counts lines (the
 * Debian build of inih does not pass line numbers to the handler), refuses lines
 * longer than inih's buffer instead of letting inih split them silently, and stops
 * the parse at the first error. The file is applied to a copy, so a bad file
 * leaves the caller's configuration untouched.
 */
#include "cfgtab.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the file ---------------------------------------------------------------------------- */

typedef struct cfg_parse {
    const tsl_cfgtab_t *t;
    void *work; /* the copy the file is applied to */
    FILE *fp;
    int lineno;
    int err_line; /* 0: no error of ours */
    tsl_err_t err;
    int *seen_line; /* per key, where it was set: a second setting is an error */
} cfg_parse_t;

static bool section_known(const tsl_cfgtab_t *t, const char *section)
{
    if (t->extra_section != NULL && strcmp(section, t->extra_section) == 0)
        return true;
    for (size_t i = 0; i < t->n_keys; i++)
        if (strcmp(t->keys[i].section, section) == 0)
            return true;
    return false;
}

/* A "[section]" line naming no section of the table is an error on that line: inih
 * calls the handler only for keys, so a misspelled section with no key under it
 * ("[serverr]" alone) passed unnoticed. */
static bool check_section_line(cfg_parse_t *p, const char *line)
{
    char name[64];
    line += strspn(line, " \t");
    const char *end = line[0] == '[' ? strchr(line, ']') : NULL;
    if (end == NULL || (size_t)(end - line - 1) >= sizeof name)
        return true; /* not a section line, or one inih refuses itself */
    memcpy(name, line + 1, (size_t)(end - line - 1));
    name[end - line - 1] = '\0';
    if (section_known(p->t, name))
        return true;
    /* for an unknown section this names it and lists the known ones */
    tsl_cfgtab_set_in(p->t, p->work, name, "", "", &p->err);
    p->err_line = p->lineno;
    return false;
}

static char *cfg_reader(char *buf, int cap, void *stream)
{
    cfg_parse_t *p = stream;
    if (p->err_line != 0 || fgets(buf, cap, p->fp) == NULL)
        return NULL;
    p->lineno++;
    size_t n = strlen(buf);
    if (n == (size_t)cap - 1 && buf[n - 1] != '\n' && !feof(p->fp)) {
        p->err_line = p->lineno;
        tsl_err_set(&p->err, "line longer than %d characters", cap - 2);
        return NULL;
    }
    return check_section_line(p, buf) ? buf : NULL;
}

static int cfg_handler(void *user, const char *section, const char *name, const char *value)
{
    cfg_parse_t *p = user;
    if (p->err_line != 0)
        return 0;
    const tsl_cfg_key_t *k = tsl_cfgtab_find(p->t, section, name);
    size_t i = k ? (size_t)(k - p->t->keys) : 0;
    if (k != NULL && p->seen_line[i] != 0) {
        p->err_line = p->lineno;
        tsl_err_set(&p->err, "%s.%s is already set on line %d (a key may appear once)", section,
                    name, p->seen_line[i]);
        return 0;
    }
    if (k != NULL)
        p->seen_line[i] = p->lineno;
    if (tsl_cfgtab_set_in(p->t, p->work, section, name, value, &p->err) == 0)
        return 1;
    p->err_line = p->lineno;
    return 0;
}

/* The whole file in memory: a regular file (not /dev/zero, a FIFO or a
 * directory) of at most CONFIG_FILE_MAX bytes. *nul_line gets the line of the
 * first NUL byte (inih would cut the value there), 0 if none. */
#define CONFIG_FILE_MAX (1u << 20)

static char *read_config(const char *path, size_t *len, int *nul_line, tsl_err_t *err)
{
    char *buf = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0) {
        tsl_err_set(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > CONFIG_FILE_MAX) {
        tsl_err_set(err, "%s: not a regular file of at most %u bytes", path, CONFIG_FILE_MAX);
        goto out;
    }
    buf = malloc((size_t)st.st_size + 1);
    ssize_t n = buf ? read(fd, buf, (size_t)st.st_size + 1) : -1;
    if (n < 0 || n > st.st_size) {
        tsl_err_set(err, "%s: cannot read: %s", path, n < 0 ? strerror(errno) : "it grew");
        free(buf);
        buf = NULL;
        goto out;
    }
    *len = (size_t)n;
    *nul_line = 0;
    const char *z = memchr(buf, '\0', *len);
    for (const char *q = buf; z && q <= z; q++)
        *nul_line += q == buf || q[-1] == '\n';
out:
    close(fd);
    return buf;
}

/* Runs inih over text into p->work; the error (with file:line) into err. */
static int parse_text(cfg_parse_t *p, const char *path, char *text, size_t len, tsl_err_t *err)
{
    p->fp = len ? fmemopen(text, len, "r") : fopen("/dev/null", "r");
    if (p->fp == NULL)
        return tsl_err_set(err, "%s: cannot read: %s", path, strerror(errno));
    int line = ini_parse_stream(cfg_reader, p, cfg_handler, p);
    bool failed = ferror(p->fp) != 0;
    fclose(p->fp);
    if (p->err_line != 0)
        return tsl_err_set(err, "%s:%d: %s", path, p->err_line, p->err.msg);
    if (line != 0 || failed)
        return tsl_err_set(err,
                           "%s:%d: syntax error: expected '[section]', 'key = value' or a "
                           "comment",
                           path, line > 0 ? line : p->lineno);
    return 0;
}

int tsl_cfgtab_load(const tsl_cfgtab_t *t, void *obj, const char *path, tsl_err_t *err)
{
    size_t len = 0;
    int nul_line = 0, rc = -1;
    char *text = read_config(path, &len, &nul_line, err);
    if (text == NULL)
        return -1;
    cfg_parse_t p = {.t = t};
    p.work = malloc(t->obj_size);
    p.seen_line = calloc(t->n_keys + 1, sizeof *p.seen_line);
    if (nul_line != 0)
        tsl_err_set(err, "%s:%d: a NUL byte in the file", path, nul_line);
    else if (p.work == NULL || p.seen_line == NULL)
        tsl_err_setc(err, TSL_E_NOMEM, "%s: out of memory", path);
    else if (memcpy(p.work, obj, t->obj_size), parse_text(&p, path, text, len, err) == 0) {
        memcpy(obj, p.work, t->obj_size);
        rc = 0;
    }
    if (p.work != NULL)
        memset(p.work, 0, t->obj_size); /* the copy may hold secrets */
    free(p.work);
    free(p.seen_line);
    memset(text, 0, len);
    free(text);
    return rc;
}

/* ---- argv -------------------------------------------------------------------------------- */

static bool is_shared_opt(const char *a)
{
    static const char *const shared[] = {"--help", "-h", "--version", "--check-config", "-n"};
    for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++)
        if (strcmp(a, shared[i]) == 0)
            return true;
    return strncmp(a, "--config=", 9) == 0;
}

int tsl_cfgtab_opts(int argc, char **argv, tsl_cfg_opts_t *o, tsl_err_t *err)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            o->help = true;
        else if (!strcmp(a, "--version"))
            o->version = true;
        else if (!strcmp(a, "--check-config") || !strcmp(a, "-n"))
            o->check = true;
        else if (!strncmp(a, "--config=", 9))
            o->config_file = a + 9;
        else if (!strcmp(a, "--config") && i + 1 < argc)
            o->config_file = argv[++i];
        else if (!strcmp(a, "--config"))
            return tsl_err_set(err, "--config needs a FILE");
    }
    return 0;
}

static bool is_own_opt(const char *const *own, const char *a)
{
    for (size_t i = 0; own != NULL && own[i] != NULL; i++)
        if (strcmp(a, own[i]) == 0)
            return true;
    return false;
}

static bool is_flag(const tsl_cfgtab_t *t, const char *flag)
{
    for (size_t i = 0; i < t->n_keys; i++)
        if (strcmp(t->keys[i].flag, flag) == 0)
            return true;
    return false;
}

int tsl_cfgtab_apply_argv(const tsl_cfgtab_t *t, void *obj, int argc, char **argv,
                          const char *const *own, tsl_err_t *err)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *eq = strchr(a, '=');
        char key[64];
        if (!strcmp(a, "--config")) {
            i++;
            continue;
        }
        if (is_shared_opt(a) || is_own_opt(own, a))
            continue;
        if (a[0] == '-' && a[1] != '-' && a[1] != '\0')
            return tsl_err_set(err, "unknown option '%s'; see %s --help", a, t->program);
        if (strncmp(a, "--", 2) != 0)
            return tsl_err_set(err, "unexpected argument '%s'; see %s --help", a, t->program);
        if (eq != NULL) {
            snprintf(key, sizeof key, "%.*s", (int)(eq - a), a);
            if (tsl_cfgtab_set(t, obj, key, eq + 1, err) != 0)
                return -1;
        } else if (i + 1 >= argc) {
            /* the last word: an unknown flag is unknown, not one short of a value */
            if (strchr(a, '.') == NULL && !is_flag(t, a + 2))
                return tsl_err_set(err, "unknown option '%s'; see %s --help", a, t->program);
            return tsl_err_set(err, "option '%s' needs a value; see %s --help", a, t->program);
        } else if (tsl_cfgtab_set(t, obj, a, argv[++i], err) != 0) {
            return -1;
        }
    }
    return 0;
}

int tsl_cfgtab_from_argv(const tsl_cfgtab_t *t, void *obj, const tsl_cfg_opts_t *o, int argc,
                         char **argv, const char *const *own, tsl_err_t *err)
{
    tsl_cfgtab_defaults(t, obj);
    if (o->config_file != NULL && tsl_cfgtab_load(t, obj, o->config_file, err) != 0)
        return -1;
    return tsl_cfgtab_apply_argv(t, obj, argc, argv, own, err);
}
