/* apiserver-sim: command line, start-up and shutdown. */
#include "sim.h"

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: apiserver-sim [options]\n"
          "  --port N                listen on 127.0.0.1:N (0, the default, picks a free port and prints it)\n"
          "  --tls-cert F --tls-key F  serving certificate and key (default: generated, ECDSA P-256)\n"
          "  --tls-ca F              CA to put in the kubeconfig with --tls-cert (default: the certificate)\n"
          "  --kubeconfig-out F      write a kubeconfig (contexts sim: token user, sim-cert: client cert,\n"
          "                          sim-viewer: a read-only token user)\n"
          "  --token T               the bearer token to accept (default: random)\n"
          "  --pki-dir D             write ca.crt, client-ca.crt, client-ca.key, client.crt, client.key\n"
          "  --load F                preload objects from multi-document YAML/JSON (repeatable)\n"
          "  --token-min-expiry S    shortest TokenRequest expirationSeconds accepted (default 600, as kube-apiserver)\n"
          "  --service-port NS/NAME=PORT  route webhook service NAME.NS.svc to 127.0.0.1:PORT (repeatable)\n"
          "  --ready-file F          written (with the port) once listening\n"
          "  --log F                 request log: one line per request (method, path, code, duration)\n"
          "  --watch-expire-seconds N  every watch ends with an ERROR 410 Expired event after N seconds\n",
          f);
}

static int parse_service(struct sim_config *c, const char *arg)
{
    const char *slash = strchr(arg, '/'), *eq = strchr(arg, '=');
    long port;
    struct sim_service *sv;
    if (!slash || !eq || eq < slash || c->n_services >= SIM_MAX_SERVICES)
        return -1;
    if (sim_parse_int(eq + 1, 1, 65535, &port) < 0)
        return -1;
    sv = &c->services[c->n_services];
    if ((size_t)(slash - arg) >= sizeof(sv->ns) || (size_t)(eq - slash - 1) >= sizeof(sv->name))
        return -1;
    snprintf(sv->ns, sizeof(sv->ns), "%.*s", (int)(slash - arg), arg);
    snprintf(sv->name, sizeof(sv->name), "%.*s", (int)(eq - slash - 1), slash + 1);
    sv->port = (int)port;
    c->n_services++;
    return 0;
}

static int parse_args(struct sim_config *c, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!v) {
            fprintf(stderr, "apiserver-sim: %s needs a value\n", a);
            return -1;
        }
        i++;
        if (!strcmp(a, "--port")) {
            if (sim_parse_int(v, 0, 65535, &n) < 0) {
                fprintf(stderr, "apiserver-sim: bad --port %s\n", v);
                return -1;
            }
            c->port = (int)n;
        } else if (!strcmp(a, "--tls-cert"))
            c->tls_cert_file = v;
        else if (!strcmp(a, "--tls-key"))
            c->tls_key_file = v;
        else if (!strcmp(a, "--tls-ca"))
            c->tls_ca_file = v;
        else if (!strcmp(a, "--kubeconfig-out"))
            c->kubeconfig_out = v;
        else if (!strcmp(a, "--ready-file"))
            c->ready_file = v;
        else if (!strcmp(a, "--log"))
            c->log_file = v;
        else if (!strcmp(a, "--pki-dir"))
            c->pki_dir = v;
        else if (!strcmp(a, "--token")) {
            if (strlen(v) >= sizeof(c->token) || !*v) {
                fprintf(stderr, "apiserver-sim: --token must be 1..%zu characters\n", sizeof(c->token) - 1);
                return -1;
            }
            snprintf(c->token, sizeof(c->token), "%s", v);
        } else if (!strcmp(a, "--load")) {
            if (c->n_load >= 16) {
                fprintf(stderr, "apiserver-sim: at most 16 --load files\n");
                return -1;
            }
            c->load_files[c->n_load++] = v;
        } else if (!strcmp(a, "--token-min-expiry")) {
            if (sim_parse_int(v, 1, 1L << 31, &n) < 0) {
                fprintf(stderr, "apiserver-sim: bad --token-min-expiry %s (want seconds >= 1)\n", v);
                return -1;
            }
            c->token_min_expiry = n;
        } else if (!strcmp(a, "--watch-expire-seconds")) {
            if (sim_parse_int(v, 1, 86400, &n) < 0) {
                fprintf(stderr, "apiserver-sim: bad --watch-expire-seconds %s\n", v);
                return -1;
            }
            c->watch_expire_s = (int)n;
        } else if (!strcmp(a, "--service-port")) {
            if (parse_service(c, v) < 0) {
                fprintf(stderr, "apiserver-sim: bad --service-port %s (want NS/NAME=PORT)\n", v);
                return -1;
            }
        } else {
            fprintf(stderr, "apiserver-sim: unknown option %s\n", a);
            usage(stderr);
            return -1;
        }
    }
    if (!c->tls_cert_file != !c->tls_key_file) {
        fprintf(stderr, "apiserver-sim: --tls-cert and --tls-key go together\n");
        return -1;
    }
    return 0;
}

