/* wmap-webhook: the entry point, and the one place that wires the parts together.
 *
 * main.c reads the options, loads what the server starts with into the state in force
 * (inforce.c), and starts the parts in a known order: the HTTP server (server.c), the
 * watches (cluster.c, the only writer of the state in force with a cluster), the leader
 * election (leader.c), then every controller of the table below, then the file reloads.
 * No part starts or calls another: main.c listens to the state in force and to the leader,
 * and kicks the controllers. On SIGTERM it stops them in the reverse order: the server
 * drains, the reloads and the watches stop (nothing is published any more), the controllers
 * stop from the last to the first, the leader gives the Lease up. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>
#include "webhook.h"
#include "wmap/arena.h"
#include "wmap/kube/client.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wmap-webhook --tls-cert FILE --tls-key FILE [options]\n"
		"\n"
		"A TLS admission webhook: POST /mutate and /validate take admission.k8s.io/v1\n"
		"AdmissionReview; GET /healthz, /readyz, /metrics, /metrics/workloads.\n"
		"\n"
		"  --tls-cert FILE            serving certificate chain (PEM), reloaded on change\n"
		"  --tls-key FILE             its private key (PEM; ECDSA recommended)\n"
		"  --port N                   HTTPS port (8443; 0 picks a free one)\n"
		"  --ready-file FILE          written with the port once ready (for tests)\n"
		"  --definitions FILE|DIR     Karta definitions over the embedded catalog\n"
		"  --policy FILE              WorkloadPolicy documents (YAML), reloaded on change\n"
		"  --gang-scheduler NAME      kai, volcano, coscheduling, yunikorn, kueue, native,\n"
		"                             none (default none; policies may choose per workload)\n"
		"  --queue NAME               default queue for the gang scheduler\n"
		"  --kai-mode karta|external  KAI: its pod-grouper reads Kartas (karta, default), or\n"
		"                             wmap makes the PodGroups (external); policies may choose\n"
		"  --coscheduling-profile NAME  schedulerName of the coscheduling profile\n"
		"                             (scheduler-plugins-scheduler)\n"
		"  --threads N                poll threads, each with its own engine (2)\n"
		"  --max-body BYTES           413 above this (7340032 = 7 MiB)\n"
		"  --max-inflight-bytes BYTES all bodies being read at once; 503 above (33554432)\n"
		"  --max-connections N        connection limit (1000)\n"
		"  --connection-timeout SEC   idle connection timeout (120)\n"
		"  --request-budget-ms MS     time budget per review; past it, allow unchanged (250)\n"
		"  --reload-interval-ms MS    how often files are checked for changes (1000)\n"
		"  --drain-timeout SEC        longest wait for in-flight requests on SIGTERM (25)\n"
		"  --shutdown-delay SEC       on SIGTERM, keep accepting (unready) this long before\n"
		"                             draining, while endpoints are updated (0)\n"
		"  --tls-priorities STRING    GnuTLS priority string (TLS 1.3; TLS 1.2 with ECDHE\n"
		"                             and AEAD ciphers only)\n"
		"  --kubeconfig FILE          watch Kartas and WorkloadPolicies in this cluster\n"
		"                             (in a pod the service account is used without it)\n"
		"  --no-cluster               files only, even in a pod\n"
		"  --sync-timeout SEC         ready after this even when the API server cannot\n"
		"                             be reached, with what is at hand (10)\n"
		"  --audit-interval DURATION  how often the leader audits every workload and\n"
		"                             rewrites the policy reports (1h; 30s, 5m, 1h30m)\n"
		"  --audit-qps N              the audit's API request budget per second (20)\n"
		"  --report-api NAME          openreports (openreports.io/v1alpha1 Report, the\n"
		"                             default) or wgpolicyk8s (wgpolicyk8s.io/v1alpha2\n"
		"                             PolicyReport)\n"
		"  --no-workload-metrics      the leader serves no workload series on\n"
		"                             /metrics/workloads (and watches no pods)\n"
		"  --workload-metrics-max-series N  past N series, whole workloads and pods are\n"
		"                             left out and counted (1000000)\n"
		"  --null-admission           for benchmarks only: allow every review unchanged after\n"
		"                             parsing and checking it (the floor wmap's work is\n"
		"                             measured against); refused with --policy\n"
		"  --help, --version\n");
}

static int parse_num(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v > max || *s == '-')
		return -1;
	*out = v;
	return 0;
}

/* The controllers, in start order (stopped in the reverse order). A controller is a file
 * defining a wh_controller (webhook.h) and its two lines here: the declaration and the row. */
