#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# k8s_get_pod_status end to end: mcpd -> runnerd (kubernetes backend) ->
# approvald -> brokerd -> the Vault double, which mints the pod-reader
# credential in the Kubernetes double as Vault's kubernetes engine does;
# kubectl runs in the Job with that credential.  Every daemon is real.
# Also: the Vault-minted credential with the real kubectl, and revoked.

. "$(atf_get_srcdir)/k8s.subr"
. "$(atf_get_srcdir)/kb.subr"
. "$(atf_get_srcdir)/../lib/suite.subr"

# vault_start: the Vault double minting through the Kubernetes double.
vault_start()
{
	openssl rand -hex 16 > vault.token
	mkdir -p vstate
	PYTHONDONTWRITEBYTECODE=1 python3 \
	    "$K8S_SRC/../brokerd/vault_double.py" --cert server.pem \
	    --key server.key --token-file vault.token --state vstate \
	    --kubernetes "https://${K8S_BIND:-127.0.0.1}:$K8S_PORT" \
	    --kubernetes-token-file admin.token --kubernetes-ca ca.pem \
	    --roles-dir "$(k8s_cluster)/vault/roles" > vault.log 2>&1 &
	echo $! > vault.pid
	i=0
	while [ ! -s vstate/port ]; do
		i=$((i + 1))
		[ $i -le 200 ] || atf_fail "the Vault double did not start"
		sleep 0.05
	done
}

vault_stop()
{
	[ -f vault.pid ] && kill "$(cat vault.pid)" 2>/dev/null
	rm -f vault.pid
}

# A pod in demo-app to be listed (restricted; the double runs it).
demo_pod()
{
	cat > web.json <<'POD'
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "web", "namespace": "demo-app"},
 "spec": {"securityContext": {"runAsNonRoot": true, "runAsUser": 65534,
                              "seccompProfile": {"type": "RuntimeDefault"}},
          "containers": [{"name": "web", "image": "web:1",
                          "command": ["sleep", "300"],
                          "securityContext": {
                              "allowPrivilegeEscalation": false,
                              "capabilities": {"drop": ["ALL"]}}}]}}
POD
	kubectl create --validate=false -f web.json >/dev/null ||
	    atf_fail "cannot create the demo pod"
}

# Every process's environment and argv, sampled until sample.stop.
proc_sample()
{
	while [ ! -f sample.stop ]; do
		for p in /proc/[0-9]*; do
			cat "$p/environ" "$p/cmdline" 2>/dev/null | tr '\0' '\n'
		done
		sleep 0.05
	done > procs.txt
}

