/* kubectl-wmap install's certificates with OpenSSL (see install_certs.h): made for install,
 * decoded and verified for install --check.
 *
 * libcrypto is not linked (unless WMAP_CRYPTO_LINKED, as make dist links it statically): every
 * OpenSSL function called here goes through the table crypto, bound from libcrypto.so.3 on
 * first use (wmap/kube/crypto.h), so that commands other than install do not load it. A
 * function added here must be added to CRYPTO_FUNCS, or the plugin does not link. */
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "install_certs.h"
#include "wmap/kube/crypto.h"

#define CRYPTO_FUNCS(X)                  \
	X(BIO_ctrl)                      \
	X(BIO_free)                      \
	X(BIO_new)                       \
	X(BIO_new_mem_buf)               \
	X(BIO_s_mem)                     \
	X(BN_free)                       \
	X(BN_new)                        \
	X(BN_rand)                       \
	X(BN_to_ASN1_INTEGER)            \
	X(ERR_clear_error)               \
	X(EVP_DecodeFinal)               \
	X(EVP_DecodeInit)                \
	X(EVP_DecodeUpdate)              \
	X(EVP_ENCODE_CTX_free)           \
	X(EVP_ENCODE_CTX_new)            \
	X(EVP_PKEY_Q_keygen)             \
	X(EVP_PKEY_free)                 \
	X(EVP_sha256)                    \
	X(OPENSSL_cleanse)               \
	X(PEM_read_bio_PrivateKey)       \
	X(PEM_read_bio_X509)             \
	X(PEM_write_bio_PrivateKey)      \
	X(PEM_write_bio_X509)            \
	X(X509V3_EXT_conf_nid)           \
	X(X509V3_set_ctx)                \
	X(X509_EXTENSION_free)           \
	X(X509_NAME_add_entry_by_txt)    \
	X(X509_STORE_CTX_free)           \
	X(X509_STORE_CTX_get0_param)     \
	X(X509_STORE_CTX_get_error)      \
	X(X509_STORE_CTX_init)           \
	X(X509_STORE_CTX_new)            \
	X(X509_STORE_add_cert)           \
	X(X509_STORE_free)               \
	X(X509_STORE_new)                \
	X(X509_VERIFY_PARAM_set1_host)   \
	X(X509_VERIFY_PARAM_set_purpose) \
	X(X509_VERIFY_PARAM_set_time)    \
	X(X509_add_ext)                  \
	X(X509_check_private_key)        \
	X(X509_cmp_current_time)         \
	X(X509_free)                     \
	X(X509_get0_notAfter)            \
	X(X509_get_serialNumber)         \
	X(X509_get_subject_name)         \
	X(X509_getm_notAfter)            \
	X(X509_getm_notBefore)           \
	X(X509_gmtime_adj)               \
	X(X509_new)                      \
	X(X509_set_issuer_name)          \
	X(X509_set_pubkey)               \
	X(X509_set_version)              \
	X(X509_sign)                     \
	X(X509_verify_cert)              \
	X(X509_verify_cert_error_string)

#ifdef WMAP_CRYPTO_LINKED
static int crypto_ready(void)
{
	return 1;
}
#else
static struct {
#define CRYPTO_FIELD(f) __typeof__(&f) f;
	CRYPTO_FUNCS(CRYPTO_FIELD)
} crypto;

