#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Code-execution sessions on the kubernetes backend, against the API
# double with agent-sandbox's kinds (k8s_sandbox.py): the session checks
# that run on gvisor (regress/runnerd/session_check.py) run here on a
# SandboxClaim of cluster/session-template.yaml, the agent reached over
# pods/exec.  Then what goes wrong: a claim that is never ready, the
# sandbox's pod deleted under a live session, a template that Pod
# Security refuses on the pod, a cluster without the CRDs, and claims
# a dead runnerd left.  The checks that probe the sandbox's isolation
# stay on gvisor: the double runs pods unconfined on this machine.

. "$(atf_get_srcdir)/k8s.subr"
. "$(atf_get_srcdir)/kb.subr"

KS_RD="$K8S_SRC/../runnerd"
SS_CHECK="$KS_RD/session_check.py"
export KS_RD

# ks_cluster [double args]: the double, runnerd's RBAC, the template
# and warm pool of cluster/ (unless KS_NO_POOL), and the session
# agent where images/session puts it, in the image the runner sees.
ks_cluster()
{
	img=$(pwd)/image/usr/local/libexec/agent-sandbox
	mkdir -p "$img"
	cp "$(atf_config_get srcdir)/sandbox-init/session-agent.py" "$img/" ||
	    atf_fail "no session agent"
	K8S_DOUBLE_IMAGE=$(pwd)/image
	export K8S_DOUBLE_IMAGE
	kb_cluster "$@"
	if [ -z "${KS_NO_POOL:-}" ]; then
		kubectl create --validate=false \
		    -f "${KS_TEMPLATE:-$(k8s_cluster)/session-template.yaml}" \
		    >/dev/null || atf_fail "cannot create the template and pool"
	fi
}

# ks_runnerd [runnerd lines]: runnerd with sessions on.
ks_runnerd()
{
	KB_SESSIONS_MAX=16 KB_RUNNERD_EXTRA="  timeout: 3s
$*" KB_KUBE_EXTRA="  session_start: ${KS_START:-20s}" kb_runnerd
}

ks_left()
{
	kubectl get sandboxclaims -n agent-sandbox -o name
}

ks_none()
{
	left=$(ks_left)
	[ -z "$left" ] || atf_fail "claims left: $left"
}

ks_check()
{
	python3 "$SS_CHECK" "$1" run/runner.sock 2>err ||
	    atf_fail "$(tr '\n' ' ' < err)"
}

ks_case()
{
	atf_test_case "$1" cleanup
	eval "$1_head() {
		atf_set descr '$2'
		atf_set timeout 240
	}
	$1_body() {
		ks_cluster
		ks_runnerd \"\${KS_EXTRA_$1:-}\"
		ks_check $1
		kb_stop_runnerd
		ks_none
	}
	$1_cleanup() { kb_stop; }"
}

# As runnerd/t_session.sh reap: idle passed well before the lifetime.
KS_EXTRA_reap="  session_idle: 2s
  session_lifetime: 8s"

ks_case state "state persists; a crash loses only Python state; reset clears it"
ks_case primes "SHA-256 of the first 1000 primes: sandbox equals host"
ks_case files "binary-safe files under /work only; links and .. refused"
ks_case timeout "call timeout and output cap end the call, not the session"
ks_case owner "another client cannot use a session; it ends with its client"
ks_case reap "idle and over-age sessions are reaped"
ks_case audit "code, commands and outputs are in the audit log"
ks_case nul "NUL and non-UTF-8 output returned whole; the session lives on"

# ks_call CODE [SESSION]: one run_python; the result JSON on stdout.
ks_call()
{
	python3 - run/runner.sock "$@" <<'EOF'
import json, os, sys
sys.path.insert(0, os.environ["KS_RD"])
from sesscall import Client
c = Client(sys.argv[1])
args = {"code": sys.argv[2]}
if len(sys.argv) > 3:
    args["session_id"] = sys.argv[3]
print(json.dumps(c.call("run_python", **args)))
EOF
}

