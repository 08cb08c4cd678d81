/* SPDX-License-Identifier: ISC */
/*
 * Sessions on the kubernetes backend, on kubernetes-sigs/agent-sandbox
 * (extensions.agents.x-k8s.io/v1beta1, the version its CRDs store from
 * v0.5.6 to v1.0; a cluster that serves only older versions gets
 * sessions off, with the version runnerd needs): each session is a SandboxClaim on the warm pool
 * kubernetes.session_pool, whose SandboxTemplate (cluster/) makes the
 * pod: runtime class, Pod Security restricted, no service-account
 * token, limits, the session image.  The controller binds the claim to
 * a ready Sandbox of the pool, or makes one; the claim's Ready
 * condition and status.sandbox.name say when and which.
 *
 * The agent runs through the API server's pods/exec (kube/ws.c), its
 * stdin and stdout the exec stream: the pod listens on nothing, and
 * only who may create pods/exec in the namespace (runnerd's RBAC)
 * reaches it.  Each session is a worker process of the kubernetes
 * helper that claims, waits, bridges the agent's frames between the
 * helper's socket and the stream, and deletes the claim when it ends;
 * sessbox.c does the rest, as for gvisor.  The warm pool is the
 * cluster's (SandboxWarmPool), not the helper's.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "io.h"
#include "kube.h"
#include "log.h"
#include "sessbox.h"

#define SBX_EXT		"/apis/extensions.agents.x-k8s.io"
#define SBX_VERSION	"v1beta1"
#define SBX_GROUP	SBX_EXT "/" SBX_VERSION
#define SBX_CORE	"/apis/agents.x-k8s.io/v1beta1"
#define POD_NAME_ANN	"agents.x-k8s.io/pod-name"
#define SESSION_LABEL	"agent-sandbox/session-id"
#define POLL_MS		100
#define EXEC_MS		15000	/* exec and the agent's start, past the claim */

/* How a worker ended: its exit status, and what the session is told. */
enum {
	WK_STOPPED = 0,		/* told to */
	WK_API = 10,
	WK_UNBOUND,
	WK_EXEC,
	WK_POD_GONE,
	WK_AGENT_EXITED,
};

static const struct as_config	*conf;
static struct kube_api		*api;
static const char		*sessions_off;	/* why, or NULL: on */
static volatile sig_atomic_t	 stop_asked;

static void
on_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}

/* Sleeps ms unless told to stop. */
static void
nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	if (!stop_asked)
		nanosleep(&ts, NULL);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
claim_create(const struct sess *s)
{
	char path[512], why[512];
	json_t *claim, *reply;
	int code;

	claim = json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s}}, s:{s:{s:s}}}",
	    "apiVersion", "extensions.agents.x-k8s.io/" SBX_VERSION, "kind",
	    "SandboxClaim", "metadata", "name", s->cid, "labels",
	    "app.kubernetes.io/managed-by", KUBE_MANAGED_BY, SESSION_LABEL,
	    s->session, "spec", "warmPoolRef", "name",
	    conf->kubernetes.session_pool);
	snprintf(path, sizeof(path), SBX_GROUP "/namespaces/%s/sandboxclaims",
	    conf->kubernetes.namespace);
	code = kube_request(api, "POST", path, claim, &reply, why,
	    sizeof(why));
	json_decref(claim);
	json_decref(reply);
	if (code != 201 && code != 200) {
		log_warnx("session %s: create SandboxClaim: %s", s->session,
		    why);
		return -1;
	}
	return 0;
}

static void
claim_delete(const char *name)
{
	char path[512], why[512];
	json_t *reply;
	int code;

	snprintf(path, sizeof(path), SBX_GROUP "/namespaces/%s/sandboxclaims/"
	    "%s?propagationPolicy=Background", conf->kubernetes.namespace,
	    name);
	code = kube_request(api, "DELETE", path, NULL, &reply, why,
	    sizeof(why));
	json_decref(reply);
	if (code != 200 && code != 202 && code != 404)
		log_warnx("SandboxClaim %s: left in the cluster (%s); the "
		    "next start sweeps it", name, why);
}

/* The claim's condition type, or NULL. */
static json_t *
condition(json_t *obj, const char *type)
{
	json_t *c;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(obj, "status"),
	    "conditions"), i, c)
		if (json_is_string(json_object_get(c, "type")) &&
		    strcmp(json_string_value(json_object_get(c, "type")),
		    type) == 0)
			return c;
	return NULL;
}

/*
 * Waits for the claim to be Ready with a Sandbox; its pod's name, or
 * NULL (a worker's exit status in *ended).
 */
