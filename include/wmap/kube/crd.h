/* wmap: what a CustomResourceDefinition's schema does to the labels wmap writes. */
#ifndef WMAP_KUBE_CRD_H
#define WMAP_KUBE_CRD_H

#include <jansson.h>

/* Whether the CRD (an apiextensions.k8s.io/v1 object) would prune labels written into the
 * pod-template metadata at pointer (e.g. "/spec/template") of version's schema: 1 when the
 * schema declares that metadata as a bare object (no properties, no
 * x-kubernetes-preserve-unknown-fields), 0 otherwise. */
int wmap_crd_prunes_template_labels(const json_t *crd, const char *version,
				    const char *template_pointer);

#endif
