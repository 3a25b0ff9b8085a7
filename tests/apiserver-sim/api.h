/* Internal interface between the API verb files (api.c: routing, reads, create;
 * write.c: update, patch, delete). */
#ifndef SIM_API_H
#define SIM_API_H
#include "sim.h"

struct route {
    struct sim_resource *res;
    char ns[256];
    char name[256];
    char sub[64];
    bool has_ns, has_name;
};

const char *api_qarg(struct sim_req *r, const char *key);
bool api_dry_run(struct sim_req *r, const json_t *body_opts);
void api_not_found(struct sim_req *r, const struct sim_resource *res, const char *name);
void api_conflict(struct sim_req *r, const struct sim_resource *res, const char *name);
void api_invalid(struct sim_req *r, const struct sim_resource *res, const char *name, const char *field,
                 const char *reason, const char *msg);
json_t *api_parse_body(struct sim_req *r); /* new reference or NULL with r->err */
int api_prune_request(struct sim_req *r, struct sim_resource *res, json_t *obj);
json_t *api_options_obj(struct sim_req *r, const char *kind, bool dry); /* new reference */
bool api_spec_changed(const struct sim_resource *res, const json_t *a, const json_t *b);
void api_set_type_meta(const struct sim_resource *res, json_t *obj);
int api_store_hooks(struct sim *s, struct sim_resource *res, json_t *obj, struct sim_err *err);

void api_do_update(struct sim *s, struct sim_req *r, struct route *rt);
void api_do_patch(struct sim *s, struct sim_req *r, struct route *rt);
void api_do_delete(struct sim *s, struct sim_req *r, struct route *rt);
#endif
