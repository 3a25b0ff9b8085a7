/* --load: multi-document YAML (or JSON, which is YAML) into the store, through libyaml's
 * document API. Scalars get YAML 1.1 core types the way Kubernetes' YAML decoder reads them
 * for the values manifests use (null, booleans, integers, floats, strings). */
#include "sim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_NODES 1000000 /* bounds alias expansion ("billion laughs") */

static json_t *scalar(const yaml_node_t *n)
{
    const char *v = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    char *end;
    /* libyaml's document API tags every untagged plain scalar !!str, so tags cannot tell an
     * explicit !!str apart; only quoting makes a string here. */
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return json_stringn(v, len);
    if (len == 0 || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL"))
        return json_null();
    if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE"))
        return json_true();
    if (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "FALSE"))
        return json_false();
    errno = 0;
    long long ll = strtoll(v, &end, 10);
    if (*end == '\0' && errno == 0 && (v[0] != '0' || len == 1) && !(v[0] == '-' && v[1] == '0' && len > 2))
        return json_integer(ll);
    if (strpbrk(v, ".eE") && (v[0] == '-' || v[0] == '+' || v[0] == '.' || (v[0] >= '0' && v[0] <= '9'))) {
        double d = strtod(v, &end);
        if (*end == '\0' && isfinite(d))
            return json_real(d);
    }
    return json_stringn(v, len);
}

static json_t *convert(yaml_document_t *doc, yaml_node_t *n, int depth, long *budget, char *err, size_t en)
{
    json_t *out;
    if (!n || depth > SIM_JSON_DEPTH || --*budget < 0) {
        snprintf(err, en, "document too deep or too large");
        return NULL;
    }
    switch (n->type) {
    case YAML_SCALAR_NODE:
        return scalar(n);
    case YAML_SEQUENCE_NODE:
        out = json_array();
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
            json_t *c = convert(doc, yaml_document_get_node(doc, *it), depth + 1, budget, err, en);
            if (!c) {
                json_decref(out);
                return NULL;
            }
            json_array_append_new(out, c);
        }
        return out;
    case YAML_MAPPING_NODE:
        out = json_object();
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(doc, p->key);
            json_t *c;
            if (!k || k->type != YAML_SCALAR_NODE) {
                snprintf(err, en, "line %lu: mapping keys must be scalars", n->start_mark.line + 1);
                json_decref(out);
                return NULL;
            }
            c = convert(doc, yaml_document_get_node(doc, p->value), depth + 1, budget, err, en);
            if (!c) {
                json_decref(out);
                return NULL;
            }
            json_object_set_new(out, (const char *)k->data.scalar.value, c);
        }
        return out;
    default:
        snprintf(err, en, "unexpected YAML node");
        return NULL;
    }
}

json_t *sim_yaml_parse(const char *buf, size_t len, char *err, size_t en)
{
    yaml_parser_t p;
    json_t *docs = json_array();
    long budget = MAX_NODES;
    if (!yaml_parser_initialize(&p)) {
        json_decref(docs);
        return NULL;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
    for (;;) {
        yaml_document_t d;
        yaml_node_t *root;
        if (!yaml_parser_load(&p, &d)) {
            snprintf(err, en, "line %lu: %s", (unsigned long)p.problem_mark.line + 1,
                     p.problem ? p.problem : "YAML error");
            json_decref(docs);
            docs = NULL;
            break;
        }
        root = yaml_document_get_root_node(&d);
        if (!root) {
            yaml_document_delete(&d);
            break; /* end of stream */
        }
        {
            json_t *j = convert(&d, root, 0, &budget, err, en);
            yaml_document_delete(&d);
            if (!j) {
                json_decref(docs);
                docs = NULL;
                break;
            }
            if (json_is_object(j))
                json_array_append_new(docs, j);
            else
                json_decref(j); /* empty or scalar documents carry no object */
        }
    }
    yaml_parser_delete(&p);
    return docs;
}

/* A `kind: List` (as `kubectl get -o yaml` writes) is unpacked into its items. */
static int load_one(struct sim *s, json_t *obj, const char *path, size_t idx, char *err, size_t en)
{
    struct sim_err e;
    const char *kind = sim_jstr(obj, "kind");
    memset(&e, 0, sizeof(e));
    if (kind && strlen(kind) >= 4 && !strcmp(kind + strlen(kind) - 4, "List") && json_is_array(json_object_get(obj, "items"))) {
        size_t i;
        json_t *it;
        json_array_foreach(json_object_get(obj, "items"), i, it) {
            if (load_one(s, it, path, idx, err, en) < 0)
                return -1;
        }
        return 0;
    }
    if (sim_store_create_direct(s, obj, &e) < 0) {
        snprintf(err, en, "%s: object %zu: %s", path, idx + 1, e.message);
        sim_err_clear(&e);
        return -1;
    }
    return 0;
}

int sim_load_file(struct sim *s, const char *path, char *err, size_t en)
{
    size_t len;
    char *buf = sim_read_file(path, 64u * 1024 * 1024, &len), perr[256];
    json_t *docs, *d;
    size_t i;
    int rc = 0;
    if (!buf) {
        snprintf(err, en, "%s: %s", path, strerror(errno ? errno : EIO));
        return -1;
    }
    docs = sim_yaml_parse(buf, len, perr, sizeof(perr));
    free(buf);
    if (!docs) {
        snprintf(err, en, "%s: %s", path, perr);
        return -1;
    }
    json_array_foreach(docs, i, d) {
        if ((rc = load_one(s, d, path, i, err, en)) < 0)
            break;
    }
    json_decref(docs);
    return rc;
}
