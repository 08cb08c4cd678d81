/* SPDX-License-Identifier: ISC */
/*
 * k8s_get_pod_status(namespace): kubectl get pods in the sandbox with
 * the pod-reader credential brokerd issued for exactly that namespace,
 * and the pods as structured content.  The same script runs on both
 * backends: the credential file (brokerd.8: JSON with token, server,
 * ca) is turned into a kubeconfig in /tmp by the shell's builtins, so
 * that the token appears in no argv and kubectl needs no environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runnerd.h"

#define CRED_FILE	"/run/secrets/credential"

static const char pod_status_script[] =
    "umask 077; export HOME=/tmp; c=" CRED_FILE "; k=/tmp/kubeconfig; "
    "j() { sed -n \"s/.*\\\"$1\\\":\\\"\\([^\\\"]*\\)\\\".*/\\1/p\" \"$c\"; }; "
    "printf '%b' \"$(j ca)\" >/tmp/ca.crt; "
    "if [ -s /tmp/ca.crt ]; then ca=', certificate-authority: /tmp/ca.crt'; "
    "else ca=; fi; "
    "printf 'apiVersion: v1\\nkind: Config\\nclusters:\\n- name: c\\n"
    "  cluster: {server: \"%s\"%s}\\nusers:\\n- name: u\\n"
    "  user: {token: \"%s\"}\\ncontexts:\\n- name: x\\n"
    "  context: {cluster: c, user: u}\\ncurrent-context: x\\n' "
    "\"$(j server)\" \"$ca\" \"$(j token)\" >\"$k\" || exit 1; "
    "exec kubectl --kubeconfig=\"$k\" get pods -n \"$1\" -o json";

/* The sandbox's command; the namespace is an argument, never code. */
json_t *
k8s_argv(const json_t *args)
{
	return json_pack("[s, s, s, s, O]", "/bin/sh", "-c",
	    pod_status_script, "k8s_get_pod_status", json_object_get(args,
	    "namespace"));
}

/* kubectl's way: the largest unit, 90s and 2m59s being "90s" and "2m". */
static void
age_text(long s, char *buf, size_t len)
{
	if (s < 0)
		snprintf(buf, len, "<unknown>");
	else if (s < 120)
		snprintf(buf, len, "%lds", s);
	else if (s < 2 * 3600)
		snprintf(buf, len, "%ldm", s / 60);
	else if (s < 2 * 86400)
		snprintf(buf, len, "%ldh", s / 3600);
	else
		snprintf(buf, len, "%ldd", s / 86400);
}

static long
age_seconds(const char *ts, time_t now)
{
	struct tm tm;
	char *end;

	memset(&tm, 0, sizeof(tm));
	if (ts == NULL || (end = strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm)) ==
	    NULL)
		return -1;
	return (long)(now - timegm(&tm));
}

static json_t *
pod_summary(const json_t *pod, time_t now)
{
	const json_t *cs, *st = json_object_get(pod, "status");
	char ready[32], age[32];
	json_int_t restarts = 0;
	size_t i, nready = 0, n;
	long secs;

	n = json_array_size(json_object_get(json_object_get(pod, "spec"),
	    "containers"));
	json_array_foreach(json_object_get(st, "containerStatuses"), i, cs) {
		nready += json_is_true(json_object_get(cs, "ready"));
		restarts += json_integer_value(json_object_get(cs,
		    "restartCount"));
	}
	snprintf(ready, sizeof(ready), "%zu/%zu", nready, n);
	secs = age_seconds(json_string_value(json_object_get(json_object_get(
	    pod, "metadata"), "creationTimestamp")), now);
	age_text(secs, age, sizeof(age));
	return json_pack("{s:O, s:s, s:b, s:s, s:I, s:s, s:I}",
	    "name", json_object_get(json_object_get(pod, "metadata"), "name"),
	    "phase", json_string_value(json_object_get(st, "phase")) ?
	    json_string_value(json_object_get(st, "phase")) : "Unknown",
	    "ready", n > 0 && nready == n, "ready_containers", ready,
	    "restarts", restarts, "age", age, "age_seconds",
	    (json_int_t)secs);
}

/* A table as kubectl prints it, for whoever reads the text. */
static char *
pod_table(const char *ns, const json_t *pods)
{
	const json_t *p;
	char *text = NULL, *line;
	size_t i;

	if (asprintf(&text, "%-40s %-7s %-10s %-8s %s\n", "NAME", "READY",
	    "STATUS", "RESTARTS", "AGE") == -1)
		return NULL;
	json_array_foreach(pods, i, p) {
		line = text;
		if (asprintf(&text, "%s%-40s %-7s %-10s %-8lld %s\n", line,
		    json_string_value(json_object_get(p, "name")),
		    json_string_value(json_object_get(p, "ready_containers")),
		    json_string_value(json_object_get(p, "phase")),
		    (long long)json_integer_value(json_object_get(p,
		    "restarts")), json_string_value(json_object_get(p,
		    "age"))) == -1)
			text = NULL;
		free(line);
		if (text == NULL)
			return NULL;
	}
	if (json_array_size(pods) == 0) {
		free(text);
		if (asprintf(&text, "No resources found in %s namespace.\n",
		    ns) == -1)
			return NULL;
	}
	return text;
}

json_t *
k8s_result(struct call *k, json_t *r)
{
	const char *status, *out, *ns;
	json_t *list, *pods, *item, *res, *why;
	char *text;
	size_t i;
	time_t now = time(NULL);

	ns = json_string_value(json_object_get(k->args, "namespace"));
	status = json_string_value(json_object_get(r, "status"));
	out = json_string_value(json_object_get(r, "stdout"));
	list = status != NULL && strcmp(status, "exited") == 0 &&
	    json_integer_value(json_object_get(r, "exit_code")) == 0 &&
	    out != NULL ? json_loads(out, 0, NULL) : NULL;
	if (!json_is_array(json_object_get(list, "items"))) {
		json_decref(list);
		why = run_text(json_object_get(r, "stdout"),
		    json_object_get(r, "stderr"), status != NULL &&
		    strcmp(status, "exited") != 0 ? status_text(status) :
		    "kubectl did not list the pods");
		return text_result_json(1, why != NULL ? why :
		    json_string("kubectl failed"), json_pack("{s:s, s:[]}",
		    "namespace", ns, "pods"));
	}
	pods = json_array();
	json_array_foreach(json_object_get(list, "items"), i, item)
		json_array_append_new(pods, pod_summary(item, now));
	json_decref(list);
	text = pod_table(ns, pods);
	res = text_result(0, text != NULL ? text : "", json_pack("{s:s, s:o}",
	    "namespace", ns, "pods", pods));
	free(text);
	return res;
}
