#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# The real kubectl against the Kubernetes API double: a pod-reader token
# as Vault's kubernetes engine mints it (a ServiceAccount, Role and
# RoleBinding with the rules of cluster/vault/roles/pod-reader.json, and a
# TokenRequest) lists pods in its namespace and nothing else, and stops
# working once Vault's revocation deletes what it created.

. "$(atf_get_srcdir)/k8s.subr"

setup()
{
	k8s_need_kubectl
	k8s_start --runner "$K8S_SRC/pod_runner.py"
	k8s_namespaces
	TOKEN=$(k8s_pod_reader demo-app) || atf_fail "no pod-reader token"
	# A pod to list: a compliant Job's.
	python3 "$K8S_SRC/mkjob.py" web > web.json
	atf_check -o ignore kubectl create --validate=false -f web.json
	atf_check -o ignore kubectl wait --for=condition=complete job/web \
	    -n demo-app --timeout=20s
}

atf_test_case pod_reader_lists_pods cleanup
pod_reader_lists_pods_head()
{
	atf_set "descr" "a pod-reader token lists the pods of its namespace"
	atf_set "timeout" "60"
}
pod_reader_lists_pods_body()
{
	setup
	atf_check -o match:'^web-[a-z0-9]{5} +0/1 +Completed +0 ' \
	    kubectl --token="$TOKEN" get pods -n demo-app
	atf_check -o match:'"phase": "Succeeded"' \
	    kubectl --token="$TOKEN" get pods -n demo-app -o json
	atf_check -o inline:"yes\n" kubectl --token="$TOKEN" auth can-i watch pods \
	    -n demo-app
}
pod_reader_lists_pods_cleanup()
{
	k8s_stop
}

atf_test_case pod_reader_forbidden_elsewhere cleanup
pod_reader_forbidden_elsewhere_head()
{
	atf_set "descr" "a pod-reader token is Forbidden in kube-system, " \
	    "on secrets and for writes"
	atf_set "timeout" "60"
}
pod_reader_forbidden_elsewhere_body()
{
	setup
	user='User "system:serviceaccount:demo-app:pod-reader"'
	atf_check -s exit:1 -e inline:"Error from server (Forbidden): pods \
is forbidden: $user cannot list resource \"pods\" in API group \"\" in the \
namespace \"kube-system\"\n" kubectl --token="$TOKEN" get pods -n kube-system
	atf_check -s exit:1 -e inline:"Error from server (Forbidden): \
secrets is forbidden: $user cannot list resource \"secrets\" in API group \
\"\" in the namespace \"demo-app\"\n" kubectl --token="$TOKEN" get secrets -n demo-app
	atf_check -s exit:1 -e match:"cannot get resource \"pods/log\"" \
	    kubectl --token="$TOKEN" logs -n demo-app -l job-name=web
	atf_check -s exit:1 -e match:"cannot delete resource \"pods\"" \
	    kubectl --token="$TOKEN" delete pods -n demo-app --all
	atf_check -s exit:1 -e match:"cannot list resource \"pods\" in API \
group \"\" at the cluster scope" kubectl --token="$TOKEN" get pods -A
	atf_check -s exit:1 -o inline:"no\n" kubectl --token="$TOKEN" auth can-i get \
	    secrets -n demo-app
}
pod_reader_forbidden_elsewhere_cleanup()
{
	k8s_stop
}

atf_test_case revoked_token_fails cleanup
revoked_token_fails_head()
{
	atf_set "descr" "once the ServiceAccount, Role and RoleBinding are " \
	    "deleted (Vault's revocation), the token is Unauthorized"
	atf_set "timeout" "60"
}
revoked_token_fails_body()
{
	setup
	atf_check -o ignore kubectl --token="$TOKEN" get pods -n demo-app
	atf_check -o ignore kubectl delete -n demo-app rolebinding/pod-reader \
	    role/pod-reader serviceaccount/pod-reader
	atf_check -s exit:1 \
	    -e inline:"error: You must be logged in to the server (Unauthorized)\n" \
	    kubectl --token="$TOKEN" get pods -n demo-app
	# A new ServiceAccount of the same name does not bring it back.
	atf_check -o ignore kubectl create serviceaccount pod-reader -n demo-app
	atf_check -s exit:1 -e match:Unauthorized \
	    kubectl --token="$TOKEN" get pods -n demo-app
}
revoked_token_fails_cleanup()
{
	k8s_stop
}

atf_test_case token_audience_and_garbage cleanup
token_audience_and_garbage_head()
{
	atf_set "descr" "a token for another audience, a forged one and " \
	    "none at all are Unauthorized"
	atf_set "timeout" "60"
}
token_audience_and_garbage_body()
{
	setup
	vault_tok=$(kubectl create token pod-reader -n demo-app --audience=vault)
	atf_check -s exit:1 -e match:Unauthorized \
	    kubectl --token="$vault_tok" get pods -n demo-app
	forged=$(echo "$TOKEN" | sed 's/\.[^.]*$/.AAAA/')
	atf_check -s exit:1 -e match:Unauthorized \
	    kubectl --token="$forged" get pods -n demo-app
	atf_check -o match:'^401$' -o match:'"reason": "Unauthorized"' \
	    python3 "$K8S_REQ" GET /api/v1/namespaces/demo-app/pods
	atf_check -s exit:1 -e match:'may not specify a duration less than 10 minutes' \
	    kubectl create token pod-reader -n demo-app --duration=5m
}
token_audience_and_garbage_cleanup()
{
	k8s_stop
}

