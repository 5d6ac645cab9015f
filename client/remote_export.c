/*
 * remote_export.c — Planner.ExportPlan of one stored plan written to stdout or
 * to a file (FILE.tmp, then renamed, so FILE is never half-written; a FILE that
 * is there and not a regular file — a device, a FIFO, a symbolic link — is
 * written through instead): what `plans export` and `plan --trace FILE` through
 * tesseld share.
 *
 * A stale plan (ExportPlanResponse.stale) is written all the same, with a warning
 * on stderr: a scheduler may want it anyway, and the stacks' formats cannot say it
 * themselves. fresh (`plans export --fresh`) refuses it instead, writing nothing.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote.h"

static bool is_text(const char *content_type)
{
    return content_type && (strncmp(content_type, "application/json", 16) == 0 ||
                            strncmp(content_type, "text/", 5) == 0);
}

static int write_all(FILE *f, const ProtobufCBinaryData *d, bool text)
{
    bool nl = text && d->len > 0 && d->data[d->len - 1] != '\n';

    if (d->len && fwrite(d->data, 1, d->len, f) != d->len)
        return -1;
    if (nl && fputc('\n', f) == EOF)
        return -1;
    return fflush(f) == 0 ? 0 : -1;
}

/* Into path itself: the rename would replace a device node (as root, -o /dev/null
 * left a regular file in /dev/null's place), a FIFO or a symbolic link (the link
 * became a file, its target untouched) with a new regular file. */
static int write_through(const char *path, const ProtobufCBinaryData *d, bool text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int rc = write_all(f, d, text);
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

static int write_file(const char *path, const ProtobufCBinaryData *d, bool text)
{
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return write_through(path, d, text);
    size_t n = strlen(path) + 5;
    char *tmp = malloc(n);
    FILE *f;
    int rc = -1;

    if (!tmp)
        return -1;
    snprintf(tmp, n, "%s.tmp", path);
    if ((f = fopen(tmp, "wb")) != NULL) {
        rc = write_all(f, d, text);
        if (fclose(f) != 0)
            rc = -1;
        if (rc == 0)
            rc = rename(tmp, path);
        if (rc != 0)
            unlink(tmp);
    }
    free(tmp);
    return rc;
}

static int write_export(const char *what, const char *output,
                        const Tessel__V1__ExportPlanResponse *r)
{
    bool text = is_text(r->content_type);

    if (!output || strcmp(output, "-") == 0)
        return write_all(stdout, &r->content, text) == 0
                   ? TSL_EXIT_OK
                   : tsl_remote_fail(TSL_EXIT_SERVER, "%s: cannot write to stdout", what);
    if (write_file(output, &r->content, text) != 0)
        return tsl_remote_fail(TSL_EXIT_SERVER, "%s: cannot write '%s': %m", what, output);
    return TSL_EXIT_OK;
}

/* The stale plan's warning, or with fresh its refusal (exit 4: the plan is there, the
 * daemon answered, it is not what was asked for). 0 to write the export. */
static int check_stale(const char *what, const char *fp, bool fresh,
                       const Tessel__V1__ExportPlanResponse *r)
{
    static const char why[] = "a profile it was priced from changed since, or another cost "
                              "model priced it";
    if (!r->stale)
        return TSL_EXIT_OK;
    if (fresh)
        return tsl_remote_fail(TSL_EXIT_SERVER,
                               "%s: plan %s is stale (%s); nothing written (--fresh); "
                               "`tesselctl plan` with its options searches again",
                               what, fp, why);
    fprintf(stderr,
            "tesselctl: %s: warning: plan %s is stale (%s); exported as stored, its "
            "figures from then; `tesselctl plan` with its options searches again\n",
            what, fp, why);
    return TSL_EXIT_OK;
}

/* What the format's content cannot carry (ExportPlanResponse.notes), as plan --export
 * notes it beside the same formats. */
static void print_notes(const char *what, const Tessel__V1__ExportPlanResponse *r)
{
    for (size_t i = 0; i < r->n_notes; i++)
        fprintf(stderr, "tesselctl: %s: note: %s: %s\n", what, r->format, r->notes[i]);
}

int tsl_remote_export_to(const tsl_client_opts_t *co, const char *what, const char *fp,
                         const char *format, const char *path, bool fresh)
{
    Tessel__V1__ExportPlanRequest req = TESSEL__V1__EXPORT_PLAN_REQUEST__INIT;
    ProtobufCMessage *reply = NULL;
    req.fingerprint = (char *)fp;
    req.format = (char *)format;
    int rc = tsl_remote_call(co, TSL_RPC_EXPORT_PLAN, &req.base,
                             &tessel__v1__export_plan_response__descriptor, &reply);
    if (rc == 0)
        rc = check_stale(what, fp, fresh, (const Tessel__V1__ExportPlanResponse *)reply);
    if (rc == 0)
        rc = write_export(what, path, (const Tessel__V1__ExportPlanResponse *)reply);
    if (rc == 0)
        print_notes(what, (const Tessel__V1__ExportPlanResponse *)reply);
    if (reply)
        protobuf_c_message_free_unpacked(reply, NULL);
    return rc;
}
