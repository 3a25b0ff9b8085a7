/* Label selectors: the string form of ?labelSelector= (k8s.io/apimachinery/pkg/labels grammar)
 * and the metav1.LabelSelector object used by webhook namespace/object selectors.
 * A parsed selector is a JSON array of {"key","op","values"} requirements, ANDed. */
#include "sim.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static void skip_ws(const char **p)
{
    while (**p == ' ' || **p == '\t')
        (*p)++;
}

/* Keys and values: label characters; keys may carry a DNS prefix with '/'. */
static int read_token(const char **p, char *out, size_t n)
{
    size_t o = 0;
    skip_ws(p);
    while (**p && (isalnum((unsigned char)**p) || strchr("-_./", **p))) {
        if (o + 1 >= n)
            return -1;
        out[o++] = *(*p)++;
    }
    out[o] = '\0';
    return (int)o;
}

json_t *sim_selector_parse(const char *sel, char *err, size_t n)
{
    json_t *reqs = json_array();
    const char *p = sel;
    skip_ws(&p);
    if (!*p)
        return reqs;
    for (;;) {
        char key[320], val[320], word[16];
        const char *op = NULL;
        json_t *values = json_array();
        bool neg = false;
        skip_ws(&p);
        if (*p == '!') {
            neg = true;
            p++;
        }
        if (read_token(&p, key, sizeof(key)) <= 0) {
            snprintf(err, n, "unable to parse requirement: found '%c', expected: identifier", *p ? *p : ' ');
            goto fail;
        }
        skip_ws(&p);
        if (neg) {
            op = "!";
        } else if (!strncmp(p, "==", 2)) {
            op = "=";
            p += 2;
        } else if (!strncmp(p, "!=", 2)) {
            op = "!=";
            p += 2;
        } else if (*p == '=') {
            op = "=";
            p++;
        } else if (*p == ',' || *p == '\0') {
            op = "exists";
        } else {
            const char *save = p;
            if (read_token(&p, word, sizeof(word)) > 0 && (!strcmp(word, "in") || !strcmp(word, "notin"))) {
                op = word[0] == 'i' ? "in" : "notin";
            } else {
                p = save;
                snprintf(err, n, "found '%s', expected: in, notin, =, ==, !=, gt, lt", p);
                goto fail;
            }
        }
        if (!strcmp(op, "=") || !strcmp(op, "!=")) {
            if (read_token(&p, val, sizeof(val)) < 0) {
                snprintf(err, n, "invalid label value");
                goto fail;
            }
            json_array_append_new(values, json_string(val));
        } else if (!strcmp(op, "in") || !strcmp(op, "notin")) {
            skip_ws(&p);
            if (*p != '(') {
                snprintf(err, n, "found '%c', expected: '('", *p ? *p : ' ');
                goto fail;
            }
            p++;
            for (;;) {
                if (read_token(&p, val, sizeof(val)) < 0) {
                    snprintf(err, n, "invalid label value");
                    goto fail;
                }
                json_array_append_new(values, json_string(val));
                skip_ws(&p);
                if (*p == ',') {
                    p++;
                    continue;
                }
                if (*p == ')') {
                    p++;
                    break;
                }
                snprintf(err, n, "found '%c', expected: ',' or ')'", *p ? *p : ' ');
                goto fail;
            }
        }
        json_array_append_new(reqs, json_pack("{s:s, s:s, s:o}", "key", key, "op", op, "values", values));
        skip_ws(&p);
        if (*p == '\0')
            break;
        if (*p != ',') {
            snprintf(err, n, "found '%c', expected: ',' or 'end of string'", *p);
            goto fail_noval;
        }
        p++;
        continue;
    fail:
        json_decref(values);
    fail_noval:
        json_decref(reqs);
        return NULL;
    }
    return reqs;
}

static bool in_values(const json_t *values, const char *v)
{
    size_t i;
    json_t *e;
    json_array_foreach(values, i, e) {
        if (json_is_string(e) && !strcmp(json_string_value(e), v))
            return true;
    }
    return false;
}

bool sim_selector_match(const json_t *reqs, const json_t *labels)
{
    size_t i;
    json_t *r;
    json_array_foreach(reqs, i, r) {
        const char *key = sim_jstr(r, "key"), *op = sim_jstr(r, "op");
        json_t *values = json_object_get(r, "values");
        const char *have = sim_jstr(labels, key);
        if (!strcmp(op, "exists")) {
            if (!have)
                return false;
        } else if (!strcmp(op, "!")) {
            if (have)
                return false;
        } else if (!strcmp(op, "=") || !strcmp(op, "in")) {
            if (!have || !in_values(values, have))
                return false;
        } else if (!strcmp(op, "!=") || !strcmp(op, "notin")) {
            /* Like the real server: a missing key satisfies != and notin. */
            if (have && in_values(values, have))
                return false;
        }
    }
    return true;
}

int sim_labelselector_match(const json_t *selector, const json_t *labels, bool *out, char *err, size_t n)
{
    const char *k;
    json_t *v, *exprs;
    size_t i;
    *out = true;
    if (!selector || json_is_null(selector))
        return 0;
    json_object_foreach(json_object_get(selector, "matchLabels"), k, v) {
        const char *have = sim_jstr(labels, k);
        if (!have || !json_is_string(v) || strcmp(have, json_string_value(v))) {
            *out = false;
            return 0;
        }
    }
    exprs = json_object_get(selector, "matchExpressions");
    json_array_foreach(exprs, i, v) {
        const char *key = sim_jstr(v, "key"), *op = sim_jstr(v, "operator");
        json_t *values = json_object_get(v, "values");
        const char *have;
        if (!key || !op) {
            snprintf(err, n, "matchExpressions[%zu]: key and operator are required", i);
            return -1;
        }
        have = sim_jstr(labels, key);
        if (!strcmp(op, "In")) {
            if (!have || !in_values(values, have))
                *out = false;
        } else if (!strcmp(op, "NotIn")) {
            if (have && in_values(values, have))
                *out = false;
        } else if (!strcmp(op, "Exists")) {
            if (!have)
                *out = false;
        } else if (!strcmp(op, "DoesNotExist")) {
            if (have)
                *out = false;
        } else {
            snprintf(err, n, "\"%s\" is not a valid label selector operator", op);
            return -1;
        }
        if (!*out)
            return 0;
    }
    return 0;
}
