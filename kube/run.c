/* SPDX-License-Identifier: ISC */
/*
 * One call on the kubernetes backend, in a worker process of its own:
 * the Job, then its credential as a Secret owned by the Job, a watch on
 * the Job until it completes or fails (polling when the watch breaks),
 * the pod's exit code and log, and both objects deleted whatever
 * happened.  The Job is created first so that a Secret never exists
 * without a Job that sweeping would find.
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

struct kcall {
	const struct as_config	*conf;
	struct kube_api		*api;
	char			 name[KUBE_NAME_LEN];
	json_t			*job;		/* its last state */
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

/*
 * Until the Job has finished: 0, or -1 when cancelled or when the
 * cluster let it run past its deadline.
 */
static int
wait_job(struct kcall *c, const char *rv)
{
	char path[512], why[512];
	const char *reason;
	json_t *job;
	int64_t end;
	int r;

	end = now_ms() + (c->conf->runnerd.timeout + DEADLINE_GRACE) * 1000;
	snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs?"
	    "watch=1&fieldSelector=metadata.name%%3D%s&resourceVersion=%s&"
	    "timeoutSeconds=%ld", ns(c), c->name, rv,
	    c->conf->runnerd.timeout + DEADLINE_GRACE);
	r = kube_watch(c->api, path, c->conf->runnerd.timeout +
	    DEADLINE_GRACE, watch_event, c, why, sizeof(why));
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

/* Exit code, output and status of the finished Job into r. */
static void
run_collect(struct kcall *c, json_t *r)
{
	const char *outcome, *reason = NULL, *term_reason, *pod_name;
	json_t *pod, *term;
	char path[512], why[512], *log;
	size_t len = 0, max = c->conf->runnerd.output_max;

	outcome = job_outcome(c->job, &reason);
	if (outcome != NULL && strcmp(outcome, "Failed") == 0 &&
	    reason != NULL && strcmp(reason, "DeadlineExceeded") == 0)
		json_object_set_new(r, "status", json_string("deadline"));
	if ((pod = job_pod(c)) == NULL)
		return;
	term = json_array_get(json_object_get(json_object_get(pod, "status"),
	    "containerStatuses"), 0);
	term = json_object_get(json_object_get(term, "state"), "terminated");
	if (json_is_integer(json_object_get(term, "exitCode")))
		json_object_set(r, "exit_code", json_object_get(term,
		    "exitCode"));
	term_reason = json_string_value(json_object_get(term, "reason"));
	if (term_reason != NULL && strcmp(term_reason, "OOMKilled") == 0)
		json_object_set_new(r, "status", json_string("memory_limit"));
	pod_name = json_string_value(json_object_get(json_object_get(pod,
	    "metadata"), "name"));
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/log?"
	    "container=%s&limitBytes=%zu", ns(c), pod_name ? pod_name : "",
	    KUBE_CONTAINER, max + 1);
	if ((log = kube_get_text(c->api, path, max + 1, &len, why,
	    sizeof(why))) == NULL)
		log_warnx("%s: log: %s", c->name, why);
	else {
		/* A pod's log is both streams, in the order written. */
		(void)output_set(r, "stdout", log, len > max ? max : len);
		json_object_set_new(r, "stdout_truncated", json_boolean(len >
		    max));
		json_object_set_new(r, "stderr_in_stdout", json_true());
		free(log);
	}
	json_decref(pod);
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
	struct kcall c = { .conf = conf, .api = api };
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
	if (wait_job(&c, rv) == -1)
		json_object_set_new(r, "status", json_string(kube_cancelled ?
		    "killed" : "deadline"));
	else
		run_collect(&c, r);
	if (cleanup(conf, api, c.name) == -1)
		log_warnx("%s: left in the cluster; the next start sweeps it",
		    c.name);
out:
	if (cred != NULL)
		freezero(cred, CRED_MAX);
	json_decref(reply);
	json_decref(c.job);
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
