/* Authentication: static bearer tokens (an admin and a read-only viewer), or a client
 * certificate signed by the simulator's client CA (the user is the certificate's CN, groups its
 * O values, as kube-apiserver's x509 authenticator does). Anything else is 401.
 * Impersonation: Impersonate-User (with -Group, -Uid) makes an admin's request act as that
 * user, as kube-apiserver's impersonation filter does once RBAC allows it. */
#include "sim.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int cert_user(void *conn, struct sim_user *u)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info((struct MHD_Connection *)conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    gnutls_session_t sess;
    const gnutls_datum_t *certs;
    unsigned int ncerts = 0, status = 0;
    gnutls_x509_crt_t crt = NULL;
    char buf[256];
    size_t len;
    int rc = -1;
    if (!ci || !ci->tls_session)
        return -1;
    sess = (gnutls_session_t)ci->tls_session;
    certs = gnutls_certificate_get_peers(sess, &ncerts);
    if (!certs || ncerts == 0)
        return -1;
    /* Verified against the trust list MHD was given (our client CA) only. */
    if (gnutls_certificate_verify_peers2(sess, &status) < 0 || status != 0)
        return -2;
    if (gnutls_x509_crt_init(&crt) < 0)
        return -1;
    if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) < 0)
        goto out;
    len = sizeof(buf);
    if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, buf, &len) < 0)
        goto out;
    snprintf(u->name, sizeof(u->name), "%s", buf);
    for (unsigned i = 0; u->n_groups < 3; i++) {
        len = sizeof(buf);
        if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, i, 0, buf, &len) < 0)
            break;
        snprintf(u->groups[u->n_groups++], sizeof(u->groups[0]), "%.127s", buf);
    }
    rc = 0;
out:
    gnutls_x509_crt_deinit(crt);
    return rc;
}

/* Constant-time compare: cheap, and the habit is worth keeping even in a test server. */
static bool token_equal(const char *tok, const char *want)
{
    size_t a = strlen(tok), b = strlen(want);
    unsigned diff = (unsigned)(a ^ b);
    for (size_t i = 0; i < a && i < b; i++)
        diff |= (unsigned)(tok[i] ^ want[i]);
    return diff == 0 && b > 0;
}

int sim_authenticate(struct sim *s, void *conn, const char *authz, struct sim_user *u)
{
    memset(u, 0, sizeof(*u));
    if (authz && !strncmp(authz, "Bearer ", 7)) {
        const char *tok = authz + 7;
        if (token_equal(tok, s->cfg.token)) {
            snprintf(u->name, sizeof(u->name), "sim-admin");
            snprintf(u->groups[u->n_groups++], sizeof(u->groups[0]), "system:masters");
        } else if (token_equal(tok, s->cfg.viewer_token)) {
            snprintf(u->name, sizeof(u->name), "sim-viewer");
            snprintf(u->groups[u->n_groups++], sizeof(u->groups[0]), "sim:viewers");
            u->read_only = true;
        } else if (sim_sa_token_user(s, tok, u) < 0) {
            return -1; /* unknown, expired, or its ServiceAccount is gone */
        }
    } else if (authz) {
        return -1;
    } else if (cert_user(conn, u) < 0) {
        return -1;
    }
    if (u->n_groups < 4)
        snprintf(u->groups[u->n_groups++], sizeof(u->groups[0]), "system:authenticated");
    return 0;
}

struct imp_headers {
    const char *user, *uid;
    const char *groups[8];
    int n_groups, n_extra;
};

static enum MHD_Result imp_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    struct imp_headers *h = cls;
    (void)kind;
    if (!key || !value)
        return MHD_YES;
    if (!strcasecmp(key, "Impersonate-User"))
        h->user = value;
    else if (!strcasecmp(key, "Impersonate-Uid"))
        h->uid = value;
    else if (!strcasecmp(key, "Impersonate-Group") && h->n_groups < 7)
        h->groups[h->n_groups++] = value;
    else if (!strncasecmp(key, "Impersonate-Extra-", 18))
        h->n_extra++;
    return MHD_YES;
}

int sim_impersonate(void *conn, struct sim_user *u, struct sim_err *err)
{
    struct imp_headers h;
    memset(&h, 0, sizeof(h));
    MHD_get_connection_values((struct MHD_Connection *)conn, MHD_HEADER_KIND, imp_header, &h);
    if (!h.user && !h.uid && !h.n_groups && !h.n_extra)
        return 0;
    if (!h.user || !h.user[0]) {
        /* kube-apiserver answers this with an internal error too. */
        sim_err_set(err, 500, "InternalError",
                    "Internal error occurred: requested groups, uid or extra without impersonating a user");
        return -1;
    }
    /* Only the admin (or a system:masters certificate) may impersonate: the viewer gets RBAC's
     * message for the "impersonate" verb on users. */
    if (u->read_only || u->rbac) {
        sim_err_set(err, 403, "Forbidden",
                    "users \"%s\" is forbidden: User \"%s\" cannot impersonate resource \"users\" in API "
                    "group \"\" at the cluster scope", h.user, u->name);
        return -1;
    }
    memset(u, 0, sizeof(*u));
    u->impersonated = true;
    snprintf(u->name, sizeof(u->name), "%s", h.user);
    snprintf(u->uid, sizeof(u->uid), "%s", h.uid ? h.uid : "");
    for (int i = 0; i < h.n_groups; i++)
        snprintf(u->groups[u->n_groups++], sizeof(u->groups[0]), "%.127s", h.groups[i]);
    snprintf(u->groups[u->n_groups++], sizeof(u->groups[0]), "system:authenticated");
    /* Authorized as who it now is: the viewer's name or group is read-only. */
    u->read_only = !strcmp(u->name, "sim-viewer");
    sim_user_classify(u); /* system:serviceaccount:NS:NAME is authorized by RBAC */
    if (u->rbac && u->n_groups <= 6) {
        /* kube-apiserver gives an impersonated service account its service-account groups. */
        const char *rest = u->name + strlen("system:serviceaccount:"), *c = strchr(rest, ':');
        snprintf(u->groups[u->n_groups++], sizeof(u->groups[0]), "system:serviceaccounts");
        snprintf(u->groups[u->n_groups++], sizeof(u->groups[0]), "system:serviceaccounts:%.*s",
                 c && c - rest < 100 ? (int)(c - rest) : 0, rest);
    }
    for (int i = 0; i < u->n_groups; i++)
        if (!strcmp(u->groups[i], "sim:viewers"))
            u->read_only = true;
    return 0;
}
