/*
 * server_listen.c — the lock file, the unix socket and the TCP/TLS listener
 * (server.h). The plaintext listeners are bound by server_accept.c, which
 * replaces a socket left at the unix-socket path; the flock()ed
 * "<socket>.lock" is what keeps a second daemon from stealing a running
 * daemon's socket. Every listening socket, TLS included, is bound and
 * accepted on by server_accept.c; gRPC does the TLS handshake (its
 * external-connection acceptor, TSL_TLS_ACCEPTOR).
 */
#include <errno.h>
#include <fcntl.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <libgen.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "pidlock.h"
#include "server_int.h"

#define TLS_FILE_MAX (1u << 20)

static int check_socket_path(const char *path, tsl_err_t *err)
{
    struct sockaddr_un sun;
    if (strlen(path) >= sizeof sun.sun_path)
        return tsl_err_set(err, "unix_socket: '%s' is longer than %zu bytes", path,
                           sizeof sun.sun_path - 1);
    char dir[sizeof sun.sun_path];
    snprintf(dir, sizeof dir, "%s", path);
    struct stat st;
    const char *d = dirname(dir);
    if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode))
        return tsl_err_set(err,
                           "unix_socket: directory '%s' does not exist; create it "
                           "(systemd: RuntimeDirectory=tessel) or set unix_socket",
                           d);
    return 0;
}

int tsl_server_lock(const tsl_config_t *cfg, int *fd_out, tsl_err_t *err)
{
    *fd_out = -1;
    if (!cfg->unix_socket[0])
        return 0;
    if (check_socket_path(cfg->unix_socket, err) != 0)
        return -1;
    char path[sizeof cfg->unix_socket + 8], pid[32];
    snprintf(path, sizeof path, "%s.lock", cfg->unix_socket);
    int fd, rc = tsl_pidlock_take(path, 0644, "unix_socket", &fd, pid, sizeof pid, err);
    if (rc == 1)
        return tsl_err_set(err,
                           "another tesseld (pid %s) is already serving unix:%s "
                           "(lock %s is held); stop it or choose another unix_socket",
                           pid[0] ? pid : "?", cfg->unix_socket, path);
    if (rc != 0)
        return -1;
    if (tsl_pidlock_write_pid(fd) != 0)
        tsl_log_warn("cannot write the pid into %s", path);
    *fd_out = fd;
    return 0;
}

static int listen_unix(tsl_server_t *s, tsl_err_t *err)
{
    const tsl_config_t *cfg = s->cfg;
    unsigned mode = cfg->socket_mode & 0777;
    if (tsl_accept_bind_unix(s, cfg->unix_socket, mode, err) != 0)
        return -1;
    snprintf(s->listening, sizeof s->listening, "unix:%s (mode %04o)", cfg->unix_socket, mode);
    return 0;
}