static int write_pki(struct sim *s, const char *dir)
{
    const struct {
        const char *name, *data;
    } files[] = {{"ca.crt", s->ca_pem},
                 {"client-ca.crt", s->client_ca_pem},
                 {"client-ca.key", s->client_ca_key_pem},
                 {"client.crt", s->client_cert_pem},
                 {"client.key", s->client_key_pem}};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char p[1024];
        if (snprintf(p, sizeof(p), "%s/%s", dir, files[i].name) >= (int)sizeof(p) ||
            sim_write_file(p, files[i].data, strlen(files[i].data)) < 0)
            return -1;
    }
    return 0;
}

static struct sim g_sim;

int main(int argc, char **argv)
{
    struct sim *s = &g_sim;
    char err[1024];
    sigset_t set;
    void *daemon = NULL;
    int sig = 0, rc = 1, port;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->log_lock, NULL);
    s->cfg.token_min_expiry = 600;
    if (parse_args(&s->cfg, argc, argv) < 0)
        return 2;
    if (!s->cfg.token[0])
        sim_random_hex(s->cfg.token, 20);
    sim_random_hex(s->cfg.viewer_token, 20);
    /* Every thread (MHD's included) inherits this mask; main collects the signal with sigwait. */
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (s->cfg.log_file) {
        s->log = fopen(s->cfg.log_file, "a");
        if (!s->log) {
            fprintf(stderr, "apiserver-sim: cannot open log %s\n", s->cfg.log_file);
            goto out;
        }
    }
    if (sim_certs_init(s, err, sizeof(err)) < 0) {
        fprintf(stderr, "apiserver-sim: %s\n", err);
        goto out;
    }
    sim_builtins_register(s);
    for (int i = 0; i < s->cfg.n_load; i++) {
        if (sim_load_file(s, s->cfg.load_files[i], err, sizeof(err)) < 0) {
            fprintf(stderr, "apiserver-sim: --load %s\n", err);
            goto out;
        }
    }
    port = s->cfg.port;
    daemon = sim_http_start(s, &port, err, sizeof(err));
    if (!daemon) {
        fprintf(stderr, "apiserver-sim: %s\n", err);
        goto out;
    }
    if (s->cfg.pki_dir && write_pki(s, s->cfg.pki_dir) < 0) {
        fprintf(stderr, "apiserver-sim: cannot write --pki-dir %s\n", s->cfg.pki_dir);
        goto out;
    }
    if (s->cfg.kubeconfig_out && sim_write_kubeconfig(s, s->cfg.kubeconfig_out, port) < 0) {
        fprintf(stderr, "apiserver-sim: cannot write %s\n", s->cfg.kubeconfig_out);
        goto out;
    }
    if (s->cfg.ready_file) {
        char line[32];
        int n = snprintf(line, sizeof(line), "%d\n", port);
        if (sim_write_file(s->cfg.ready_file, line, (size_t)n) < 0) {
            fprintf(stderr, "apiserver-sim: cannot write %s\n", s->cfg.ready_file);
            goto out;
        }
    }
    printf("apiserver-sim listening on https://127.0.0.1:%d\n", port);
    fflush(stdout);
    sigwait(&set, &sig);
    rc = 0;
out:
    sim_watch_shutdown();
    sim_http_stop(daemon);
    for (int i = 0; i < s->n_res; i++) {
        json_decref(s->res[i].objects);
        json_decref(s->res[i].schema);
    }
    free(s->ca_pem);
    free(s->server_cert_pem);
    free(s->server_key_pem);
    free(s->client_ca_pem);
    free(s->client_ca_key_pem);
    free(s->client_cert_pem);
    free(s->client_key_pem);
    if (s->log)
        fclose(s->log);
    curl_global_cleanup();
    return rc;
}
