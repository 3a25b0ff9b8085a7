/* Server-side printing: the meta.k8s.io/v1 Table kubectl asks for with
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`. Columns are NAME and AGE plus a
 * CRD's additionalPrinterColumns (dotted paths, indices and `[?(@.field=="value")]` filters). */
#include "table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Days since 1970-01-01 of a civil date (H. Hinnant's algorithm); timegm() is not POSIX. */
static long long days_from_civil(long long y, unsigned m, unsigned d)
{
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long long)doe - 719468;
}

static long long age_seconds(const char *ts)
{
    int y, mo, d, h, mi, sec;
    if (!ts || sscanf(ts, "%d-%d-%dT%d:%d:%dZ", &y, &mo, &d, &h, &mi, &sec) != 6 || mo < 1 || mo > 12 || d < 1 ||
        d > 31)
        return -1;
    return (long long)time(NULL) - (days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec);
}

/* k8s.io/apimachinery/pkg/util/duration.HumanDuration, abridged. */
static void human_age(long long s, char *out, size_t n)
{
    if (s < 0)
        snprintf(out, n, "<unknown>");
    else if (s < 120)
        snprintf(out, n, "%llds", s);
    else if (s < 600)
        snprintf(out, n, "%lldm%llds", s / 60, s % 60);
    else if (s < 3 * 3600)
        snprintf(out, n, "%lldm", s / 60);
    else if (s < 48 * 3600)
        snprintf(out, n, "%lldh", s / 3600);
    else
        snprintf(out, n, "%lldd", s / 86400);
}

/* The value a printer column's jsonPath names: `.a.b`, `.a[2].b` and the filter kubectl's
 * columns use for conditions, `.a[?(@.type=="Ready")].b` (the first element whose string
 * field equals the value). Anything else is NULL (an empty cell). */
static json_t *printer_jsonpath(json_t *obj, const char *path)
{
    const char *p = path;
    json_t *cur = obj;
    if (!p || *p != '.' || strlen(p) >= 512)
        return NULL;
    while (*p && cur) {
        if (*p == '.') {
            size_t n = strcspn(++p, ".[");
            char key[256];
            if (n == 0 || n >= sizeof(key))
                return NULL;
            memcpy(key, p, n);
            key[n] = 0;
            p += n;
            cur = json_object_get(cur, key);
        } else if (*p == '[') {
            const char *end = strchr(p, ']');
            if (!end || !json_is_array(cur))
                return NULL;
            if (!strncmp(p, "[?(@.", 5)) {
                char field[128], val[256];
                const char *f = p + 5, *eq = strstr(f, "==");
                if (!eq || eq > end || (size_t)(eq - f) >= sizeof(field) || (eq[2] != '"' && eq[2] != '\''))
                    return NULL;
                const char *v = eq + 3, *q = strchr(v, eq[2]);
                if (!q || q > end || (size_t)(q - v) >= sizeof(val) || strncmp(q + 1, ")]", 2))
                    return NULL;
                memcpy(field, f, (size_t)(eq - f));
                field[eq - f] = 0;
                memcpy(val, v, (size_t)(q - v));
                val[q - v] = 0;
                json_t *found = NULL, *e;
                size_t i;
                json_array_foreach(cur, i, e) {
                    const char *have = json_string_value(json_object_get(e, field));
                    if (have && !strcmp(have, val)) {
                        found = e;
                        break;
                    }
                }
                cur = found;
                p = q + 3;
            } else {
                char *num_end;
                long idx = strtol(p + 1, &num_end, 10);
                if (num_end != end || idx < 0)
                    return NULL;
                cur = json_array_get(cur, (size_t)idx);
                p = end + 1;
            }
        } else {
            return NULL;
        }
    }
    return cur;
}

static json_t *crd_columns(struct sim *s, const struct sim_resource *res)
{
    struct sim_resource *crds = sim_resource_find(s, "apiextensions.k8s.io", "v1", "customresourcedefinitions");
    json_t *crd = crds && res->crd_name[0] ? sim_object_get(crds, "", res->crd_name) : NULL;
    json_t *versions = sim_jpath(crd, "spec", "versions"), *v;
    size_t i;
    json_array_foreach(versions, i, v) {
        if (sim_jstr(v, "name") && !strcmp(sim_jstr(v, "name"), res->version))
            return json_object_get(v, "additionalPrinterColumns");
    }
    return NULL;
}

json_t *sim_table(struct sim *s, const struct sim_resource *res, json_t *items, const char *include,
                  json_t *listmeta)
{
    json_t *cols = json_array(), *rows = json_array(), *extra = crd_columns(s, res), *c, *item;
    size_t i, j;
    bool has_age_col = false;
    json_array_append_new(cols, json_pack("{s:s,s:s,s:s,s:s,s:i}", "name", "Name", "type", "string",
                                          "format", "name", "description",
                                          "Name must be unique within a namespace.", "priority", 0));
    json_array_foreach(extra, j, c) {
        const char *name = sim_jstr(c, "name");
        if (name && !strcmp(name, "Age"))
            has_age_col = true;
        json_array_append_new(cols, json_pack("{s:s,s:s,s:s,s:s,s:i}", "name", name ? name : "",
                                              "type", sim_jstr(c, "type") ? sim_jstr(c, "type") : "string",
                                              "format", "", "description",
                                              sim_jstr(c, "description") ? sim_jstr(c, "description") : "",
                                              "priority", (int)json_integer_value(json_object_get(c, "priority"))));
    }
    if (!has_age_col)
        json_array_append_new(cols, json_pack("{s:s,s:s,s:s,s:s,s:i}", "name", "Age", "type", "string",
                                              "format", "", "description",
                                              "CreationTimestamp is a timestamp representing the server time when this object was created.",
                                              "priority", 0));
    json_array_foreach(items, i, item) {
        json_t *meta = json_object_get(item, "metadata");
        json_t *cells = json_array(), *row, *rowobj;
        char age[32];
        human_age(age_seconds(sim_jstr(meta, "creationTimestamp")), age, sizeof(age));
        json_array_append_new(cells, json_string(sim_jstr(meta, "name") ? sim_jstr(meta, "name") : ""));
        json_array_foreach(extra, j, c) {
            const char *type = sim_jstr(c, "type");
            json_t *v = printer_jsonpath(item, sim_jstr(c, "jsonPath"));
            if (type && !strcmp(type, "date") && json_is_string(v)) {
                char a[32];
                human_age(age_seconds(json_string_value(v)), a, sizeof(a));
                json_array_append_new(cells, json_string(a));
            } else if (v && !json_is_object(v) && !json_is_array(v)) {
                json_array_append(cells, v);
            } else {
                json_array_append_new(cells, json_null());
            }
        }
        if (!has_age_col)
            json_array_append_new(cells, json_string(age));
        row = json_pack("{s:o}", "cells", cells);
        if (!include || !strcmp(include, "Metadata")) {
            rowobj = json_pack("{s:s,s:s,s:O}", "kind", "PartialObjectMetadata", "apiVersion",
                               "meta.k8s.io/v1", "metadata", meta);
            json_object_set_new(row, "object", rowobj);
        } else if (!strcmp(include, "Object")) {
            json_object_set(row, "object", item);
        }
        json_array_append_new(rows, row);
    }
    return json_pack("{s:s,s:s,s:O,s:o,s:o}", "kind", "Table", "apiVersion", "meta.k8s.io/v1",
                     "metadata", listmeta, "columnDefinitions", cols, "rows", rows);
}
