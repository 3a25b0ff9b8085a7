/* wmap: libcrypto (OpenSSL 3), opened on first use (src/kube/crypto_lazy.c).
 *
 * Only `kubectl wmap install` makes and checks certificates; linking libcrypto made every
 * command of the plugin pay for loading and relocating it at start-up. The plugin's one
 * OpenSSL module (kubectl-wmap/install_certs.c) binds the functions it calls through
 * wmap_crypto_symbol instead, the first time it needs one. */
#ifndef WMAP_KUBE_CRYPTO_H
#define WMAP_KUBE_CRYPTO_H

/* The address of libcrypto's function name, opening libcrypto.so.3 the first time (thread
 * safe); NULL when the library cannot be opened or lacks the name (wmap_crypto_error says
 * why). */
void *wmap_crypto_symbol(const char *name);

/* Why the last wmap_crypto_symbol returned NULL (dlopen's or dlsym's message, borrowed);
 * "" when nothing failed. */
const char *wmap_crypto_error(void);

#endif
