/* apiserver-sim: the fields a core/v1 Event can be selected by.
 *
 * kube-apiserver's event strategy (pkg/registry/core/event, ToSelectableFields) offers
 * metadata.name and metadata.namespace like every resource, plus involvedObject.kind,
 * .namespace, .name, .uid, .apiVersion, .resourceVersion, .fieldPath, reason,
 * reportingComponent, source (source.component) and type. A field the object lacks reads
 * as "" (so "reason=" matches it); any other label is refused with "field label not
 * supported", as the real server answers. Only =, == and != exist, ANDed by commas: one
 * request cannot name several objects. */
#include <string.h>

#include "sim.h"

static const char *const involved[] = {
    "kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath",
};

bool sim_event_field(const json_t *ev, const char *label, const char **value)
{
    const char *v = NULL;

    if (!strncmp(label, "involvedObject.", 15)) {
        size_t i;
        for (i = 0; i < sizeof(involved) / sizeof(involved[0]); i++)
            if (!strcmp(label + 15, involved[i]))
                break;
        if (i == sizeof(involved) / sizeof(involved[0]))
            return false;
        v = sim_jstr(json_object_get(ev, "involvedObject"), label + 15);
    } else if (!strcmp(label, "reason") || !strcmp(label, "reportingComponent") || !strcmp(label, "type")) {
        v = sim_jstr(ev, label);
    } else if (!strcmp(label, "source")) {
        v = sim_jstr(json_object_get(ev, "source"), "component");
    } else {
        return false;
    }
    *value = v ? v : "";
    return true;
}
