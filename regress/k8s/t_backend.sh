#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# runnerd's kubernetes backend against the API double, as runnerd's own
# least-privileged ServiceAccount (cluster/rbac-runnerd.yaml): a command
# runs as a Job, its exit status and output come back, the credential is
# a file in /run/secrets, the deadline and a cancel end it, and nothing
# is left in the namespace; leftovers of a dead runnerd are swept; a
# client certificate serves as well as a token; the helper is runnerd
# executed again, with nothing of the engine's.

. "$(atf_get_srcdir)/k8s.subr"
. "$(atf_get_srcdir)/kb.subr"

atf_test_case run cleanup
run_head()
{
	atf_set "descr" "a command runs as a Job: status, output, cleanup"
	atf_set "timeout" "120"
}
run_body()
{
	kb_cluster
	kb_runnerd
	kb_call 'echo hello from the pod; echo oops >&2; exit 3' > r.json
	atf_check -o inline:'3|exited|True\n' python3 -c '
import json; r = json.load(open("r.json")); s = r["structuredContent"]
assert "hello from the pod" in s["stdout"] and "oops" in s["stdout"], s
print("%d|%s|%s" % (s["exit_code"], s["status"], r["isError"]))'
	kb_left > left
	atf_check -o empty cat left
	grep -q '"sandbox.completed"' events.jsonl || atf_fail "no sandbox.completed"
	grep '"sandbox.started"' events.jsonl | grep -q '"kubernetes"' ||
	    atf_fail "sandbox.started does not name the backend"
}
run_cleanup()
{
	kb_stop
}

# stdout (as JSON), exit code and status of the call in r.json
end_outcome()
{
	python3 -c '
import json; s = json.load(open("r.json"))["structuredContent"]
print("%s|%d|%s" % (json.dumps(s["stdout"]), s["exit_code"], s["status"]))'
}

atf_test_case end cleanup
end_head()
{
	atf_set "descr" "a call ends at the end line its Job writes on the pod log, not at the Job end; the line is cut off exactly; a signal waits for the kubelet"
	atf_set "timeout" "120"
}
end_body()
{
	kb_cluster
	KB_RUNNERD_EXTRA="  timeout: 20s" kb_runnerd
	kb_call 'printf abc; exit 4' > r.json
	atf_check_equal '"abc"|4|exited' "$(end_outcome)"
	# A process left behind keeps the double s container and its log
	# open until the deadline: the call still ends with its command,
	# from the log followed, not with the Job.
	kb_call 'echo out; sleep 1000 &' > r.json
	atf_check_equal '"out\n"|0|exited' "$(end_outcome)"
	atf_check -o match:'follow=true' grep '/log"' state/requests.jsonl
	# Killed by a signal (the OOM killer or the deadline, elsewhere):
	# the kubelet says how the container ended.
	kb_call 'kill -TERM $$' > r.json
	atf_check_equal '""|143|exited' "$(end_outcome)"
	kb_left > left
	atf_check -o empty cat left
}
end_cleanup()
{
	kb_stop
}

atf_test_case sequential cleanup
sequential_head()
{
	atf_set "descr" "calls one after another each get their own connection: none hangs"
	atf_set "timeout" "120"
}
sequential_body()
{
	kb_cluster
	kb_runnerd
	kb_tool run_shell '{"command": "echo x"}' -n 6 > seq.json ||
	    atf_fail "a call failed: $(cat seq.json)"
	atf_check -o match:'"failed": 0' cat seq.json
	kb_left > left
	atf_check -o empty cat left
}
sequential_cleanup()
{
	kb_stop
}

atf_test_case credential cleanup
credential_head()
{
	atf_set "descr" "the credential is the file /run/secrets/credential, its bytes never come back, and its Secret goes with the Job"
	atf_set "timeout" "120"
}
credential_body()
{
	kb_cluster
	kb_runnerd --secret 's3cret-value-42'
	kb_call 'cat /run/secrets/credential; ls /run/secrets' > r.json
	# The pod read it; its bytes do not come back (runnerd/redact.c).
	atf_check -o match:'^<redacted:credential>credential$' \
	    python3 -c 'import json; print(json.load(open("r.json"))["structuredContent"]["stdout"])'
	kb_left > left
	atf_check -o empty cat left
	if grep -rq 's3cret-value-42' r.json runnerd.log events.jsonl; then
		atf_fail "the credential leaked into a log"
	fi
}
credential_cleanup()
{
	kb_stop
}