atf_test_case claim cleanup
claim_head()
{
	atf_set descr "a claim on each session, bound to a warm sandbox; deleted at close"
	atf_set timeout 180
}
claim_body()
{
	ks_cluster
	ks_runnerd
	python3 - run/runner.sock > out <<'EOF' || atf_fail "$(cat out)"
import json, subprocess, sys, time
sys.path.insert(0, __import__("os").environ["KS_RD"])
from sesscall import Client

def kubectl(*a):
    return json.loads(subprocess.check_output(("kubectl",) + a + (
        "-n", "agent-sandbox", "-o", "json")))

c = Client(sys.argv[1])
# The pool's two sandboxes are ready first: the claim takes one.
for _ in range(100):
    pool = kubectl("get", "sandboxwarmpool", "agent-sandbox-session")
    if pool.get("status", {}).get("readyReplicas") == 2:
        break
    time.sleep(0.1)
else:
    sys.exit("the warm pool never had 2 ready sandboxes")
r = c.call("run_python", code="x = 41")
assert not r.get("isError"), r
sid = r["structuredContent"]["session_id"]
claims = kubectl("get", "sandboxclaims")["items"]
assert len(claims) == 1, claims
cl = claims[0]
assert cl["metadata"]["labels"]["agent-sandbox/session-id"] == sid, cl
assert cl["spec"]["warmPoolRef"]["name"] == "agent-sandbox-session", cl
ready = [x for x in cl["status"]["conditions"] if x["type"] == "Ready"]
assert ready and ready[0]["status"] == "True", cl
sbx = cl["status"]["sandbox"]["name"]
assert sbx.startswith("agent-sandbox-session-"), "not a warm one: " + sbx
r = c.call("run_python", code="x + 1", session_id=sid)
assert r["structuredContent"]["stdout"] == "42\n", r
r = c.call("close_session", session_id=sid)
assert not r.get("isError"), r
for _ in range(100):
    if not kubectl("get", "sandboxclaims")["items"] and not [
            s for s in kubectl("get", "sandboxes")["items"]
            if s["metadata"]["name"] == sbx]:
        break
    time.sleep(0.1)
else:
    sys.exit("the claim or its sandbox is left after close")
print("ok")
EOF
	grep -q '"/api/v1/namespaces/agent-sandbox/pods/[^"]*/exec"' \
	    state/requests.jsonl || atf_fail "no pods/exec request"
	grep '/exec"' state/requests.jsonl | grep -q '"user": "system:serviceaccount:agent-sandbox:runnerd"' ||
	    atf_fail "the exec was not runnerd's own"
	# cluster/rbac-runnerd.yaml allows every request runnerd made.
	if grep '"user": "system:serviceaccount:agent-sandbox:runnerd"' \
	    state/requests.jsonl | grep '"code": 403'; then
		atf_fail "runnerd was refused by its own RBAC"
	fi
}
claim_cleanup()
{
	kb_stop
}

atf_test_case unbound cleanup
unbound_head()
{
	atf_set descr "a claim that is never ready: the deadline, a clear error, nothing left"
	atf_set timeout 120
}
unbound_body()
{
	KS_NO_POOL=1 ks_cluster
	KS_START=2s ks_runnerd
	ks_call "1" > r.json
	atf_check -o match:'not ready within kubernetes.session_start' \
	    -o match:'"isError": true' cat r.json
	grep -q 'WarmPoolNotFound' runnerd.log ||
	    atf_fail "runnerd's log lacks the claim's condition: $(cat runnerd.log)"
	ks_none
}
unbound_cleanup()
{
	kb_stop
}

atf_test_case podgone cleanup
podgone_head()
{
	atf_set descr "the sandbox's pod deleted under a live session: it ends with the reason, nothing is left"
	atf_set timeout 180
}
podgone_body()
{
	ks_cluster
	ks_runnerd
	python3 - run/runner.sock > out <<'EOF' ||
import json, os, subprocess, sys, time
sys.path.insert(0, os.environ["KS_RD"])
from sesscall import Client

c = Client(sys.argv[1])
r = c.call("run_python", code="x = 1")
assert not r.get("isError"), r
sid = r["structuredContent"]["session_id"]
cl = json.loads(subprocess.check_output(("kubectl", "get", "sandboxclaims",
                "-n", "agent-sandbox", "-o", "json")))["items"][0]
sbx = cl["status"]["sandbox"]["name"]
subprocess.check_call(("kubectl", "delete", "pod", sbx, "-n",
                       "agent-sandbox"), stdout=subprocess.DEVNULL)
for _ in range(100):
    r = c.call("run_python", code="x", session_id=sid)
    if "no session" in r["content"][0]["text"]:
        break
    time.sleep(0.1)
ends = [json.loads(l) for l in open("events.jsonl")]
ends = [e["fields"] for e in ends if e["event"] == "sandbox.completed"
        and e["fields"].get("session_id") == sid]
assert ends and "pod was deleted" in ends[0]["reason"], ends
for _ in range(100):
    left = subprocess.check_output(("kubectl", "get", "sandboxclaims,"
                                    "sandboxes", "-n", "agent-sandbox",
                                    "-o", "name")).decode().split()
    if not [n for n in left if n.endswith("/" + sbx) or "claim" in n]:
        break
    time.sleep(0.1)
else:
    sys.exit("left: %s" % left)
print("ok")
EOF
	    atf_fail "$(cat out)"
}
podgone_cleanup()
{
	kb_stop
}

atf_test_case restricted cleanup
restricted_head()
{
	atf_set descr "a template without runAsNonRoot: its pod is refused by Pod Security, the claim never ready"
	atf_set timeout 120
}
restricted_body()
{
	sed -e '/runAsNonRoot: true/d' -e 's/replicas: 2/replicas: 0/' \
	    "$(k8s_cluster)/session-template.yaml" > bad-template.yaml
	KS_TEMPLATE=$(pwd)/bad-template.yaml ks_cluster
	KS_START=2s ks_runnerd
	ks_call "1" > r.json
	atf_check -o match:'not ready within' cat r.json
	grep -q 'violates PodSecurity "restricted:latest"' runnerd.log ||
	    atf_fail "runnerd's log lacks the refusal: $(cat runnerd.log)"
	atf_check -o empty kubectl get pods -n agent-sandbox -o name
	ks_none
}
restricted_cleanup()
{
	kb_stop
}

