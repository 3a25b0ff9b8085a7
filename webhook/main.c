/* wmap-webhook: the admission server's entry point: options, start-up, file reloads,
 * signals. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>
#include "webhook.h"
#include "wmap/kube/client.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wmap-webhook --tls-cert FILE --tls-key FILE [options]\n"
		"\n"
		"A TLS admission webhook: POST /mutate and /validate take admission.k8s.io/v1\n"
		"AdmissionReview; GET /healthz, /readyz, /metrics.\n"
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
		"  --threads N                poll threads, each with its own engine (2)\n"
		"  --max-body BYTES           413 above this (7340032 = 7 MiB)\n"
		"  --max-inflight-bytes BYTES all bodies being read at once; 503 above (33554432)\n"
		"  --max-connections N        connection limit (1000)\n"
		"  --connection-timeout SEC   idle connection timeout (120)\n"
		"  --request-budget-ms MS     time budget per review; past it, allow unchanged (250)\n"
		"  --reload-interval-ms MS    how often files are checked for changes (1000)\n"
		"  --drain-timeout SEC        longest wait for in-flight requests on SIGTERM (25)\n"
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

typedef struct reloader {
	wh_server *srv;
	wh_filesig cert, key, policy;
	wh_filesig cert_failed, policy_failed; /* last bad versions, reported once */
	pthread_t thread;
	pthread_mutex_t lock; /* the reload thread and SIGHUP in the main thread */
	atomic_int stop;
} reloader;

