/* SPDX-License-Identifier: ISC */
/*
 * The kubernetes helper: it reads runnerd's kubeconfig, drops to
 * runnerd.user and runs without a seccomp filter (libcurl needs DNS,
 * TLS and threads); it sweeps leftover Jobs, then forks one worker per
 * call (kube/run.c) so that calls wait on the cluster side by side.  A
 * kill is SIGTERM to the worker: its wait ends and it still deletes
 * what it created.  A call with files (the terraform tools) has its
 * /work on terraform's claim, filled before the Job and emptied after
 * it by the claim keeper (kube/claim.c); a plan's saved plan is then
 * shown by the plan renderer (kube/renderer.c).  The helper forks both
 * before it reads the kubeconfig or drops root.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cjson.h"
#include "engine.h"
#include "event.h"
#include "frame.h"
#include "io.h"
#include "kube.h"
#include "launcher.h"
#include "log.h"
#include "sandbox.h"
#include "sessbox.h"

#define RESULT_MAX	(16 * 1024 * 1024)

struct worker {
	TAILQ_ENTRY(worker)	 entry;
	uint64_t		 id;
	json_t			*req;
	int			 claim;	/* its /work is on the claim */
	pid_t			 pid;
	int			 fd;	/* its result, then EOF */
	char			*buf;
	size_t			 len;
};

static TAILQ_HEAD(, worker)	 workers = TAILQ_HEAD_INITIALIZER(workers);
static const struct as_config	*conf;
static struct kube_api		 api;
static int			 stopping;

static void
on_term(int sig)
{
	(void)sig;
	kube_cancelled = 1;
}

/* In the worker: run the call, write its result, exit. */
static void __attribute__((noreturn))
worker_main(int out, const struct worker *w, int credfd)
{
	struct sigaction sa;
	sigset_t all;
	json_t *r;
	char *text;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	sigfillset(&all);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	engine_forget();
	claim_close();
	renderer_close();
	r = kube_run(conf, &api, w->id, w->req, credfd, w->claim);
	if (credfd != -1)
		close(credfd);
	if ((text = json_dumps(r, JSON_COMPACT)) == NULL)
		_exit(1);
	_exit(write_full(out, text, strlen(text)) == 0 ? 0 : 1);
}

static void
worker_end(struct worker *w)
{
	json_t *r;

	r = w->buf != NULL ? cjson_parse_nul((const uint8_t *)w->buf, w->len,
	    NULL, 0) : NULL;
	if (r == NULL)
		r = json_pack("{s:s, s:s}", "status", "failed", "error",
		    "the kubernetes worker died; its Job is swept at the "
		    "next start");
	if (w->claim)
		claim_collect(w->id, w->req, r);
	if (w->claim)
		renderer_render(w->id, w->req, r);
	if (stopping)
		json_decref(r);
	else
		engine_done(w->id, r);
	ev_del(w->fd);
	close(w->fd);
	free(w->buf);
	json_decref(w->req);
	TAILQ_REMOVE(&workers, w, entry);
	free(w);
	if (stopping && TAILQ_EMPTY(&workers))
		ev_break();
}

static void
worker_event(int fd, short revents, void *arg)
{
	struct worker *w = arg;
	char buf[8192], *p;
	ssize_t n;

	(void)revents;
	if ((n = read(fd, buf, sizeof(buf))) == -1 && (errno == EINTR ||
	    errno == EAGAIN))
		return;
	if (n <= 0 || w->len + n > RESULT_MAX) {
		worker_end(w);
		return;
	}
	if ((p = realloc(w->buf, w->len + n)) == NULL)
		fatal("worker result");
	memcpy(p + w->len, buf, n);
	w->buf = p;
	w->len += n;
}

/* A run that gets no worker: its seeded directory (seeded) emptied. */
static void
refuse(uint64_t id, int credfd, json_t *req, int seeded, const char *why)
{
	json_t *r;

	if (credfd != -1)
		close(credfd);
	r = json_pack("{s:s, s:s}", "status", "failed", "error", why);
	if (seeded)
		claim_collect(id, req, r);
	json_decref(req);
	engine_done(id, r);
}

