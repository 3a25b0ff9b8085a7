/* wmap-webhook: JSON log lines on stderr. Object contents are never logged: callers pass
 * identifiers (uid, kind, namespace/name) and sizes only. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include "webhook.h"
#include "wmap/json_text.h"

void wh_log(const char *level, const char *msg, const json_t *extra)
{
	char ts[64];
	struct timeval tv;
	struct tm tm;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	size_t n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + n, sizeof(ts) - n, ".%06ldZ", (long)tv.tv_usec);
	json_t *line = json_pack("{s:s, s:s, s:s}", "time", ts, "level", level, "msg", msg);
	if (!line)
		return;
	if (extra && json_object_update(line, (json_t *)extra) != 0) {
		json_decref(line);
		return;
	}
	/* Whole or not at all: a line cut by an allocation failure would break log parsers. */
	char *text = wmap_json_text(line, NULL);
	json_decref(line);
	if (!text)
		return;
	/* One fputs under the stream lock keeps lines from different threads whole. */
	flockfile(stderr);
	fputs(text, stderr);
	fputc('\n', stderr);
	funlockfile(stderr);
	free(text);
}

void wh_logf(const char *level, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	wh_log(level, buf, NULL);
}