static char *
claim_wait(const struct sess *s, int *ended)
{
	char path[512], why[512], *pod = NULL;
	const char *sbx = NULL, *st, *msg;
	json_t *claim = NULL, *ready, *sandbox;
	int64_t until = now_ms() + conf->kubernetes.session_start * 1000;
	int code;

	snprintf(path, sizeof(path), SBX_GROUP "/namespaces/%s/sandboxclaims/"
	    "%s", conf->kubernetes.namespace, s->cid);
	for (;;) {
		json_decref(claim);
		code = kube_request(api, "GET", path, NULL, &claim, why,
		    sizeof(why));
		ready = condition(claim, "Ready");
		st = json_string_value(json_object_get(ready, "status"));
		sbx = json_string_value(json_object_get(json_object_get(
		    json_object_get(claim, "status"), "sandbox"), "name"));
		if (code == 200 && st != NULL && strcmp(st, "True") == 0 &&
		    sbx != NULL)
			break;
		if (code != 200 && code != -1) {
			log_warnx("session %s: SandboxClaim %s: %s",
			    s->session, s->cid, why);
			*ended = WK_API;
			goto out;
		}
		if (stop_asked) {
			*ended = WK_STOPPED;
			goto out;
		}
		if (now_ms() >= until) {
			msg = json_string_value(json_object_get(ready,
			    "message"));
			st = json_string_value(json_object_get(ready,
			    "reason"));
			log_warnx("session %s: SandboxClaim %s not ready in "
			    "%lds: %s%s%s", s->session, s->cid,
			    conf->kubernetes.session_start, st != NULL ? st :
			    "no Ready condition", msg != NULL ? ": " : "",
			    msg != NULL ? msg : "");
			*ended = WK_UNBOUND;
			goto out;
		}
		nap(POLL_MS);
	}
	/* A warm sandbox's pod keeps the name it was made with. */
	snprintf(path, sizeof(path), SBX_CORE "/namespaces/%s/sandboxes/%s",
	    conf->kubernetes.namespace, sbx);
	code = kube_request(api, "GET", path, NULL, &sandbox, why,
	    sizeof(why));
	if (code != 200) {
		log_warnx("session %s: Sandbox %s: %s", s->session, sbx, why);
		*ended = WK_API;
	} else {
		st = json_string_value(json_object_get(json_object_get(
		    json_object_get(sandbox, "metadata"), "annotations"),
		    POD_NAME_ANN));
		pod = strdup(st != NULL ? st : sbx);
		log_debug("session %s: claim %s bound to Sandbox %s, pod %s",
		    s->session, s->cid, sbx, pod != NULL ? pod : "?");
	}
	json_decref(sandbox);
out:
	json_decref(claim);
	return pod;
}

/* The exec's query: the agent's argv, stdin and stdout, no tty. */
static int
exec_path(const char *pod, char *path, size_t len)
{
	json_t *argv, *a;
	size_t i, n;
	char *esc;

	n = snprintf(path, len, "/api/v1/namespaces/%s/pods/%s/exec?"
	    "container=%s&stdin=true&stdout=true&stderr=false&tty=false",
	    conf->kubernetes.namespace, pod, KUBE_CONTAINER);
	if ((argv = sessbox_agent_argv(conf, conf->kubernetes.session_agent,
	    "/work")) == NULL)
		return -1;
	json_array_foreach(argv, i, a) {
		esc = curl_easy_escape(NULL, json_string_value(a), 0);
		if (esc == NULL || n >= len) {
			curl_free(esc);
			json_decref(argv);
			return -1;
		}
		n += snprintf(path + n, len - n, "&command=%s", esc);
		curl_free(esc);
	}
	json_decref(argv);
	return n < len ? 0 : -1;
}

struct bridge {
	int	 fd;		/* the helper's end */
	int	 exited;	/* the exec said it ended */
};

static int
from_pod(int stream, const uint8_t *data, size_t len, void *arg)
{
	struct bridge *b = arg;

	if (stream == KUBE_WS_STDOUT)
		return write_full(b->fd, data, len) == -1;
	if (stream == KUBE_WS_ERROR) {
		b->exited = 1;
		return 1;
	}
	return 0;	/* stderr: not asked for; the agent's is its own */
}

/* Relays until either side ends: the worker's exit status. */
static int
bridge(struct kube_ws *ws, int fd)
{
	struct bridge b = { .fd = fd };
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
	    { .fd = ws->fd, .events = POLLIN } };
	uint8_t buf[65536];
	ssize_t n;

	/* TLS may hold data already read off the socket: read first. */
	if (kube_ws_read(ws, from_pod, &b) == -1)
		return WK_AGENT_EXITED;
	while (!stop_asked) {
		if (poll(p, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			return WK_API;
		}
		if (p[0].revents) {
			n = read(fd, buf, sizeof(buf));
			if (n == -1 && errno == EINTR)
				continue;
			if (n <= 0)
				return WK_STOPPED;	/* the helper is gone */
			if (kube_ws_send(ws, KUBE_WS_STDIN, buf, n) == -1)
				return WK_AGENT_EXITED;
		}
		if (p[1].revents && kube_ws_read(ws, from_pod, &b) == -1)
			return WK_AGENT_EXITED;
	}
	return WK_STOPPED;
}