extern const wh_controller wh_reconcile_controller; /* webhook configuration rules, statuses */
extern const wh_controller wh_audit_controller;     /* policy reports */
extern const wh_controller wh_gangs_controller;     /* gang schedulers' group objects */
extern const wh_controller wh_workloads_controller; /* workload metrics */
static const wh_controller *const controllers[] = {
	&wh_reconcile_controller,
	&wh_audit_controller,
	&wh_gangs_controller,
	&wh_workloads_controller,
};
#define N_CONTROLLERS (sizeof(controllers) / sizeof(controllers[0]))

typedef struct reloader {
	const wh_options *opt;
	wh_inforce *inforce;
	wh_cluster *cluster; /* NULL without a cluster: the policy file is published here */
	wh_filesig cert, key, policy;
	wh_filesig cert_failed, policy_failed; /* last bad versions, reported once */
	pthread_t thread;
	int started;
	pthread_mutex_t lock; /* the reload thread and SIGHUP in the main thread */
	atomic_int stop;
} reloader;

static void reload_certs(reloader *rl, int force)
{
	const wh_options *o = rl->opt;
	wh_filesig c = wh_filesig_of(o->cert), k = wh_filesig_of(o->key);
	if (!force && wh_filesig_same(&c, &rl->cert) && wh_filesig_same(&k, &rl->key))
		return;
	/* A half-written pair is reported once per version of the files. */
	wh_filesig both = c;
	both.size += k.size;
	both.ino ^= k.ino;
	both.mtime.tv_nsec ^= k.mtime.tv_nsec;
	if (!force && wh_filesig_same(&both, &rl->cert_failed))
		return;
	char err[512];
	if (wh_tls_load(o->cert, o->key, err, sizeof(err)) == 0) {
		rl->cert = c;
		rl->key = k;
		memset(&rl->cert_failed, 0, sizeof(rl->cert_failed));
		wh_metrics_reload("certificate", 1);
		wh_logf("info", "serving certificate loaded from %s", o->cert);
	} else {
		rl->cert_failed = both;
		wh_metrics_reload("certificate", 0);
		json_t *f = json_pack("{s:s}", "error", err);
		wh_log("error", "certificate reload failed; the previous one stays in force", f);
		json_decref(f);
	}
}

static void reload_policy(reloader *rl, int force)
{
	const char *path = rl->opt->policy;
	if (!path)
		return;
	wh_filesig p = wh_filesig_of(path);
	if (!force && (wh_filesig_same(&p, &rl->policy) || wh_filesig_same(&p, &rl->policy_failed)))
		return;
	wmap_policy_set *set = NULL;
	wmap_error err;
	if (wmap_policy_set_load(&set, path, &err) == 0) {
		rl->policy = p;
		memset(&rl->policy_failed, 0, sizeof(rl->policy_failed));
		if (rl->cluster) {
			wmap_policy_set_free(set); /* merged with the cluster's by the builder */
			wh_cluster_policy_file_changed(rl->cluster);
		} else {
			wh_update u = { .what = WH_STATE_POLICIES, .policies = set };
			wh_inforce_publish(rl->inforce, &u);
		}
		wh_metrics_reload("policy", 1);
		json_t *f = json_pack("{s:s}", "file", path);
		wh_log("info", "policy file loaded", f);
		json_decref(f);
	} else {
		rl->policy_failed = p;
		wh_metrics_reload("policy", 0);
		json_t *f = json_pack("{s:s}", "error", err.message);
		wh_log("error", "policy reload failed; the previous policies stay in force", f);
		json_decref(f);
	}
}

