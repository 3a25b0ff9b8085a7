/* wmap: the AdmissionReview envelope (see wmap/admission.h): reading a review under caps,
 * checking its request, and answering it from the mutation (admission.c) or the policy check
 * (wmap__audit_object): a patch, a denial, warnings, or fail-open. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "admission_int.h"
#include "audit_int.h"
#include "wmap/admission.h"
#include "wmap/base64.h"
#include "wmap/patch.h"

#define REVIEW_API "admission.k8s.io/v1"
#define MAX_WARNINGS WMAP__MAX_WARNINGS
#define WARNING_MAX WMAP__WARNING_MAX

static void copy_str(char *buf, size_t len, const char *s)
{
	snprintf(buf, len, "%s", s ? s : "");
}

/* ---- the AdmissionReview envelope --------------------------------------------------- */

/* allowed: false with a Forbidden status; -1 when memory runs out (resp then unchanged or
 * without its status: the caller must not send it). */
static int deny(json_t *resp, const char *msg)
{
	json_t *st = json_pack("{s:i, s:s, s:s, s:s}", "code", 403, "status", "Failure", "reason",
			       "Forbidden", "message", msg);
	if (!st || json_object_set_new(resp, "status", st))
		return -1;
	return json_object_set_new(resp, "allowed", json_false()) ? -1 : 0;
}

int wmap_admission_parse(json_t **out, wmap_json_cut *cut, const char *body, size_t len,
			 int64_t deadline_ns, json_error_t *jerr)
{
	wmap_json_limits lim = { 0 };
	lim.max_depth = WMAP_REVIEW_MAX_DEPTH;
	lim.max_members = WMAP_REVIEW_MAX_MEMBERS;
	lim.max_nodes = WMAP_REVIEW_MAX_NODES;
	lim.deadline_ns = deadline_ns;
	lim.cut = 1;
	lim.keep_depth = 3; /* request.uid, .kind, .namespace, .operation, .dryRun */
	return wmap_json_parse_limited(out, cut, body, len, &lim, jerr);
}

/* What the parse left out, in words: "more than 16384 members in one object or array at
 * .request.object.metadata.labels (line 1, column 812)". */
static void describe_cut(char *buf, size_t len, const wmap_json_cut *c)
{
	char what[96];
	if (!strcmp(c->reason, "too-deep"))
		snprintf(what, sizeof(what), "nesting deeper than %zu levels", c->limit);
	else if (!strcmp(c->reason, "too-many-members"))
		snprintf(what, sizeof(what), "more than %zu members in one object or array",
			 c->limit);
	else if (!strcmp(c->reason, "too-many-nodes"))
		snprintf(what, sizeof(what), "more than %zu JSON values", c->limit);
	else {
		snprintf(buf, len, "the time budget ran out while reading the review, at %s "
				   "(line %d, column %d)",
			 c->path, c->line, c->column);
		return;
	}
	snprintf(buf, len, "the review has %s at %s (line %d, column %d)", what, c->path,
		 c->line, c->column);
}

/* The first Deny policy that matches kind, namespace and operation (its selector and
 * components are not looked at: the labels and templates may be what was left out), or
 * NULL. */
static const wmap_policy *enforced_for(const wmap_policy_set *set, const char *kind,
				       const char *ns, unsigned op)
{
	for (size_t i = 0; set && i < set->n; i++) {
		wmap_policy p = set->policies[i];
		p.selector = NULL;
		if ((p.actions & WMAP_ACTION_DENY) && wmap_policy_matches(&p, kind, ns, NULL, op))
			return &set->policies[i];
	}
	return NULL;
}

/* A review the parse cut (cfg->cut): no patch, no evaluation. Validation denies when an
 * enforced policy matches, so that nesting or bulk cannot carry an object past
 * enforcement; everything else is allowed with a warning. */
static int answer_cut(json_t *resp, json_t *warnings, wmap_admission_mode mode,
		      const wmap_admission_config *cfg, const json_t *object, const char *op,
		      const char *ns, wmap_admission_info *info)
{
	char why[WARNING_MAX + 1], msg[WMAP_ERROR_MAX];
	describe_cut(why, sizeof(why), cfg->cut);
	info->reason = cfg->cut->reason;
	info->result = "failopen";
	if (mode == WMAP_ADMISSION_VALIDATE) {
		if (!ns || !*ns)
			ns = json_string_value(
				json_object_get(json_object_get(object, "metadata"), "namespace"));
		const wmap_policy *p = enforced_for(cfg->policies, info->kind, ns,
						    wmap_policy_operation(op));
		if (p) {
			snprintf(msg, sizeof(msg), "wmap could not check this %s against enforced "
						   "policy %s: %s, past what wmap reads",
				 info->kind, p->name, why);
			info->result = "denied";
			return deny(resp, msg);
		}
	}
	wmap__admission_warn(warnings, "wmap: %s; allowed unchanged", why);
	return 0;
}

