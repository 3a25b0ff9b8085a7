/* wmap: the libcurl functions the client calls, opened on first use (src/kube/curl_lazy.c).
 * Named wmap__curl_* so that a program linking libwmap-kube.a and libcurl itself gets no
 * clashing symbols; each forwards to libcurl's function of the same name without the
 * prefix, or fails as libcurl would when libcurl.so.4 cannot be loaded. */
#ifndef WMAP_KUBE_CURL_LAZY_H
#define WMAP_KUBE_CURL_LAZY_H

#define CURL_DISABLE_TYPECHECK 1 /* the wrappers take what libcurl's functions take */
#include <curl/curl.h>

CURLcode wmap__curl_global_init(long flags);
CURL *wmap__curl_easy_init(void);
CURLcode wmap__curl_easy_setopt(CURL *h, CURLoption opt, ...);
CURLcode wmap__curl_easy_perform(CURL *h);
CURLcode wmap__curl_easy_getinfo(CURL *h, CURLINFO info, ...);
void wmap__curl_easy_reset(CURL *h);
void wmap__curl_easy_cleanup(CURL *h);
const char *wmap__curl_easy_strerror(CURLcode rc);
struct curl_slist *wmap__curl_slist_append(struct curl_slist *list, const char *s);
void wmap__curl_slist_free_all(struct curl_slist *list);
/* The multi interface (kube_stream.c). */
CURLM *wmap__curl_multi_init(void);
CURLMcode wmap__curl_multi_add_handle(CURLM *m, CURL *h);
CURLMcode wmap__curl_multi_remove_handle(CURLM *m, CURL *h);
CURLMcode wmap__curl_multi_perform(CURLM *m, int *running);
CURLMcode wmap__curl_multi_poll(CURLM *m, struct curl_waitfd *extra, unsigned int n,
				int timeout_ms, int *numfds);
CURLMsg *wmap__curl_multi_info_read(CURLM *m, int *left);
CURLMcode wmap__curl_multi_cleanup(CURLM *m);

#endif