static void
run(uint64_t id, const uint8_t *data, size_t len, int credfd)
{
	struct worker *w;
	json_t *req;
	char why[512];
	int p[2], claim;

	req = cjson_parse(data, len, NULL, 0);
	if (req == NULL || !request_ok(req)) {
		refuse(id, credfd, req, 0, "bad run request");
		return;
	}
	claim = claim_needed(req);
	if (claim && conf->kubernetes.pvc[0] == '\0') {
		refuse(id, credfd, req, 0, "files and the terraform tools need "
		    "terraform's claim on the kubernetes backend: set "
		    "kubernetes.pvc and kubernetes.pvc_path");
		return;
	}
	if (claim && claim_seed(id, req, why, sizeof(why)) == -1) {
		refuse(id, credfd, req, 0, why);
		return;
	}
	if (pipe2(p, O_CLOEXEC) == -1) {
		log_warn("pipe2");
		refuse(id, credfd, req, claim, "the kubernetes helper is out "
		    "of descriptors");
		return;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL)
		fatal("worker");
	w->id = id;
	w->req = req;
	w->claim = claim;
	w->fd = p[0];
	if ((w->pid = fork()) == -1)
		fatal("fork");
	if (w->pid == 0) {
		close(p[0]);
		worker_main(p[1], w, credfd);
	}
	close(p[1]);
	if (credfd != -1)
		close(credfd);
	TAILQ_INSERT_TAIL(&workers, w, entry);
	if (ev_add(w->fd, POLLIN, worker_event, w) == -1)
		fatal("ev_add");
}

static void
cancel(uint64_t id)
{
	struct worker *w;

	TAILQ_FOREACH(w, &workers, entry)
		if (w->id == id)
			kill(w->pid, SIGTERM);
}

/* runnerd is going: every worker cleans up, then the helper exits. */
static void
shutdown_helper(void)
{
	struct worker *w;

	stopping = 1;
	sessbox_shutdown();
	TAILQ_FOREACH(w, &workers, entry)
		kill(w->pid, SIGTERM);
	if (TAILQ_EMPTY(&workers))
		ev_break();
}

static void
helper_signal(int sig, void *arg)
{
	pid_t pid;
	int st;

	(void)arg;
	if (sig != SIGCHLD) {
		shutdown_helper();
		return;
	}
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		(void)sessbox_reaped(pid, st);
}

/*
 * A claim the cluster does not have would leave every terraform Job
 * pending until its deadline: say so now.  One not yet bound is fine
 * (WaitForFirstConsumer binds it with the first Job).
 */
static void
claim_check(const struct as_config *c, struct kube_api *a)
{
	char path[512], why[512];
	const char *phase;
	json_t *pvc;
	int code;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/"
	    "persistentvolumeclaims/%s", c->kubernetes.namespace,
	    c->kubernetes.pvc);
	code = kube_request(a, "GET", path, NULL, &pvc, why, sizeof(why));
	if (code == 404)
		fatalx("kubernetes backend: no PersistentVolumeClaim %s in "
		    "namespace %s (kubernetes.pvc; cluster/terraform-claim."
		    "yaml)", c->kubernetes.pvc, c->kubernetes.namespace);
	phase = json_string_value(json_object_get(json_object_get(pvc,
	    "status"), "phase"));
	if (code != 200)
		log_warnx("kubernetes backend: claim %s: %s", c->kubernetes.pvc,
		    why);
	else if (phase == NULL || strcmp(phase, "Bound") != 0)
		log_warnx("kubernetes backend: claim %s is %s, not yet Bound",
		    c->kubernetes.pvc, phase != NULL ? phase : "without a phase");
	json_decref(pvc);
}

static const struct engine_role kube_role = {
	.name = "kubernetes helper",
	.run = run,
	.kill = cancel,
	.session = kube_session_message,
	.gone = shutdown_helper,
};

void
kube_main(const struct as_config *c, int fd)
{
	static const int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP, 0 };
	char why[512];

	conf = c;
	/* Before the kubeconfig is read: neither holds the cluster's key. */
	if (conf->kubernetes.pvc[0] != '\0') {
		claim_start(conf);
		renderer_start(conf);
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		fatalx("curl_global_init");
	if (kube_load(&api, conf->kubernetes.kubeconfig, why,
	    sizeof(why)) == -1)
		fatalx("kubernetes backend: %s", why);
	priv_drop(conf->runnerd.user);
	ev_init();
	engine_start(&kube_role, fd);
	if (ev_signals(sigs, helper_signal, NULL) == -1)
		fatal("kubernetes helper: signals");
	if (conf->kubernetes.pvc[0] != '\0')
		claim_check(conf, &api);
	engine_swept(kube_sweep(conf, &api), NULL);
	(void)kube_sessions(conf, &api);
	/* Workers are forked from here: none may share a TLS connection. */
	kube_disconnect(&api);
	if (ev_loop() == -1)
		fatal("kubernetes helper: event loop");
	while (!TAILQ_EMPTY(&workers))
		worker_end(TAILQ_FIRST(&workers));
	engine_flush();
	kube_free(&api);
	_exit(0);
}
