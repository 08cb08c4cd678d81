#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Pod Security "restricted" admission in the double, through the real
# kubectl: the Job the kubernetes backend must build (mkjob.py) is
# admitted and runs; the same Job missing any one required control, or
# adding a forbidden one, is stored with the API server's warning, its
# pod is refused (a FailedCreate event on the Job), and the same pod
# created directly is Forbidden with the API server's wording.
# https://kubernetes.io/docs/concepts/security/pod-security-admission/

. "$(atf_get_srcdir)/k8s.subr"

setup()
{
	k8s_need_kubectl
	k8s_start "$@"
	k8s_namespaces
}

# ere TEXT: TEXT as an extended regular expression matching itself.
ere()
{
	printf '%s' "$1" | sed 's/[][().*"^$|+?{}]/\\&/g'
}

# failed_create JOB: the message of JOB's FailedCreate event, once the
# job controller has recorded it.
failed_create()
{
	i=0
	while [ $i -lt 50 ]; do
		m=$(kubectl get events -n demo-app -o jsonpath='{.items[0].message}' \
		    --field-selector "involvedObject.name=$1,reason=FailedCreate")
		[ -n "$m" ] && break
		i=$((i + 1))
		sleep 0.2
	done
	printf '%s\n' "$m"
}

# rejects MUTATION TEXT: the Job with MUTATION is created with a warning
# naming TEXT; its pod is refused for TEXT; the pod alone is Forbidden.
rejects()
{
	setup
	python3 "$K8S_SRC/mkjob.py" bad "$1" > bad.json
	re=$(ere "$2")
	atf_check -o inline:"job.batch/bad created\n" \
	    -e match:"^Warning: would violate PodSecurity \"restricted:latest\": .*$re" \
	    kubectl create --validate=false -f bad.json
	failed_create bad > event
	atf_check -o match:"^Error creating: pods \"bad-[a-z0-9]{5}\" is forbidden: violates PodSecurity \"restricted:latest\": .*$re" \
	    cat event
	atf_check -o inline:"FailedCreate Warning job-controller Job\n" \
	    kubectl get events -n demo-app -o jsonpath='{.items[0].reason} {.items[0].type} {.items[0].source.component} {.items[0].involvedObject.kind}{"\n"}'
	atf_check -e match:'No resources found' kubectl get pods -n demo-app
	python3 -c 'import json, sys
j = json.load(sys.stdin)
print(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {
    "name": "bad", "namespace": "demo-app"},
    "spec": j["spec"]["template"]["spec"]}))' < bad.json > pod.json
	atf_check -s exit:1 -e match:"pods \"bad\" is forbidden: violates PodSecurity \"restricted:latest\": .*$re" \
	    kubectl create --validate=false -f pod.json
	atf_check -e match:'No resources found' kubectl get pods -n demo-app
}

