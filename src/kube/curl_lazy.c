/* wmap: libcurl, loaded on first use.
 *
 * libcurl pulls some thirty shared libraries (GSSAPI, LDAP, SSH, HTTP/2, brotli, ...) whose
 * relocation cost most of an offline `kubectl wmap describe -f` (measured: 14 M of its 18 M
 * instructions, ~20 ms of system time). Only the live commands talk to a cluster, so the
 * binaries do not link libcurl: the few functions src/kube/kube.c calls are defined here,
 * as wmap__curl_* (curl_lazy.h), and forward to libcurl.so.4 opened with dlopen the first
 * time one of them runs. A machine
 * without libcurl then fails the live commands with a clear error (curl_easy_init returns
 * NULL), not every command at start-up. Add a function here when kube.c starts using it. */
#include "curl_lazy.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>

static struct {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_reset)(CURL *);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_add_handle)(CURLM *, CURL *);
	CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
	CURLMcode (*multi_perform)(CURLM *, int *);
	CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
	CURLMsg *(*multi_info_read)(CURLM *, int *);
	CURLMcode (*multi_cleanup)(CURLM *);
} fn;

static pthread_once_t once = PTHREAD_ONCE_INIT;

/* dlsym hands back an object pointer; this is the POSIX-sanctioned way to make it a function. */
#define BIND(field, name) (*(void **)(&fn.field) = dlsym(lib, name))

static void load(void)
{
	void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return;
	if (!BIND(global_init, "curl_global_init") || !BIND(easy_init, "curl_easy_init") ||
	    !BIND(easy_setopt, "curl_easy_setopt") || !BIND(easy_perform, "curl_easy_perform") ||
	    !BIND(easy_getinfo, "curl_easy_getinfo") || !BIND(easy_reset, "curl_easy_reset") ||
	    !BIND(easy_cleanup, "curl_easy_cleanup") || !BIND(easy_strerror, "curl_easy_strerror") ||
	    !BIND(slist_append, "curl_slist_append") || !BIND(slist_free_all, "curl_slist_free_all") ||
	    !BIND(multi_init, "curl_multi_init") || !BIND(multi_add_handle, "curl_multi_add_handle") ||
	    !BIND(multi_remove_handle, "curl_multi_remove_handle") ||
	    !BIND(multi_perform, "curl_multi_perform") || !BIND(multi_poll, "curl_multi_poll") ||
	    !BIND(multi_info_read, "curl_multi_info_read") ||
	    !BIND(multi_cleanup, "curl_multi_cleanup")) {
		fn.easy_init = NULL; /* a partial libcurl is no libcurl */
		fn.global_init = NULL;
	}
}

static int ready(void)
{
	pthread_once(&once, load);
	return fn.easy_init != NULL;
}

CURLcode wmap__curl_global_init(long flags)
{
	return ready() ? fn.global_init(flags) : CURLE_FAILED_INIT;
}

CURL *wmap__curl_easy_init(void)
{
	return ready() ? fn.easy_init() : NULL;
}

/* The third argument's type follows from the option's range (curl.h's CURLOPTTYPE_*). */
CURLcode wmap__curl_easy_setopt(CURL *h, CURLoption opt, ...)
{
	va_list ap;
	CURLcode rc;

	if (!ready() || !h)
		return CURLE_FAILED_INIT;
	va_start(ap, opt);
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		rc = fn.easy_setopt(h, opt, va_arg(ap, long));
	else if (opt >= CURLOPTTYPE_OFF_T && opt < CURLOPTTYPE_BLOB)
		rc = fn.easy_setopt(h, opt, va_arg(ap, curl_off_t));
	else
		rc = fn.easy_setopt(h, opt, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

CURLcode wmap__curl_easy_perform(CURL *h)
{
	return ready() && h ? fn.easy_perform(h) : CURLE_FAILED_INIT;
}

/* Every getinfo takes a pointer to where the answer goes. */
CURLcode wmap__curl_easy_getinfo(CURL *h, CURLINFO info, ...)
{
	va_list ap;
	CURLcode rc;

	if (!ready() || !h)
		return CURLE_FAILED_INIT;
	va_start(ap, info);
	rc = fn.easy_getinfo(h, info, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

void wmap__curl_easy_reset(CURL *h)
{
	if (ready() && h)
		fn.easy_reset(h);
}

void wmap__curl_easy_cleanup(CURL *h)
{
	if (ready() && h)
		fn.easy_cleanup(h);
}

const char *wmap__curl_easy_strerror(CURLcode rc)
{
	return ready() ? fn.easy_strerror(rc) : "libcurl (libcurl.so.4) could not be loaded";
}

struct curl_slist *wmap__curl_slist_append(struct curl_slist *list, const char *s)
{
	return ready() ? fn.slist_append(list, s) : NULL;
}

void wmap__curl_slist_free_all(struct curl_slist *list)
{
	if (ready())
		fn.slist_free_all(list);
}

/* The multi interface: kube_stream.c multiplexes watches and log streams with it. */
CURLM *wmap__curl_multi_init(void)
{
	return ready() ? fn.multi_init() : NULL;
}

CURLMcode wmap__curl_multi_add_handle(CURLM *m, CURL *h)
{
	return ready() && m ? fn.multi_add_handle(m, h) : CURLM_BAD_HANDLE;
}

CURLMcode wmap__curl_multi_remove_handle(CURLM *m, CURL *h)
{
	return ready() && m ? fn.multi_remove_handle(m, h) : CURLM_BAD_HANDLE;
}

CURLMcode wmap__curl_multi_perform(CURLM *m, int *running)
{
	return ready() && m ? fn.multi_perform(m, running) : CURLM_BAD_HANDLE;
}

CURLMcode wmap__curl_multi_poll(CURLM *m, struct curl_waitfd *extra, unsigned int n,
				int timeout_ms,
				int *numfds)
{
	return ready() && m ? fn.multi_poll(m, extra, n, timeout_ms, numfds) : CURLM_BAD_HANDLE;
}

CURLMsg *wmap__curl_multi_info_read(CURLM *m, int *left)
{
	return ready() && m ? fn.multi_info_read(m, left) : NULL;
}

CURLMcode wmap__curl_multi_cleanup(CURLM *m)
{
	return ready() && m ? fn.multi_cleanup(m) : CURLM_BAD_HANDLE;
}
