#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# The double's API semantics the kubernetes backend relies on: Status
# error shapes, deletion and propagationPolicy, selectors, dryRun, Job
# retries, deadlines and TTL.  Raw requests (k8s_req.py) where the exact
# JSON matters.

. "$(atf_get_srcdir)/k8s.subr"

setup()
{
	k8s_need_kubectl
	k8s_start --runner "$K8S_SRC/pod_runner.py" "$@"
	k8s_namespaces
	ADMIN=$(cat admin.token)
}

# req OUT ARGS: k8s_req.py as the admin; the code and body in OUT.
req()
{
	out=$1
	shift
	python3 "$K8S_REQ" -t "$ADMIN" "$@" > "$out" ||
	    atf_fail "request failed: $*"
}

# same ACTUAL EXPECTED (atf_check_equal evaluates its arguments)
same()
{
	[ "$1" = "$2" ] || atf_fail "got: $1
expected: $2"
}

# matches ERE STRING
matches()
{
	printf '%s\n' "$2" | grep -Eq -- "$1" || atf_fail "'$2' !~ /$1/"
}

# status FILE: the Status in a k8s_req.py answer, one canonical line.
status()
{
	python3 -c '
import json, sys
lines = open(sys.argv[1]).read().split("\n", 1)
b = json.loads(lines[1])
assert b["kind"] == "Status" and b["apiVersion"] == "v1", b
assert b["status"] == "Failure" and b["metadata"] == {}, b
assert b["code"] == int(lines[0]), b
print(b["code"], b["reason"], b["message"],
      json.dumps(b.get("details"), sort_keys=True))' "$1"
}