static void *reload_loop(void *arg)
{
	reloader *rl = arg;
	while (!rl->stop) {
		unsigned ms = rl->opt->reload_ms;
		struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };
		nanosleep(&t, NULL);
		if (rl->stop)
			break;
		pthread_mutex_lock(&rl->lock);
		reload_certs(rl, 0);
		reload_policy(rl, 0);
		pthread_mutex_unlock(&rl->lock);
	}
	return NULL;
}

/* The port, written whole under a temporary name and renamed: a reader sees all or nothing. */
static int write_ready_file(const char *path, int port)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	int bad = fprintf(f, "%d\n", port) < 0;
	bad |= fclose(f) != 0;
	return bad ? -1 : rename(tmp, path);
}

/* What the command line holds beyond the server's options. */
typedef struct cli {
	wh_options opt;
	const char *ready_file; /* --ready-file: written with the port once ready */
} cli;

/* What an option does with its argument. */
typedef enum opt_kind {
	OPT_TEXT,     /* a const char * field takes the argument as it is */
	OPT_FLAG,     /* an int field is set to 1; no argument */
	OPT_INT,      /* a number into an int field, between min and max */
	OPT_UNSIGNED, /* a number into an unsigned field */
	OPT_SIZE,     /* a number into a size_t field */
	OPT_GANG,     /* a gang scheduler's name into a wmap_gang_scheduler field */
	OPT_DURATION, /* a Go duration (30s, 5m, 1h30m) into an unsigned long long field of ms */
	OPT_REPORT,   /* a report API's name into a wmap_report_api field */
	OPT_HELP,
	OPT_VERSION,
} opt_kind;

/* One long option: its name, what it does and where it writes. getopt_long's table is built
 * from this one, so an option's name, parser and field are written once, in one line. */
typedef struct opt_spec {
	const char *name;
	opt_kind kind;
	size_t field; /* offset in cli; unused by OPT_HELP and OPT_VERSION */
	unsigned long long min, max;
} opt_spec;