/* The actions of the policies res names (those that apply to the object). */
static unsigned applying_actions(const wmap_policy_set *set, const wmap_audit_result *res)
{
	unsigned acts = 0;
	for (size_t i = 0; set && i < set->n; i++) {
		for (size_t j = 0; j < res->n_policies; j++) {
			if (strcmp(set->policies[i].name, res->policies[j]) == 0)
				acts |= set->policies[i].actions;
		}
	}
	return acts;
}

/* Denies with the messages of msgs (a JSON array of strings) joined by "; ", cut at 2 KiB. */
static int deny_with(json_t *resp, const json_t *msgs)
{
	char msg[2048];
	size_t n = 0, i;
	json_t *v;
	msg[0] = '\0';
	json_array_foreach(msgs, i, v) {
		int w = snprintf(msg + n, sizeof(msg) - n, "%s%s", n ? "; " : "",
				 json_string_value(v));
		if (w < 0 || (size_t)w >= sizeof(msg) - n)
			break;
		n += (size_t)w;
	}
	return deny(resp, msg);
}

/* Records each violated policy once in info (for the metrics). */
static void count_hit(wmap_admission_info *info, const wmap_violation *v)
{
	for (size_t i = 0; i < info->n_hits; i++) {
		if (strcmp(info->hits[i].policy, v->policy) == 0)
			return;
	}
	if (info->n_hits == WMAP_ADMISSION_MAX_HITS) {
		info->hits_dropped++;
		return;
	}
	copy_str(info->hits[info->n_hits].policy, sizeof(info->hits[0].policy), v->policy);
	info->hits[info->n_hits++].actions = v->actions;
}

/* The answer to policy violations: denied with the messages of the Deny policies; else
 * allowed, with a warning per violation of a Warn policy ahead of the other warnings
 * (*warnings is replaced); Audit violations only counted in info. -1 out of memory. */
static int answer_violations(json_t *resp, json_t **warnings, const wmap_audit_result *res,
			     wmap_admission_info *info)
{
	json_t *denials = json_array(), *warns = json_array();
	int rc = -1;
	size_t i, n_warn = 0, shown = 0;
	json_t *w;
	if (!denials || !warns)
		goto done;
	for (i = 0; i < res->n; i++)
		n_warn += (res->violations[i].actions & WMAP_ACTION_WARN) != 0;
	for (i = 0; i < res->n; i++) {
		const wmap_violation *v = &res->violations[i];
		count_hit(info, v);
		if ((v->actions & WMAP_ACTION_DENY) &&
		    json_array_append_new(denials, json_string(v->message)))
			goto done;
		/* Past the cap, the last warning says how many were left out. */
		if (!(v->actions & WMAP_ACTION_WARN) ||
		    (n_warn > MAX_WARNINGS && shown == MAX_WARNINGS - 1))
			continue;
		if (wmap__admission_warn_checked(warns, "%s", v->message))
			goto done;
		shown = json_array_size(warns);
	}
	if (n_warn > MAX_WARNINGS &&
	    wmap__admission_warn_checked(warns, "wmap: %zu more violations of Warn policies not shown (kubectl "
						"wmap audit lists them all)",
					 n_warn - shown))
		goto done;
	if (json_array_size(denials) > 0) {
		info->result = "denied";
		rc = deny_with(resp, denials);
		goto done;
	}
	json_array_foreach(*warnings, i, w) {
		if (wmap__admission_warn_checked(warns, "%s", json_string_value(w)))
			goto done;
	}
	json_decref(*warnings);
	*warnings = warns;
	warns = NULL;
	rc = 0;
done:
	json_decref(denials);
	json_decref(warns);
	return rc;
}

static int bad(wmap_error *err, const char *what)
{
	return wmap_error_set(err, WMAP_EINVAL, "not an admission.k8s.io/v1 AdmissionReview: %s",
			      what);
}

/* The parts of a review's request that the answer needs (borrowed from the review). */
typedef struct envelope {
	json_t *req, *object;
	const char *uid, *op, *ns;
	unsigned opbit;
	int cut; /* the parse left something out (cfg->cut) */
} envelope;