# pod_status BACKEND: the whole suite, then the tool for demo-app (a pod
# listed, the lease revoked, the Vault-made objects, Job and Secret
# gone) and for kube-system (refused by policy before any credential).
pod_status()
{
	kb_cluster
	demo_pod
	vault_start
	server="https://${K8S_BIND:-127.0.0.1}:$K8S_PORT"
	# gVisor: kubectl reaches the API server through the egress proxy.
	sed "s|^    namespaces: \[demo-app\]|&\\
    egress: [\"${K8S_BIND:-127.0.0.1}:$K8S_PORT\"]|" \
	    "$(as_src)/etc/policy.yaml" > policy.yaml
	grep -q "egress: \[\"" policy.yaml || atf_fail "policy not edited"
	AS_RUNNERD_EXTRA="  backend: $1
  sessions_max: 0
  warm_pool: 0" AS_BROKERD_EXTRA="  vault:
    addr: https://127.0.0.1:$(cat vstate/port)
    ca_file: $(pwd)/ca.pem
    token_file: $(pwd)/vault.token
  scopes:
    pod-reader:
      engine: kubernetes
      tools: [k8s_get_pod_status]
      mount: kubernetes
      role: pod-reader
      namespaces: [demo-app]
      target_arg: namespace
      ttl: 10m
      kube_server: $server
      kube_ca_file: $(pwd)/ca.pem" as_conf
	# The policy's egress entry is the API server as the pods reach it.
	cat >> conf.yaml <<CONF
kubernetes:
  kubeconfig: $(pwd)/runnerd.kubeconfig
  namespace: agent-sandbox
  apiserver: "${K8S_BIND:-127.0.0.1}:$K8S_PORT"
CONF
	as_start auditd approvald brokerd runnerd
	proc_sample &
	sampler=$!
	python3 "$K8S_SRC/mcp_pods.py" "$(as_bin mcpd)" "$(pwd)/conf.yaml" \
	    demo-app > r.json
	touch sample.stop
	wait $sampler
	# The pod-reader token (a JWT, k8s_authz.py) reached the sandbox as
	# a file only: it is in no daemon's log, no audit record, and no
	# process's environment or argv while the call ran.
	[ -s procs.txt ] || atf_fail "no process was sampled"
	sh "$(atf_get_srcdir)/../auditd/secret_grep.sh" procs.txt auditd.log \
	    approvald.log brokerd.log runnerd.log var/audit.jsonl >&2 ||
	    atf_fail "the credential leaked"
	atf_check -o inline:'False|demo-app|web|Running|1/1|0\n' python3 -c '
import json; r = json.load(open("r.json")); s = r["structuredContent"]
p = s["pods"][0]
print("%s|%s|%s|%s|%s|%d" % (r["isError"], s["namespace"], p["name"],
      p["phase"], p["ready_containers"], p["restarts"]))'
	grep -q 'web  *1/1  *Running' r.json || atf_fail "no table in the text"
	# The lease was revoked, and with it the ServiceAccount Vault made.
	atf_check -o inline:'1 1\n' sh -c \
	    'echo $(grep -c "\"op\": \"mint\"" vstate/leases.jsonl) \
	    $(grep -c "\"op\": \"revoke\"" vstate/leases.jsonl)'
	kubectl get serviceaccounts,roles,rolebindings -n demo-app -o name \
	    > sa.txt
	atf_check -s exit:1 -o empty grep v-token sa.txt
	kb_left > left
	atf_check -o empty cat left
	# Policy keeps the tool out of kube-system before any credential.
	python3 "$K8S_SRC/mcp_pods.py" "$(as_bin mcpd)" "$(pwd)/conf.yaml" \
	    kube-system > r2.json
	atf_check -o match:'denied by policy' cat r2.json
	atf_check -o inline:'1\n' grep -c '"op": "mint"' vstate/leases.jsonl
	as_stop
}

atf_test_case pod_status cleanup
pod_status_head()
{
	atf_set "descr" "k8s_get_pod_status through mcpd, runnerd (kubernetes backend), brokerd, Vault and the cluster; everything revoked and deleted after"
	atf_set "timeout" "180"
}
pod_status_body()
{
	pod_status kubernetes
}
pod_status_cleanup()
{
	as_kill_all
	vault_stop
	kb_stop
}

atf_test_case pod_status_gvisor cleanup
pod_status_gvisor_head()
{
	atf_set "descr" "k8s_get_pod_status on the gvisor backend: kubectl in gVisor reaches the API server (on this machine's own address, not loopback, which Go never proxies) through runnerd's egress proxy"
	atf_set "timeout" "180"
	atf_set "require.user" "root"
}
pod_status_gvisor_body()
{
	[ -x /usr/bin/runsc ] || atf_fail "runsc is not installed (make deps installs it)"
	K8S_BIND=$(hostname -I 2>/dev/null | awk '{ print $1 }')
	case "$K8S_BIND" in
	[0-9]*.*) ;;
	*) atf_skip "no IPv4 address of this machine's own" ;;
	esac
	export K8S_BIND
	pod_status gvisor
}
pod_status_gvisor_cleanup()
{
	as_kill_all
	vault_stop
	kb_stop
}

atf_test_case vault_credential cleanup
vault_credential_head()
{
	atf_set "descr" "a pod-reader token minted by the Vault double lists pods in demo-app with the real kubectl, is Forbidden in kube-system and on secrets, and stops working once revoked"
	atf_set "timeout" "120"
}
vault_credential_body()
{
	kb_cluster
	vault_start
	printf '{"kubernetes_namespace": "demo-app", "ttl": "10m"}' > creq.json
	python3 "$K8S_REQ" --port-file vstate/port -H "X-Vault-Token: $(cat vault.token)" \
	    POST /v1/kubernetes/creds/pod-reader creq.json > cred.out 2>&1 ||
	    atf_fail "no answer from the Vault double"
	python3 - > cred.env <<'PY' || atf_fail "no credential: $(cat cred.out)"
import json
lines = open("cred.out").read().split("\n", 1)
assert lines[0] == "200", lines
c = json.loads(lines[1])
print("TOKEN=%s\nLEASE=%s" % (c["data"]["service_account_token"], c["lease_id"]))
PY
	. ./cred.env
	atf_check -o empty -e match:'No resources found in demo-app' \
	    kubectl --token="$TOKEN" get pods -n demo-app
	atf_check -s exit:1 -e match:'pods is forbidden: User "system:serviceaccount:demo-app:v-token-pod-reader-[0-9a-f]+" cannot list resource "pods" in API group "" in the namespace "kube-system"' \
	    kubectl --token="$TOKEN" get pods -n kube-system
	atf_check -s exit:1 -e match:'secrets is forbidden' \
	    kubectl --token="$TOKEN" get secrets -n demo-app
	printf '{"lease_id": "%s"}' "$LEASE" > rreq.json
	python3 "$K8S_REQ" --port-file vstate/port -H "X-Vault-Token: $(cat vault.token)" \
	    PUT /v1/sys/leases/revoke rreq.json > rev.out 2>&1
	atf_check -o match:'^204' cat rev.out
	atf_check -s exit:1 -e match:'Unauthorized|must be logged in' \
	    kubectl --token="$TOKEN" get pods -n demo-app
}
vault_credential_cleanup()
{
	vault_stop
	kb_stop
}

atf_init_test_cases()
{
	atf_add_test_case pod_status
	atf_add_test_case pod_status_gvisor
	atf_add_test_case vault_credential
}