atf_test_case deadline cleanup
deadline_head()
{
	atf_set "descr" "activeDeadlineSeconds ends a long command: status deadline"
	atf_set "timeout" "120"
}
deadline_body()
{
	kb_cluster
	KB_RUNNERD_EXTRA="  timeout: 2" kb_runnerd
	kb_call 'sleep 60' > r.json
	atf_check -o inline:'deadline|True\n' python3 -c '
import json; s = json.load(open("r.json"))["structuredContent"]
print("%s|%s" % (s["status"], s["timed_out"]))'
	kb_left > left
	atf_check -o empty cat left
}
deadline_cleanup()
{
	kb_stop
}

atf_test_case cancel cleanup
cancel_head()
{
	atf_set "descr" "a cancelled call ends with status killed and cleans up"
	atf_set "timeout" "120"
}
cancel_body()
{
	kb_cluster
	kb_runnerd
	kb_call 'sleep 60' --cancel-after 1.5 > r.json
	atf_check -o inline:'killed\n' python3 -c '
import json; print(json.load(open("r.json"))["structuredContent"]["status"])'
	kb_left > left
	atf_check -o empty cat left
}
cancel_cleanup()
{
	kb_stop
}

atf_test_case sweep cleanup
sweep_head()
{
	atf_set "descr" "a Job and Secret left by a dead runnerd are deleted at start-up and recorded as sandbox.swept"
	atf_set "timeout" "120"
}
sweep_body()
{
	kb_cluster
	KB_RUNNERD_EXTRA="  timeout: 300" kb_runnerd --secret leftover
	kb_call 'sleep 300' > /dev/null 2>&1 &
	i=0
	while [ "$(kubectl get secrets -n agent-sandbox -o name)" = "" ]; do
		i=$((i + 1))
		[ $i -le 200 ] || atf_fail "no Secret was created"
		sleep 0.05
	done
	name=$(kubectl get jobs -n agent-sandbox -o name)
	kb_crash_runnerd
	kb_left > left
	atf_check -o match:"$name" cat left
	kb_runnerd
	i=0
	while [ -n "$(kb_left 2>/dev/null)" ]; do
		i=$((i + 1))
		[ $i -le 100 ] || atf_fail "the leftovers were not swept"
		sleep 0.05
	done
	id=${name#job.batch/as-}
	i=0
	until grep '"sandbox.swept"' events.jsonl | grep -q "req-$id"; do
		i=$((i + 1))
		[ $i -le 100 ] || atf_fail "no sandbox.swept for req-$id"
		sleep 0.05
	done
}
sweep_cleanup()
{
	kb_stop
}

atf_test_case helper_exec cleanup
helper_exec_head()
{
	atf_set "descr" "the kubernetes helper is runnerd executed again: stdio, its channel and its signalfd open, nothing of the engine, its own memory layout"
	atf_set "timeout" "60"
}
helper_exec_body()
{
	kb_cluster
	kb_runnerd
	e=$(cat runnerd.pid)
	atf_check python3 "$K8S_SRC/../lib/helper_exec.py" "$e" -K \
	    0="$(readlink /proc/$e/fd/0)" 1="$(pwd)/runnerd.log" \
	    2="$(pwd)/runnerd.log" 3=socket 4="anon_inode:[signalfd]"
}
helper_exec_cleanup()
{
	kb_stop
}

# client_kubeconfig CA CN: runnerd.kubeconfig with a client certificate
# for CN issued by CA (ca: the double's; other-ca: a stranger's).
client_kubeconfig()
{
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	    -keyout client.key -out client.csr -subj "/O=agent-sandbox/CN=$2" \
	    2>/dev/null &&
	openssl x509 -req -in client.csr -CA "$1.pem" -CAkey "$1.key" \
	    -CAcreateserial -out client.pem -days 1 2>/dev/null ||
	    atf_fail "cannot make a client certificate"
	k8s_kubeconfig_user runnerd.kubeconfig "client-certificate: $(pwd)/client.pem
    client-key-data: $(base64 -w0 client.key)"
}

atf_test_case client_certificate cleanup
client_certificate_head()
{
	atf_set "descr" "runnerd authenticates with the kubeconfig's client certificate (a file and inline key data): its User is bound to runnerd's Role and a call runs; a certificate from another CA gets no call through"
	atf_set "timeout" "120"
}
client_certificate_body()
{
	kb_cluster --client-ca ca.pem
	cat > rb.json <<'RB'
{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
 "metadata": {"name": "runnerd-x509", "namespace": "agent-sandbox"},
 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
             "name": "runnerd"},
 "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
               "name": "runnerd-x509"}]}
RB
	kubectl create --validate=false -f rb.json >/dev/null ||
	    atf_fail "cannot bind the certificate's user"
	client_kubeconfig ca runnerd-x509
	kb_runnerd
	kb_call 'echo hello over x509' > r.json
	atf_check -o inline:'0|exited\n' python3 -c '