# One test case per control: NAME MUTATION TEXT.
rejects_case()
{
	eval "atf_test_case $1 cleanup
	$1_head() { atf_set descr \"a Job with $2: warned, its pod refused\"; \
	    atf_set timeout 120; }
	$1_body() { rejects '$2' '$3'; }
	$1_cleanup() { k8s_stop; }"
	CASES="$CASES $1"
}

rejects_case missing_run_as_non_root no-run-as-non-root \
    'runAsNonRoot != true (pod or container "main" must set securityContext.runAsNonRoot=true)'
rejects_case missing_allow_privilege_escalation_false \
    no-allow-privilege-escalation \
    'allowPrivilegeEscalation != false (container "main" must set securityContext.allowPrivilegeEscalation=false)'
rejects_case missing_drop_all no-drop-all \
    'unrestricted capabilities (container "main" must set securityContext.capabilities.drop=["ALL"])'
rejects_case missing_seccomp_runtime_default no-seccomp \
    'seccompProfile (pod or container "main" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")'
rejects_case privileged privileged-escalation \
    'privileged (container "main" must not set securityContext.privileged=true), allowPrivilegeEscalation != false'
rejects_case host_path host-path \
    'hostPath volumes (volume "host"), restricted volume types (volume "host" uses restricted volume type "hostPath")'
rejects_case host_network host-network 'host namespaces (hostNetwork=true)'
rejects_case run_as_root run-as-root \
    'runAsUser=0 (pod must not set runAsUser=0)'
rejects_case add_sys_admin add-sys-admin \
    'non-default capabilities (container "main" must not include "SYS_ADMIN" in securityContext.capabilities.add)'

atf_test_case privileged_is_invalid cleanup
privileged_is_invalid_head()
{
	atf_set "descr" "privileged with allowPrivilegeEscalation false is " \
	    "refused by validation (422), before Pod Security"
	atf_set "timeout" "60"
}
privileged_is_invalid_body()
{
	setup
	python3 "$K8S_SRC/mkjob.py" bad privileged > bad.json
	atf_check -s exit:1 -e match:'The Job "bad" is invalid: spec.template.spec.containers\[0\].securityContext: Invalid value: core.SecurityContext\{...\}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true' \
	    kubectl create --validate=false -f bad.json
	atf_check -e match:'No resources found' kubectl get jobs -n demo-app
}
privileged_is_invalid_cleanup()
{
	k8s_stop
}

atf_test_case compliant_job_runs cleanup
compliant_job_runs_head()
{
	atf_set "descr" "the backend's Job shape is admitted, runs, logs, " \
	    "and its mounted Secret is visible to the command"
	atf_set "timeout" "60"
}
compliant_job_runs_body()
{
	setup --runner "$K8S_SRC/pod_runner.py"
	echo '{"kind":"Secret","apiVersion":"v1","metadata":{"name":"cred","namespace":"demo-app"},"stringData":{"token":"t0ken"}}' > cred.json
	atf_check -o ignore kubectl create --validate=false -f cred.json
	COMMAND='echo ran; cat "$K8S_MOUNT_CRED/token"' SECRET=cred \
	    python3 "$K8S_SRC/mkjob.py" good > good.json
	atf_check -o inline:"job.batch/good created\n" \
	    kubectl create --validate=false -f good.json
	atf_check -o ignore kubectl wait --for=condition=complete job/good \
	    -n demo-app --timeout=20s
	atf_check -o inline:"ran\nt0ken" kubectl logs -n demo-app job/good
	atf_check -o inline:"1" kubectl get job good -n demo-app \
	    -o jsonpath='{.status.succeeded}'
}
compliant_job_runs_cleanup()
{
	k8s_stop
}

atf_test_case waits_for_its_secret cleanup
waits_for_its_secret_head()
{
	atf_set "descr" "a pod whose Secret is missing waits in " \
	    "ContainerCreating; its log is not readable yet"
	atf_set "timeout" "60"
}
waits_for_its_secret_body()
{
	setup
	SECRET=later python3 "$K8S_SRC/mkjob.py" early > early.json
	atf_check -o ignore kubectl create --validate=false -f early.json
	sleep 0.5
	atf_check -o match:'ContainerCreating' kubectl get pods -n demo-app
	atf_check -s exit:1 -e match:'is waiting to start: ContainerCreating' \
	    kubectl logs -n demo-app job/early
	atf_check -o ignore kubectl create secret generic later -n demo-app \
	    --from-literal=k=v
	atf_check -o ignore kubectl wait --for=condition=complete \
	    job/early -n demo-app --timeout=20s
}
waits_for_its_secret_cleanup()
{
	k8s_stop
}

atf_test_case refused_pods_fail_at_deadline cleanup
refused_pods_fail_at_deadline_head()
{
	atf_set "descr" "a Job whose pods Pod Security refuses stays " \
	    "podless, its FailedCreate event counting the tries, until " \
	    "activeDeadlineSeconds fails it"
	atf_set "timeout" "60"
}
refused_pods_fail_at_deadline_body()
{
	setup
	python3 "$K8S_SRC/mkjob.py" bad no-seccomp deadline-2 > bad.json
	atf_check -o inline:"job.batch/bad created\n" \
	    -e match:'Warning: would violate PodSecurity "restricted:latest": seccompProfile' \
	    kubectl create --validate=false -f bad.json
	atf_check -o ignore kubectl wait --for=condition=failed job/bad \
	    -n demo-app --timeout=20s
	atf_check -o inline:"DeadlineExceeded" kubectl get job bad \
	    -n demo-app -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason}'
	atf_check -e match:'No resources found' kubectl get pods -n demo-app
	atf_check -o match:'FailedCreate' -o match:'job-controller' \
	    kubectl describe job bad -n demo-app
}
refused_pods_fail_at_deadline_cleanup()
{
	k8s_stop
}

atf_test_case unlabelled_namespace_admits cleanup
unlabelled_namespace_admits_head()
{
	atf_set "descr" "a namespace without the enforce label admits a " \
	    "privileged Job (the label is what protects)"
	atf_set "timeout" "60"
}
unlabelled_namespace_admits_body()
{
	setup
	atf_check -o ignore kubectl create namespace plain
	python3 "$K8S_SRC/mkjob.py" loose privileged-escalation no-seccomp |
	    sed 's/"demo-app"/"plain"/' > loose.json
	atf_check -o ignore kubectl create --validate=false -f loose.json
}
unlabelled_namespace_admits_cleanup()
{
	k8s_stop
}

atf_test_case scripts_jobs_are_restricted cleanup
scripts_jobs_are_restricted_head()
{
	atf_set "descr" "the Jobs scripts/k8s-verify and k8s-demo make " \
	    "(k8s-lib.sh restricted_job) pass restricted admission"
	atf_set "timeout" "60"
}
scripts_jobs_are_restricted_body()
{
	setup
	(
		# shellcheck source=/dev/null
		. "$(atf_config_get srcdir)/scripts/k8s-lib.sh"
		restricted_job probe img gvisor '"a": "b"' connect x:1
	) | sed 's/"metadata": {"name": "probe"/&, "namespace": "demo-app"/' \
	    > probe.json
	atf_check -o inline:"job.batch/probe created\n" \
	    kubectl create --validate=false -f probe.json
}
scripts_jobs_are_restricted_cleanup()
{
	k8s_stop
}