#define OPT_FIELD(f) offsetof(cli, f)
static const opt_spec opt_specs[] = {
	{ "tls-cert", OPT_TEXT, OPT_FIELD(opt.cert), 0, 0 },
	{ "tls-key", OPT_TEXT, OPT_FIELD(opt.key), 0, 0 },
	{ "port", OPT_INT, OPT_FIELD(opt.port), 0, 65535 },
	{ "definitions", OPT_TEXT, OPT_FIELD(opt.definitions), 0, 0 },
	{ "policy", OPT_TEXT, OPT_FIELD(opt.policy), 0, 0 },
	{ "gang-scheduler", OPT_GANG, OPT_FIELD(opt.scheduler), 0, 0 },
	{ "queue", OPT_TEXT, OPT_FIELD(opt.queue), 0, 0 },
	{ "coscheduling-profile", OPT_TEXT, OPT_FIELD(opt.cosched_profile), 0, 0 },
	{ "kai-mode", OPT_TEXT, OPT_FIELD(opt.kai_mode), 0, 0 },
	{ "threads", OPT_UNSIGNED, OPT_FIELD(opt.threads), 1, 256 },
	{ "max-body", OPT_SIZE, OPT_FIELD(opt.max_body), 1024, 1ull << 30 },
	{ "max-inflight-bytes", OPT_SIZE, OPT_FIELD(opt.max_inflight_bytes), 0, 1ull << 34 },
	{ "max-connections", OPT_UNSIGNED, OPT_FIELD(opt.max_connections), 1, 100000 },
	{ "connection-timeout", OPT_UNSIGNED, OPT_FIELD(opt.connection_timeout), 0, 86400 },
	{ "request-budget-ms", OPT_UNSIGNED, OPT_FIELD(opt.budget_ms), 0, 60000 },
	{ "reload-interval-ms", OPT_UNSIGNED, OPT_FIELD(opt.reload_ms), 10, 3600000 },
	{ "drain-timeout", OPT_UNSIGNED, OPT_FIELD(opt.drain_s), 0, 3600 },
	{ "shutdown-delay", OPT_UNSIGNED, OPT_FIELD(opt.shutdown_delay_s), 0, 300 },
	{ "tls-priorities", OPT_TEXT, OPT_FIELD(opt.tls_priorities), 0, 0 },
	{ "ready-file", OPT_TEXT, OPT_FIELD(ready_file), 0, 0 },
	{ "help", OPT_HELP, 0, 0, 0 },
	{ "version", OPT_VERSION, 0, 0, 0 },
	{ "null-admission", OPT_FLAG, OPT_FIELD(opt.null_admission), 0, 0 },
	{ "kubeconfig", OPT_TEXT, OPT_FIELD(opt.kubeconfig), 0, 0 },
	{ "no-cluster", OPT_FLAG, OPT_FIELD(opt.no_cluster), 0, 0 },
	{ "sync-timeout", OPT_UNSIGNED, OPT_FIELD(opt.sync_timeout_s), 0, 3600 },
	{ "audit-interval", OPT_DURATION, OPT_FIELD(opt.audit_interval_ms), 1000, 7ull * 24 * 3600 * 1000 },
	{ "audit-qps", OPT_UNSIGNED, OPT_FIELD(opt.audit_qps), 1, 10000 },
	{ "report-api", OPT_REPORT, OPT_FIELD(opt.report_api), 0, 0 },
	{ "no-workload-metrics", OPT_FLAG, OPT_FIELD(opt.no_workload_metrics), 0, 0 },
	{ "workload-metrics-max-series", OPT_SIZE, OPT_FIELD(opt.workload_max_series), 1, 100000000 },
};
#define OPT_COUNT (sizeof(opt_specs) / sizeof(opt_specs[0]))
/* getopt_long returns OPT_BASE + the option's index in opt_specs (above any short option). */
#define OPT_BASE 256

static void set_defaults(wh_options *o)
{
	o->port = 8443;
	o->threads = 2;
	o->max_body = 7u << 20;
	o->max_inflight_bytes = 32u << 20;
	o->max_connections = 1000;
	o->connection_timeout = 120;
	o->budget_ms = 250;
	o->reload_ms = 1000;
	o->drain_s = 25;
	o->sync_timeout_s = 10;
	o->audit_interval_ms = 3600000;
	o->audit_qps = 20;
	o->report_api = WMAP_REPORT_OPENREPORTS;
	o->workload_max_series = 1000000;
	/* TLS 1.3, and TLS 1.2 with forward-secret key exchange and AEAD ciphers only (no CBC,
	 * no static RSA): what the API server's Go client offers first anyway. */
	o->tls_priorities = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:"
			    "+AES-256-GCM:+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:"
			    "+ECDHE-RSA";
}

/* Applies one option's argument to c. Returns -1 to go on, or the exit code (0 after --help
 * or --version, 2 after a bad value, which it reports). */
