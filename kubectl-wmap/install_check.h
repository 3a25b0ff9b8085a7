/* kubectl-wmap install --check (install_check.c). */
#ifndef KUBECTL_WMAP_INSTALL_CHECK_H
#define KUBECTL_WMAP_INSTALL_CHECK_H

#include "options.h"

/* Reads the cluster of the kubectl flags in o and prints one line per check of the webhook
 * installed in namespace ns: CRDs established, Deployment available, webhook configurations
 * with a caBundle that verifies the serving certificate, Service endpoints, the webhook
 * answering a server-side dry run. Returns 0 when none fails, 1 otherwise (connection
 * errors: the live commands' codes). */
int install_check(const cli_options *o, const char *ns);

#endif