/* Binds the table on first use; 0 when libcrypto (or one of its functions) is missing. */
static int crypto_ready(void)
{
	static int state; /* 0 not tried, 1 bound, -1 failed: the plugin is single-threaded */
	if (state == 0) {
		state = 1;
#define CRYPTO_BIND(f)                                                              \
	if (state == 1 && (*(void **)(&crypto.f) = wmap_crypto_symbol(#f)) == NULL) \
		state = -1;
		CRYPTO_FUNCS(CRYPTO_BIND)
	}
	return state == 1;
}

/* From here on every call, those inside OpenSSL's macros too, goes through the table. */
#define BIO_ctrl (crypto.BIO_ctrl)
#define BIO_free (crypto.BIO_free)
#define BIO_new (crypto.BIO_new)
#define BIO_new_mem_buf (crypto.BIO_new_mem_buf)
#define BIO_s_mem (crypto.BIO_s_mem)
#define BN_free (crypto.BN_free)
#define BN_new (crypto.BN_new)
#define BN_rand (crypto.BN_rand)
#define BN_to_ASN1_INTEGER (crypto.BN_to_ASN1_INTEGER)
#define ERR_clear_error (crypto.ERR_clear_error)
#define EVP_DecodeFinal (crypto.EVP_DecodeFinal)
#define EVP_DecodeInit (crypto.EVP_DecodeInit)
#define EVP_DecodeUpdate (crypto.EVP_DecodeUpdate)
#define EVP_ENCODE_CTX_free (crypto.EVP_ENCODE_CTX_free)
#define EVP_ENCODE_CTX_new (crypto.EVP_ENCODE_CTX_new)
#define EVP_PKEY_Q_keygen (crypto.EVP_PKEY_Q_keygen)
#define EVP_PKEY_free (crypto.EVP_PKEY_free)
#define EVP_sha256 (crypto.EVP_sha256)
#define OPENSSL_cleanse (crypto.OPENSSL_cleanse)
#define PEM_read_bio_PrivateKey (crypto.PEM_read_bio_PrivateKey)
#define PEM_read_bio_X509 (crypto.PEM_read_bio_X509)
#define PEM_write_bio_PrivateKey (crypto.PEM_write_bio_PrivateKey)
#define PEM_write_bio_X509 (crypto.PEM_write_bio_X509)
#define X509V3_EXT_conf_nid (crypto.X509V3_EXT_conf_nid)
#define X509V3_set_ctx (crypto.X509V3_set_ctx)
#define X509_EXTENSION_free (crypto.X509_EXTENSION_free)
#define X509_NAME_add_entry_by_txt (crypto.X509_NAME_add_entry_by_txt)
#define X509_STORE_CTX_free (crypto.X509_STORE_CTX_free)
#define X509_STORE_CTX_get0_param (crypto.X509_STORE_CTX_get0_param)
#define X509_STORE_CTX_get_error (crypto.X509_STORE_CTX_get_error)
#define X509_STORE_CTX_init (crypto.X509_STORE_CTX_init)
#define X509_STORE_CTX_new (crypto.X509_STORE_CTX_new)
#define X509_STORE_add_cert (crypto.X509_STORE_add_cert)
#define X509_STORE_free (crypto.X509_STORE_free)
#define X509_STORE_new (crypto.X509_STORE_new)
#define X509_VERIFY_PARAM_set1_host (crypto.X509_VERIFY_PARAM_set1_host)
#define X509_VERIFY_PARAM_set_purpose (crypto.X509_VERIFY_PARAM_set_purpose)
#define X509_VERIFY_PARAM_set_time (crypto.X509_VERIFY_PARAM_set_time)
#define X509_add_ext (crypto.X509_add_ext)
#define X509_check_private_key (crypto.X509_check_private_key)
#define X509_cmp_current_time (crypto.X509_cmp_current_time)
#define X509_free (crypto.X509_free)
#define X509_get0_notAfter (crypto.X509_get0_notAfter)
#define X509_get_serialNumber (crypto.X509_get_serialNumber)
#define X509_get_subject_name (crypto.X509_get_subject_name)
#define X509_getm_notAfter (crypto.X509_getm_notAfter)
#define X509_getm_notBefore (crypto.X509_getm_notBefore)
#define X509_gmtime_adj (crypto.X509_gmtime_adj)
#define X509_new (crypto.X509_new)
#define X509_set_issuer_name (crypto.X509_set_issuer_name)
#define X509_set_pubkey (crypto.X509_set_pubkey)
#define X509_set_version (crypto.X509_set_version)
#define X509_sign (crypto.X509_sign)
#define X509_verify_cert (crypto.X509_verify_cert)
#define X509_verify_cert_error_string (crypto.X509_verify_cert_error_string)
#endif

int install_certs_available(char *why, size_t len)
{
	if (crypto_ready())
		return 0;
	snprintf(why, len, "the webhook's certificates need OpenSSL 3's libcrypto.so.3: %s", wmap_crypto_error());
	return -1;
}

static char *pem_of(int (*write)(BIO *, void *), void *what)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *out = NULL;
	long n;

	if (b && write(b, what) == 1 && (n = BIO_get_mem_data(b, &data)) > 0 &&
	    (out = malloc((size_t)n + 1)) != NULL) {
		memcpy(out, data, (size_t)n);
		out[n] = '\0';
	}
	BIO_free(b);
	return out;
}

static int write_cert(BIO *b, void *x)
{
	return PEM_write_bio_X509(b, x);
}
static int write_key(BIO *b, void *k)
{
	return PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	if ((ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)) == NULL)
		return 0;
	ok = X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return ok;
}

/* A certificate for cn with key, signed by issuer's key (itself when issuer is NULL). */
static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key,
		       const char *san)
{
	X509 *x = X509_new();
	X509_NAME *name;
	BIGNUM *serial = BN_new();
	int ok = x && serial;

	ok = ok && BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) &&
	     BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(x)) && X509_set_version(x, 2) &&
	     X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
	     X509_gmtime_adj(X509_getm_notAfter(x), (long)INSTALL_CERT_DAYS * 86400) &&
	     X509_set_pubkey(x, key) && (name = X509_get_subject_name(x)) != NULL &&
	     X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0) &&
	     X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
	if (ok && !issuer)
		ok = add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE") &&
		     add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") &&
		     add_ext(x, x, NID_subject_key_identifier, "hash");
	if (ok && issuer)
		ok = add_ext(x, issuer, NID_basic_constraints, "critical,CA:FALSE") &&
		     add_ext(x, issuer, NID_key_usage, "critical,digitalSignature") &&
		     add_ext(x, issuer, NID_ext_key_usage, "serverAuth") &&
		     add_ext(x, issuer, NID_subject_alt_name, san) &&
		     add_ext(x, issuer, NID_authority_key_identifier, "keyid:always");
	ok = ok && X509_sign(x, issuer_key, EVP_sha256()) > 0;
	BN_free(serial);
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}

