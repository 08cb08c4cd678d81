#!/bin/sh
# SPDX-License-Identifier: ISC
# bench.sh BUILD [N]: per-call overhead of runnerd's kubernetes backend
# against the API double (not a kyua test).  N run_shell calls of `true`,
# one after another, through runnerd (stand-in peers, no credential, then
# with a credential Secret), in a scratch directory; prints ms per call
# for each and, for scale, the double alone running the same Job.  Then
# N terraform_plan calls of the demo module on terraform's claim against
# bare `terraform init; terraform plan -out` in a copy of it.  Between
# the two, sessions (bench_session.py): the first call of a session on
# a full warm pool against one whose claim makes its Sandbox cold, and
# run_python p50 in a session, the agent reached over pods/exec.
set -e
build=$(cd "${1:?usage: bench.sh BUILD [N]}" && pwd)
n=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=$(mktemp -d /tmp/k8s-bench.XXXXXX)
cd "$work"

# The few atf-sh functions k8s.subr and kb.subr use.
atf_get_srcdir() { echo "$here"; }
atf_config_get() { case $1 in srcdir) echo "$top" ;; bindir) echo "$build/bin" ;; esac; }
atf_fail() { echo "bench: $*" >&2; exit 1; }
atf_skip() { echo "bench: skipped: $*" >&2; exit 0; }
atf_check() {
	while [ $# -gt 0 ]; do
		case $1 in -o|-e|-s) shift 2 ;; *) break ;; esac
	done
	"$@" >/dev/null
}
. "$here/k8s.subr"
. "$here/kb.subr"
trap 'kb_stop; cd /; rm -rf "$work"' EXIT

# runnerd and the stand-in peers stopped, for a runnerd configured anew.
stop_runnerd_peers()
{
	kb_stop_runnerd
	[ ! -f peers.pid ] || kill "$(cat peers.pid)"
	rm -f peers.pid run/*.sock
}

# The session agent where images/session has it, for the runner.
mkdir -p image/usr/local/libexec/agent-sandbox
cp "$top/sandbox-init/session-agent.py" image/usr/local/libexec/agent-sandbox/
K8S_DOUBLE_IMAGE=$work/image
export K8S_DOUBLE_IMAGE
kb_cluster
kb_runnerd
kb_tool run_shell '{"command": "true"}' -n 3 >/dev/null	# warm up
printf 'no credential:   '
kb_tool run_shell '{"command": "true"}' -n "$n"
stop_runnerd_peers
kb_runnerd --secret bench-credential
printf 'with a Secret:   '
kb_tool run_shell '{"command": "true"}' -n "$n"
printf 'kubectl create + wait + delete (the double alone): '
python3 "$here/mkjob.py" b > b.json
sed 's/"namespace": *"demo-app"/"namespace": "agent-sandbox"/' b.json > j.json
t0=$(date +%s%N)
i=0
while [ $i -lt "$n" ]; do
	kubectl create --validate=false -f j.json >/dev/null
	kubectl wait --for=condition=complete job/b -n agent-sandbox \
	    --timeout=30s >/dev/null
	kubectl delete job b -n agent-sandbox --cascade=background >/dev/null
	i=$((i + 1))
done
echo "$(( ($(date +%s%N) - t0) / 1000000 / n )) ms per Job"

stop_runnerd_peers
kubectl create --validate=false -f "$top/cluster/session-template.yaml" \
    >/dev/null
# A pool that keeps nothing ready: each claim makes its Sandbox.
kubectl create --validate=false -f - >/dev/null <<'EOF'
apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxWarmPool
metadata:
  name: cold
  namespace: agent-sandbox
spec:
  replicas: 0
  sandboxTemplateRef:
    name: agent-sandbox-session
EOF
for pool in agent-sandbox-session cold; do
	KB_SESSIONS_MAX=16 KB_RUNNERD_EXTRA="  timeout: 10s" \
	    KB_KUBE_EXTRA="  session_pool: $pool" kb_runnerd
	calls=0
	[ "$pool" = cold ] || calls=$((n * 10))
	python3 "$here/bench_session.py" run/runner.sock "$pool" "$n" "$calls"
	stop_runnerd_peers
done

command -v terraform >/dev/null || { echo "bench: no terraform"; exit 0; }
kb_claim
mkdir -p "$CLAIM/modules"
cp -R "$top/terraform/demo" "$CLAIM/modules/"
stop_runnerd_peers
KB_KUBE_EXTRA="  pvc: terraform
  pvc_path: $CLAIM" kb_runnerd --working-dir-path "$CLAIM/modules/demo"
printf 'terraform_plan on the claim: '
kb_tool terraform_plan '{"working_dir": "demo"}' -n "$n"
printf 'bare terraform init + plan:  '
cp -R "$top/terraform/demo" bare
t0=$(date +%s%N)
i=0
while [ $i -lt "$n" ]; do
	rm -rf bare/.terraform bare/plan
	(cd bare && TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1 \
	    TF_CLI_CONFIG_FILE=/dev/null terraform init -input=false \
	    >/dev/null && TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1 \
	    TF_CLI_CONFIG_FILE=/dev/null terraform plan -input=false \
	    -out=plan >/dev/null)
	i=$((i + 1))
done
echo "$(( ($(date +%s%N) - t0) / 1000000 / n )) ms per plan"
