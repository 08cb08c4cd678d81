/* SPDX-License-Identifier: ISC */
/*
 * One call on the kubernetes backend, in a worker process of its own:
 * the Job, then its credential as a Secret owned by the Job, its pod's
 * log followed until the end marker the Job's command writes after it
 * (kube/job.c), or, where that does not say it all, a watch on the Job
 * until it completes or fails (polling when the watch breaks) and the
 * pod's exit code; both objects deleted whatever happened.  The Job is
 * created first so that a Secret never exists without a Job that
 * sweeping would find.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "kube.h"
#include "launcher.h"
#include "output.h"
#include "log.h"

#define CRED_MAX	(64 * 1024)
#define POLL_US		200000
#define DEADLINE_GRACE	30	/* seconds the cluster gets past the Job's */
#define DELETE_TRIES	3
#define LOG_READ_TIMEOUT 30	/* seconds, a finished container's log */
/* The end line: a newline, KUBE_END_MARK, up to 3 digits, a newline. */
#define END_MAX		(sizeof(KUBE_END_MARK) + 5)

/* The pod's log as read: its head, its last bytes, what the end says. */
struct podlog {
	char		*head;		/* the first max + END_MAX bytes */
	size_t		 headlen, cap;
	char		 tail[END_MAX];	/* the last bytes */
	size_t		 taillen;
	size_t		 total;
	int		 status;	/* the end marker's, or -1 */
	size_t		 endlen;	/* the end line's length */
	int		 whole;		/* read to the stream's end or marker */
};

struct kcall {
	const struct as_config	*conf;
	struct kube_api		*api;
	char			 name[KUBE_NAME_LEN];
	char			 pod[256];	/* once its container started */
	json_t			*job;		/* its last state */
	struct podlog		 log;
	int			 watch_error;
	char			 why[512];
};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *
ns(const struct kcall *c)
{
	return c->conf->kubernetes.namespace;
}

/* "Complete" or "Failed" once the Job has finished, else NULL. */
static const char *
job_outcome(const json_t *job, const char **reason)
{
	json_t *cond;
	const char *type, *status;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(job, "status"),
	    "conditions"), i, cond) {
		type = json_string_value(json_object_get(cond, "type"));
		status = json_string_value(json_object_get(cond, "status"));
		if (type == NULL || status == NULL ||
		    strcmp(status, "True") != 0)
			continue;
		if (strcmp(type, "Complete") == 0 ||
		    strcmp(type, "Failed") == 0) {
			*reason = json_string_value(json_object_get(cond,
			    "reason"));
			return type;
		}
	}
	return NULL;
}

static int
watch_event(const char *type, json_t *obj, void *arg)
{
	struct kcall *c = arg;
	const char *reason;

	if (type != NULL && strcmp(type, "ERROR") == 0) {
		c->watch_error = 1;
		snprintf(c->why, sizeof(c->why), "watch: %s",
		    json_string_value(json_object_get(obj, "message")) ?
		    json_string_value(json_object_get(obj, "message")) :
		    "error event");
		return 1;
	}
	if (type == NULL || (strcmp(type, "ADDED") != 0 &&
	    strcmp(type, "MODIFIED") != 0))
		return 0;
	json_decref(c->job);
	c->job = json_incref(obj);
	return job_outcome(obj, &reason) != NULL;
}

/* Whole seconds from now until end (ms), at least 1. */
static int
left_s(int64_t end)
{
	int64_t s = (end - now_ms() + 999) / 1000;

	return s < 1 ? 1 : (int)s;
}

/*
 * Until the Job has finished, or end (ms): 0, or -1 when cancelled or
 * when the cluster let it run past its deadline.
 */
static int
wait_job(struct kcall *c, const char *rv, int64_t end)
{
	char path[512], why[512];
	const char *reason;
	json_t *job;
	int r;

	snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs?"
	    "watch=1&fieldSelector=metadata.name%%3D%s&resourceVersion=%s&"
	    "timeoutSeconds=%d", ns(c), c->name, rv, left_s(end));
	r = kube_watch(c->api, path, left_s(end), watch_event, c, why,
	    sizeof(why));
	if (r == 1 && !c->watch_error)
		return 0;
	if (kube_cancelled)
		return -1;
	log_warnx("%s: %s; polling instead", c->name, r == 0 ?
	    "the watch ended early" : c->watch_error ? c->why : why);
	snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs/%s",
	    ns(c), c->name);
	while (!kube_cancelled && now_ms() < end) {
		if (kube_request(c->api, "GET", path, NULL, &job, why,
		    sizeof(why)) == 200) {
			json_decref(c->job);
			c->job = job;
			if (job_outcome(job, &reason) != NULL)
				return 0;
		} else {
			log_warnx("%s: %s", c->name, why);
			json_decref(job);
		}
		usleep(POLL_US);
	}
	return -1;
}

