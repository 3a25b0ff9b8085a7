/* wmap-webhook: the serving certificate.
 *
 * MHD calls our gnutls_certificate_retrieve_function2 on every handshake
 * (MHD_OPTION_HTTPS_CERT_CALLBACK), so a reload is a pointer swap under a lock: new
 * handshakes get the new pair, handshakes in progress keep the one they were handed. GnuTLS
 * neither frees nor copies what the callback returns, so retired pairs are kept until exit
 * (a rotation every few weeks costs a few kilobytes). */
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "webhook.h"
#include "wmap/yaml.h"
#include "wmap/file.h"

#define MAX_CHAIN 8
#define MAX_PEM (1u << 20)

typedef struct pair {
	gnutls_pcert_st pcerts[MAX_CHAIN];
	unsigned n;
	gnutls_privkey_t key;
	time_t not_after;
	struct pair *retired; /* the pair this one replaced */
} pair;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pair *current;

static void pair_free(pair *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < p->n; i++)
		gnutls_pcert_deinit(&p->pcerts[i]);
	if (p->key)
		gnutls_privkey_deinit(p->key);
	free(p);
}

static int read_pem(gnutls_datum_t *d, const char *path, char *err, size_t errlen)
{
	char *data = NULL;
	size_t len = 0;
	wmap_error e;
	if (wmap_file_read(&data, &len, path, MAX_PEM, &e) != 0) {
		snprintf(err, errlen, "%s", e.message);
		return -1;
	}
	d->data = (unsigned char *)data;
	d->size = (unsigned)len;
	return 0;
}

/* 1 when key is the private half of the certificate's public key. */
static int key_matches(gnutls_privkey_t key, gnutls_pcert_st *pc)
{
	gnutls_pubkey_t pub = NULL;
	gnutls_datum_t a = { 0 }, b = { 0 };
	int same = 0;
	if (gnutls_pubkey_init(&pub) == 0 && gnutls_pubkey_import_privkey(pub, key, 0, 0) == 0 &&
	    gnutls_pubkey_export2(pub, GNUTLS_X509_FMT_DER, &a) == 0 &&
	    gnutls_pubkey_export2(pc->pubkey, GNUTLS_X509_FMT_DER, &b) == 0)
		same = a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
	gnutls_free(a.data);
	gnutls_free(b.data);
	if (pub)
		gnutls_pubkey_deinit(pub);
	return same;
}

int wh_tls_load(const char *cert, const char *key, char *err, size_t errlen)
{
	gnutls_datum_t cd = { 0 }, kd = { 0 };
	pair *p = calloc(1, sizeof(*p));
	int rc = -1, g;
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (read_pem(&cd, cert, err, errlen) || read_pem(&kd, key, err, errlen))
		goto done;
	p->n = MAX_CHAIN;
	if ((g = gnutls_pcert_list_import_x509_raw(p->pcerts, &p->n, &cd, GNUTLS_X509_FMT_PEM,
						   0)) < 0) {
		p->n = 0;
		snprintf(err, errlen, "%s: %s", cert, gnutls_strerror(g));
		goto done;
	}
	if ((g = gnutls_privkey_init(&p->key)) < 0 ||
	    (g = gnutls_privkey_import_x509_raw(p->key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
		snprintf(err, errlen, "%s: %s", key, gnutls_strerror(g));
		goto done;
	}
	if (!key_matches(p->key, &p->pcerts[0])) {
		snprintf(err, errlen, "%s does not hold the key of the certificate in %s", key,
			 cert);
		goto done;
	}
	gnutls_x509_crt_t crt;
	if (gnutls_x509_crt_init(&crt) == 0) {
		if (gnutls_x509_crt_import(crt, &p->pcerts[0].cert, GNUTLS_X509_FMT_DER) == 0)
			p->not_after = gnutls_x509_crt_get_expiration_time(crt);
		gnutls_x509_crt_deinit(crt);
	}
	if (p->not_after && p->not_after < time(NULL)) {
		snprintf(err, errlen, "%s expired", cert);
		goto done;
	}
	pthread_mutex_lock(&lock);
	p->retired = current;
	current = p;
	pthread_mutex_unlock(&lock);
	wh_metrics_cert_expiry(p->not_after);
	p = NULL;
	rc = 0;
done:
	if (kd.data) {
		/* The key leaves memory as soon as GnuTLS has its copy. */
		memset(kd.data, 0, kd.size);
		free(kd.data);
	}
	free(cd.data);
	pair_free(p);
	return rc;
}

static int retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
		    const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
		    gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *privkey)
{
	(void)session;
	(void)req_ca_rdn;
	(void)nreqs;
	(void)pk_algos;
	(void)pk_algos_length;
	pthread_mutex_lock(&lock);
	pair *p = current;
	pthread_mutex_unlock(&lock);
	if (!p)
		return -1;
	*pcert = p->pcerts;
	*pcert_length = p->n;
	*privkey = p->key;
	return 0;
}

void *wh_tls_callback(void)
{
	return (void *)&retrieve;
}

void wh_tls_free_all(void)
{
	pthread_mutex_lock(&lock);
	pair *p = current;
	current = NULL;
	pthread_mutex_unlock(&lock);
	while (p) {
		pair *next = p->retired;
		pair_free(p);
		p = next;
	}
}

wh_filesig wh_filesig_of(const char *path)
{
	wh_filesig s = { 0 };
	struct stat st;
	if (path && stat(path, &st) == 0) {
		s.ok = 1;
		s.dev = st.st_dev;
		s.ino = st.st_ino;
		s.size = st.st_size;
		s.mtime = st.st_mtim;
	}
	return s;
}

int wh_filesig_same(const wh_filesig *a, const wh_filesig *b)
{
	return a->ok == b->ok && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}
