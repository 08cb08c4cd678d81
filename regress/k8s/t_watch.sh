#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Watching Jobs on the double: newline-delimited events up to the Job's
# completion, resuming from a resourceVersion, 410 Gone (an ERROR event)
# for one older than the resource's kept history, and the fault that cuts
# a watch mid-stream.

. "$(atf_get_srcdir)/k8s.subr"

J=/apis/batch/v1/namespaces/demo-app/jobs

setup()
{
	k8s_need_kubectl
	k8s_start --runner "$K8S_SRC/pod_runner.py" "$@"
	k8s_namespaces
	ADMIN=$(cat admin.token)
}

atf_test_case watch_until_complete cleanup
watch_until_complete_head()
{
	atf_set "descr" "a watch on one Job sees it added, running and " \
	    "complete, and ends cleanly at timeoutSeconds"
	atf_set "timeout" "60"
}
watch_until_complete_body()
{
	setup
	python3 "$K8S_REQ" -t "$ADMIN" GET \
	    "$J?watch=1&fieldSelector=metadata.name%3Dw&timeoutSeconds=10" \
	    > w.out &
	pid=$!
	sleep 0.5
	COMMAND='sleep 0.5' python3 "$K8S_SRC/mkjob.py" w > w.json
	python3 "$K8S_SRC/mkjob.py" other > other.json
	atf_check -o ignore kubectl create --validate=false -f other.json
	atf_check -o ignore kubectl create --validate=false -f w.json
	wait $pid || atf_fail "the watch did not end cleanly"
	atf_check -o match:'^200$' head -1 w.out
	atf_check -o inline:"ADDED Job \nMODIFIED Job \nMODIFIED Job \nMODIFIED Job  SuccessCriteriaMet Complete\n" \
	    python3 "$K8S_SRC/watch_events.py" w.out
}
watch_until_complete_cleanup()
{
	k8s_stop
}

atf_test_case watch_resumes_and_expires cleanup
watch_resumes_and_expires_head()
{
	atf_set "descr" "a watch from a list's resourceVersion gets what " \
	    "changed since; churn on another resource does not expire it " \
	    "(history is per resource); one older than its own resource's " \
	    "kept history gets an ERROR event with a 410 Expired Status"
	atf_set "timeout" "120"
}
watch_resumes_and_expires_body()
{
	setup --events-kept 12
	rv=$(python3 "$K8S_REQ" -t "$ADMIN" GET $J | sed 1d | python3 -c \
	    'import json, sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')
	python3 "$K8S_SRC/mkjob.py" later > later.json
	atf_check -o ignore kubectl create --validate=false -f later.json
	atf_check -o ignore kubectl wait --for=condition=complete job/later \
	    -n demo-app --timeout=20s
	python3 "$K8S_REQ" -t "$ADMIN" GET \
	    "$J?watch=1&resourceVersion=$rv&timeoutSeconds=1" > w.out ||
	    atf_fail "the watch failed"
	atf_check -o match:'^ADDED Job' -o match:'Complete$' python3 "$K8S_SRC/watch_events.py" w.out
	# Churn on ServiceAccounts, past what is kept: the Jobs' watch from
	# the old version still resumes.
	for i in $(seq 15); do
		atf_check -o ignore kubectl create serviceaccount "sa$i" \
		    -n demo-app
	done
	python3 "$K8S_REQ" -t "$ADMIN" GET \
	    "$J?watch=1&resourceVersion=$rv&timeoutSeconds=1" > w.out ||
	    atf_fail "the watch failed"
	atf_check -o match:'^ADDED Job' -o not-match:'^ERROR' python3 "$K8S_SRC/watch_events.py" w.out
	# Churn on Jobs (annotate PATCHes one) expires it.
	for i in $(seq 13); do
		atf_check -o ignore kubectl annotate job later -n demo-app \
		    --overwrite "n=$i"
	done
	python3 "$K8S_REQ" -t "$ADMIN" GET \
	    "$J?watch=1&resourceVersion=$rv" > gone.out
	atf_check -o match:'^200$' head -1 gone.out
	atf_check -o inline:'ERROR Status 410\n' python3 "$K8S_SRC/watch_events.py" gone.out
	atf_check -o match:'"reason": "Expired"' \
	    -o match:"too old resource version: $rv \\([0-9]+\\)" cat gone.out
}
watch_resumes_and_expires_cleanup()
{
	k8s_stop
}

atf_test_case watch_cut_midway cleanup
watch_cut_midway_head()
{
	atf_set "descr" "the watch-close fault ends the stream after N " \
	    "events without the final chunk: the client sees a broken " \
	    "transfer, not a clean end"
	atf_set "timeout" "60"
}
watch_cut_midway_body()
{
	setup
	COMMAND='sleep 5' python3 "$K8S_SRC/mkjob.py" cut > cut.json
	atf_check -o ignore kubectl create --validate=false -f cut.json
	k8s_fault "watch-close 1 path=/jobs"
	atf_check -s exit:1 -e match:'^k8s_req: ' -o save:cut.out \
	    python3 "$K8S_REQ" -t "$ADMIN" GET "$J?watch=1"
	atf_check -o inline:"ADDED Job \n" python3 "$K8S_SRC/watch_events.py" cut.out
	# Other requests are untouched, and the Job goes on.
	atf_check -o ignore kubectl wait --for=condition=complete job/cut \
	    -n demo-app --timeout=20s
	k8s_fault ""
	atf_check -o match:'Complete' -x \
	    "python3 '$K8S_REQ' -t '$ADMIN' GET '$J?watch=1&timeoutSeconds=1'"
}
watch_cut_midway_cleanup()
{
	k8s_stop
}

atf_init_test_cases()
{
	atf_add_test_case watch_until_complete
	atf_add_test_case watch_resumes_and_expires
	atf_add_test_case watch_cut_midway
}