/* The pod's name once its container has started (or already ended). */
static int
pod_event(const char *type, json_t *obj, void *arg)
{
	struct kcall *c = arg;
	json_t *state;
	const char *name;

	if (type != NULL && strcmp(type, "ERROR") == 0)
		return 1;
	if (type == NULL || (strcmp(type, "ADDED") != 0 &&
	    strcmp(type, "MODIFIED") != 0))
		return 0;
	state = json_object_get(json_array_get(json_object_get(
	    json_object_get(obj, "status"), "containerStatuses"), 0),
	    "state");
	name = json_string_value(json_object_get(json_object_get(obj,
	    "metadata"), "name"));
	if ((json_object_get(state, "running") == NULL &&
	    json_object_get(state, "terminated") == NULL) || name == NULL ||
	    strlen(name) >= sizeof(c->pod))
		return 0;
	strlcpy(c->pod, name, sizeof(c->pod));
	return 1;
}

/* Until the Job's pod has started, or end (ms): 0 when it has, else -1. */
static int
wait_pod(struct kcall *c, const char *rv, int64_t end)
{
	char path[512], why[512];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods?watch=1&"
	    "labelSelector=job-name%%3D%s&resourceVersion=%s&"
	    "timeoutSeconds=%d", ns(c), c->name, rv, left_s(end));
	if (kube_watch(c->api, path, left_s(end), pod_event, c, why,
	    sizeof(why)) == -1 && !kube_cancelled)
		log_warnx("%s: pod watch: %s", c->name, why);
	return c->pod[0] != '\0' ? 0 : -1;
}

/*
 * The end marker's status at the end of the bytes (b, len), setting
 * its line's length; -1 when they do not end with one.
 */
static int
end_status(const char *b, size_t len, size_t *endlen)
{
	static const char mark[] = "\n" KUBE_END_MARK;
	size_t i = len, digits;
	int v = 0, scale = 1;

	if (i == 0 || b[--i] != '\n')
		return -1;
	for (digits = 0; i > 0 && digits < 4 && b[i - 1] >= '0' &&
	    b[i - 1] <= '9'; digits++, i--) {
		v += (b[i - 1] - '0') * scale;
		scale *= 10;
	}
	if (digits == 0 || digits > 3 || v > 255 || i < sizeof(mark) - 1 ||
	    memcmp(b + i - (sizeof(mark) - 1), mark, sizeof(mark) - 1) != 0)
		return -1;
	*endlen = len - i + sizeof(mark) - 1;
	return v;
}

/* A piece of the log: its head and tail kept; 1 once the marker ends it. */
static int
log_piece(const char *data, size_t n, void *arg)
{
	struct podlog *l = arg;
	size_t take, keep;

	take = n < l->cap - l->headlen ? n : l->cap - l->headlen;
	memcpy(l->head + l->headlen, data, take);
	l->headlen += take;
	l->total += n;
	if (n >= END_MAX) {
		memcpy(l->tail, data + n - END_MAX, END_MAX);
		l->taillen = END_MAX;
	} else {
		keep = l->taillen + n > END_MAX ? END_MAX - n : l->taillen;
		memmove(l->tail, l->tail + l->taillen - keep, keep);
		memcpy(l->tail + keep, data, n);
		l->taillen = keep + n;
	}
	l->status = end_status(l->tail, l->taillen, &l->endlen);
	return l->status != -1;
}

/*
 * The pod's log into c->log, from its start: followed (until the end
 * marker, the container's end or end, ms) or as it is.
 */
