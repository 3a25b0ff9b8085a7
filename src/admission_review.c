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

/* s into buf, cut at len - 1 bytes (snprintf "%s" without the formatting). */
static void copy_str(char *buf, size_t len, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n >= len)
		n = len - 1;
	memcpy(buf, s ? s : "", n);
	buf[n] = '\0';
}

typedef struct member_name {
	const char *s;
	size_t n;
} member_name;

#define NAME(lit)                    \
	{                            \
		lit, sizeof(lit) - 1 \
	}

/* The members of obj named in names (n of them) into vals, NULL for those it lacks: one
 * pass over its members, not a hashed look-up per name. */
static void members(const json_t *obj, const member_name *names, json_t **vals, size_t n)
{
	memset(vals, 0, n * sizeof(*vals));
	for (void *it = json_object_iter((json_t *)obj); it;
	     it = json_object_iter_next((json_t *)obj, it)) {
		const char *k = json_object_iter_key(it);
		size_t kn = json_object_iter_key_len(it);
		for (size_t i = 0; i < n; i++) {
			if (names[i].n == kn && names[i].s[0] == k[0] && !memcmp(names[i].s, k, kn)) {
				vals[i] = json_object_iter_value(it);
				break;
			}
		}
	}
}

/* ---- the AdmissionReview envelope --------------------------------------------------- */

/* The answer a review gets, written as text at the end (write_answer). */
typedef struct answer {
	json_t *denial; /* allowed: false with a Forbidden status and this message */
	char *patch;    /* the JSON Patch text (malloc), sent in base64; NULL: none */
	size_t patch_len;
	const json_t *warnings; /* borrowed (verdict.warnings); NULL or empty: none */
} answer;

/* allowed: false with a Forbidden status; -1 when memory runs out (or msg is not UTF-8, as
 * jansson refuses: the caller must not send the answer). */