static char *slurp(const char *what, const char *path, tsl_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        tsl_err_set(err, "%s: cannot open '%s': %s", what, path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(TLS_FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, TLS_FILE_MAX + 1, f) : 0;
    fclose(f);
    if (!buf || n == 0 || n > TLS_FILE_MAX) {
        tsl_err_set(err, "%s: '%s' is empty, unreadable or larger than %u bytes", what, path,
                    TLS_FILE_MAX);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

static int load_pair(const tsl_config_t *cfg, char **cert, char **key, tsl_err_t *err)
{
    *cert = slurp("tls_cert", cfg->tls_cert, err);
    *key = *cert ? slurp("tls_key", cfg->tls_key, err) : NULL;
    return *cert && *key ? 0 : -1;
}

static int check_pair(const tsl_config_t *cfg, const char *cert, const char *key, tsl_err_t *err)
{
    BIO *cb = BIO_new_mem_buf(cert, -1), *kb = BIO_new_mem_buf(key, -1);
    X509 *x = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
    EVP_PKEY *pk = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, (void *)"") : NULL;
    int rc = -1;
    if (!x)
        tsl_err_set(err, "tls_cert: '%s' holds no PEM certificate", cfg->tls_cert);
    else if (!pk)
        tsl_err_set(err, "tls_key: '%s' holds no PEM private key (or it is encrypted)",
                    cfg->tls_key);
    else if (X509_check_private_key(x, pk) != 1)
        tsl_err_set(err, "tls_key: '%s' is not the key of the certificate in '%s'", cfg->tls_key,
                    cfg->tls_cert);
    else
        rc = 0;
    ERR_clear_error();
    EVP_PKEY_free(pk);
    X509_free(x);
    BIO_free(kb);
    BIO_free(cb);
    return rc;
}

int tsl_server_check_tls(const tsl_config_t *cfg, tsl_err_t *err)
{
    if (!cfg->tls_cert[0] || !cfg->tls_key[0])
        return 0;
    char *cert, *key;
    int rc = load_pair(cfg, &cert, &key, err) == 0 ? check_pair(cfg, cert, key, err) : -1;
    if (key)
        memset(key, 0, strlen(key));
    free(cert);
    free(key);
    if (rc == 0 && cfg->tls_client_ca[0]) {
        char *ca = slurp("tls_client_ca", cfg->tls_client_ca, err);
        if (ca && !strstr(ca, "-----BEGIN CERTIFICATE-----"))
            rc = tsl_err_set(err, "tls_client_ca: '%s' holds no PEM certificate",
                             cfg->tls_client_ca);
        rc = ca ? rc : -1;
        free(ca);
    }
    return rc;
}

static grpc_server_credentials *tcp_credentials(const tsl_config_t *cfg, tsl_err_t *err)
{
    if (!cfg->tls_cert[0])
        return grpc_insecure_server_credentials_create();
    if (tsl_server_check_tls(cfg, err) != 0)
        return NULL;
    char *cert, *key, *client_ca = NULL;
    grpc_server_credentials *creds = NULL;
    /* Mutual TLS: gRPC verifies the caller's chain against tls_client_ca during the
     * handshake, so a call never reaches a handler without a certificate it signed. */
    bool mutual = cfg->tls_client_ca[0] != '\0';
    if (load_pair(cfg, &cert, &key, err) == 0 &&
        (!mutual || (client_ca = slurp("tls_client_ca", cfg->tls_client_ca, err)))) {
        grpc_ssl_pem_key_cert_pair pair = {.private_key = key, .cert_chain = cert};
        creds = grpc_ssl_server_credentials_create_ex(
            client_ca, &pair, 1,
            mutual ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                   : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE,
            NULL);
        if (!creds)
            tsl_err_set(err, "tls_cert/tls_key: gRPC refused the certificate or key");
    }
    free(client_ca);
    free(cert);
    free(key);
    return creds;
}

/* tesseld hands TLS connections to gRPC's acceptor through the C++ ABI of
 * grpc_core::TcpServerFdHandler (server_accept.c), checked on gRPC core 29
 * (gRPC 1.51, Debian 12) and declared alike from core 8 (1.25) to 29. Another
 * core keeps gRPC's own TLS listener — which stops for good at the first
 * EMFILE — rather than call through a layout nobody checked. */
static bool tls_acceptor_known(void)
{
    int major = atoi(grpc_version_string());
    if (major >= 8 && major <= 29)
        return true;
    tsl_log_warnx("tcp: gRPC core %s is newer than tesseld knows: TLS connections are "
                  "accepted by gRPC's own listener, which does not survive running out of "
                  "descriptors (docs/operations.md)",
                  grpc_version_string());
    return false;
}

static int listen_tcp(tsl_server_t *s, tsl_err_t *err)
{
    const tsl_config_t *cfg = s->cfg;
    if (!cfg->tls_cert[0]) {
        /* Plaintext: only with insecure_tcp = true (config.c), and said at every start. */
        tsl_log_warnx("tcp %s: plaintext (insecure_tcp = true): tokens and plans cross the "
                      "network unencrypted; set tls_cert and tls_key",
                      cfg->tcp);
        if (tsl_accept_bind_tcp(s, cfg->tcp, false, err) != 0)
            return -1;
    } else {
        /* TLS: gRPC makes its acceptor for the port name (server.c passed the
         * channel arg that receives it); the socket is ours, as for plaintext. */
        grpc_server_credentials *creds = tcp_credentials(cfg, err);
        if (!creds)
            return -1;
        if (!tls_acceptor_known()) {
            int port = grpc_server_add_http2_port(s->server, cfg->tcp, creds);
            grpc_server_credentials_release(creds);
            if (port == 0)
                return tsl_err_set(err, "tcp: cannot listen on %s (TLS)", cfg->tcp);
        } else {
            grpc_server_add_http2_port(s->server, TSL_TLS_ACCEPTOR, creds);
            grpc_server_credentials_release(creds);
            if (!s->tls_acceptor)
                return tsl_err_set(err, "tcp: this gRPC library made no external-connection "
                                        "acceptor for the TLS listener");
            if (tsl_accept_bind_tcp(s, cfg->tcp, true, err) != 0)
                return -1;
        }
    }
    size_t used = strlen(s->listening);
    snprintf(s->listening + used, sizeof s->listening - used, "%stcp %s%s", used ? ", " : "",
             cfg->tcp,
             !cfg->tls_cert[0]       ? " (plaintext)"
             : cfg->tls_client_ca[0] ? " (tls, client certificates required)"
                                     : " (tls)");
    return 0;
}

int tsl_server_listen(tsl_server_t *s, tsl_err_t *err)
{
    s->listening[0] = '\0';
    if (s->cfg->unix_socket[0] && listen_unix(s, err) != 0)
        return -1;
    if (s->cfg->tcp[0] && listen_tcp(s, err) != 0)
        return -1;
    if (!s->listening[0])
        return tsl_err_set(err, "nothing to listen on: set unix_socket or tcp");
    return 0;
}
