#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# What each tool's pod may reach under cluster/'s NetworkPolicies, as
# the Kubernetes documentation defines it (netpol.py, a small evaluator:
# the double does not enforce NetworkPolicy, and neither did the real
# node without Calico).  The pods are those the API double made from
# runnerd's Jobs, saved by the runner as they came; the policies are
# cluster/networkpolicy-sandbox.yaml and networkpolicy-apiserver.yaml.in
# rendered as scripts/k8s-up renders it; the destinations and namespaces
# are netpol-world.json's.  The evaluator itself is checked on the same
# pods with the default-deny left out.

. "$(atf_get_srcdir)/k8s.subr"
. "$(atf_get_srcdir)/../lib/suite.subr"
. "$(atf_get_srcdir)/kb.subr"

NP_WORLD="$K8S_SRC/netpol-world.json"

# np_policies: the rendered API server policy (its endpoint as in the
# world file) in api.yaml.
np_policies()
{
	sh -c '. "$1/scripts/k8s-lib.sh" && render \
	    "$1/cluster/networkpolicy-apiserver.yaml.in" \
	    APISERVER_IPBLOCKS="$(ipblocks 172.18.0.2)" APISERVER_PORT=6443' \
	    sh "$(as_src)" > api.yaml || atf_fail "cannot render the policy"
}

# np_pod TOOL ARGS: one call; the pod the double ran for it in TOOL.json.
np_pod()
{
	as_call "$1" "$2" > "$1.result"
	set -- "$1" pods/*.json
	[ $# -eq 2 ] && [ -f "$2" ] ||
	    atf_fail "$1: not one pod: $(cat "$1.result")"
	mv "$2" "$1.json"
}

atf_test_case reach cleanup
reach_head()
{
	atf_set "descr" "each tool pod reaches exactly what it needs: k8s_get_pod_status the API server endpoint, the others and sessions nothing; nothing reaches them"
	atf_set "timeout" "300"
}
reach_body()
{
	mkdir pods
	cat > runner <<EOF
#! /bin/sh
tee "$(pwd)/pods/\$K8S_DOUBLE_POD.json" | exec "$K8S_SRC/path_runner.py"
EOF
	chmod +x runner
	KB_POLICY_SED='s|^    namespaces: \[demo-app\]|&\
    egress: ["kubernetes.default.svc:443"]|' KB_SCOPES="    pods: { engine: none, tools: [k8s_get_pod_status] }
    shell: { engine: none, tools: [run_shell] }" \
	    kb_suite --runner "$(pwd)/runner"
	grep -q 'egress: \["kubernetes.default.svc:443"\]' policy.yaml ||
	    atf_fail "policy not edited"
	as_start auditd approvald brokerd runnerd
	np_pod k8s_get_pod_status '{"namespace":"demo-app"}'
	np_pod run_shell '{"command":"echo hi"}'
	np_pod terraform_plan '{"working_dir":"demo"}'
	as_stop
	grep -q '"isError": *false' run_shell.result ||
	    atf_fail "run_shell failed: $(cat run_shell.result)"
	np_policies
	for t in k8s_get_pod_status run_shell terraform_plan; do
		python3 "$K8S_SRC/netpol.py" "$NP_WORLD" api.yaml \
		    "$(k8s_cluster)/networkpolicy-sandbox.yaml" -- "$t.json" |
		    sed "s/^[^ ]* /$t /"
	done > verdicts
	python3 "$K8S_SRC/netpol.py" "$NP_WORLD" api.yaml \
	    "$(k8s_cluster)/networkpolicy-sandbox.yaml" -- \
	    "$(k8s_cluster)/session-template.yaml" >> verdicts
	# The API server's endpoint for the one tool that talks to it.
	atf_check -o inline:'k8s_get_pod_status apiserver allow\n' \
	    grep ' allow$' verdicts
	atf_check -o inline:'31\n' grep -c ' deny$' verdicts
	# Control: without the default-deny only the labelled pod is
	# isolated (to the API server); the others reach all of the world.
	for t in k8s_get_pod_status run_shell; do
		python3 "$K8S_SRC/netpol.py" "$NP_WORLD" api.yaml -- "$t.json" |
		    sed "s/^[^ ]* /$t /"
	done > control
	atf_check -o inline:'k8s_get_pod_status apiserver allow\n' \
	    sh -c "grep -v ' ingress ' control | grep '^k8s_get_pod_status .* allow$'"
	atf_check -o inline:'8\n' grep -c '^run_shell .* allow$' control
}
reach_cleanup()
{
	as_stop 2>/dev/null
	kb_stop
}

atf_init_test_cases()
{
	atf_add_test_case reach
}