static void
log_read(struct kcall *c, int follow, int64_t end)
{
	struct podlog *l = &c->log;
	char path[512], why[512];
	int r;

	l->headlen = l->taillen = l->total = 0;
	l->status = -1;
	l->whole = 0;
	if (l->head == NULL && (l->head = malloc(l->cap)) == NULL) {
		log_warnx("%s: log: out of memory", c->name);
		return;
	}
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/log?"
	    "container=%s%s", ns(c), c->pod, KUBE_CONTAINER, follow ?
	    "&follow=true" : "");
	r = kube_stream(c->api, path, follow ? left_s(end) : LOG_READ_TIMEOUT,
	    log_piece, l, why, sizeof(why));
	if (r == -1 && !kube_cancelled)
		log_warnx("%s: log: %s", c->name, why);
	l->whole = r != -1;
}

/* The newest pod of the Job, or NULL. */
static json_t *
job_pod(struct kcall *c)
{
	char path[512], why[512];
	json_t *list, *pod;
	size_t n;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods?"
	    "labelSelector=job-name%%3D%s", ns(c), c->name);
	if (kube_request(c->api, "GET", path, NULL, &list, why,
	    sizeof(why)) != 200) {
		log_warnx("%s: pods: %s", c->name, why);
		json_decref(list);
		return NULL;
	}
	n = json_array_size(json_object_get(list, "items"));
	pod = n > 0 ? json_incref(json_array_get(json_object_get(list,
	    "items"), n - 1)) : NULL;
	json_decref(list);
	return pod;
}

/* The log's output (the end line cut off) into r. */
static void
log_output(struct kcall *c, json_t *r)
{
	struct podlog *l = &c->log;
	size_t max = c->conf->runnerd.output_max, len;

	len = l->total - (l->status != -1 ? l->endlen : 0);
	/* A pod's log is both streams, in the order written. */
	(void)output_set(r, "stdout", l->head, len > max ? max : len);
	json_object_set_new(r, "stdout_truncated", json_boolean(len > max));
	json_object_set_new(r, "stderr_in_stdout", json_true());
}

/*
 * Exit code and status of the finished Job into r, as the kubelet
 * reports them: the authority on OOM kills and the deadline.
 */
static void
run_collect(struct kcall *c, json_t *r)
{
	const char *outcome, *reason = NULL, *term_reason, *pod_name;
	json_t *pod, *term;
	char text[512];

	outcome = job_outcome(c->job, &reason);
	if (outcome != NULL && strcmp(outcome, "Failed") == 0 &&
	    reason != NULL && strcmp(reason, "DeadlineExceeded") == 0)
		json_object_set_new(r, "status", json_string("deadline"));
	if ((pod = job_pod(c)) == NULL) {
		/* Gone with the deadline: what its log showed till then. */
		if (c->log.whole)
			log_output(c, r);
		return;
	}
	term = json_array_get(json_object_get(json_object_get(pod, "status"),
	    "containerStatuses"), 0);
	term = json_object_get(json_object_get(term, "state"), "terminated");
	if (json_is_integer(json_object_get(term, "exitCode")))
		json_object_set(r, "exit_code", json_object_get(term,
		    "exitCode"));
	term_reason = json_string_value(json_object_get(term, "reason"));
	pod_name = json_string_value(json_object_get(json_object_get(pod,
	    "metadata"), "name"));
	if (!c->log.whole && pod_name != NULL &&
	    strlcpy(c->pod, pod_name, sizeof(c->pod)) < sizeof(c->pod))
		log_read(c, 0, 0);
	if (c->log.whole)
		log_output(c, r);
	if (term_reason != NULL && strcmp(term_reason, "OOMKilled") == 0)
		json_object_set_new(r, "status", json_string("memory_limit"));
	else if (term != NULL && c->log.whole && c->log.status == -1 &&
	    strcmp(json_string_value(json_object_get(r, "status")),
	    "exited") == 0) {
		/*
		 * The container ended with no end line: its command did not
		 * return, something ended the sandbox round it.  gVisor's
		 * whole sandbox is what the kernel kills past the pod's
		 * memory limit, which the runc shim reports as this, not as
		 * OOMKilled; nothing here says it was that.
		 */
		snprintf(text, sizeof(text), "the sandbox ended before its "
		    "command did (exit code %lld, reason %s), with nothing "
		    "saying why; past the pod's memory limit the kernel ends "
		    "gVisor's whole sandbox so", (long long)json_integer_value(
		    json_object_get(term, "exitCode")), term_reason != NULL ?
		    term_reason : "none");
		json_object_set_new(r, "status", json_string("failed"));
		json_object_set_new(r, "error", json_string(text));
	}
	json_decref(pod);
}

