/* Server-side printing (meta.k8s.io/v1 Table). */
#ifndef SIM_TABLE_H
#define SIM_TABLE_H
#include "sim.h"

/* Builds a Table from `items` (borrowed); `include` is ?includeObject= (NULL = Metadata);
 * `listmeta` (borrowed) becomes the Table's metadata. Returns a new reference. */
json_t *sim_table(struct sim *s, const struct sim_resource *res, json_t *items, const char *include,
                  json_t *listmeta);
#endif