/* Checks the envelope (WMAP_EINVAL naming what is wrong) and fills info. */
static int read_envelope(envelope *env, const wmap_admission_config *cfg, json_t *review,
			 wmap_admission_info *info, wmap_error *err)
{
	if (!json_is_object(review))
		return bad(err, "the body is not a JSON object");
	const char *api = json_string_value(json_object_get(review, "apiVersion"));
	const char *kind = json_string_value(json_object_get(review, "kind"));
	if (!api || strcmp(api, REVIEW_API) != 0 || !kind || strcmp(kind, "AdmissionReview") != 0)
		return bad(err, "apiVersion must be admission.k8s.io/v1 and kind AdmissionReview");
	json_t *req = env->req = json_object_get(review, "request");
	if (!json_is_object(req))
		return bad(err, "request is missing or not an object");
	env->uid = json_string_value(json_object_get(req, "uid"));
	if (!env->uid || !*env->uid)
		return bad(err, "request.uid is missing or not a string");
	env->op = json_string_value(json_object_get(req, "operation"));
	if (!env->op)
		return bad(err, "request.operation is missing or not a string");
	json_t *object = env->object = json_object_get(req, "object");
	json_t *dry = json_object_get(req, "dryRun");
	if (dry && !json_is_boolean(dry) && !json_is_null(dry))
		return bad(err, "request.dryRun must be a boolean");
	json_t *nsv = json_object_get(req, "namespace");
	if (nsv && !json_is_string(nsv) && !json_is_null(nsv))
		return bad(err, "request.namespace must be a string");
	env->opbit = wmap_policy_operation(env->op);
	env->cut = cfg->cut && cfg->cut->reason;
	if (env->opbit && !json_is_object(object) && !(env->cut && !object))
		return bad(err, "request.object must be an object for CREATE and UPDATE");
	env->ns = json_string_value(nsv);
	const char *name = json_string_value(json_object_get(req, "name"));
	if (!name || !*name)
		name = json_string_value(json_object_get(json_object_get(object, "metadata"),
							 "name"));
	copy_str(info->uid, sizeof(info->uid), env->uid);
	copy_str(info->operation, sizeof(info->operation), env->op);
	copy_str(info->namespace_, sizeof(info->namespace_), env->ns);
	copy_str(info->name, sizeof(info->name), name);
	info->dry_run = json_is_true(dry);
	if (json_is_string(json_object_get(object, "kind"))) {
		wmap_admission_kind(info->kind, sizeof(info->kind), object);
	} else {
		json_t *rk = json_object_get(req, "kind");
		const char *g = json_string_value(json_object_get(rk, "group"));
		const char *k = json_string_value(json_object_get(rk, "kind"));
		snprintf(info->kind, sizeof(info->kind), "%s%s%s", k ? k : "", g && *g ? "." : "",
			 g && *g ? g : "");
	}
	return 0;
}

/* resp (stolen) in an AdmissionReview, into *out. */
static int wrap(json_t **out, json_t *resp, wmap_error *err)
{
	*out = json_pack("{s:s, s:s, s:o}", "apiVersion", REVIEW_API, "kind", "AdmissionReview",
			 "response", resp);
	return *out ? 0 : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
}

/* What the evaluation of a review produced. */
typedef struct verdict {
	int rc;
	wmap_patch *pb;          /* mutation */
	json_t *warnings;        /* array, NULL until one is needed */
	json_t *violations;      /* the webhook's own objects: what denies them */
	wmap_audit_result audit; /* workloads at /validate */
	const char *reason;
	wmap_error e;
} verdict;

static void verdict_clear(verdict *v)
{
	wmap_patch_free(v->pb);
	json_decref(v->warnings);
	json_decref(v->violations);
	wmap_audit_result_free(&v->audit);
}

static void evaluate(verdict *v, wmap_engine *eng, const wmap_admission_config *cfg,
		     wmap_admission_mode mode, const envelope *env)
{
	wmap_error *e = &v->e;
	if (mode == WMAP_ADMISSION_MUTATE) {
		v->rc = (v->warnings = json_array()) ? wmap__admission_mutate(&v->pb, v->warnings, &v->reason, eng, cfg,
									      env->object, env->op, env->ns, e)
						     : wmap_error_set(e, WMAP_ENOMEM, "out of memory");
	} else if (mode == WMAP_ADMISSION_VALIDATE) {
		/* Karta and WorkloadPolicy objects are the webhook's own: checked as definitions
		 * and policies, never as workloads. */
		v->rc = json_is_object(env->object)
				? wmap_admission_check_own_object(&v->violations, &v->warnings, cfg,
								  env->object, env->op, e)
				: 0;
		if (v->rc == 0)
			v->rc = (v->warnings || (v->warnings = json_array()))
					? wmap__audit_object(&v->audit, v->warnings, &v->reason, eng,
							     cfg, env->object, env->opbit, env->ns, e)
					: wmap_error_set(e, WMAP_ENOMEM, "out of memory");
		else if (v->rc > 0)
			v->rc = 0;
	} else {
		v->rc = 0; /* WMAP_ADMISSION_ALLOW */
	}
}