static int apply_option(cli *c, const opt_spec *s, const char *arg)
{
	char *field = (char *)c + s->field;
	unsigned long long v = 0;
	wmap_error err;
	switch (s->kind) {
	case OPT_TEXT:
		if (!strcmp(s->name, "kai-mode") && strcmp(arg, "karta") && strcmp(arg, "external")) {
			fprintf(stderr, "wmap-webhook: bad value for --%s: %s (karta or external)\n", s->name, arg);
			return 2;
		}
		memcpy(field, &arg, sizeof(arg));
		return -1;
	case OPT_FLAG: *(int *)(void *)field = 1; return -1;
	case OPT_HELP: usage(stdout); return 0;
	case OPT_VERSION: printf("wmap-webhook %s\n", WMAP_VERSION); return 0;
	case OPT_GANG:
		if (wmap_gang_scheduler_parse((wmap_gang_scheduler *)(void *)field, arg, &err)) {
			fprintf(stderr, "wmap-webhook: --%s: %s\n", s->name, err.message);
			return 2;
		}
		return -1;
	case OPT_REPORT:
		if (wmap_report_api_parse((wmap_report_api *)(void *)field, arg, &err)) {
			fprintf(stderr, "wmap-webhook: bad value for --%s: %s\n", s->name, arg);
			return 2;
		}
		return -1;
	case OPT_DURATION: {
		long ms = wmap_kube_parse_duration(arg);
		if (ms < 0 || (unsigned long long)ms < s->min || (unsigned long long)ms > s->max) {
			fprintf(stderr, "wmap-webhook: bad value for --%s: %s\n", s->name, arg);
			return 2;
		}
		*(unsigned long long *)(void *)field = (unsigned long long)ms;
		return -1;
	}
	case OPT_INT:
	case OPT_UNSIGNED:
	case OPT_SIZE: break;
	}
	if (parse_num(arg, s->max, &v) || v < s->min) {
		fprintf(stderr, "wmap-webhook: bad value for --%s: %s\n", s->name, arg);
		return 2;
	}
	if (s->kind == OPT_INT)
		*(int *)(void *)field = (int)v;
	else if (s->kind == OPT_UNSIGNED)
		*(unsigned *)(void *)field = (unsigned)v;
	else
		*(size_t *)(void *)field = (size_t)v;
	return -1;
}

/* Reads the command line into c (defaults first). Returns -1 to go on, or the exit code. */
static int parse_options(cli *c, int argc, char **argv)
{
	struct option longopts[OPT_COUNT + 1];
	for (size_t i = 0; i < OPT_COUNT; i++) {
		opt_kind k = opt_specs[i].kind;
		int bare = k == OPT_FLAG || k == OPT_HELP || k == OPT_VERSION;
		longopts[i] = (struct option){ opt_specs[i].name, bare ? no_argument : required_argument,
					       NULL, OPT_BASE + (int)i };
	}
	longopts[OPT_COUNT] = (struct option){ NULL, 0, NULL, 0 };
	set_defaults(&c->opt);
	int ch;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		int rc;
		if (ch == 'h') {
			usage(stdout);
			return 0;
		}
		if (ch < OPT_BASE || ch >= OPT_BASE + (int)OPT_COUNT) {
			usage(stderr);
			return 2;
		}
		if ((rc = apply_option(c, &opt_specs[ch - OPT_BASE], optarg)) >= 0)
			return rc;
	}
	return -1;
}

/* The checks across options. Returns -1 to go on, or the exit code (2), having reported. */
static int check_options(wh_options *o, int argc)
{
	if (optind < argc || !o->cert || !o->key) {
		fprintf(stderr, "wmap-webhook: --tls-cert and --tls-key are required\n");
		usage(stderr);
		return 2;
	}
	if (o->null_admission && o->policy) {
		fprintf(stderr, "wmap-webhook: --null-admission allows everything and is for "
				"benchmarks only; it cannot be combined with --policy\n");
		return 2;
	}
	if (o->max_inflight_bytes < o->max_body + 1)
		o->max_inflight_bytes = o->max_body + 1;
	return -1;
}

/* Blocks the signals main waits for (before any thread starts, so that every thread inherits
 * the mask and only sigwait in main takes them) and fills set with them. */
static void block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* The cluster to talk to: --kubeconfig FILE, else the service account when running in a pod
 * (KUBERNETES_SERVICE_HOST), else none (*out NULL: files only; also with --no-cluster).
 * The caller owns *out. */