/*
 * Until the call's end (ms): the end marker on the pod's log, or the
 * Job's end where the marker does not say it all: when there is none
 * (the sandbox ended round the command, or the log broke), when a
 * signal ended the command (the OOM killer or the deadline, which the
 * kubelet tells), and on the claim, whose directory the keeper empties
 * only once the pod can no longer write to it.  1 when the marker
 * said it, 0 when the Job ended, -1 when cancelled or past the deadline.
 */
static int
run_wait(struct kcall *c, const char *rv, int64_t end, int claim)
{
	if (wait_pod(c, rv, end) == 0) {
		log_read(c, 1, end);
		if (c->log.status != -1 && c->log.status < 128 && !claim)
			return 1;
	}
	if (kube_cancelled)
		return -1;
	return wait_job(c, rv, end);
}

/* DELETE, retried on transport errors; a 404 is as good as done. */
static int
delete(struct kube_api *api, const char *path)
{
	char why[512];
	json_t *reply;
	int i, code = -1;

	for (i = 0; i < DELETE_TRIES && code == -1; i++) {
		if (i > 0)
			usleep(POLL_US * (1 << i));
		code = kube_request(api, "DELETE", path, NULL, &reply, why,
		    sizeof(why));
		json_decref(reply);
	}
	if (code == 200 || code == 202 || code == 404)
		return 0;
	log_warnx("delete %s: %s", path, why);
	return -1;
}

/* The Secret, then the Job and its pods (Background propagation). */
static int
cleanup(const struct as_config *conf, struct kube_api *api,
    const char *name)
{
	char path[512];
	int r;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s",
	    conf->kubernetes.namespace, name);
	r = delete(api, path);
	snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs/%s?"
	    "propagationPolicy=Background", conf->kubernetes.namespace, name);
	return delete(api, path) == -1 ? -1 : r;
}

/* A result of status failed: what went wrong, and the API's words. */
static json_t *
run_failed(const char *what, const char *why)
{
	char text[1024];

	snprintf(text, sizeof(text), "%s%s%s", what, why != NULL ? ": " : "",
	    why != NULL ? why : "");
	return json_pack("{s:s, s:s}", "status", "failed", "error", text);
}

/*
 * The backend result (backend.h) of running the request's argv as call
 * id, with the egress it lists; claim: its /work is its directory on
 * terraform's claim, filled by the keeper.
 */