atf_test_case status_shapes cleanup
status_shapes_head()
{
	atf_set "descr" "404, 409, 422, 403, 401, 405 and 400 are " \
	    "Kubernetes Status objects with the API server's wording; " \
	    "and so are PATCH's routing failures, 406 and 415"
	atf_set "timeout" "240"
}
status_shapes_body()
{
	setup
	J=/apis/batch/v1/namespaces/demo-app/jobs
	req r GET $J/nope
	same "$(status r)" '404 NotFound jobs.batch "nope" not found {"group": "batch", "kind": "jobs", "name": "nope"}'

	python3 "$K8S_SRC/mkjob.py" twice > twice.json
	req r POST $J twice.json
	atf_check -o inline:"201\n" head -1 r
	req r POST $J twice.json
	same "$(status r)" '409 AlreadyExists jobs.batch "twice" already exists {"group": "batch", "kind": "jobs", "name": "twice"}'

	# Field errors: the cause's message without the field, which is
	# beside it; several are joined in brackets in the Status message.
	python3 "$K8S_SRC/mkjob.py" always restart-always > always.json
	req r POST $J always.json
	same "$(status r)" '422 Invalid Job.batch "always" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never" {"causes": [{"field": "spec.template.spec.restartPolicy", "message": "Required value: valid values: \"OnFailure\", \"Never\"", "reason": "FieldValueRequired"}], "group": "batch", "kind": "Job", "name": "always"}'
	python3 "$K8S_SRC/mkjob.py" unset no-restart-policy > unset.json
	req r POST $J unset.json
	matches '^422 Invalid Job.batch "unset" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never" ' \
	    "$(status r)"
	python3 "$K8S_SRC/mkjob.py" odd restart-sometimes > odd.json
	req r POST $J odd.json
	same "$(status r)" '422 Invalid Job.batch "odd" is invalid: [spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never", spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "OnFailure", "Never"] {"causes": [{"field": "spec.template.spec.restartPolicy", "message": "Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"", "reason": "FieldValueNotSupported"}, {"field": "spec.template.spec.restartPolicy", "message": "Unsupported value: \"Sometimes\": supported values: \"OnFailure\", \"Never\"", "reason": "FieldValueNotSupported"}], "group": "batch", "kind": "Job", "name": "odd"}'

	# Validation comes before Pod Security: privileged with
	# allowPrivilegeEscalation false is invalid.
	python3 "$K8S_SRC/mkjob.py" priv privileged > priv.json
	req r POST $J priv.json
	same "$(status r)" '422 Invalid Job.batch "priv" is invalid: spec.template.spec.containers[0].securityContext: Invalid value: core.SecurityContext{...}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true {"causes": [{"field": "spec.template.spec.containers[0].securityContext", "message": "Invalid value: core.SecurityContext{...}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true", "reason": "FieldValueInvalid"}], "group": "batch", "kind": "Job", "name": "priv"}'

	echo '{"metadata":{"name":"Bad_Name"},"data":{"k":"dg=="}}' > s.json
	req r POST /api/v1/namespaces/demo-app/secrets s.json
	same "$(status r)" '422 Invalid Secret "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '"'-' or '.', and must start and end with an alphanumeric character"' {"causes": [{"field": "metadata.name", "message": "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '"'-' or '.', and must start and end with an alphanumeric character"'", "reason": "FieldValueInvalid"}], "kind": "Secret", "name": "Bad_Name"}'
	# A real NotFound leaves the core group's "" out of its details.
	req r POST /api/v1/namespaces/nowhere/secrets s.json
	same "$(status r)" '404 NotFound namespaces "nowhere" not found {"kind": "namespaces", "name": "nowhere"}'
	# Bad base64 fails while the body is decoded: before validation, and
	# before the namespace is looked up.
	for ns in demo-app nowhere; do
		echo '{"metadata":{"name":"Bad_Name"},"data":{"k":"%%%"}}' > s.json
		req r POST /api/v1/namespaces/$ns/secrets s.json
		same "$(status r)" '400 BadRequest Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0 null'
	done
	echo '{"metadata":{"name":"s"},"data":{"k":"dmFs","l":"dmFsdWU"}}' > s.json
	req r POST /api/v1/namespaces/demo-app/secrets s.json
	matches '^400 BadRequest .*: illegal base64 data at input byte 4 null$' \
	    "$(status r)"

	tok=$(k8s_pod_reader demo-app)
	python3 "$K8S_REQ" -t "$tok" DELETE $J/twice > r
	same "$(status r)" '403 Forbidden jobs.batch "twice" is forbidden: User "system:serviceaccount:demo-app:pod-reader" cannot delete resource "jobs" in API group "batch" in the namespace "demo-app" {"group": "batch", "kind": "jobs", "name": "twice"}'

	python3 "$K8S_REQ" -t nonsense GET $J > r
	same "$(status r)" '401 Unauthorized Unauthorized null'

	# PATCH is routed by its Content-Type: none and no body is 406, a
	# body that is not a patch type 415, with empty details.
	req r PATCH $J/twice
	same "$(status r)" '406 NotAcceptable 406: Not Acceptable {}'
	echo '{"metadata":{"labels":{"a":"b"}}}' > p.json
	req r PATCH $J/twice p.json
	same "$(status r)" '415 UnsupportedMediaType 415: Unsupported Media Type {}'
	req r -H "Content-Type: application/merge-patch+json" PATCH $J/twice
	same "$(status r)" '400 BadRequest Invalid JSON Patch null'
	echo 'not json' > garbage.json
	req r -H "Content-Type: application/merge-patch+json" PATCH $J/twice garbage.json
	same "$(status r)" '400 BadRequest Invalid JSON Patch null'
	echo '[1]' > array.json
	req r -H "Content-Type: application/merge-patch+json" PATCH $J/twice array.json
	same "$(status r)" '422 Invalid  "" is invalid: patch: Invalid value: "[1]": couldn'"'"'t get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" } {"causes": [{"field": "patch", "message": "Invalid value: \"[1]\": couldn'"'"'t get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }", "reason": "FieldValueInvalid"}]}'
	req r PUT $J/twice p.json
	same "$(status r)" '405 MethodNotAllowed the server does not allow this method on the requested resource null'

	req r GET "$J?labelSelector=a%20in%20(b"
	matches '^400 BadRequest unable to parse requirement' \
	    "$(status r)"
	req r GET /apis/batch/v2/jobs
	matches '^404 NotFound the server could not find the requested resource' \
	    "$(status r)"
}
status_shapes_cleanup()
{
	k8s_stop
}

# pods_of JOB: the names of the pods labelled job-name=JOB, on one line.
pods_of()
{
	kubectl get pods -n demo-app -l job-name="$1" -o name | tr '\n' ' '
}

atf_test_case delete_propagation cleanup
delete_propagation_head()
{
	atf_set "descr" "a Job deleted without propagationPolicy keeps its " \
	    "pod (with the API server's warning); Background removes it"
	atf_set "timeout" "60"
}
delete_propagation_body()
{
	setup
	J=/apis/batch/v1/namespaces/demo-app/jobs
	for j in kept gone; do
		python3 "$K8S_SRC/mkjob.py" $j > $j.json
		atf_check -o ignore kubectl create --validate=false -f $j.json
		atf_check -o ignore kubectl wait --for=condition=complete \
		    job/$j -n demo-app --timeout=20s
	done
	atf_check -o match:'^200$' \
	    -e match:'child pods are preserved by default when jobs are deleted' \
	    python3 "$K8S_REQ" -t "$ADMIN" DELETE $J/kept
	matches '^pod/kept-' "$(pods_of kept)"
	atf_check -o empty kubectl get pods -n demo-app -l job-name=kept \
	    -o jsonpath='{.items[0].metadata.ownerReferences}'
	echo '{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}' > bg.json
	atf_check -o match:'^200$' -e empty \
	    python3 "$K8S_REQ" -t "$ADMIN" DELETE $J/gone bg.json
	same "$(pods_of gone)" ""
}
delete_propagation_cleanup()
{
	k8s_stop
}