/*
 * The pod's uid into uid: 0, or -1 when it is gone (the Sandbox's
 * controller makes a new one of the same name) or the API cannot say
 * (uid is then "").
 */
static int
pod_uid(const char *pod, char *uid, size_t len)
{
	char path[512], why[512];
	const char *u;
	json_t *reply;
	int code;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s",
	    conf->kubernetes.namespace, pod);
	code = kube_request(api, "GET", path, NULL, &reply, why, sizeof(why));
	u = json_string_value(json_object_get(json_object_get(reply,
	    "metadata"), "uid"));
	snprintf(uid, len, "%s", code == 200 && u != NULL ? u : "");
	json_decref(reply);
	return code == 200 && u != NULL ? 0 : -1;
}

/* In the worker: one session, from the claim to its deletion. */
static void __attribute__((noreturn))
session_worker(struct sess *s, int fd)
{
	struct sigaction sa;
	struct kube_ws ws;
	char path[4096], why[512], uid[128], now[128], *pod;
	int ended = WK_STOPPED;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	kube_disconnect(api);
	if (claim_create(s) == -1)
		_exit(WK_API);
	if ((pod = claim_wait(s, &ended)) == NULL)
		goto done;
	snprintf(why, sizeof(why), "its pod cannot be read");
	if (pod_uid(pod, uid, sizeof(uid)) == -1 ||
	    exec_path(pod, path, sizeof(path)) == -1 ||
	    kube_ws_open(api, path, &ws, why, sizeof(why)) == -1) {
		log_warnx("session %s: pod %s: %s", s->session, pod, why);
		ended = WK_EXEC;
	} else {
		ended = bridge(&ws, fd);
		kube_ws_close(&ws);
		if (ended == WK_AGENT_EXITED && !stop_asked &&
		    (pod_uid(pod, now, sizeof(now)) == -1 ||
		    strcmp(now, uid) != 0))
			ended = WK_POD_GONE;
		if (stop_asked)
			ended = WK_STOPPED;
	}
	free(pod);
done:
	close(fd);
	claim_delete(s->cid);
	_exit(ended);
}

