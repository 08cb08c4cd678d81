/*
 * The kubernetes backend.  The engine side turns start/kill into
 * messages to a helper forked before runnerd sandboxes itself (the
 * gvisor launcher's protocol, LMSG_*, and its channel, helper.c).  The
 * helper reads runnerd's kubeconfig, drops to runnerd.user and runs
 * without a seccomp filter (libcurl needs DNS, TLS and threads); it
 * sweeps leftover Jobs, then forks one worker per call (kube_run.c) so
 * that calls wait on the cluster side by side.  A kill is SIGTERM to
 * the worker: its wait ends and it still deletes what it created.  No
 * sessions here.
 */
#include <sys/types.h>
#include <sys/queue.h>
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
#include "event.h"
#include "frame.h"
#include "kube.h"
#include "launcher.h"
#include "log.h"
#include "sandbox.h"

#define RESULT_MAX	(16 * 1024 * 1024)

/* -- the engine side ----------------------------------------------------- */

static void
kubernetes_init(const struct as_config *conf, sbx_done_cb done,
    sbx_swept_cb swept, sbx_session_cb session)
{
	(void)session;
	if (access(conf->kubernetes.kubeconfig, R_OK) == -1)
		fatal("kubernetes backend: kubeconfig %s (kubernetes."
		    "kubeconfig)", conf->kubernetes.kubeconfig);
	helper_start("kubernetes helper", conf, kube_main, done, swept, NULL);
}

static int
kubernetes_start(const struct sbx_request *r)
{
	/* Files in and out need the PVC (terraform): not built yet. */
	if (r->files_in != NULL || r->files_out != NULL ||
	    r->workspace != NULL) {
		if (r->credfd != -1)
			close(r->credfd);
		log_warnx("kubernetes backend: no files in or out yet");
		return -1;
	}
	return helper_send(LMSG_RUN, r->id, r->credfd, json_pack("{s:O}",
	    "argv", r->argv));
}

const struct backend kubernetes_backend = {
	.name = "kubernetes",
	.init = kubernetes_init,
	.start = kubernetes_start,
	.kill = helper_kill,
	.stop = helper_stop,
};

/* -- the helper process --------------------------------------------------- */

struct worker {
	TAILQ_ENTRY(worker)	 entry;
	uint64_t		 id;
	pid_t			 pid;
	int			 fd;	/* its result, then EOF */
	char			*buf;
	size_t			 len;
};

static TAILQ_HEAD(, worker)	 workers = TAILQ_HEAD_INITIALIZER(workers);
static struct channel		 engine;
static const struct as_config	*conf;
static struct kube_api		 api;
static int			 stopping;

static void
engine_reply(uint32_t type, uint64_t id, json_t *payload)
{
	char *text;

	if ((text = json_dumps(payload, JSON_COMPACT)) == NULL ||
	    channel_compose(&engine, type, 0, id, -1, text, strlen(text)) ==
	    -1)
		fatalx("kubernetes helper: cannot send a result");
	free(text);
	json_decref(payload);
	ev_set(engine.fd, POLLIN | POLLOUT);
}

static void
on_term(int sig)
{
	(void)sig;
	kube_cancelled = 1;
}

/* In the worker: run the call, write its result, exit. */
static void __attribute__((noreturn))
worker_main(int out, uint64_t id, json_t *req, int credfd)
{
	struct sigaction sa;
	sigset_t all;
	json_t *r;
	char *text;
	size_t off = 0, len;
	ssize_t n;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	sigfillset(&all);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	close(engine.fd);
	r = kube_run(conf, &api, id, json_object_get(req, "argv"), credfd);
	if (credfd != -1)
		close(credfd);
	if ((text = json_dumps(r, JSON_COMPACT)) == NULL)
		_exit(1);
	len = strlen(text);
	while (off < len && ((n = write(out, text + off, len - off)) > 0 ||
	    (n == -1 && errno == EINTR)))
		off += n > 0 ? (size_t)n : 0;
	_exit(off == len ? 0 : 1);
}