import json; s = json.load(open("r.json"))["structuredContent"]
assert "hello over x509" in s["stdout"], s
print("%d|%s" % (s["exit_code"], s["status"]))'
	grep -q '"user": "runnerd-x509", "verb": "create", "code": 201' \
	    state/requests.jsonl || atf_fail "the Job was not made as runnerd-x509"
	kb_left > left
	atf_check -o empty cat left
	kb_stop_runnerd

	client_kubeconfig other-ca runnerd-x509
	before=$(grep -c '"user": "runnerd-x509"' state/requests.jsonl)
	kb_runnerd
	kb_call 'echo nope' > r.json
	atf_check -o inline:'failed\n' python3 -c '
import json; print(json.load(open("r.json"))["structuredContent"]["status"])'
	atf_check_equal "$before" \
	    "$(grep -c '"user": "runnerd-x509"' state/requests.jsonl)"
	kb_left > left
	atf_check -o empty cat left
}
client_certificate_cleanup()
{
	kb_stop
}

atf_test_case limits cleanup
limits_head()
{
	atf_set "descr" "the gvisor backend limits inside the pod; an allocation past memory, OOMKilled and a failed fork reported as memory_limit and pids_limit; a sandbox killed whole as an error"
	atf_set "timeout" "120"
}
limits_body()
{
	kb_cluster
	kb_runnerd
	# run_shell runs the agent's code: its address space is capped too,
	# at memory (512M), below the pod's limit.
	kb_call 'grep -E "^Max (processes|open files|core file size|address space)" /proc/self/limits' \
	    > r.json
	atf_check -o inline:'core file size 0 0\nprocesses 64 64\nopen files 1024 1024\naddress space 536870912 536870912\n' \
	    python3 -c '
import json; s = json.load(open("r.json"))["structuredContent"]
for line in s["stdout"].splitlines():
    w = line.split()     # Max NAME... SOFT HARD UNIT
    print(" ".join(w[1:-3]), w[-3], w[-2])'
	# One allocation past it fails in its process, in coreutils words.
	kb_call 'dd if=/dev/zero of=/dev/null bs=576M count=1' > r.json
	atf_check -o inline:'memory_limit|True|False|True\n' python3 -c '
import json; r = json.load(open("r.json")); s = r["structuredContent"]
print("%s|%s|%s|%s" % (s["status"], s["memory_limit"], s["pids_limit"],
      r["isError"]))'
	# The kernel ending gVisor s sandbox whole on the real node: exit
	# code 255, reason Error, no end line; nothing says it was memory.
	touch state/oom-killed
	kb_call 'echo before; kill -9 0' > r.json
	atf_check -o inline:'failed|255|False|True\n' python3 -c '
import json; r = json.load(open("r.json")); s = r["structuredContent"]
print("%s|%s|%s|%s" % (s["status"], s["exit_code"], s["memory_limit"],
      r["isError"]))'
	atf_check -o match:'the sandbox ended before its command did \(exit code 255, reason Error\)' \
	    cat r.json
	# Where the runtime tells the kubelet, OOMKilled is memory_limit.
	echo OOMKilled > state/oom-killed
	kb_call 'kill -9 0' > r.json
	atf_check -o inline:'memory_limit|True|False|True\n' python3 -c '
import json; r = json.load(open("r.json")); s = r["structuredContent"]
print("%s|%s|%s|%s" % (s["status"], s["memory_limit"], s["pids_limit"],
      r["isError"]))'
	rm state/oom-killed
	# A pod log is both streams: a fork refused past RLIMIT_NPROC, in
	# the words of dash, is found there.
	kb_call 'echo "sh: 1: Cannot fork" >&2; exit 2' > r.json
	atf_check -o inline:'exited|False|True|True\n' python3 -c '
import json; r = json.load(open("r.json")); s = r["structuredContent"]
print("%s|%s|%s|%s" % (s["status"], s["memory_limit"], s["pids_limit"],
      r["isError"]))'
	atf_check -o match:'process limit' cat r.json
	atf_check -s exit:1 -o empty grep stderr_in_stdout r.json
}
limits_cleanup()
{
	kb_stop
}

atf_init_test_cases()
{
	atf_add_test_case client_certificate
	atf_add_test_case run
	atf_add_test_case end
	atf_add_test_case limits
	atf_add_test_case sequential
	atf_add_test_case credential
	atf_add_test_case deadline
	atf_add_test_case cancel
	atf_add_test_case sweep
	atf_add_test_case helper_exec
}
