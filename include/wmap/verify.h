/* wmap: what a definition found nothing for in one object, the warnings of upstream's
 * karta-verify: a pod-bearing component whose spec path matched nothing, a pod spec without
 * containers, a multi-instance component without instances, and an object status that no
 * status mapping matched. Each is something the resolver accepts (optional roles exist, a
 * manifest has no status yet) but that usually means a typo in the definition or in the
 * object: a PyTorchJob written with `worker:` for `Worker:` resolves with its workers left
 * out. */
#ifndef WMAP_VERIFY_H
#define WMAP_VERIFY_H

#include <jansson.h>
#include "wmap/error.h"
#include "wmap/workload.h"

#define WMAP_VERIFY_NO_STATUS 1u /* w was resolved without its status: do not judge it */
#define WMAP_VERIFY_ALL 2u       /* every check, as karta-verify runs on a sample object */

/* The findings for w, a new JSON array of strings owned by the caller (empty when there
 * are none), in definition order.
 *
 * With WMAP_VERIFY_ALL every pod-bearing component that matched nothing, every pod spec
 * without containers and every multi-instance component without instances is a finding:
 * the object is a sample written to exercise the definition. Without it (describe, mutate,
 * audit of real objects), optional roles are left alone (a TFJob without an Evaluator, a
 * RayCluster without worker groups): a component that matched nothing is a finding only
 * when the object has, where the path stopped, a key spelled the same but for case
 * (`worker:` for `Worker:`), or when the definition found no pods in the object at all (a
 * typo'd template path). A pod spec that was found but has no containers is always one.
 *
 * The status is judged only when the object has a non-empty .status (a manifest never
 * admitted has none, and Undefined is then the truth), and not with WMAP_VERIFY_NO_STATUS. */
int wmap_workload_verify(json_t **out, const wmap_workload *w, unsigned flags, wmap_error *err);

#endif