static int
kube_spawn(struct sess *s, int *fd)
{
	sigset_t all, old;
	pid_t pid;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	if ((pid = fork_paired(fd)) == -1) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	if (pid == 0) {
		/* Only this session's end stays open in its worker. */
		if (dup2(*fd, 3) == -1)
			_exit(WK_API);
		closefrom(4);
		sigprocmask(SIG_UNBLOCK, &all, NULL);
		session_worker(s, 3);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	s->pid = pid;
	return 0;
}

static void
kube_stop(struct sess *s)
{
	if (s->pid > 0)
		kill(s->pid, SIGTERM);
}

static const char *
kube_exit_why(struct sess *s, int status)
{
	(void)s;
	if (!WIFEXITED(status))
		return "the session's kubernetes worker died; its claim is "
		    "swept at the next start";
	switch (WEXITSTATUS(status)) {
	case WK_API:
		return "the Kubernetes API refused the session's SandboxClaim "
		    "(runnerd's log says why)";
	case WK_UNBOUND:
		return "the SandboxClaim was not ready within kubernetes."
		    "session_start: is the agent-sandbox controller running, "
		    "the warm pool kubernetes.session_pool there, and its "
		    "pods admitted? (runnerd's log has the claim's condition)";
	case WK_EXEC:
		return "the session agent could not be started through "
		    "pods/exec (runnerd's log says why)";
	case WK_POD_GONE:
		return "the sandbox's pod was deleted";
	case WK_AGENT_EXITED:
		return "the session agent's exec stream ended";
	}
	return NULL;
}

static struct sessbox_ops kube_ops = {
	.spawn = kube_spawn,
	.stop = kube_stop,
	.exit_why = kube_exit_why,
	.shutdown = kube_stop,
};

/* Claims a previous runnerd left: deleted, with what hangs off them. */
static void
claims_sweep(void)
{
	char path[512], why[512];
	json_t *list, *c;
	const char *name;
	size_t i;

	snprintf(path, sizeof(path), SBX_GROUP "/namespaces/%s/sandboxclaims?"
	    "labelSelector=app.kubernetes.io%%2Fmanaged-by%%3D%s",
	    conf->kubernetes.namespace, KUBE_MANAGED_BY);
	if (kube_request(api, "GET", path, NULL, &list, why,
	    sizeof(why)) != 200) {
		log_warnx("sweep: SandboxClaims: %s", why);
		json_decref(list);
		return;
	}
	json_array_foreach(json_object_get(list, "items"), i, c) {
		name = json_string_value(json_object_get(json_object_get(c,
		    "metadata"), "name"));
		if (name == NULL)
			continue;
		log_info("sweep: SandboxClaim %s of a previous runnerd", name);
		claim_delete(name);
	}
	json_decref(list);
}

/*
 * Why sessions are off when SBX_GROUP is not found: the group's other
 * versions, when the cluster serves it (CRDs older than runnerd's,
 * v1alpha1 alone), else no CRDs at all.
 */
static void
sessions_off_why(char *off, size_t len)
{
	char why[512], versions[256] = "";
	const char *version;
	json_t *group, *v;
	size_t i;

	if (kube_request(api, "GET", SBX_EXT, NULL, &group, why,
	    sizeof(why)) == 200)
		json_array_foreach(json_object_get(group, "versions"), i, v) {
			version = json_string_value(json_object_get(v,
			    "version"));
			if (version == NULL)
				continue;
			if (versions[0] != '\0')
				strlcat(versions, ", ", sizeof(versions));
			strlcat(versions, version, sizeof(versions));
		}
	json_decref(group);
	if (versions[0] != '\0')
		snprintf(off, len, "sessions are off on the kubernetes backend: "
		    "the cluster's agent-sandbox CRDs serve "
		    "extensions.agents.x-k8s.io %s, and runnerd needs "
		    SBX_VERSION " (SandboxClaim spec.warmPoolRef, agent-sandbox "
		    "v1.0); install agent-sandbox v1.0's CRDs (scripts/k8s-up) "
		    "and restart runnerd", versions);
	else
		snprintf(off, len, "sessions are off on the kubernetes backend: "
		    "the cluster does not serve the agent-sandbox CRDs (GET "
		    SBX_GROUP ": 404); install the controller (scripts/k8s-up) "
		    "and restart runnerd");
}

/*
 * At the helper's start: sessions are on when the agent-sandbox
 * extensions group serves sandboxclaims at SBX_VERSION; otherwise off,
 * and why is logged and given to every session tool.  0 when on.
 */
int
kube_sessions(const struct as_config *c, struct kube_api *a)
{
	static char off[1024];
	char why[512];
	json_t *list, *r;
	size_t i;
	int code, found = 0;

	conf = c;
	api = a;
	if (conf->runnerd.sessions_max == 0)
		return -1;
	code = kube_request(api, "GET", SBX_GROUP, NULL, &list, why,
	    sizeof(why));
	json_array_foreach(json_object_get(list, "resources"), i, r)
		if (json_is_string(json_object_get(r, "name")) &&
		    strcmp(json_string_value(json_object_get(r, "name")),
		    "sandboxclaims") == 0)
			found = 1;
	json_decref(list);
	if (code == 404)
		sessions_off_why(off, sizeof(off));
	else if (code == 200 && !found)
		snprintf(off, sizeof(off), "sessions are off on the kubernetes "
		    "backend: the cluster does not serve the agent-sandbox "
		    "CRDs (GET " SBX_GROUP ": no sandboxclaims); install the "
		    "controller (scripts/k8s-up) and restart runnerd");
	else if (code != 200)
		snprintf(off, sizeof(off), "sessions are off on the kubernetes "
		    "backend: the agent-sandbox API could not be checked at "
		    "start (%s)", why);
	if (code != 200 || !found) {
		sessions_off = off;
		log_warnx("%s", off);
		return -1;
	}
	claims_sweep();
	kube_ops.start_ms = conf->kubernetes.session_start * 1000 + EXEC_MS;
	sessbox_init(conf, &kube_ops);
	return 0;
}

/* A session message from the engine; with sessions off, the reason. */
void
kube_session_message(uint32_t type, uint64_t key, const uint8_t *data,
    size_t len)
{
	if (sessions_off == NULL && conf->runnerd.sessions_max != 0) {
		sessbox_message(type, key, data, len);
		return;
	}
	/* sessions_off: the engine runs run_shell one-shot from now on. */
	if (type == LMSG_SESSION_OPEN || type == LMSG_SESSION_CLOSE)
		engine_send(LMSG_SESSION_ENDED, key, json_pack("{s:s, s:b}",
		    "reason", sessions_off != NULL ? sessions_off :
		    "sessions are disabled here (runnerd.sessions_max is 0)",
		    "sessions_off", 1));
	else if (type == LMSG_SESSION_CALL)
		engine_send(LMSG_SESSION_REPLY, key, json_pack("{s:s}",
		    "error", "the session is not ready for a call"));
}