int install_certs_make(char **ca_pem, char **crt_pem, char **key_pem, const char *service, const char *ns,
		       wmap_error *err)
{
	EVP_PKEY *ca_key = NULL, *key = NULL;
	X509 *ca = NULL, *crt = NULL;
	char san[512], cn[256];
	int rc = -1;

	*ca_pem = *crt_pem = *key_pem = NULL;
	if (install_certs_available(san, sizeof(san)) != 0)
		return wmap_error_set(err, WMAP_EINVAL, "%s", san);
	ca_key = EVP_EC_gen("P-256");
	key = EVP_EC_gen("P-256");
	snprintf(san, sizeof(san), "DNS:%s,DNS:%s.%s,DNS:%s.%s.svc,DNS:%s.%s.svc.cluster.local",
		 service, service, ns, service, ns, service, ns);
	snprintf(cn, sizeof(cn), "%s.%s.svc", service, ns);
	if (!ca_key || !key || (ca = make_cert(ca_key, "wmap-webhook-ca", NULL, ca_key, NULL)) == NULL ||
	    (crt = make_cert(key, cn, ca, ca_key, san)) == NULL ||
	    (*ca_pem = pem_of(write_cert, ca)) == NULL || (*crt_pem = pem_of(write_cert, crt)) == NULL ||
	    (*key_pem = pem_of(write_key, key)) == NULL) {
		wmap_error_set(err, WMAP_EINVAL, "making the webhook's certificates with OpenSSL failed");
		free(*ca_pem);
		free(*crt_pem);
		free(*key_pem);
		*ca_pem = *crt_pem = *key_pem = NULL;
		goto out;
	}
	rc = 0;
out:
	X509_free(ca);
	X509_free(crt);
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(key);
	return rc;
}

void install_certs_key_free(char *key_pem)
{
	if (!key_pem)
		return;
	if (crypto_ready()) {
		OPENSSL_cleanse(key_pem, strlen(key_pem));
	} else {
		volatile char *p = key_pem; /* not optimised away, as OPENSSL_cleanse */
		while (*p)
			*p++ = 0;
	}
	free(key_pem);
}

int install_certs_b64_decode(unsigned char **out, size_t *len, const char *in, size_t n)
{
	EVP_ENCODE_CTX *ctx;
	unsigned char *buf;
	int a = 0, b = 0;

	*out = NULL;
	*len = 0;
	if (!crypto_ready())
		return -1;
	ctx = EVP_ENCODE_CTX_new();
	buf = malloc(n / 4 * 3 + 4);
	if (!ctx || !buf || n > (size_t)1 << 24)
		goto fail;
	EVP_DecodeInit(ctx);
	if (EVP_DecodeUpdate(ctx, buf, &a, (const unsigned char *)in, (int)n) < 0 ||
	    EVP_DecodeFinal(ctx, buf + a, &b) != 1)
		goto fail;
	EVP_ENCODE_CTX_free(ctx);
	buf[a + b] = '\0';
	*out = buf;
	*len = (size_t)(a + b);
	return 0;
fail:
	EVP_ENCODE_CTX_free(ctx);
	free(buf);
	return -1;
}

/* Verifies crt_pem against the PEM certificates of bundle (n bytes) for host, at the time
 * at (0: now); 0, or -1 with the reason in why. */
