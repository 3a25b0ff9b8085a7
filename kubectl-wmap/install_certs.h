/* kubectl-wmap install: the certificates (install_certs.c), the plugin's one user of OpenSSL. */
#ifndef KUBECTL_WMAP_INSTALL_CERTS_H
#define KUBECTL_WMAP_INSTALL_CERTS_H

#include <stddef.h>

#include "wmap/error.h"

/* Validity of the certificates install makes, in days. */
#define INSTALL_CERT_DAYS 3650
/* install replaces (rotates) a serving certificate or CA that expires within this many days. */
#define INSTALL_RENEW_DAYS 90

/* 0 when libcrypto could be opened (install needs it; the plugin opens it on first use), else
 * -1 with the reason in why. */
int install_certs_available(char *why, size_t len);

/* Makes a CA (P-256, CA:TRUE) and a serving certificate for service.ns.svc (and the shorter
 * and longer DNS names of the Service) signed by it, valid INSTALL_CERT_DAYS days. The
 * caller owns *ca_pem (the CA's certificate only), *crt_pem and *key_pem (the serving key);
 * the CA's key is freed here and never leaves. 0, or WMAP_EINVAL with all three NULL. */
int install_certs_make(char **ca_pem, char **crt_pem, char **key_pem, const char *service, const char *ns,
		       wmap_error *err);

/* Overwrites a private key's PEM text (so it does not linger in freed memory) and frees it;
 * NULL is fine. */
void install_certs_key_free(char *key_pem);

/* Decodes base64 (as Kubernetes stores Secret data and caBundles; n at most 16 MiB) into
 * *out, a new buffer owned by the caller with a NUL after its *len bytes; 0, or -1 when it is
 * not base64 (*out NULL). */
int install_certs_b64_decode(unsigned char **out, size_t *len, const char *in, size_t n);

/* Verifies the serving certificate crt_pem (PEM) against bundle_b64 (a caBundle: base64 of
 * PEM certificates) for the DNS name host, as a TLS client would; 0, or -1 with the reason
 * in why (len bytes, borrowed). */
int install_certs_verify(const char *crt_pem, const char *bundle_b64, const char *host, char *why, size_t len);

/* Whether install can keep the serving certificate crt_pem with key_pem and the CA
 * certificates bundle_pem (PEM, as the Secret's ca.crt): the key pairs with the certificate,
 * which verifies against the bundle for host now and still does min_days days from now. 0
 * reusable, 1 not (the reason in why). */
int install_certs_reusable(const char *crt_pem, const char *key_pem, const char *bundle_pem, const char *host,
			   int min_days, char *why, size_t len);

/* The certificates of bundle_pem that have not expired, as PEM (maybe ""); NULL when out of
 * memory. The caller frees it. */
char *install_certs_unexpired(const char *bundle_pem);

#endif
