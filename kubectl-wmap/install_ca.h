/* kubectl-wmap install: the webhook's CA and serving certificate, kept from the cluster,
 * rotated or new (install_ca.c). */
#ifndef KUBECTL_WMAP_INSTALL_CA_H
#define KUBECTL_WMAP_INSTALL_CA_H

#include "cli.h"

/* The CA bundle (PEM: the CA in force, plus the older CAs still trusted during a rotation),
 * the serving certificate and its key for service.ns.svc: with new_ca, new ones; else the
 * cluster's Secret ns/wmap-webhook-tls when it is still good (install_ca.c says when), a
 * rotation when it is not, new ones when there is no Secret or no cluster configuration (a
 * line on stderr says which). 0, or an exit code (the error printed; nothing returned) when
 * the cluster is configured but the Secret cannot be read. The caller frees all three (the
 * key with install_certs_key_free). */
int install_ca_plan(const cli_options *o, const char *ns, const char *service, int new_ca, char **ca, char **crt,
		    char **key);

#endif