atf_test_case sweep_by_label cleanup
sweep_by_label_head()
{
	atf_set "descr" "deletecollection with a labelSelector removes " \
	    "exactly the labelled Jobs, their pods and Secrets (the orphan sweep)"
	atf_set "timeout" "60"
}
sweep_by_label_body()
{
	setup
	for j in a b; do
		python3 "$K8S_SRC/mkjob.py" $j > $j.json
		atf_check -o ignore kubectl create --validate=false -f $j.json
	done
	echo '{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s-a","namespace":"demo-app","labels":{"agent-sandbox/request-id":"req-0000000000000061"}},"stringData":{"k":"v"}}' > sa.json
	atf_check -o ignore kubectl create --validate=false -f sa.json
	atf_check -o ignore kubectl wait --for=condition=complete job/a job/b \
	    -n demo-app --timeout=20s
	sel="agent-sandbox/request-id=req-0000000000000061"
	atf_check -o ignore kubectl delete jobs,secrets -n demo-app -l "$sel"
	atf_check -o inline:"job.batch/b\n" kubectl get jobs -n demo-app -o name
	same "$(pods_of a)" ""
	matches '^pod/b-' "$(pods_of b)"
	atf_check -e match:'No resources found' kubectl get secrets -n demo-app
	atf_check -o inline:"job.batch/b\n" kubectl get jobs -n demo-app \
	    -l 'agent-sandbox/request-id notin (req-0000000000000061)' -o name
	atf_check -o inline:"job.batch/b\n" kubectl get jobs -n demo-app \
	    --field-selector metadata.name=b -o name
}
sweep_by_label_cleanup()
{
	k8s_stop
}

atf_test_case dry_run_changes_nothing cleanup
dry_run_changes_nothing_head()
{
	atf_set "descr" "dryRun=All validates and warns but stores nothing"
	atf_set "timeout" "60"
}
dry_run_changes_nothing_body()
{
	setup
	python3 "$K8S_SRC/mkjob.py" dry > dry.json
	atf_check -o match:'created \(server dry run\)' \
	    kubectl create --validate=false --dry-run=server -f dry.json
	python3 "$K8S_SRC/mkjob.py" drywarn no-seccomp > drywarn.json
	atf_check -o match:'created \(server dry run\)' \
	    -e match:'Warning: would violate PodSecurity' \
	    kubectl create --validate=false --dry-run=server -f drywarn.json
	python3 "$K8S_SRC/mkjob.py" drybad privileged > drybad.json
	atf_check -s exit:1 -e match:'cannot set `allowPrivilegeEscalation`' \
	    kubectl create --validate=false --dry-run=server -f drybad.json
	atf_check -e match:'No resources found' kubectl get jobs,events \
	    -n demo-app
}
dry_run_changes_nothing_cleanup()
{
	k8s_stop
}

atf_test_case job_retries_deadline_ttl cleanup
job_retries_deadline_ttl_head()
{
	atf_set "descr" "backoffLimit retries a failing pod, " \
	    "activeDeadlineSeconds kills a slow one, ttlSecondsAfterFinished " \
	    "deletes a finished Job and its pods"
	atf_set "timeout" "60"
}
job_retries_deadline_ttl_body()
{
	setup
	COMMAND='echo failing; exit 3' python3 "$K8S_SRC/mkjob.py" \
	    retry backoff-1 > retry.json
	COMMAND='sleep 30' python3 "$K8S_SRC/mkjob.py" slow deadline-1 \
	    > slow.json
	python3 "$K8S_SRC/mkjob.py" brief ttl-1 > brief.json
	for j in retry slow brief; do
		atf_check -o ignore kubectl create --validate=false -f $j.json
	done
	atf_check -o ignore kubectl wait --for=condition=failed job/retry \
	    job/slow -n demo-app --timeout=20s
	atf_check -o inline:"BackoffLimitExceeded 2" kubectl get job retry \
	    -n demo-app -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason} {.status.failed}'
	matches '^pod/retry-[a-z0-9]+ pod/retry-[a-z0-9]+ $' "$(pods_of retry)"
	atf_check -o match:'exitCode":3' -x \
	    "kubectl get pods -n demo-app -l job-name=retry -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated}'"
	atf_check -o inline:"DeadlineExceeded" kubectl get job slow \
	    -n demo-app -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason}'
	same "$(pods_of slow)" ""
	atf_check -o ignore kubectl wait --for=delete job/brief -n demo-app \
	    --timeout=20s
	same "$(pods_of brief)" ""
}
job_retries_deadline_ttl_cleanup()
{
	k8s_stop
}