# ks_sessions_off WHY: runnerd's log gives WHY (a grep pattern); then
# run_shell runs one-shot, as on gvisor: a Job each, no claim.  The
# first learns that sessions are off from the helper, the second after
# run_python was refused with WHY.
ks_sessions_off()
{
	i=0
	until grep -q "$1" runnerd.log; do
		i=$((i + 1))
		[ $i -le 100 ] || atf_fail "runnerd's log does not say: $1"
		sleep 0.1
	done
	kb_call 'echo one-shot' > s1.json
	ks_call "1" > r.json
	atf_check -o match:"$1" -o match:'"isError": true' cat r.json
	kb_call 'echo one-shot' > s2.json
	for r in s1.json s2.json; do
		atf_check -o inline:'0|exited|False\n' python3 -c '
import json, sys; r = json.load(open(sys.argv[1])); s = r["structuredContent"]
assert s["stdout"] == "one-shot\n", s
print("%d|%s|%s" % (s["exit_code"], s["status"], r["isError"]))' "$r"
	done
}

atf_test_case nocrds cleanup
nocrds_head()
{
	atf_set descr "no agent-sandbox CRDs: runnerd starts with sessions off and says why; run_shell runs one-shot"
	atf_set timeout 120
}
nocrds_body()
{
	KS_NO_POOL=1 ks_cluster --no-agent-sandbox
	ks_runnerd
	ks_sessions_off 'sessions are off on the kubernetes backend: the cluster does not serve the agent-sandbox CRDs'
	atf_check -o inline:'2\n' sh -c \
	    'grep "\"sandbox.started\"" events.jsonl | grep -c "\"kubernetes\""'
	ks_none
}
nocrds_cleanup()
{
	kb_stop
}

atf_test_case oldcrds cleanup
oldcrds_head()
{
	atf_set descr "agent-sandbox CRDs that serve only v1alpha1: sessions off with the version runnerd needs named; run_shell runs one-shot"
	atf_set timeout 120
}
oldcrds_body()
{
	KS_NO_POOL=1 ks_cluster --agent-sandbox-version v1alpha1
	atf_check -o match:'^sandboxclaims' sh -c \
	    'kubectl api-resources --api-group=extensions.agents.x-k8s.io --no-headers'
	ks_runnerd
	ks_sessions_off 'the cluster.s agent-sandbox CRDs serve extensions.agents.x-k8s.io v1alpha1, and runnerd needs v1beta1'
	# Nothing was asked of the old version: runnerd only looked.
	atf_check -o inline:'0\n' sh -c \
	    'grep -c "/v1alpha1/" state/requests.jsonl || :'
	ks_none
}
oldcrds_cleanup()
{
	kb_stop
}

atf_test_case sweep cleanup
sweep_head()
{
	atf_set descr "claims a dead runnerd left are deleted at the next start"
	atf_set timeout 120
}
sweep_body()
{
	ks_cluster
	cat > left.yaml <<'EOF'
apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxClaim
metadata:
  name: as-00000000000000aa
  namespace: agent-sandbox
  labels:
    app.kubernetes.io/managed-by: agent-sandbox-runnerd
spec:
  warmPoolRef:
    name: agent-sandbox-session
---
apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxClaim
metadata:
  name: someone-elses
  namespace: agent-sandbox
spec:
  warmPoolRef:
    name: agent-sandbox-session
EOF
	atf_check -o ignore kubectl create --validate=false -f left.yaml
	ks_runnerd
	i=0
	while kubectl get sandboxclaim as-00000000000000aa -n agent-sandbox \
	    >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -le 100 ] || atf_fail "the leftover claim was not swept"
		sleep 0.1
	done
	ks_left | grep -q someone-elses || atf_fail "a claim not of runnerd's was swept"
}
sweep_cleanup()
{
	kb_stop
}

atf_test_case verify cleanup
verify_head()
{
	atf_set descr "scripts/k8s-verify's session check, with the real kubectl exec, passes"
	atf_set timeout 180
}
verify_body()
{
	ks_cluster
	# The check's Python, as k8s-verify runs it.
	sed -n "/^	python3 - \"\$TOP\/regress\/lib\" \"\$@\" <<'EOF'$/,/^EOF$/p" \
	    "$(atf_config_get srcdir)/scripts/k8s-verify" | sed '1d;$d' > probe.py
	[ -s probe.py ] || atf_fail "no session check in k8s-verify"
	python3 probe.py "$(atf_config_get srcdir)/regress/lib" agent-sandbox \
	    agent-sandbox-session \
	    /usr/local/libexec/agent-sandbox/session-agent.py 2>err ||
	    atf_fail "$(cat err)"
}
verify_cleanup()
{
	kb_stop
}

atf_init_test_cases()
{
	for t in claim state primes files timeout owner reap audit nul \
	    unbound podgone restricted nocrds oldcrds sweep verify; do
		atf_add_test_case "$t"
	done
}
