#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# runnerd's kubernetes backend when the API server fails: down, 403 on
# the Job or on the Secret, 409, Pod Security refusing the Job's pods, a
# watch cut mid-way.  Each call ends
# with a clear error (or, for the watch, falls back to polling and
# succeeds) and no Job or Secret is left behind.

. "$(atf_get_srcdir)/k8s.subr"
. "$(atf_get_srcdir)/kb.subr"

# fails FAULT REGEX [peers options]: the call fails, its error matches.
fails()
{
	fault=$1
	want=$2
	shift 2
	kb_cluster
	kb_runnerd "$@"
	k8s_fault "$fault"
	kb_call 'echo should not run' > r.json
	k8s_fault ""
	atf_check -o match:"$want" python3 -c '
import json; r = json.load(open("r.json")); s = r["structuredContent"]
assert r["isError"] and s["status"] == "failed", r
print(s["error"])'
	kb_left > left
	atf_check -o empty cat left
}

fault_case()
{
	eval "atf_test_case $1 cleanup
	$1_head() { atf_set descr \"$2\"; atf_set timeout 120; }
	$1_body() { fails $3; }
	$1_cleanup() { kb_stop; }"
	CASES="$CASES $1"
}

fault_case api_down "the API server closes the connection: a clear error" \
    "'down path=/jobs method=POST' 'creating the Job: Kubernetes API https://127.0.0.1:[0-9]+: '"
fault_case forbidden "403 on the Job: the API server's words" \
    "'403 path=/jobs method=POST' 'creating the Job: Kubernetes API: HTTP 403 Forbidden: jobs.batch is forbidden'"
fault_case forbidden_secret "403 on the Secret: the Job is deleted again" \
    "'403 path=/secrets method=POST' 'creating the credential Secret: Kubernetes API: HTTP 403 Forbidden' --secret s3"
fault_case pods_refused "Pod Security would refuse the Job's pods (a warning on the Job): a clear error at once, not at the deadline" \
    "'podsecurity path=/jobs method=POST' 'the cluster refuses the Job.s pods: would violate PodSecurity .restricted:latest.: '"
fault_case conflict "409 on create: AlreadyExists, and nothing of another's is deleted" \
    "'409 method=POST' 'creating the Job: Kubernetes API: HTTP 409 AlreadyExists'"

atf_test_case api_gone cleanup
api_gone_head()
{
	atf_set "descr" "no API server at all: a clear error, runnerd stays up"
	atf_set "timeout" "120"
}
api_gone_body()
{
	kb_cluster
	kb_runnerd
	k8s_stop
	kb_call 'echo should not run' > r.json
	atf_check -o match:"creating the Job: Kubernetes API https://127.0.0.1:[0-9]+: (Couldn't connect|Could not connect)" \
	    python3 -c '
import json; print(json.load(open("r.json"))["structuredContent"]["error"])'
	kill -0 "$(cat runnerd.pid)" || atf_fail "runnerd died"
}
api_gone_cleanup()
{
	kb_stop
}

atf_test_case watch_closed cleanup
watch_closed_head()
{
	atf_set "descr" "a watch cut mid-way: runnerd polls and the call succeeds"
	atf_set "timeout" "120"
}
watch_closed_body()
{
	kb_cluster
	kb_runnerd
	k8s_fault "watch-close 1"
	kb_call 'sleep 1; echo finished' > r.json
	k8s_fault ""
	atf_check -o inline:'finished\n|0\n' python3 -c '
import json; s = json.load(open("r.json"))["structuredContent"]
print("%s|%d" % (s["stdout"], s["exit_code"]))'
	atf_check -o match:'polling instead' cat runnerd.log
	kb_left > left
	atf_check -o empty cat left
}
watch_closed_cleanup()
{
	kb_stop
}

atf_init_test_cases()
{
	for c in $CASES api_gone watch_closed; do
		atf_add_test_case "$c"
	done
}