static void
worker_end(struct worker *w)
{
	json_t *r;

	r = w->buf != NULL ? cjson_parse((const uint8_t *)w->buf, w->len,
	    NULL, 0) : NULL;
	if (r == NULL)
		r = json_pack("{s:s, s:s}", "status", "failed", "error",
		    "the kubernetes worker died; its Job is swept at the "
		    "next start");
	if (stopping)
		json_decref(r);
	else
		engine_reply(LMSG_DONE, w->id, r);
	ev_del(w->fd);
	close(w->fd);
	free(w->buf);
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

static void
run(uint64_t id, const uint8_t *data, size_t len, int credfd)
{
	struct worker *w;
	json_t *req;
	int p[2];

	req = cjson_parse(data, len, NULL, 0);
	if (req == NULL || !json_is_array(json_object_get(req, "argv")) ||
	    pipe2(p, O_CLOEXEC) == -1) {
		if (credfd != -1)
			close(credfd);
		json_decref(req);
		engine_reply(LMSG_DONE, id, json_pack("{s:s, s:s}", "status",
		    "failed", "error", "bad run request"));
		return;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL)
		fatal("worker");
	w->id = id;
	w->fd = p[0];
	if ((w->pid = fork()) == -1)
		fatal("fork");
	if (w->pid == 0) {
		close(p[0]);
		worker_main(p[1], id, req, credfd);
	}
	close(p[1]);
	if (credfd != -1)
		close(credfd);
	json_decref(req);
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
	TAILQ_FOREACH(w, &workers, entry)
		kill(w->pid, SIGTERM);
	if (TAILQ_EMPTY(&workers))
		ev_break();
}

static void
engine_event(int fd, short revents, void *arg)
{
	struct msg m;
	ssize_t n;
	int r;

	(void)arg;
	if ((revents & POLLOUT) && channel_flush(&engine) == -1) {
		shutdown_helper();
		return;
	}
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		n = channel_read(&engine);
		if (n == 0 || (n == -1 && errno != EAGAIN)) {
			ev_del(fd);
			shutdown_helper();
			return;
		}
		while ((r = channel_get(&engine, &m)) == 1) {
			if (m.hdr.type == LMSG_RUN)
				run(m.hdr.reqid, m.data, m.len, m.fd);
			else if (m.hdr.type == LMSG_KILL && m.fd == -1)
				cancel(m.hdr.reqid);
			else
				fatalx("kubernetes helper: unexpected %u",
				    m.hdr.type);
		}
		if (r == -1)
			fatalx("kubernetes helper: garbled frame");
	}
	ev_set(fd, POLLIN | (channel_pending(&engine) ? POLLOUT : 0));
}

static void
helper_signal(int sig, void *arg)
{
	pid_t pid;

	(void)arg;
	if (sig != SIGCHLD) {
		shutdown_helper();
		return;
	}
	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
		;
}

void
kube_main(const struct as_config *c, int fd)
{
	static const int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP, 0 };
	char why[512];
	json_t *swept;

	conf = c;
	log_procinit("runnerd-kube");
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		fatalx("curl_global_init");
	if (kube_load(&api, conf->kubernetes.kubeconfig, why,
	    sizeof(why)) == -1)
		fatalx("kubernetes backend: %s", why);
	priv_drop(conf->runnerd.user);
	ev_init();
	channel_init(&engine, fd);
	if (ev_signals(sigs, helper_signal, NULL) == -1)
		fatal("kubernetes helper: signals");
	if (ev_add(fd, POLLIN, engine_event, NULL) == -1)
		fatal("kubernetes helper: ev_add");
	if ((swept = kube_sweep(conf, &api)) != NULL)
		engine_reply(LMSG_SWEPT, 0, swept);
	/* Workers are forked from here: none may share a TLS connection. */
	kube_disconnect(&api);
	if (ev_loop() == -1)
		fatal("kubernetes helper: event loop");
	while (!TAILQ_EMPTY(&workers))
		worker_end(TAILQ_FIRST(&workers));
	(void)channel_flush(&engine);
	kube_free(&api);
	_exit(0);
}