atf_test_case patch_job cleanup
patch_job_head()
{
	atf_set "descr" "a Job takes merge, strategic merge and JSON patches " \
	    "(kubectl patch, annotate): labels, annotations, spec.suspend " \
	    "(its pod goes, none comes back until resumed); its template " \
	    "is immutable; a stale resourceVersion conflicts"
	atf_set "timeout" "120"
}
patch_job_body()
{
	setup
	J=/apis/batch/v1/namespaces/demo-app/jobs
	COMMAND='sleep 30' python3 "$K8S_SRC/mkjob.py" p > p.json
	atf_check -o ignore kubectl create --validate=false -f p.json
	atf_check -o ignore kubectl wait --for=condition=ready pod \
	    -l job-name=p -n demo-app --timeout=20s
	atf_check -o inline:"job.batch/p patched\n" kubectl patch job p \
	    -n demo-app --type merge -p '{"metadata":{"labels":{"tier":"x"}}}'
	atf_check -o inline:"job.batch/p annotated\n" \
	    kubectl annotate job p -n demo-app note=kept
	atf_check -o inline:"job.batch/p patched\n" kubectl patch job p \
	    -n demo-app -p '{"spec":{"suspend":true}}'
	atf_check -o ignore kubectl wait --for=condition=suspended job/p \
	    -n demo-app --timeout=20s
	atf_check -o inline:"x kept true 2\n" kubectl get job p -n demo-app \
	    -o jsonpath='{.metadata.labels.tier} {.metadata.annotations.note} {.spec.suspend} {.metadata.generation}{"\n"}'
	sleep 0.5
	same "$(pods_of p)" ""
	# The template cannot change; a patch that names an older
	# resourceVersion is refused.
	echo '{"spec":{"template":{"spec":{"restartPolicy":"OnFailure"}}}}' > t.json
	req r -H "Content-Type: application/merge-patch+json" PATCH $J/p t.json
	same "$(status r)" '422 Invalid Job.batch "p" is invalid: spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable {"causes": [{"field": "spec.template", "message": "Invalid value: core.PodTemplateSpec{...}: field is immutable", "reason": "FieldValueInvalid"}], "group": "batch", "kind": "Job", "name": "p"}'
	echo '{"metadata":{"resourceVersion":"2","labels":{"a":"b"}}}' > v.json
	req r -H "Content-Type: application/merge-patch+json" PATCH $J/p v.json
	same "$(status r)" '409 Conflict Operation cannot be fulfilled on jobs.batch "p": the object has been modified; please apply your changes to the latest version and try again {"group": "batch", "kind": "jobs", "name": "p"}'
	echo '[{"op":"test","path":"/spec/suspend","value":true},{"op":"replace","path":"/spec/suspend","value":false},{"op":"remove","path":"/metadata/labels/tier"}]' > j.json
	req r -H "Content-Type: application/json-patch+json" PATCH $J/p j.json
	atf_check -o inline:"200\n" head -1 r
	atf_check -o ignore kubectl wait --for=condition=ready pod \
	    -l job-name=p -n demo-app --timeout=20s
	atf_check -o inline:"tier=[] false\n" kubectl get job p -n demo-app \
	    -o jsonpath='tier=[{.metadata.labels.tier}] {.spec.suspend}{"\n"}'
	echo '[{"op":"replace","path":"/spec/nothing/here","value":1}]' > bad.json
	req r -H "Content-Type: application/json-patch+json" PATCH $J/p bad.json
	same "$(status r)" '422 Invalid the server rejected our request due to an error in our request {}'
}
patch_job_cleanup()
{
	k8s_stop
}

atf_init_test_cases()
{
	atf_add_test_case status_shapes
	atf_add_test_case patch_job
	atf_add_test_case delete_propagation
	atf_add_test_case sweep_by_label
	atf_add_test_case dry_run_changes_nothing
	atf_add_test_case job_retries_deadline_ttl
}