static int kube_config(wmap_kube_config **out, const wh_options *o, wmap_error *err)
{
	wmap_kube_overrides ov = { 0 };
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	*out = NULL;
	if (o->no_cluster)
		return 0;
	if (o->kubeconfig)
		ov.kubeconfig = o->kubeconfig;
	else if (!host || !host[0])
		return 0; /* neither a kubeconfig nor a pod: files only */
	return wmap_kubeconfig_load(out, &ov, err);
}

/* The running parts. */
typedef struct app {
	wh_server srv;
	wh_inforce *inforce;
	wmap_kube_config *kube; /* NULL without a cluster */
	wh_cluster *cluster;
	wh_leader *leader;
	wh_env env; /* what every controller is given */
	reloader rl;
	pthread_mutex_t ctl_lock; /* kicks against stops */
	void *ctl[N_CONTROLLERS]; /* the controllers' handles; NULL: not running */
} app;

/* Kicks every running controller with what (never blocks: a kick only notes the work). */
static void kick_all(app *a, unsigned what)
{
	pthread_mutex_lock(&a->ctl_lock);
	for (size_t i = 0; i < N_CONTROLLERS; i++)
		if (a->ctl[i])
			controllers[i]->kick(a->ctl[i], what);
	pthread_mutex_unlock(&a->ctl_lock);
}

/* The state in force changed (wh_inforce_listener): the watches published a build. */
static void on_state(void *ctx, unsigned what)
{
	kick_all(ctx, what);
}

/* This replica took the Lease (the leader's callback, on its thread). */
static void on_lead(void *ctx)
{
	kick_all(ctx, WH_KICK_LEAD);
}

/* Loads what the server starts with into the state in force: the certificate, the
 * definitions (compiled, one engine per poll thread), the policy file; and the cluster's
 * configuration (a->kube, NULL without a cluster). Returns 0, or -1 having logged why. */
static int load_inputs(app *a)
{
	const wh_options *o = &a->srv.opt;
	reloader *rl = &a->rl;
	wh_update u = { .what = WH_STATE_DEFS | WH_STATE_POLICIES };
	wmap_error err;
	char msg[512];
	if (wh_tls_load(o->cert, o->key, msg, sizeof(msg)) != 0) {
		wh_logf("error", "%s", msg);
		return -1;
	}
	rl->cert = wh_filesig_of(o->cert);
	rl->key = wh_filesig_of(o->key);
	wh_metrics_reload("certificate", 1);

	wmap_registry *reg = NULL;
	if (wmap_registry_new(&reg, &err) || wmap_registry_add_catalog(reg, &err) ||
	    (o->definitions &&
	     wmap_registry_add_path(reg, o->definitions, WMAP_ORIGIN_FILE, &err))) {
		wh_logf("error", "definitions: %s", err.message);
		wmap_registry_free(reg);
		return -1;
	}
	if (kube_config(&a->kube, o, &err) != 0) {
		wh_logf("error", "cluster: %s", err.message);
		wmap_registry_free(reg);
		return -1;
	}
	if (o->policy) {
		if (wmap_policy_set_load(&u.policies, o->policy, &err)) {
			wh_logf("error", "policy: %s", err.message);
			wmap_registry_free(reg);
			return -1;
		}
		rl->policy = wh_filesig_of(o->policy);
		wh_metrics_reload("policy", 1);
	}
	/* One engine per poll thread, every definition compiled now (readiness waits). */
	if (wh_inforce_new(&a->inforce, o->threads, &err) != 0 ||
	    wh_defs_prepare(&u.defs, reg, o->threads, &err) != 0) {
		wh_logf("error", "compiling definitions: %s", err.message);
		wmap_policy_set_free(u.policies);
		return -1;
	}
	if (wh_inforce_publish(a->inforce, &u) != 0) {
		wh_logf("error", "out of memory");
		return -1;
	}
	return 0;
}

/* Starts the watches, the leader election and the controllers, in that order. Returns 0,
 * or -1 having logged why. */
