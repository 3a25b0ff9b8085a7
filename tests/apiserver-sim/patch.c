/* RFC 6902 JSON Patch, RFC 7386 JSON Merge Patch, and an approximation of strategic merge
 * patch for built-ins. Error texts follow evanphx/json-patch (what kube-apiserver uses), so
 * clients see the same words the real server sends. */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits a JSON pointer into unescaped tokens. Returns the count, -1 on a malformed pointer. */
static int pointer_split(const char *ptr, char toks[][256], int max)
{
    int n = 0;
    if (*ptr == '\0')
        return 0;
    if (*ptr != '/')
        return -1;
    while (*ptr == '/') {
        size_t o = 0;
        if (n >= max)
            return -1;
        ptr++;
        while (*ptr && *ptr != '/') {
            char c = *ptr++;
            if (c == '~') {
                if (*ptr == '0')
                    c = '~';
                else if (*ptr == '1')
                    c = '/';
                else
                    return -1;
                ptr++;
            }
            if (o + 1 >= 256)
                return -1;
            toks[n][o++] = c;
        }
        toks[n][o] = '\0';
        n++;
    }
    return n;
}

static int parse_index(const char *tok, size_t size, bool allow_end, size_t *out)
{
    long v;
    if (allow_end && !strcmp(tok, "-")) {
        *out = size;
        return 0;
    }
    if (tok[0] == '0' && tok[1])
        return -1;
    if (sim_parse_int(tok, 0, 1L << 30, &v) < 0)
        return -1;
    if ((size_t)v > size || (!allow_end && (size_t)v >= size))
        return -1;
    *out = (size_t)v;
    return 0;
}

/* Walks to the parent container of the pointer's last token. */
static json_t *walk_parent(json_t *doc, char toks[][256], int n)
{
    json_t *cur = doc;
    for (int i = 0; i < n - 1; i++) {
        if (json_is_object(cur))
            cur = json_object_get(cur, toks[i]);
        else if (json_is_array(cur)) {
            size_t idx;
            if (parse_index(toks[i], json_array_size(cur), false, &idx) < 0)
                return NULL;
            cur = json_array_get(cur, idx);
        } else
            return NULL;
        if (!cur)
            return NULL;
    }
    return cur;
}

static json_t *get_at(json_t *doc, const char *path)
{
    char toks[64][256];
    int n = pointer_split(path, toks, 64);
    json_t *parent;
    if (n < 0)
        return NULL;
    if (n == 0)
        return doc;
    parent = walk_parent(doc, toks, n);
    if (json_is_object(parent))
        return json_object_get(parent, toks[n - 1]);
    if (json_is_array(parent)) {
        size_t idx;
        if (parse_index(toks[n - 1], json_array_size(parent), false, &idx) < 0)
            return NULL;
        return json_array_get(parent, idx);
    }
    return NULL;
}

/* add (insert=true for arrays) or replace `val` (stolen) at path. */
static int put_at(json_t *doc, const char *path, json_t *val, bool replace, char *err, size_t n,
                  const char *opname)
{
    char toks[64][256];
    int nt = pointer_split(path, toks, 64);
    json_t *parent;
    if (nt <= 0) {
        json_decref(val);
        snprintf(err, n, "%s operation does not apply: doc is missing path: \"%s\": missing value", opname, path);
        return -1;
    }
    parent = walk_parent(doc, toks, nt);
    if (json_is_object(parent)) {
        if (replace && !json_object_get(parent, toks[nt - 1])) {
            json_decref(val);
            snprintf(err, n, "replace operation does not apply: doc is missing key: %s: missing value", path);
            return -1;
        }
        json_object_set_new(parent, toks[nt - 1], val);
        return 0;
    }
    if (json_is_array(parent)) {
        size_t idx;
        if (parse_index(toks[nt - 1], json_array_size(parent), !replace, &idx) < 0) {
            json_decref(val);
            snprintf(err, n, "%s operation does not apply: doc is missing path: \"%s\": invalid index", opname, path);
            return -1;
        }
        if (replace)
            json_array_set_new(parent, idx, val);
        else
            json_array_insert_new(parent, idx, val);
        return 0;
    }
    json_decref(val);
    /* evanphx/json-patch v4 quotes the path for add but not for replace. */
    if (replace)
        snprintf(err, n, "replace operation does not apply: doc is missing path: %s: missing value", path);
    else
        snprintf(err, n, "%s operation does not apply: doc is missing path: \"%s\": missing value", opname, path);
    return -1;
}

/* Removes the value at path; returns it (new reference) or NULL. */
static json_t *take_at(json_t *doc, const char *path)
{
    char toks[64][256];
    int nt = pointer_split(path, toks, 64);
    json_t *parent, *v;
    if (nt <= 0)
        return NULL;
    parent = walk_parent(doc, toks, nt);
    if (json_is_object(parent)) {
        v = json_object_get(parent, toks[nt - 1]);
        if (!v)
            return NULL;
        json_incref(v);
        json_object_del(parent, toks[nt - 1]);
        return v;
    }
    if (json_is_array(parent)) {
        size_t idx;
        if (parse_index(toks[nt - 1], json_array_size(parent), false, &idx) < 0)
            return NULL;
        v = json_incref(json_array_get(parent, idx));
        json_array_remove(parent, idx);
        return v;
    }
    return NULL;
}

