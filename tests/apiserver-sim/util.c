/* Small helpers shared by the simulator: Status errors, bounded JSON parsing, time,
 * randomness, base64 and file I/O. */
#include "sim.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

void sim_err_clear(struct sim_err *e)
{
    json_decref(e->causes);
    memset(e, 0, sizeof(*e));
}

void sim_err_set(struct sim_err *e, int code, const char *reason, const char *fmt, ...)
{
    va_list ap;
    e->code = code;
    snprintf(e->reason, sizeof(e->reason), "%s", reason ? reason : "");
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
}

json_t *sim_status_json(const struct sim_err *e)
{
    json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
                           "metadata", "status", "Failure", "message", e->message, "code", e->code);
    if (!st)
        return NULL;
    if (e->reason[0])
        json_object_set_new(st, "reason", json_string(e->reason));
    if (e->details_name[0] || e->details_kind[0] || e->causes) {
        json_t *d = json_object();
        if (e->details_name[0])
            json_object_set_new(d, "name", json_string(e->details_name));
        if (e->details_group[0])
            json_object_set_new(d, "group", json_string(e->details_group));
        if (e->details_kind[0])
            json_object_set_new(d, "kind", json_string(e->details_kind));
        if (e->causes)
            json_object_set(d, "causes", e->causes);
        json_object_set_new(st, "details", d);
    }
    return st;
}

int sim_json_depth_ok(const json_t *v, int limit)
{
    if (limit <= 0)
        return 0;
    if (json_is_object(v)) {
        const char *k;
        json_t *c;
        json_object_foreach((json_t *)v, k, c) {
            if (!sim_json_depth_ok(c, limit - 1))
                return 0;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *c;
        json_array_foreach(v, i, c) {
            if (!sim_json_depth_ok(c, limit - 1))
                return 0;
        }
    }
    return 1;
}

/* Nesting is checked on the raw text before jansson recurses, so a hostile body of
 * a million '[' cannot exhaust the stack inside the parser. */
static int text_depth_ok(const char *buf, size_t len, int limit)
{
    int depth = 0;
    bool in_str = false, esc = false;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (in_str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"')
                in_str = false;
            continue;
        }
        if (c == '"')
            in_str = true;
        else if (c == '{' || c == '[') {
            if (++depth > limit)
                return 0;
        } else if (c == '}' || c == ']')
            depth--;
    }
    return 1;
}

json_t *sim_json_parse(const char *buf, size_t len, char *errbuf, size_t errlen)
{
    json_error_t je;
    if (!text_depth_ok(buf, len, SIM_JSON_DEPTH)) {
        snprintf(errbuf, errlen, "JSON nesting deeper than %d", SIM_JSON_DEPTH);
        return NULL;
    }
    json_t *v = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (!v)
        snprintf(errbuf, errlen, "%s (line %d, column %d)", je.text, je.line, je.column);
    return v;
}

void sim_now_rfc3339(char *out, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void sim_random_hex(char *out, size_t nbytes)
{
    unsigned char b[64];
    if (nbytes > sizeof(b))
        nbytes = sizeof(b);
    if (RAND_bytes(b, (int)nbytes) != 1)
        memset(b, 0x5a, nbytes);
    for (size_t i = 0; i < nbytes; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

void sim_random_suffix(char *out, size_t n)
{
    /* The alphabet of k8s.io/apimachinery/pkg/util/rand: no vowels, no confusable digits. */
    static const char alpha[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char b[5];
    if (n < 6)
        return;
    if (RAND_bytes(b, 5) != 1)
        memset(b, 7, 5);
    for (int i = 0; i < 5; i++)
        out[i] = alpha[b[i] % (sizeof(alpha) - 1)];
    out[5] = '\0';
}

static const char b64tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t sim_b64_encode(const unsigned char *in, size_t len, char *out, size_t outlen)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)in[i] << 16;
        if (i + 1 < len)
            v |= (unsigned)in[i + 1] << 8;
        if (i + 2 < len)
            v |= in[i + 2];
        if (o + 5 > outlen)
            return 0;
        out[o++] = b64tab[(v >> 18) & 63];
        out[o++] = b64tab[(v >> 12) & 63];
        out[o++] = i + 1 < len ? b64tab[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? b64tab[v & 63] : '=';
    }
    if (o >= outlen)
        return 0;
    out[o] = '\0';
    return o;
}

unsigned char *sim_b64_decode(const char *in, size_t *outlen)
{
    size_t len = strlen(in);
    unsigned char *out = malloc(len / 4 * 3 + 4);
    unsigned v = 0;
    int bits = 0;
    size_t o = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        const char *p;
        if (in[i] == '=')
            break;
        if (in[i] == '\n' || in[i] == '\r')
            continue;
        p = strchr(b64tab, in[i]);
        if (!p || !in[i]) {
            free(out);
            return NULL;
        }
        v = (v << 6) | (unsigned)(p - b64tab);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)((v >> bits) & 0xff);
        }
    }
    out[o] = '\0';
    *outlen = o;
    return out;
}

const char *sim_jstr(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

json_t *sim_jpath(json_t *root, const char *a, const char *b)
{
    json_t *v = json_object_get(root, a);
    return b ? json_object_get(v, b) : v;
}

void sim_add_warning(struct sim_req *r, const char *fmt, ...)
{
    va_list ap;
    if (r->n_warnings >= (int)(sizeof(r->warnings) / sizeof(r->warnings[0])))
        return;
    va_start(ap, fmt);
    vsnprintf(r->warnings[r->n_warnings++], sizeof(r->warnings[0]), fmt, ap);
    va_end(ap);
}

int sim_parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v;
    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

char *sim_read_file(const char *path, size_t cap, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, sz = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (n + 4096 + 1 > sz) {
            char *nb;
            sz = sz ? sz * 2 : 8192;
            if (sz > cap + 4097) {
                free(buf);
                buf = NULL;
                goto out;
            }
            nb = realloc(buf, sz);
            if (!nb) {
                free(buf);
                buf = NULL;
                goto out;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, 4096, f);
        n += got;
        if (got < 4096)
            break;
    }
    if (n > cap) {
        free(buf);
        buf = NULL;
        goto out;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
out:
    fclose(f);
    return buf;
}

int sim_write_file(const char *path, const char *data, size_t len)
{
    /* Write to a temporary name and rename, so a watcher never reads half a file. */
    char tmp[PATH_MAX];
    int fd, rc = -1;
    if (snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof(tmp))
        return -1;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, data, len);
    int c = close(fd);
    if (w == (ssize_t)len && c == 0)
        rc = rename(tmp, path);
    if (rc != 0)
        unlink(tmp);
    return rc;
}