static int start_cluster(app *a)
{
	const wmap_kube_config *cfg = a->kube;
	wmap_error err;
	if (wh_inforce_listen(a->inforce, on_state, a) != 0 ||
	    wh_cluster_start(&a->cluster, &a->srv.opt, a->inforce, cfg, &err) != 0) {
		wh_logf("error", "cluster: %s", err.message);
		return -1;
	}
	a->rl.cluster = a->cluster;
	/* The Lease lives in the webhook's namespace: the pod's, or the kubeconfig context's
	 * when it names one, else wmap-system. */
	if (wh_leader_start(&a->leader, cfg,
			    cfg->in_cluster || cfg->namespace_explicit ? cfg->namespace_ : "wmap-system",
			    on_lead, a, &err) != 0) {
		wh_logf("error", "leader election: %s", err.message);
		return -1;
	}
	a->env = (wh_env){ .opt = &a->srv.opt, .inforce = a->inforce, .kube = cfg, .leader = a->leader };
	for (size_t i = 0; i < N_CONTROLLERS; i++) {
		void *self = NULL;
		if (controllers[i]->start(&self, &a->env, &err) != 0) {
			wh_logf("error", "%s: %s", controllers[i]->name, err.message);
			return -1;
		}
		pthread_mutex_lock(&a->ctl_lock);
		a->ctl[i] = self;
		pthread_mutex_unlock(&a->ctl_lock);
	}
	return 0;
}

/* Starts serving, the cluster's parts (with a cluster) and the reload thread. Returns 0, or
 * -1 having logged why. */
static int start_serving(app *a)
{
	wh_server *srv = &a->srv;
	srv->inforce = a->inforce;
	if (wh_server_start(srv))
		return -1;
	/* With a cluster, /readyz waits for the first sync (or --sync-timeout). */
	if (a->kube && start_cluster(a) != 0)
		return -1;
	if (pthread_create(&a->rl.thread, NULL, reload_loop, &a->rl) != 0) {
		wh_logf("error", "cannot start the reload thread");
		return -1;
	}
	a->rl.started = 1;
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
	if (di && di->port)
		srv->opt.port = di->port;
	if (!a->kube) {
		wh_inforce_set_ready(a->inforce);
		wh_metrics_set_ready(1);
	}
	return 0;
}

/* Logs that the server listens, how it is set up and how long start-up took (since t0). */
static void log_started(app *a, const struct timespec *t0)
{
	const wh_options *o = &a->srv.opt;
	struct timespec t1;
	wh_state *st = wh_inforce_acquire(a->inforce);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	json_t *f = json_pack("{s:i, s:i, s:i, s:s, s:f}", "port", o->port, "threads",
			      (int)o->threads, "definitions", (int)wmap_registry_count(st->defs->reg),
			      "gangScheduler", wmap_gang_scheduler_name(o->scheduler), "startMs",
			      (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
				      (double)(t1.tv_nsec - t0->tv_nsec) / 1e6);
	wh_inforce_release(st);
	wh_log("info", a->kube ? "listening; ready once synced" : "ready", f);
	json_decref(f);
	if (o->null_admission)
		wh_logf("warn", "--null-admission: every review is allowed unchanged (benchmarks "
				"only)");
}

/* Waits for signals: SIGHUP reloads the certificate and the policy file now; SIGTERM or
 * SIGINT returns. */
static void run_until_stopped(reloader *rl, const sigset_t *set)
{
	for (;;) {
		int sig = 0;
		if (sigwait(set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			wh_logf("info", "SIGHUP: reloading certificate and policy");
			pthread_mutex_lock(&rl->lock);
			reload_certs(rl, 1);
			reload_policy(rl, 1);
			pthread_mutex_unlock(&rl->lock);
			continue;
		}
		wh_logf("info", "%s: draining", sig == SIGTERM ? "SIGTERM" : "SIGINT");
		return;
	}
}

/* The first part of a shutdown (--shutdown-delay): unready and telling keep-alive clients to
 * close, but still accepting, for the time a Service's endpoints take to drop this replica
 * (kube-proxy and the API server keep sending new connections here meanwhile). A second
 * SIGTERM or SIGINT ends the wait at once; SIGHUP is ignored by then. */
static void shutdown_delay(wh_server *s, const sigset_t *set)
{
	struct timespec end, now, left;

	wh_server_unready(s);
	wh_logf("info", "not ready; still accepting for %u s (--shutdown-delay)", s->opt.shutdown_delay_s);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)s->opt.shutdown_delay_s;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			return;
		left.tv_sec = end.tv_sec - now.tv_sec;
		left.tv_nsec = end.tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0) {
			left.tv_sec--;
			left.tv_nsec += 1000000000L;
		}
		int sig = sigtimedwait(set, NULL, &left);
		if (sig == SIGTERM || sig == SIGINT) {
			wh_logf("info", "%s again: draining now", sig == SIGTERM ? "SIGTERM" : "SIGINT");
			return;
		}
		if (sig < 0 && errno != EINTR)
			return; /* EAGAIN: the delay is over */
	}
}