static void reload_certs(reloader *rl, int force)
{
	const wh_options *o = &rl->srv->opt;
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
	const char *path = rl->srv->opt.policy;
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
		if (rl->srv->cluster) {
			wmap_policy_set_free(set); /* merged with the cluster's by the builder */
			set = NULL;
			wh_cluster_policy_file_changed(rl->srv->cluster);
		} else {
			wh_policy_swap(rl->srv, set);
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
		unsigned ms = rl->srv->opt.reload_ms;
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

int main(int argc, char **argv)
{
	static wh_server srv;
	wh_options *o = &srv.opt;
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
	/* TLS 1.3, and TLS 1.2 with forward-secret key exchange and AEAD ciphers only (no CBC,
	 * no static RSA): what the API server's Go client offers first anyway. */
	o->tls_priorities = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:"
			    "+AES-256-GCM:+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:"
			    "+ECDHE-RSA";

	enum { O_CERT = 256,
	       O_KEY,
	       O_PORT,
	       O_DEFS,
	       O_POLICY,
	       O_GANG,
	       O_QUEUE,
	       O_THREADS,
	       O_BODY,
	       O_INFLIGHT,
	       O_CONNS,
	       O_CTIMEOUT,
	       O_BUDGET,
	       O_RELOAD,
	       O_DRAIN,
	       O_PRIO,
	       O_READY,
	       O_HELP,
	       O_VERSION,
	       O_NULL,
	       O_KUBECONFIG,
	       O_NO_CLUSTER,
	       O_SYNC_TIMEOUT,
	       O_AUDIT_INTERVAL,
	       O_AUDIT_QPS,
	       O_REPORT_API };
	static const struct option longopts[] = {
		{ "tls-cert", required_argument, NULL, O_CERT },
		{ "tls-key", required_argument, NULL, O_KEY },
		{ "port", required_argument, NULL, O_PORT },
		{ "definitions", required_argument, NULL, O_DEFS },
		{ "policy", required_argument, NULL, O_POLICY },
		{ "gang-scheduler", required_argument, NULL, O_GANG },
		{ "queue", required_argument, NULL, O_QUEUE },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "max-body", required_argument, NULL, O_BODY },
		{ "max-inflight-bytes", required_argument, NULL, O_INFLIGHT },
		{ "max-connections", required_argument, NULL, O_CONNS },
		{ "connection-timeout", required_argument, NULL, O_CTIMEOUT },
		{ "request-budget-ms", required_argument, NULL, O_BUDGET },
		{ "reload-interval-ms", required_argument, NULL, O_RELOAD },
		{ "drain-timeout", required_argument, NULL, O_DRAIN },
		{ "tls-priorities", required_argument, NULL, O_PRIO },
		{ "ready-file", required_argument, NULL, O_READY },
		{ "help", no_argument, NULL, O_HELP },
		{ "version", no_argument, NULL, O_VERSION },
		{ "null-admission", no_argument, NULL, O_NULL },
		{ "kubeconfig", required_argument, NULL, O_KUBECONFIG },
		{ "no-cluster", no_argument, NULL, O_NO_CLUSTER },
		{ "sync-timeout", required_argument, NULL, O_SYNC_TIMEOUT },
		{ "audit-interval", required_argument, NULL, O_AUDIT_INTERVAL },
		{ "audit-qps", required_argument, NULL, O_AUDIT_QPS },
		{ "report-api", required_argument, NULL, O_REPORT_API },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	unsigned long long v;
	const char *ready_file = NULL;
	wmap_error err;
	int li;
	/* li names the option in messages: no dependency on the enum's order. */
	while ((li = -1, ch = getopt_long(argc, argv, "h", longopts, &li)) != -1) {
		int bad = 0;
		switch (ch) {
		case O_CERT: o->cert = optarg; break;
		case O_KEY: o->key = optarg; break;
		case O_DEFS: o->definitions = optarg; break;
		case O_POLICY: o->policy = optarg; break;
		case O_QUEUE: o->queue = optarg; break;
		case O_PRIO: o->tls_priorities = optarg; break;
		case O_READY: ready_file = optarg; break;
		case O_NULL: o->null_admission = 1; break;
		case O_KUBECONFIG: o->kubeconfig = optarg; break;
		case O_NO_CLUSTER: o->no_cluster = 1; break;
		case O_SYNC_TIMEOUT:
			bad = parse_num(optarg, 3600, &v);
			o->sync_timeout_s = (unsigned)v;
			break;
		case O_AUDIT_INTERVAL: {
			/* Go durations; at least a second, at most a week. */
			long ms = wmap_kube_parse_duration(optarg);
			bad = ms < 1000 || ms > 7L * 24 * 3600 * 1000;
			o->audit_interval_ms = (unsigned long long)ms;
			break;
		}
		case O_AUDIT_QPS:
			bad = parse_num(optarg, 10000, &v) || v == 0;
			o->audit_qps = (double)v;
			break;
		case O_REPORT_API:
			bad = wmap_report_api_parse(&o->report_api, optarg, &err) != 0;
			break;
		case O_GANG:
			if (wmap_gang_scheduler_parse(&o->scheduler, optarg, &err)) {
				fprintf(stderr, "wmap-webhook: --gang-scheduler: %s\n", err.message);
				return 2;
			}
			break;
		case O_PORT:
			bad = parse_num(optarg, 65535, &v);
			o->port = (int)v;
			break;
		case O_THREADS:
			bad = parse_num(optarg, 256, &v) || v == 0;
			o->threads = (unsigned)v;
			break;
		case O_BODY:
			bad = parse_num(optarg, 1ull << 30, &v) || v < 1024;
			o->max_body = (size_t)v;
			break;
		case O_INFLIGHT:
			bad = parse_num(optarg, 1ull << 34, &v);
			o->max_inflight_bytes = (size_t)v;
			break;
		case O_CONNS:
			bad = parse_num(optarg, 100000, &v) || v == 0;
			o->max_connections = (unsigned)v;
			break;
		case O_CTIMEOUT:
			bad = parse_num(optarg, 86400, &v);
			o->connection_timeout = (unsigned)v;
			break;
		case O_BUDGET:
			bad = parse_num(optarg, 60000, &v);
			o->budget_ms = (unsigned)v;
			break;
		case O_RELOAD:
			bad = parse_num(optarg, 3600000, &v) || v < 10;
			o->reload_ms = (unsigned)v;
			break;
		case O_DRAIN:
			bad = parse_num(optarg, 3600, &v);
			o->drain_s = (unsigned)v;
			break;
		case 'h':
		case O_HELP: usage(stdout); return 0;
		case O_VERSION: printf("wmap-webhook %s\n", WMAP_VERSION); return 0;
		default: usage(stderr); return 2;
		}
		if (bad) {
			fprintf(stderr, "wmap-webhook: bad value for --%s: %s\n",
				li >= 0 ? longopts[li].name : "?", optarg);
			return 2;
		}
	}
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

	/* Signals are taken by sigwait in this thread only: block them before any thread. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Keep freed memory for the next review. By default glibc hands the pages of each
	 * review's tree back to the kernel and faults them in again for the next one: measured
	 * 0.2 ms of system time per 64-job review, a quarter of its cost. RSS then stays at the
	 * high-water mark of the reviews in flight (16 MiB after 431 KB reviews). */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_MMAP_THRESHOLD, 16 << 20);
	wh_metrics_init();
	pthread_mutex_init(&srv.lock, NULL);
	char msg[512];
	if (wh_tls_load(o->cert, o->key, msg, sizeof(msg)) != 0) {
		wh_logf("error", "%s", msg);
		return 1;
	}
	reloader rl = { .srv = &srv, .lock = PTHREAD_MUTEX_INITIALIZER };
	rl.cert = wh_filesig_of(o->cert);
	rl.key = wh_filesig_of(o->key);
	wh_metrics_reload("certificate", 1);

	wmap_registry *reg = NULL;
	if (wmap_registry_new(&reg, &err) || wmap_registry_add_catalog(reg, &err) ||
	    (o->definitions &&
	     wmap_registry_add_path(reg, o->definitions, WMAP_ORIGIN_FILE, &err))) {
		wh_logf("error", "definitions: %s", err.message);
		wmap_registry_free(reg);
		return 1;
	}
	wmap_kube_config *kcfg = NULL;
	if (wh_cluster_config(&kcfg, o, &err) != 0) {
		wh_logf("error", "cluster: %s", err.message);
		wmap_registry_free(reg);
		return 1;
	}
	if (o->policy) {
		wmap_policy_set *ps = NULL;
		if (wmap_policy_set_load(&ps, o->policy, &err)) {
			wh_logf("error", "policy: %s", err.message);
			return 1;
		}
		wh_policy_swap(&srv, ps);
		rl.policy = wh_filesig_of(o->policy);
		wh_metrics_reload("policy", 1);
	}
	/* One engine per poll thread, every definition compiled now (readiness waits). */
	if (wh_defs_prepare(&srv.defs, reg, o->threads, &err)) {
		wh_logf("error", "compiling definitions: %s", err.message);
		return 1;
	}
	if (wh_server_start(&srv))
		return 1;
	/* With a cluster, /readyz waits for the first sync (or --sync-timeout). */
	if (kcfg && wh_cluster_start(&srv.cluster, &srv, kcfg, &err) != 0) {
		wh_logf("error", "cluster: %s", err.message);
		return 1;
	}
	if (pthread_create(&rl.thread, NULL, reload_loop, &rl) != 0) {
		wh_logf("error", "cannot start the reload thread");
		return 1;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv.daemon, MHD_DAEMON_INFO_BIND_PORT);
	if (di && di->port)
		o->port = di->port;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!srv.cluster) {
		srv.ready = 1;
		wh_metrics_set_ready(1);
	}
	json_t *f = json_pack("{s:i, s:i, s:i, s:s, s:f}", "port", o->port, "threads",
			      (int)o->threads, "definitions", (int)wmap_registry_count(srv.defs->reg),
			      "gangScheduler", wmap_gang_scheduler_name(o->scheduler), "startMs",
			      (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
				      (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	wh_log("info", srv.cluster ? "listening; ready once synced" : "ready", f);
	json_decref(f);
	if (o->null_admission)
		wh_logf("warn", "--null-admission: every review is allowed unchanged (benchmarks "
				"only)");
	if (ready_file && write_ready_file(ready_file, o->port) != 0)
		wh_logf("warn", "cannot write %s", ready_file);

	for (;;) {
		int sig = 0;
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			wh_logf("info", "SIGHUP: reloading certificate and policy");
			pthread_mutex_lock(&rl.lock);
			reload_certs(&rl, 1);
			reload_policy(&rl, 1);
			pthread_mutex_unlock(&rl.lock);
			continue;
		}
		wh_logf("info", "%s: draining", sig == SIGTERM ? "SIGTERM" : "SIGINT");
		break;
	}
	rl.stop = 1;
	wh_server_drain(&srv);
	pthread_join(rl.thread, NULL);
	wh_cluster_stop(srv.cluster);
	srv.cluster = NULL;
	wh_defs_free(srv.defs);
	srv.defs = NULL;
	wh_policy_swap(&srv, NULL);
	pthread_mutex_lock(&srv.lock);
	if (srv.policy) {
		wmap_policy_set_free(srv.policy->set);
		free(srv.policy);
		srv.policy = NULL;
	}
	pthread_mutex_unlock(&srv.lock);
	wh_tls_free_all();
	wh_logf("info", "stopped");
	return 0;
}