static int verify_pem(const char *crt_pem, const unsigned char *bundle, size_t n, const char *host, time_t at,
		      char *why, size_t len)
{
	BIO *b = NULL, *cb = NULL;
	X509 *crt = NULL, *ca;
	X509_STORE *store;
	X509_STORE_CTX *ctx;
	int rc = -1, n_ca = 0;

	if (install_certs_available(why, len) != 0)
		return -1;
	store = X509_STORE_new();
	ctx = X509_STORE_CTX_new();
	if (!store || !ctx) {
		snprintf(why, len, "out of memory");
		goto out;
	}
	b = BIO_new_mem_buf(bundle, (int)n);
	while (b && (ca = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL) {
		X509_STORE_add_cert(store, ca);
		X509_free(ca);
		n_ca++;
	}
	ERR_clear_error();
	if (n_ca == 0) {
		snprintf(why, len, "the caBundle holds no PEM certificate");
		goto out;
	}
	cb = BIO_new_mem_buf(crt_pem, -1);
	if (!cb || (crt = PEM_read_bio_X509(cb, NULL, NULL, NULL)) == NULL) {
		snprintf(why, len, "the Secret's tls.crt is not a PEM certificate");
		goto out;
	}
	X509_STORE_CTX_init(ctx, store, crt, NULL);
	X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), host, 0);
	X509_VERIFY_PARAM_set_purpose(X509_STORE_CTX_get0_param(ctx), X509_PURPOSE_SSL_SERVER);
	if (at)
		X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx), at);
	if (X509_verify_cert(ctx) != 1) {
		snprintf(why, len, "%s", X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
		goto out;
	}
	rc = 0;
out:
	ERR_clear_error();
	X509_free(crt);
	BIO_free(b);
	BIO_free(cb);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	return rc;
}

int install_certs_verify(const char *crt_pem, const char *bundle_b64, const char *host, char *why, size_t len)
{
	unsigned char *pem = NULL;
	size_t n = 0;
	int rc;

	if (install_certs_b64_decode(&pem, &n, bundle_b64, strlen(bundle_b64)) != 0) {
		snprintf(why, len, "the caBundle is not base64");
		return -1;
	}
	rc = verify_pem(crt_pem, pem, n, host, 0, why, len);
	free(pem);
	return rc;
}

int install_certs_reusable(const char *crt_pem, const char *key_pem, const char *bundle_pem, const char *host,
			   int min_days, char *why, size_t len)
{
	if (install_certs_available(why, len) != 0)
		return 1;
	BIO *cb = BIO_new_mem_buf(crt_pem, -1), *kb = BIO_new_mem_buf(key_pem, -1);
	X509 *crt = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
	EVP_PKEY *key = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
	size_t n = strlen(bundle_pem);
	int rc = 1;
	char r[256];

	if (!crt) {
		snprintf(why, len, "tls.crt is not a PEM certificate");
	} else if (!key || X509_check_private_key(crt, key) != 1) {
		snprintf(why, len, "tls.key is not the key of tls.crt");
	} else if (verify_pem(crt_pem, (const unsigned char *)bundle_pem, n, host, 0, r, sizeof(r)) != 0) {
		snprintf(why, len, "tls.crt does not verify against the CA for %s: %s", host, r);
	} else if (verify_pem(crt_pem, (const unsigned char *)bundle_pem, n, host,
			      time(NULL) + (time_t)min_days * 86400, r, sizeof(r)) != 0) {
		snprintf(why, len, "tls.crt or its CA expires within %d days (%s then)", min_days, r);
	} else {
		rc = 0;
	}
	ERR_clear_error();
	X509_free(crt);
	EVP_PKEY_free(key);
	BIO_free(cb);
	BIO_free(kb);
	return rc;
}

char *install_certs_unexpired(const char *bundle_pem)
{
	if (!crypto_ready())
		return NULL;
	BIO *b = BIO_new_mem_buf(bundle_pem, -1), *o = BIO_new(BIO_s_mem());
	X509 *x;
	char *data, *out = NULL;
	long n;

	while (b && o && (x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL) {
		if (X509_cmp_current_time(X509_get0_notAfter(x)) > 0)
			PEM_write_bio_X509(o, x);
		X509_free(x);
	}
	ERR_clear_error();
	if (o && (n = BIO_get_mem_data(o, &data)) >= 0 && (out = malloc((size_t)n + 1)) != NULL) {
		memcpy(out, data, (size_t)n);
		out[n] = '\0';
	}
	BIO_free(b);
	BIO_free(o);
	return out;
}