int sim_json_patch(json_t *doc, const json_t *ops, char *err, size_t n)
{
    size_t i;
    json_t *op;
    if (!json_is_array(ops)) {
        snprintf(err, n, "json: cannot unmarshal object into Go value of type jsonpatch.Patch");
        return -1;
    }
    json_array_foreach(ops, i, op) {
        const char *kind = sim_jstr(op, "op");
        const char *path = sim_jstr(op, "path");
        const char *from = sim_jstr(op, "from");
        json_t *value = json_object_get(op, "value");
        if (!kind) {
            snprintf(err, n, "Unexpected kind: unknown");
            return -1;
        }
        if (!path) {
            snprintf(err, n, "%s operation missing path", kind);
            return -1;
        }
        if (!strcmp(kind, "add") || !strcmp(kind, "replace")) {
            bool repl = kind[0] == 'r';
            if (!value) {
                snprintf(err, n, "%s operation missing value", kind);
                return -1;
            }
            if (!*path) { /* whole-document replacement is not something we support */
                snprintf(err, n, "%s operation does not apply: doc is missing path: \"\"", kind);
                return -1;
            }
            if (put_at(doc, path, json_deep_copy(value), repl, err, n, kind) < 0)
                return -1;
        } else if (!strcmp(kind, "remove")) {
            json_t *v = take_at(doc, path);
            if (!v) {
                snprintf(err, n, "remove operation does not apply: doc is missing path: \"%s\": missing value", path);
                return -1;
            }
            json_decref(v);
        } else if (!strcmp(kind, "test")) {
            json_t *cur = get_at(doc, path);
            if (!value || !cur || !json_equal(cur, value)) {
                snprintf(err, n, "testing value %s failed: test failed", path);
                return -1;
            }
        } else if (!strcmp(kind, "move") || !strcmp(kind, "copy")) {
            json_t *v;
            if (!from) {
                snprintf(err, n, "%s operation missing from", kind);
                return -1;
            }
            if (kind[0] == 'm') {
                v = take_at(doc, from);
            } else {
                json_t *src = get_at(doc, from);
                v = src ? json_deep_copy(src) : NULL;
            }
            if (!v) {
                snprintf(err, n, "%s operation does not apply: doc is missing from path: \"%s\": missing value", kind, from);
                return -1;
            }
            if (put_at(doc, path, v, false, err, n, kind) < 0)
                return -1;
        } else {
            snprintf(err, n, "Unexpected kind: %s", kind);
            return -1;
        }
    }
    return 0;
}

json_t *sim_merge_patch(json_t *target, const json_t *patch)
{
    const char *k;
    json_t *v;
    if (!json_is_object(patch)) {
        json_decref(target);
        return json_deep_copy(patch);
    }
    if (!json_is_object(target)) {
        json_decref(target);
        target = json_object();
    }
    json_object_foreach((json_t *)patch, k, v) {
        if (json_is_null(v)) {
            json_object_del(target, k);
        } else {
            json_t *cur = json_object_get(target, k);
            json_t *merged = sim_merge_patch(cur ? json_incref(cur) : NULL, v);
            json_object_set_new(target, k, merged);
        }
    }
    return target;
}

/* Strategic merge patch, approximated: maps merge like a merge patch; lists whose elements
 * are objects with a "name" key merge by that key (containers, env, volumes, ports with
 * names), `$patch: delete` removes an element, and other `$` directives are dropped. That
 * covers what kubectl apply/patch/label generate for the built-ins we serve. */
static bool list_by_name(const json_t *a)
{
    size_t i;
    json_t *e;
    if (!json_is_array(a) || json_array_size(a) == 0)
        return false;
    json_array_foreach(a, i, e) {
        if (!json_is_string(json_object_get(e, "name")))
            return false;
    }
    return true;
}

json_t *sim_strategic_patch(json_t *target, const json_t *patch)
{
    const char *k;
    json_t *v;
    if (!json_is_object(patch)) {
        json_decref(target);
        return json_deep_copy(patch);
    }
    if (!json_is_object(target)) {
        json_decref(target);
        target = json_object();
    }
    json_object_foreach((json_t *)patch, k, v) {
        json_t *cur = json_object_get(target, k);
        if (k[0] == '$')
            continue;
        if (json_is_null(v)) {
            json_object_del(target, k);
        } else if (json_is_array(v) && json_is_array(cur) && list_by_name(v) && list_by_name(cur)) {
            json_t *out = json_deep_copy(cur);
            size_t i;
            json_t *pe;
            json_array_foreach(v, i, pe) {
                const char *name = sim_jstr(pe, "name");
                const char *directive = sim_jstr(pe, "$patch");
                size_t j, found = (size_t)-1;
                json_t *oe;
                json_array_foreach(out, j, oe) {
                    if (!strcmp(sim_jstr(oe, "name"), name)) {
                        found = j;
                        break;
                    }
                }
                if (directive && !strcmp(directive, "delete")) {
                    if (found != (size_t)-1)
                        json_array_remove(out, found);
                } else if (found != (size_t)-1) {
                    json_t *m = sim_strategic_patch(json_incref(json_array_get(out, found)), pe);
                    json_array_set_new(out, found, m);
                } else {
                    json_array_append_new(out, sim_strategic_patch(NULL, pe));
                }
            }
            json_object_set_new(target, k, out);
        } else {
            json_object_set_new(target, k, sim_strategic_patch(cur ? json_incref(cur) : NULL, v));
        }
    }
    return target;
}
