/* wmap: libcrypto, loaded on first use (see wmap/kube/crypto.h).
 *
 * The plugin linked libcrypto for `install` alone, and the dynamic linker then loaded and
 * relocated it for every command: about 3 M instructions of a `describe -f` that needs none
 * of it. As libcurl (curl_lazy.c), it is opened with dlopen the first time install asks for
 * a function; a machine without it fails install (and install --check) with a clear error,
 * not every command at start-up. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "wmap/kube/crypto.h"

static void *lib;
static char why[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void load(void)
{
	const char *e;
	lib = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
	if (!lib && (e = dlerror()) != NULL)
		snprintf(why, sizeof(why), "%s", e);
}

void *wmap_crypto_symbol(const char *name)
{
	void *f = NULL;
	pthread_once(&once, load);
	if (!lib)
		return NULL;
	pthread_mutex_lock(&lock); /* dlerror's state is per thread, why is shared */
	dlerror();
	f = dlsym(lib, name);
	if (!f)
		snprintf(why, sizeof(why), "libcrypto.so.3 has no %s", name);
	pthread_mutex_unlock(&lock);
	return f;
}

const char *wmap_crypto_error(void)
{
	return why;
}
