/* wmap: the Kubernetes API client (libwmap-kube.a), all of it: kubeconfig and in-cluster
 * settings, the HTTPS client and its streams, discovery and resource types, CRD schema
 * checks. Each concept has its own header under wmap/kube/; include only the one you use.
 *
 * Secrets (tokens, keys, exec credentials) are never put into error messages or any other
 * text this module hands out. */
#ifndef WMAP_KUBE_H
#define WMAP_KUBE_H

#include "wmap/kube/client.h"
#include "wmap/kube/crd.h"
#include "wmap/kube/discovery.h"
#include "wmap/kube/kubeconfig.h"
#include "wmap/kube/streams.h"

#endif