/* Drains the requests in flight (up to --drain-timeout), then stops the parts in the reverse
 * order of their start and frees what they hold. Also after a failed start (every step
 * takes what was not started). */
static void shut_down(app *a)
{
	a->rl.stop = 1;
	if (a->srv.daemon)
		wh_server_drain(&a->srv);
	if (a->rl.started)
		pthread_join(a->rl.thread, NULL);
	/* The watches first: nothing is published, so nothing kicks a controller any more. */
	wh_cluster_stop(a->cluster);
	a->cluster = NULL;
	for (size_t i = N_CONTROLLERS; i-- > 0;) {
		pthread_mutex_lock(&a->ctl_lock);
		void *self = a->ctl[i];
		a->ctl[i] = NULL; /* no kick reaches it from here on */
		pthread_mutex_unlock(&a->ctl_lock);
		if (self)
			controllers[i]->stop(self);
	}
	/* After the controllers: they ask the leader whether they may write. */
	wh_leader_stop(a->leader);
	a->leader = NULL;
	wmap_kubeconfig_free(a->kube);
	a->kube = NULL;
	wh_inforce_free(a->inforce);
	a->inforce = NULL;
	wh_tls_free_all();
	wh_logf("info", "stopped");
}

int main(int argc, char **argv)
{
	static app a;
	cli c = { 0 };
	int rc = parse_options(&c, argc, argv);
	if (rc < 0)
		rc = check_options(&c.opt, argc);
	if (rc >= 0)
		return rc;
	a.srv.opt = c.opt;

	sigset_t set;
	block_signals(&set);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Keep freed memory for the next review. By default glibc hands the pages of each
	 * review's tree back to the kernel and faults them in again for the next one: measured
	 * 0.2 ms of system time per 64-job review, a quarter of its cost. RSS then stays at the
	 * high-water mark of the reviews in flight (16 MiB after 431 KB reviews). */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_MMAP_THRESHOLD, 16 << 20);
	/* jansson's allocator is process-wide: set before any thread uses it. */
	wmap_arena_install();
	wh_metrics_init();
	pthread_mutex_init(&a.ctl_lock, NULL);
	pthread_mutex_init(&a.rl.lock, NULL);
	a.rl.opt = &a.srv.opt;
	if (load_inputs(&a) != 0)
		return 1;
	a.rl.inforce = a.inforce;
	if (start_serving(&a) != 0) {
		shut_down(&a);
		return 1;
	}
	log_started(&a, &t0);
	if (c.ready_file && write_ready_file(c.ready_file, a.srv.opt.port) != 0)
		wh_logf("warn", "cannot write %s", c.ready_file);

	run_until_stopped(&a.rl, &set);
	if (a.srv.opt.shutdown_delay_s > 0)
		shutdown_delay(&a.srv, &set);
	shut_down(&a);
	return 0;
}
