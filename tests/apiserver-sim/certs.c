/* Certificates made at start with OpenSSL (ECDSA P-256): a serving CA and certificate for
 * 127.0.0.1/localhost, a client CA and one client certificate; and the kubeconfig that
 * points kubectl at all of it. */
#include "sim.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *bio_string(BIO *b)
{
    char *data;
    long n = BIO_get_mem_data(b, &data);
    char *out = malloc((size_t)n + 1);
    if (!out)
        return NULL;
    memcpy(out, data, (size_t)n);
    out[n] = '\0';
    return out;
}

static char *key_pem(EVP_PKEY *k)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *s = NULL;
    if (b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL))
        s = bio_string(b);
    BIO_free(b);
    return s;
}

static char *cert_pem(X509 *c)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *s = NULL;
    if (b && PEM_write_bio_X509(b, c))
        s = bio_string(b);
    BIO_free(b);
    return s;
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *ex;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer ? issuer : cert, cert, NULL, NULL, 0);
    ex = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ex)
        return -1;
    X509_add_ext(cert, ex, -1);
    X509_EXTENSION_free(ex);
    return 0;
}

/* Issues a certificate for `key`; self-signed when issuer is NULL. */
static X509 *issue(EVP_PKEY *key, X509 *issuer, EVP_PKEY *issuer_key, const char *cn, const char *org,
                   bool ca, const char *sans, bool client)
{
    X509 *c = X509_new();
    X509_NAME *name;
    unsigned char serial[8];
    char hex[20];
    BIGNUM *bn = NULL;
    if (!c)
        return NULL;
    X509_set_version(c, 2);
    sim_random_hex(hex, 8);
    (void)serial;
    hex[0] = '1';
    if (BN_hex2bn(&bn, hex))
        BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(c));
    BN_free(bn);
    X509_gmtime_adj(X509_getm_notBefore(c), -3600);
    X509_gmtime_adj(X509_getm_notAfter(c), 7L * 24 * 3600);
    X509_set_pubkey(c, key);
    name = X509_get_subject_name(c);
    if (org)
        X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)org, -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(c, issuer ? X509_get_subject_name(issuer) : name);
    if (ca) {
        add_ext(c, issuer, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(c, issuer, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
    } else {
        add_ext(c, issuer, NID_basic_constraints, "critical,CA:FALSE");
        add_ext(c, issuer, NID_key_usage, "critical,digitalSignature,keyEncipherment");
        add_ext(c, issuer, NID_ext_key_usage, client ? "clientAuth" : "serverAuth");
    }
    add_ext(c, issuer, NID_subject_key_identifier, "hash");
    if (sans)
        add_ext(c, issuer, NID_subject_alt_name, sans);
    if (!X509_sign(c, issuer_key ? issuer_key : key, EVP_sha256())) {
        X509_free(c);
        return NULL;
    }
    return c;
}

int sim_certs_init(struct sim *s, char *errbuf, size_t n)
{
    EVP_PKEY *ca_key = NULL, *srv_key = NULL, *cca_key = NULL, *cli_key = NULL;
    X509 *ca = NULL, *srv = NULL, *cca = NULL, *cli = NULL;
    int rc = -1;
    if (s->cfg.tls_cert_file) {
        s->server_cert_pem = sim_read_file(s->cfg.tls_cert_file, 1 << 20, NULL);
        s->server_key_pem = sim_read_file(s->cfg.tls_key_file, 1 << 20, NULL);
        s->ca_pem = sim_read_file(s->cfg.tls_ca_file ? s->cfg.tls_ca_file : s->cfg.tls_cert_file, 1 << 20, NULL);
        if (!s->server_cert_pem || !s->server_key_pem || !s->ca_pem) {
            snprintf(errbuf, n, "cannot read --tls-cert/--tls-key/--tls-ca");
            goto out;
        }
    } else {
        ca_key = EVP_EC_gen("P-256");
        srv_key = EVP_EC_gen("P-256");
        if (!ca_key || !srv_key)
            goto fail;
        ca = issue(ca_key, NULL, NULL, "apiserver-sim-ca", NULL, true, NULL, false);
        srv = ca ? issue(srv_key, ca, ca_key, "kube-apiserver", NULL, false,
                         "IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc", false)
                 : NULL;
        if (!srv)
            goto fail;
        s->ca_pem = cert_pem(ca);
        s->server_cert_pem = cert_pem(srv);
        s->server_key_pem = key_pem(srv_key);
    }
    cca_key = EVP_EC_gen("P-256");
    cli_key = EVP_EC_gen("P-256");
    if (!cca_key || !cli_key)
        goto fail;
    cca = issue(cca_key, NULL, NULL, "apiserver-sim-client-ca", NULL, true, NULL, false);
    cli = cca ? issue(cli_key, cca, cca_key, "sim-cert-user", "system:masters", false, NULL, true) : NULL;
    if (!cli)
        goto fail;
    s->client_ca_pem = cert_pem(cca);
    s->client_ca_key_pem = key_pem(cca_key);
    s->client_cert_pem = cert_pem(cli);
    s->client_key_pem = key_pem(cli_key);
    if (!s->ca_pem || !s->server_cert_pem || !s->server_key_pem || !s->client_ca_pem || !s->client_cert_pem ||
        !s->client_key_pem || !s->client_ca_key_pem)
        goto fail;
    rc = 0;
    goto out;
fail:
    snprintf(errbuf, n, "certificate generation failed");
out:
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(srv_key);
    EVP_PKEY_free(cca_key);
    EVP_PKEY_free(cli_key);
    X509_free(ca);
    X509_free(srv);
    X509_free(cca);
    X509_free(cli);
    return rc;
}

static char *b64(const char *pem)
{
    size_t len = strlen(pem), cap = len / 3 * 4 + 8;
    char *out = malloc(cap);
    if (out && !sim_b64_encode((const unsigned char *)pem, len, out, cap)) {
        free(out);
        return NULL;
    }
    return out;
}

int sim_write_kubeconfig(struct sim *s, const char *path, int port)
{
    char *ca = b64(s->ca_pem), *cc = b64(s->client_cert_pem), *ck = b64(s->client_key_pem);
    char *doc = NULL;
    size_t cap;
    int rc = -1, w;
    if (!ca || !cc || !ck)
        goto out;
    cap = strlen(ca) + strlen(cc) + strlen(ck) + 2048;
    doc = malloc(cap);
    if (!doc)
        goto out;
    w = snprintf(doc, cap,
                 "apiVersion: v1\n"
                 "kind: Config\n"
                 "current-context: sim\n"
                 "clusters:\n"
                 "- name: sim\n"
                 "  cluster:\n"
                 "    server: https://127.0.0.1:%d\n"
                 "    certificate-authority-data: %s\n"
                 "contexts:\n"
                 "- name: sim\n"
                 "  context: {cluster: sim, user: sim-token, namespace: default}\n"
                 "- name: sim-cert\n"
                 "  context: {cluster: sim, user: sim-cert, namespace: default}\n"
                 "- name: sim-viewer\n"
                 "  context: {cluster: sim, user: sim-viewer, namespace: default}\n"
                 "users:\n"
                 "- name: sim-token\n"
                 "  user:\n"
                 "    token: %s\n"
                 "- name: sim-cert\n"
                 "  user:\n"
                 "    client-certificate-data: %s\n"
                 "    client-key-data: %s\n"
                 "- name: sim-viewer\n"
                 "  user:\n"
                 "    token: %s\n",
                 port, ca, s->cfg.token, cc, ck, s->cfg.viewer_token);
    if (w < 0 || (size_t)w >= cap)
        goto out;
    rc = sim_write_file(path, doc, (size_t)w);
out:
    free(ca);
    free(cc);
    free(ck);
    free(doc);
    return rc;
}