json_t *
kube_run(const struct as_config *conf, struct kube_api *api, uint64_t id,
    json_t *req, int credfd, int claim)
{
	struct kcall c = { .conf = conf, .api = api, .log = { .cap =
	    conf->runnerd.output_max + END_MAX, .status = -1 } };
	char path[512], why[512] = "out of memory", *cred = NULL;
	const char *uid, *rv;
	json_t *obj, *reply, *r;
	size_t credlen = 0;
	int64_t t0 = now_ms();
	int code, flags;

	kube_name(id, c.name);
	if ((flags = kube_egress(conf, json_object_get(req, "egress"), why,
	    sizeof(why))) == -1)
		return run_failed("no Job was made", why);
	if (claim)
		flags |= KUBE_JOB_CLAIM;
	if (claim && json_object_get(req, "plan_load") != NULL)
		flags |= KUBE_JOB_PLAN;
	if (json_is_true(json_object_get(req, "agent_code")))
		flags |= KUBE_JOB_AGENT_CODE;
	if (credfd != -1) {
		if ((cred = malloc(CRED_MAX)) == NULL ||
		    credential_read(credfd, cred, CRED_MAX, &credlen) == -1) {
			freezero(cred, CRED_MAX);
			return run_failed("cannot read the credential", NULL);
		}
	}
	snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs",
	    ns(&c));
	obj = kube_job(conf, id, json_object_get(req, "argv"),
	    json_object_get(req, "providers"), flags |
	    (cred != NULL ? KUBE_JOB_CRED : 0));
	if (obj == NULL) {
		reply = NULL;
		r = run_failed("no Job was made", "the provider mirror's "
		    "mounts could not be listed");
		goto out;
	}
	code = kube_request(api, "POST", path, obj, &reply, why, sizeof(why));
	json_decref(obj);
	uid = json_string_value(json_object_get(json_object_get(reply,
	    "metadata"), "uid"));
	rv = json_string_value(json_object_get(json_object_get(reply,
	    "metadata"), "resourceVersion"));
	if (code != 201 || uid == NULL || rv == NULL) {
		/* Not ours to delete if it already existed (409). */
		if (code != 409)
			cleanup(conf, api, c.name);
		r = run_failed("creating the Job", code >= 200 && code < 300 ?
		    "no uid in the answer" : why);
		goto out;
	}
	c.job = json_incref(reply);
	if (strstr(api->warning, "would violate PodSecurity") != NULL) {
		/*
		 * Pod Security admits the Job but will refuse its pods
		 * (FailedCreate events): fail now, in the API's words,
		 * rather than at the deadline.  runnerd's Jobs pass
		 * restricted, so this is a cluster that wants more.
		 */
		strlcpy(why, api->warning, sizeof(why));
		cleanup(conf, api, c.name);
		r = run_failed("the cluster refuses the Job's pods", why);
		goto out;
	}
	if (cred != NULL) {
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets",
		    ns(&c));
		obj = kube_secret(conf, id, uid, cred, credlen);
		json_decref(reply);
		reply = NULL;
		code = obj != NULL ? kube_request(api, "POST", path, obj,
		    &reply, why, sizeof(why)) : -1;
		json_decref(obj);
		if (code != 201) {
			cleanup(conf, api, c.name);
			r = run_failed("creating the credential Secret", why);
			goto out;
		}
	}
	r = json_pack("{s:s, s:i, s:n, s:s, s:s, s:b, s:b, s:{}}", "status",
	    "exited", "exit_code", -1, "signal", "stdout", "", "stderr", "",
	    "stdout_truncated", 0, "stderr_truncated", 0, "files");
	switch (run_wait(&c, rv, t0 + (conf->runnerd.timeout +
	    DEADLINE_GRACE) * 1000, claim)) {
	case 1:
		json_object_set_new(r, "exit_code", json_integer(
		    c.log.status));
		log_output(&c, r);
		break;
	case 0:
		run_collect(&c, r);
		break;
	default:
		json_object_set_new(r, "status", json_string(kube_cancelled ?
		    "killed" : "deadline"));
	}
	if (cleanup(conf, api, c.name) == -1)
		log_warnx("%s: left in the cluster; the next start sweeps it",
		    c.name);
out:
	if (cred != NULL)
		freezero(cred, CRED_MAX);
	json_decref(reply);
	json_decref(c.job);
	free(c.log.head);
	json_object_set_new(r, "duration_ms", json_integer(now_ms() - t0));
	return r;
}

/*
 * Jobs this runnerd left behind (it died mid-call), with their Secrets:
 * {"sandboxes": ["req-...", ...]}, or NULL when the cluster cannot say.
 */
json_t *
kube_sweep(const struct as_config *conf, struct kube_api *api)
{
	char path[512], why[512];
	json_t *list, *job, *md, *out;
	const char *name, *rid;
	size_t i;

	snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs?"
	    "labelSelector=app.kubernetes.io%%2Fmanaged-by%%3D%s",
	    conf->kubernetes.namespace, KUBE_MANAGED_BY);
	if (kube_request(api, "GET", path, NULL, &list, why,
	    sizeof(why)) != 200) {
		log_warnx("sweep: %s", why);
		json_decref(list);
		return NULL;
	}
	out = json_pack("{s:[]}", "sandboxes");
	json_array_foreach(json_object_get(list, "items"), i, job) {
		md = json_object_get(job, "metadata");
		name = json_string_value(json_object_get(md, "name"));
		rid = json_string_value(json_object_get(json_object_get(md,
		    "labels"), KUBE_REQID_LABEL));
		if (name == NULL || strlen(name) >= KUBE_NAME_LEN ||
		    cleanup(conf, api, name) == -1)
			continue;
		if (rid != NULL)
			json_array_append_new(json_object_get(out,
			    "sandboxes"), json_string(rid));
	}
	json_decref(list);
	return out;
}
