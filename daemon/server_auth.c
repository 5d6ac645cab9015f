/*
 * server_auth.c — "authorization: Bearer <token>" → role → allowed? (server_auth.h)
 */
#include "server_auth.h"

#include <grpc/grpc_security.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "server_call.h"
#include "server_int.h"
#include "store_registry.h"

#define TOKEN_MAX 256

/* The bearer token of the call, copied into tok; 0, 1 (no header), -1 (malformed). */
static int find_token(const grpc_metadata_array *md, char *tok, size_t cap)
{
    for (size_t i = 0; i < md->count; i++) {
        const grpc_metadata *m = &md->metadata[i];
        if (grpc_slice_str_cmp(m->key, "authorization") != 0)
            continue;
        size_t len = GRPC_SLICE_LENGTH(m->value);
        const char *v = (const char *)GRPC_SLICE_START_PTR(m->value);
        if (len < 7 || strncasecmp(v, "Bearer ", 7) != 0)
            return -1;
        v += 7;
        len -= 7;
        while (len > 0 && *v == ' ') {
            v++;
            len--;
        }
        if (len == 0 || len >= cap || memchr(v, '\0', len))
            return -1;
        memcpy(tok, v, len);
        tok[len] = '\0';
        return 0;
    }
    return 1;
}

const char *tsl_auth_roles_text(unsigned roles, char *buf, size_t cap)
{
    static const tsl_role_t all[] = {TSL_ROLE_SCHEDULER, TSL_ROLE_OPS, TSL_ROLE_WORKER};
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (!(roles & TSL_ROLE_BIT(all[i])))
            continue;
        int n = snprintf(buf + used, cap - used, "%s%s", used ? " or " : "", tsl_role_name(all[i]));
        if (n < 0 || (size_t)n >= cap - used)
            break;
        used += (size_t)n;
    }
    return buf;
}

grpc_status_code tsl_auth_check(const tsl_config_t *cfg, const grpc_metadata_array *md,
                                unsigned roles, const char *method, tsl_auth_t *out, char *msg,
                                size_t cap)
{
    char tok[TOKEN_MAX];
    out->role = TSL_ROLE_NONE;
    out->trusted = cfg->n_tokens == 0;
    if (out->trusted)
        return GRPC_STATUS_OK;
    int found = find_token(md, tok, sizeof tok);
    if (found == 0)
        out->role = tsl_config_token_role(cfg, tok);
    if (roles == 0)
        return GRPC_STATUS_OK;
    if (found == 1) {
        snprintf(msg, cap,
                 "%s needs a token: send 'authorization: Bearer <token>' metadata "
                 "(tesselctl --token or TESSEL_TOKEN)",
                 method);
        return GRPC_STATUS_UNAUTHENTICATED;
    }
    if (found < 0) {
        snprintf(msg, cap, "authorization: expected 'Bearer <token>' (at most %d characters)",
                 TOKEN_MAX - 1);
        return GRPC_STATUS_UNAUTHENTICATED;
    }
    if (out->role == TSL_ROLE_NONE) {
        snprintf(msg, cap, "authorization: the token is not one this tesseld knows");
        return GRPC_STATUS_UNAUTHENTICATED;
    }
    if (!(roles & TSL_ROLE_BIT(out->role))) {
        char need[64];
        snprintf(msg, cap, "role '%s' may not call %s; it needs the %s role",
                 tsl_role_name(out->role), method, tsl_auth_roles_text(roles, need, sizeof need));
        return GRPC_STATUS_PERMISSION_DENIED;
    }
    return GRPC_STATUS_OK;
}

grpc_status_code tsl_auth_call(tsl_call_t *call, char *msg, size_t cap)
{
    tsl_auth_t who;
    grpc_status_code code = tsl_auth_check(call->srv->cfg, &call->md, call->method->roles,
                                           call->method->rpc->name, &who, msg, cap);
    call->role = who.role;
    call->trusted = who.trusted;
    return code;
}

/* ---- worker identity ---------------------------------------------------------------------- */

/* The verified client certificate's subject, into out; false when there is none. */
static bool cert_subject(grpc_call *gc, char *out, size_t cap)
{
    grpc_auth_context *ctx = grpc_call_auth_context(gc);
    bool found = false;
    if (!ctx)
        return false;
    grpc_auth_property_iterator it =
        grpc_auth_context_find_properties_by_name(ctx, GRPC_X509_SUBJECT_PROPERTY_NAME);
    const grpc_auth_property *p = grpc_auth_property_iterator_next(&it);
    if (p && p->value_length > 0) {
        snprintf(out, cap, "cert:%.*s", (int)p->value_length, p->value);
        found = true;
    }
    grpc_auth_context_release(ctx);
    return found;
}

void tsl_auth_identity(tsl_call_t *call, char *out, size_t cap)
{
    char tok[TOKEN_MAX];
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    out[0] = '\0';
    if (call->trusted || cert_subject(call->call, out, cap))
        return;
    if (find_token(&call->md, tok, sizeof tok) != 0 ||
        EVP_Digest(tok, strlen(tok), md, &n, EVP_sha256(), NULL) != 1 || n < 8)
        return;
    snprintf(out, cap, "token:%02x%02x%02x%02x%02x%02x%02x%02x", md[0], md[1], md[2], md[3], md[4],
             md[5], md[6], md[7]);
    memset(tok, 0, sizeof tok);
}

grpc_status_code tsl_auth_worker(tsl_call_t *call, const char *worker_id, char *msg, size_t cap)
{
    char mine[TSL_REGISTRY_OWNER_MAX], owner[TSL_REGISTRY_OWNER_MAX];
    tsl_err_t err = {0};
    tsl_auth_identity(call, mine, sizeof mine);
    if (!mine[0])
        return GRPC_STATUS_OK;
    int rc = tsl_registry_owner(call->srv->store, worker_id, owner, sizeof owner, &err);
    if (rc < 0) {
        snprintf(msg, cap, "%s", err.msg);
        return GRPC_STATUS_INTERNAL;
    }
    if (rc == 1 || !owner[0] || strcmp(owner, mine) == 0)
        return GRPC_STATUS_OK;
    snprintf(msg, cap,
             "worker_id: %s is bound to the credential that registered it (%.100s); this "
             "caller is %.100s",
             worker_id, owner, mine);
    return GRPC_STATUS_PERMISSION_DENIED;
}