static int deny(answer *a, const char *msg)
{
	json_decref(a->denial);
	a->denial = json_string(msg);
	return a->denial ? 0 : -1;
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
static int answer_cut(answer *a, json_t *warnings, wmap_admission_mode mode,
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
			return deny(a, msg);
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
static int deny_with(answer *a, const json_t *msgs)
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
	return deny(a, msg);
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
static int answer_violations(answer *a, json_t **warnings, const wmap_audit_result *res,
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
		rc = deny_with(a, denials);
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
	enum { R_API,
	       R_KIND,
	       R_REQUEST,
	       R_N };
	static const member_name rnames[R_N] = { NAME("apiVersion"), NAME("kind"),
						 NAME("request") };
	enum { Q_UID,
	       Q_OP,
	       Q_OBJECT,
	       Q_DRY,
	       Q_NS,
	       Q_NAME,
	       Q_KIND,
	       Q_N };
	static const member_name qnames[Q_N] = { NAME("uid"), NAME("operation"), NAME("object"),
						 NAME("dryRun"), NAME("namespace"), NAME("name"),
						 NAME("kind") };
	enum { O_KIND,
	       O_META,
	       O_N };
	static const member_name onames[O_N] = { NAME("kind"), NAME("metadata") };
	json_t *rv[R_N], *qv[Q_N], *ov[O_N];
	if (!json_is_object(review))
		return bad(err, "the body is not a JSON object");
	members(review, rnames, rv, R_N);
	const char *api = json_string_value(rv[R_API]);
	const char *kind = json_string_value(rv[R_KIND]);
	if (!api || strcmp(api, REVIEW_API) != 0 || !kind || strcmp(kind, "AdmissionReview") != 0)
		return bad(err, "apiVersion must be admission.k8s.io/v1 and kind AdmissionReview");
	json_t *req = env->req = rv[R_REQUEST];
	if (!json_is_object(req))
		return bad(err, "request is missing or not an object");
	members(req, qnames, qv, Q_N);
	env->uid = json_string_value(qv[Q_UID]);
	if (!env->uid || !*env->uid)
		return bad(err, "request.uid is missing or not a string");
	env->op = json_string_value(qv[Q_OP]);
	if (!env->op)
		return bad(err, "request.operation is missing or not a string");
	json_t *object = env->object = qv[Q_OBJECT];
	json_t *dry = qv[Q_DRY];
	if (dry && !json_is_boolean(dry) && !json_is_null(dry))
		return bad(err, "request.dryRun must be a boolean");
	json_t *nsv = qv[Q_NS];
	if (nsv && !json_is_string(nsv) && !json_is_null(nsv))
		return bad(err, "request.namespace must be a string");
	env->opbit = wmap_policy_operation(env->op);
	env->cut = cfg->cut && cfg->cut->reason;
	if (env->opbit && !json_is_object(object) && !(env->cut && !object))
		return bad(err, "request.object must be an object for CREATE and UPDATE");
	env->ns = json_string_value(nsv);
	members(object, onames, ov, O_N);
	const char *name = json_string_value(qv[Q_NAME]);
	if (!name || !*name)
		name = json_string_value(json_object_get(ov[O_META], "name"));
	copy_str(info->uid, sizeof(info->uid), env->uid);
	copy_str(info->operation, sizeof(info->operation), env->op);
	copy_str(info->namespace_, sizeof(info->namespace_), env->ns);
	copy_str(info->name, sizeof(info->name), name);
	info->dry_run = json_is_true(dry);
	if (json_is_string(ov[O_KIND])) {
		wmap_admission_kind(info->kind, sizeof(info->kind), object);
	} else {
		json_t *rk = qv[Q_KIND];
		const char *g = json_string_value(json_object_get(rk, "group"));
		const char *k = json_string_value(json_object_get(rk, "kind"));
		snprintf(info->kind, sizeof(info->kind), "%s%s%s", k ? k : "", g && *g ? "." : "",
			 g && *g ? g : "");
	}
	return 0;
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
static int answer_failure(answer *a, verdict *v, const wmap_admission_config *cfg,
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
		return deny(a, msg);
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

/* The patch of v in a (its text: base64 when written); -1 out of memory. */
static int answer_patch(answer *a, verdict *v, wmap_admission_info *info)
{
	wmap_patch_dump(&a->patch, &a->patch_len, v->pb, &v->e);
	if (!a->patch)
		return -1;
	info->result = "patched";
	info->patch_ops = wmap_patch_len(v->pb);
	info->patch_bytes = a->patch_len;
	return 0;
}

/* Decides the answer to review into *a and *v (the caller clears both, whatever the
 * result): 0, WMAP_EINVAL for a review that is not usable (err says why), or WMAP_ENOMEM. */
static int decide(answer *a, verdict *v, envelope *env, wmap_engine *eng,
		  const wmap_admission_config *cfg, wmap_admission_mode mode, json_t *review,
		  wmap_admission_info *info, wmap_error *err)
{
	int rc;
	if ((rc = read_envelope(env, cfg, review, info, err)))
		return rc;
	wmap_error_clear(&v->e);
	/* dryRun is treated exactly as a real request: the webhook has no side effects. */
	if (env->cut && mode != WMAP_ADMISSION_ALLOW) {
		if (!(v->warnings = json_array()) ||
		    answer_cut(a, v->warnings, mode, cfg, env->object, env->op, env->ns, info))
			rc = -1;
	} else {
		evaluate(v, eng, cfg, mode, env);
		info->result = "allowed";
		if (v->rc)
			rc = answer_failure(a, v, cfg, mode, info);
		else if (v->violations && json_array_size(v->violations) > 0) {
			info->result = "denied";
			rc = deny_with(a, v->violations);
		} else if (v->audit.n > 0)
			rc = answer_violations(a, &v->warnings, &v->audit, info);
		else if (v->pb && wmap_patch_len(v->pb) > 0)
			rc = answer_patch(a, v, info);
	}
	/* Half a response (a denial without its message, an answer without its warnings) is
	 * never sent: the webhook answers 500 and the API server applies the failurePolicy. */
	if (rc)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	if (v->warnings && json_array_size(v->warnings) > 0)
		a->warnings = v->warnings;
	return 0;
}

static void put_str(wmap_json_writer *w, const json_t *s)
{
	wmap_json_write_string(w, json_string_value(s), json_string_length(s));
}

#define RAW(w, lit) wmap_json_write_raw((w), lit, sizeof(lit) - 1)

/* The AdmissionReview of a as compact JSON text, the members in the order
 * wmap_admission_review has always written them: uid, allowed, status, patchType, patch,
 * warnings. NULL when memory runs out. */
static char *write_answer(size_t *len, const answer *a, const envelope *env)
{
	size_t uid_len = strlen(env->uid), i, size = 256 + uid_len;
	const json_t *s;
	if (a->patch)
		size += WMAP_BASE64_LEN(a->patch_len);
	if (a->denial)
		size += json_string_length(a->denial);
	json_array_foreach(a->warnings, i, s)
		size += json_string_length(s) + 3;
	/* One allocation as large as the answer (plus escapes, seldom any). */
	wmap_json_writer w = { WMAP_BUF_INIT(WMAP_JSON_TEXT_MAX_BYTES, size) };
	RAW(&w, "{\"apiVersion\":\"" REVIEW_API "\",\"kind\":\"AdmissionReview\",\"response\":{"
		"\"uid\":");
	wmap_json_write_string(&w, env->uid, uid_len);
	if (a->denial) {
		RAW(&w, ",\"allowed\":false,\"status\":{\"code\":403,\"status\":\"Failure\","
			"\"reason\":\"Forbidden\",\"message\":");
		put_str(&w, a->denial);
		RAW(&w, "}");
	} else {
		RAW(&w, ",\"allowed\":true");
	}
	if (a->patch) {
		RAW(&w, ",\"patchType\":\"JSONPatch\",\"patch\":");
		wmap_json_write_base64(&w, a->patch, a->patch_len);
	}
	if (a->warnings) {
		RAW(&w, ",\"warnings\":[");
		json_array_foreach(a->warnings, i, s) {
			if (i)
				RAW(&w, ",");
			wmap_json_write_value(&w, s); /* strings, written as any value */
		}
		RAW(&w, "]");
	}
	RAW(&w, "}}");
	return wmap_json_writer_finish(&w, len);
}

int wmap_admission_review_text(char **text, size_t *len, wmap_engine *eng,
			       const wmap_admission_config *cfg, wmap_admission_mode mode,
			       json_t *review, wmap_admission_info *info, wmap_error *err)
{
	wmap_admission_info scratch;
	envelope env = { 0 };
	verdict v = { 0 };
	answer a = { 0 };
	if (!info)
		info = &scratch;
	memset(info, 0, sizeof(*info));
	*text = NULL;
	if (len)
		*len = 0;
	int rc = decide(&a, &v, &env, eng, cfg, mode, review, info, err);
	if (rc == 0)
		*text = write_answer(len, &a, &env);
	json_decref(a.denial);
	free(a.patch);
	verdict_clear(&v);
	return rc;
}

int wmap_admission_review(json_t **out, wmap_engine *eng, const wmap_admission_config *cfg,
			  wmap_admission_mode mode, json_t *review, wmap_admission_info *info,
			  wmap_error *err)
{
	size_t len = 0;
	char *text = NULL;
	*out = NULL;
	int rc = wmap_admission_review_text(&text, &len, eng, cfg, mode, review, info, err);
	if (rc)
		return rc;
	/* The text is ours and well formed: only memory can fail its parse. */
	*out = text ? wmap_json_parse(text, len, NULL) : NULL;
	free(text);
	return *out ? 0 : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
}