atf_test_case runnerd_role_is_sandbox_only cleanup
runnerd_role_is_sandbox_only_head()
{
	atf_set "descr" "cluster/rbac-runnerd.yaml lets runnerd run Jobs " \
	    "and Secrets in agent-sandbox and nothing else"
	atf_set "timeout" "60"
}
runnerd_role_is_sandbox_only_body()
{
	setup
	atf_check -o ignore kubectl create --validate=false \
	    -f "$(k8s_cluster)/rbac-runnerd.yaml"
	r=$(kubectl create token runnerd -n agent-sandbox)
	for verb in create get list watch delete; do
		atf_check -o inline:"yes\n" kubectl --token="$r" auth can-i "$verb" \
		    jobs.batch -n agent-sandbox
		atf_check -s exit:1 -o inline:"no\n" kubectl --token="$r" auth can-i \
		    "$verb" jobs.batch -n demo-app
	done
	atf_check -o inline:"yes\n" kubectl --token="$r" auth can-i get pods/log \
	    -n agent-sandbox
	atf_check -o inline:"yes\n" kubectl --token="$r" auth can-i create secrets \
	    -n agent-sandbox
	atf_check -s exit:1 -o inline:"no\n" kubectl --token="$r" auth can-i list \
	    secrets -n agent-sandbox
	atf_check -s exit:1 -o inline:"no\n" kubectl --token="$r" auth can-i create \
	    pods -n agent-sandbox
	# A Job it creates runs; one in demo-app is refused.
	sed 's/"demo-app"/"agent-sandbox"/' web.json > sb.json
	atf_check -o ignore kubectl --token="$r" create --validate=false -f sb.json
	atf_check -o ignore kubectl --token="$r" wait --for=condition=complete \
	    job/web -n agent-sandbox --timeout=20s
	atf_check -s exit:1 -e match:'jobs.batch is forbidden' \
	    kubectl --token="$r" create --validate=false -f web.json
}
runnerd_role_is_sandbox_only_cleanup()
{
	k8s_stop
}

atf_test_case rbac_escalation_refused cleanup
rbac_escalation_refused_head()
{
	atf_set "descr" "a ServiceAccount cannot grant what it does not hold"
	atf_set "timeout" "60"
}
rbac_escalation_refused_body()
{
	setup
	# A delegate may manage Roles and RoleBindings in demo-app and read
	# pods, like Vault's own account: it may grant pods, not secrets.
	cat > delegate.yaml <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: delegate, namespace: demo-app}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: delegate, namespace: demo-app}
rules:
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [create, delete]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: delegate, namespace: demo-app}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: delegate}
subjects: [{kind: ServiceAccount, name: delegate, namespace: demo-app}]
YAML
	atf_check -o ignore kubectl create --validate=false -f delegate.yaml
	d=$(kubectl create token delegate -n demo-app)
	for what in pods secrets; do
		cat > "$what.yaml" <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: read-$what, namespace: demo-app}
rules: [{apiGroups: [""], resources: [$what], verbs: [get, list]}]
YAML
	done
	atf_check -o ignore kubectl --token="$d" create --validate=false \
	    -f pods.yaml
	atf_check -s exit:1 -e match:'roles.rbac.authorization.k8s.io "read-secrets" is forbidden: user "system:serviceaccount:demo-app:delegate" is attempting to grant RBAC permissions not currently held' \
	    kubectl --token="$d" create --validate=false -f secrets.yaml
}
rbac_escalation_refused_cleanup()
{
	k8s_stop
}

atf_test_case vault_engine_rbac cleanup
vault_engine_rbac_head()
{
	atf_set "descr" "cluster/vault/rbac-vault.yaml lets Vault's account " \
	    "make a pod-reader lease in demo-app, and nowhere else"
	atf_set "timeout" "60"
}
vault_engine_rbac_body()
{
	setup
	echo '{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"vault"}}' > ns.json
	echo '{"kind":"ServiceAccount","apiVersion":"v1","metadata":{"name":"vault","namespace":"vault"}}' > sa.json
	atf_check -o ignore kubectl create --validate=false -f ns.json
	atf_check -o ignore kubectl create --validate=false -f sa.json
	atf_check -o ignore kubectl create --validate=false \
	    -f "$(k8s_cluster)/vault/rbac-vault.yaml"
	v=$(kubectl create token vault -n vault)
	# What the engine does for a lease (setup's pod-reader objects,
	# made again with Vault's token instead of the admin's).
	atf_check -o ignore kubectl delete -f pod-reader.json
	atf_check -o ignore kubectl --token="$v" create --validate=false \
	    -f pod-reader.json
	atf_check -o match:'^ey' kubectl --token="$v" create token \
	    pod-reader -n demo-app
	atf_check -o ignore kubectl --token="$v" delete -f pod-reader.json
	sed 's/"demo-app"/"kube-system"/g' pod-reader.json > ks.json
	atf_check -s exit:1 -e match:'cannot create resource "serviceaccounts" in API group "" in the namespace "kube-system"' \
	    kubectl --token="$v" create --validate=false -f ks.json
}
vault_engine_rbac_cleanup()
{
	k8s_stop
}

atf_init_test_cases()
{
	atf_add_test_case pod_reader_lists_pods
	atf_add_test_case pod_reader_forbidden_elsewhere
	atf_add_test_case revoked_token_fails
	atf_add_test_case token_audience_and_garbage
	atf_add_test_case runnerd_role_is_sandbox_only
	atf_add_test_case rbac_escalation_refused
	atf_add_test_case vault_engine_rbac
}