/* The answer when the object could not be processed (v->rc < 0); -1 out of memory. */
static int answer_failure(json_t *resp, verdict *v, const wmap_admission_config *cfg,
			  wmap_admission_mode mode, wmap_admission_info *info)
{
	int validate = mode == WMAP_ADMISSION_VALIDATE;
	if (validate && v->rc == WMAP_ENOMEM)
		return -1; /* no half answer: the API server applies the failurePolicy */
	info->reason = v->reason ? v->reason : "internal";
	if (validate && v->rc != WMAP_ENODEF &&
	    (applying_actions(cfg->policies, &v->audit) & WMAP_ACTION_DENY)) {
		/* A Deny policy matched but the object could not be checked: deny, or an object
		 * shaped to break evaluation would slip past enforcement. Without a definition
		 * there is nothing to check: allowed. */
		char msg[WMAP_ERROR_MAX + 64];
		snprintf(msg, sizeof(msg), "wmap could not check this %s against its enforced "
					   "policies: %s",
			 info->kind, v->e.message);
		info->result = "denied";
		return deny(resp, msg);
	}
	/* Fail open: allowed unchanged, and the user is told why. */
	info->result = "failopen";
	if (v->rc == WMAP_ENODEF)
		wmap__admission_warn(v->warnings, "wmap: no definition for %s; allowed unchanged", info->kind);
	else if (validate)
		wmap__admission_warn(v->warnings, "wmap: could not check this %s against its policies: %s; allowed",
				     info->kind, v->e.message);
	else
		wmap__admission_warn(v->warnings, "wmap: %s; allowed unchanged", v->e.message);
	return 0;
}

/* The patch of v in resp (base64, JSONPatch); -1 out of memory. */
static int answer_patch(json_t *resp, verdict *v, wmap_admission_info *info)
{
	size_t text_len = 0;
	char *text = NULL;
	wmap_patch_dump(&text, &text_len, v->pb, &v->e);
	char *b64 = text ? wmap_base64((const unsigned char *)text, text_len) : NULL;
	/* base64 is ASCII by construction: no UTF-8 check of tens of kilobytes. */
	int bad_set = !b64 || json_object_set_new(resp, "patchType", json_string("JSONPatch")) ||
		      json_object_set_new(resp, "patch", json_stringn_nocheck(b64, strlen(b64)));
	if (!bad_set) {
		info->result = "patched";
		info->patch_ops = wmap_patch_len(v->pb);
		info->patch_bytes = text_len;
	}
	free(text);
	free(b64);
	return bad_set ? -1 : 0;
}

int wmap_admission_review(json_t **out, wmap_engine *eng, const wmap_admission_config *cfg,
			  wmap_admission_mode mode, json_t *review, wmap_admission_info *info,
			  wmap_error *err)
{
	wmap_admission_info scratch;
	envelope env = { 0 };
	verdict v = { 0 };
	int rc = 0;
	if (!info)
		info = &scratch;
	memset(info, 0, sizeof(*info));
	*out = NULL;
	if ((rc = read_envelope(&env, cfg, review, info, err)))
		return rc;
	json_t *resp = json_pack("{s:s, s:b}", "uid", env.uid, "allowed", 1);
	if (!resp)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	wmap_error_clear(&v.e);
	/* dryRun is treated exactly as a real request: the webhook has no side effects. */
	if (env.cut && mode != WMAP_ADMISSION_ALLOW) {
		if (!(v.warnings = json_array()) ||
		    answer_cut(resp, v.warnings, mode, cfg, env.object, env.op, env.ns, info))
			goto nomem;
	} else {
		evaluate(&v, eng, cfg, mode, &env);
		info->result = "allowed";
		if (v.rc)
			rc = answer_failure(resp, &v, cfg, mode, info);
		else if (v.violations && json_array_size(v.violations) > 0) {
			info->result = "denied";
			rc = deny_with(resp, v.violations);
		} else if (v.audit.n > 0)
			rc = answer_violations(resp, &v.warnings, &v.audit, info);
		else if (v.pb && wmap_patch_len(v.pb) > 0)
			rc = answer_patch(resp, &v, info);
		if (rc)
			goto nomem;
	}
	if (v.warnings && json_array_size(v.warnings) > 0 &&
	    json_object_set(resp, "warnings", v.warnings))
		goto nomem;
	verdict_clear(&v);
	return wrap(out, resp, err);
nomem:
	/* Half a response (a denial without its message, an answer without its warnings) is
	 * never sent: the webhook answers 500 and the API server applies the failurePolicy. */
	json_decref(resp);
	verdict_clear(&v);
	return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
}