atf_test_case claim_schema cleanup
claim_schema_head()
{
	atf_set "descr" "a SandboxClaim is checked against its CRD's schema " \
	    "(422, each cause as a 1.24 kube-apiserver gave it) and not stored"
	atf_set "timeout" "60"
}
claim_schema_body()
{
	setup
	claim()	# name, spec (JSON, or absent)
	{
		printf '{"apiVersion":"extensions.agents.x-k8s.io/v1beta1",'
		printf '"kind":"SandboxClaim","metadata":{"name":"%s",' "$1"
		printf '"namespace":"agent-sandbox"}%s}' "${2:+,\"spec\":$2}"
	}
	refused()	# name, spec, field, message
	{
		claim "$1" "$2" > "$1.json"
		atf_check -s exit:1 -e match:"The SandboxClaim \"$1\" is invalid: $3: $(ere "$4")" \
		    kubectl create --validate=false -f "$1.json"
	}
	refused nospec "" spec "Required value"
	refused nopool '{}' spec.warmPoolRef "Required value"
	refused poolstr '{"warmPoolRef":"p"}' spec.warmPoolRef \
	    'Invalid value: "string": spec.warmPoolRef in body must be of type object: "string"'
	refused nameint '{"warmPoolRef":{"name":5}}' spec.warmPoolRef.name \
	    'Invalid value: "integer": spec.warmPoolRef.name in body must be of type string: "integer"'
	refused noname '{"warmPoolRef":{}}' spec.warmPoolRef.name "Required value"
	atf_check -e match:'No resources found' \
	    kubectl get sandboxclaims -n agent-sandbox
	claim good '{"warmPoolRef":{"name":"p"}}' > good.json
	atf_check -o match:created kubectl create --validate=false -f good.json
}
claim_schema_cleanup()
{
	k8s_stop
}

atf_test_case sandbox_schemas cleanup
sandbox_schemas_head()
{
	atf_set "descr" "Sandboxes, templates and warm pools are checked against the v1beta1 CRD schemas: required fields, types, the operatingMode enum, the service opt-in a boolean"
	atf_set "timeout" "60"
}
sandbox_schemas_body()
{
	setup
	obj()	# kind, name, group, spec
	{
		printf '{"apiVersion":"%s/v1beta1","kind":"%s",' "$3" "$1"
		printf '"metadata":{"name":"%s","namespace":"agent-sandbox"},' "$2"
		printf '"spec":%s}' "$4"
	}
	refused()	# kind, name, group, spec, field, message
	{
		obj "$1" "$2" "$3" "$4" > "$2.json"
		atf_check -s exit:1 -e match:"The $1 \"$2\" is invalid: $5: $(ere "$6")" \
		    kubectl create --validate=false -f "$2.json"
	}
	pod='{"spec":{"containers":[{"name":"c","image":"i"}]}}'
	refused Sandbox nopod agents.x-k8s.io '{}' spec.podTemplate \
	    "Required value"
	refused Sandbox paused agents.x-k8s.io \
	    "{\"podTemplate\":$pod,\"operatingMode\":\"Paused\"}" \
	    spec.operatingMode \
	    'Unsupported value: "Paused": supported values: "Running", "Suspended"'
	refused Sandbox svcstr agents.x-k8s.io \
	    "{\"podTemplate\":$pod,\"service\":\"yes\"}" spec.service \
	    'Invalid value: "string": spec.service in body must be of type boolean: "string"'
	refused SandboxTemplate podnospec extensions.agents.x-k8s.io \
	    '{"podTemplate":{}}' spec.podTemplate.spec "Required value"
	refused SandboxWarmPool notmpl extensions.agents.x-k8s.io \
	    '{"replicas":1}' spec.sandboxTemplateRef "Required value"
	atf_check -e match:'No resources found' \
	    kubectl get sandboxes,sandboxtemplates,sandboxwarmpools \
	    -n agent-sandbox
	obj Sandbox suspended agents.x-k8s.io \
	    "{\"podTemplate\":$pod,\"operatingMode\":\"Suspended\",\"service\":true}" \
	    > good.json
	atf_check -o match:created kubectl create --validate=false -f good.json
}
sandbox_schemas_cleanup()
{
	k8s_stop
}

atf_init_test_cases()
{
	for c in $CASES; do
		atf_add_test_case "$c"
	done
	atf_add_test_case compliant_job_runs
	atf_add_test_case waits_for_its_secret
	atf_add_test_case privileged_is_invalid
	atf_add_test_case refused_pods_fail_at_deadline
	atf_add_test_case unlabelled_namespace_admits
	atf_add_test_case scripts_jobs_are_restricted
	atf_add_test_case claim_schema
	atf_add_test_case sandbox_schemas
}
