#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Tasks and plan resources (issue 20): the real suite (mcpd, runnerd
# with gVisor, approvald, brokerd, auditd) and the MCP SDK client.  An
# approval-gated terraform_apply runs as a task that waits for the
# operator's approvalctl, also across a stopped approvald, through the
# SDK 1.x client and the v2 client (@modelcontextprotocol/client); a denial and
# a cancellation end it; tasks and plans are their connection's alone.
# The audit log then holds exactly one end for every tool.request, the
# withdrawal of the cancelled task's approval, and the applied call.

. "$(atf_get_srcdir)/../lib/suite.subr"

atf_test_case sdk cleanup
sdk_head()
{
	atf_set "descr" "MCP tasks for approval-gated calls, and plan:// resources, through the MCP SDK client"
	atf_set "require.user" "root"
	atf_set "require.progs" "node runsc terraform python3"
	atf_set "timeout" "400"
}
sdk_body()
{
	modules=${AS_NODE_MODULES:-$(dirname "$(atf_config_get bindir)")/node/node_modules}
	for sdk in sdk client; do
		[ -d "$modules/@modelcontextprotocol/$sdk" ] || atf_fail \
		    "@modelcontextprotocol/$sdk not installed in $modules (make deps)"
	done
	mkdir tf
	for d in a b c d; do
		cp -R "$(as_src)/terraform/demo" "tf/$d"
	done
	as_tf_suite "[a, b, c, d]"
	NODE_PATH=$modules node "$(atf_get_srcdir)/tasks_client.cjs" \
	    "$(dirname "$(as_bin mcpd)")" "$(pwd)/conf.yaml" \
	    "$(awk '$2 == "approvald" { print $1 }' pids)" \
	    >client.out 2>client.err ||
	    { cat client.err >&2; atf_fail "tasks client"; }
	applied=$(cat client.out)
	NODE_PATH=$modules node "$(atf_get_srcdir)/tasks_client_v2.cjs" \
	    "$(dirname "$(as_bin mcpd)")" "$(pwd)/conf.yaml" 2>client2.err ||
	    { cat client2.err >&2; atf_fail "tasks client (v2)"; }
	as_stop
	python3 - var/audit.jsonl "$applied" <<'PY' || atf_fail "audit trail"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ends = ("tool.result", "tool.failed", "tool.denied")
bad = 0
for e in events:
    if e["event"] == "tool.request":
        n = sum(1 for x in events if x["event"] in ends and
                x.get("request_id") == e["request_id"])
        if n != 1:
            print("%s has %d ends" % (e["request_id"], n))
            bad = 1
applied = [e for e in events if e.get("request_id") == sys.argv[2]]
kinds = [e["event"] for e in applied]
if "tool.request" not in kinds or "tool.result" not in kinds or \
        "approval.spent" not in kinds:
    print("the applied call's trail: %s" % kinds)
    bad = 1
if not any(e["event"] == "approval.withdrawn" for e in events):
    print("no approval.withdrawn")
    bad = 1
if not any(e["event"] == "approval.denied" for e in events):
    print("no approval.denied")
    bad = 1
sys.exit(bad)
PY
}
sdk_cleanup()
{
	[ -f pids ] && awk '$2 == "approvald" { print $1 }' pids |
	    xargs -r kill -CONT 2>/dev/null
	as_kill_all
}

# One frame on sock of type with payload: the reply's first word, or
# the error's text when answer is ERROR.
frame()
{
	"$FRAMETOOL" send "$AS_RUN/$1" "$2" "$3" >frame.out 2>&1
	head -1 frame.out
}

atf_test_case frames cleanup
frames_head()
{
	atf_set "descr" "bad TOOL_AWAIT, PLAN_READ, APPROVAL_STATUS and APPROVAL_WITHDRAW frames get a clear answer and change nothing"
	atf_set "require.user" "root"
	atf_set "timeout" "120"
}
frames_body()
{
	mkdir tf
	as_tf_suite "[a]"
	# TOOL_AWAIT 105, PLAN_READ 106; approval.sock 206, 208.
	for bad in '{}' '{"tool":"terraform_apply","arguments":{}}' \
	    '{"tool":"terraform_apply","approval_id":"apr-x","arguments":3}'; do
		frame runner.sock 105 "$bad" | grep -q "^ERROR.*bad TOOL_AWAIT" ||
		    atf_fail "TOOL_AWAIT $bad: $(cat frame.out)"
	done
	# An approval no call of this connection asked for: not waited for,
	# as waiting may withdraw it.
	frame runner.sock 105 '{"tool":"terraform_apply","approval_id":"apr-0",
	    "arguments":{"working_dir":"a"}}' | grep -q \
	    "^ERROR.*apr-0 was not asked for by a call of this connection" ||
	    atf_fail "TOOL_AWAIT, another's approval: $(cat frame.out)"
	for bad in '{}' '{"plan_digest":"'"$(printf '%064d' 0)"'"}' \
	    '{"plan_digest":7}'; do
		frame runner.sock 106 "$bad" | grep -q "^ERROR.*no such plan" ||
		    atf_fail "PLAN_READ $bad: $(cat frame.out)"
	done
	frame approval.sock 206 '{}' | grep -q "^ERROR.*needs an approval_id" ||
	    atf_fail "APPROVAL_STATUS {}: $(cat frame.out)"
	frame approval.sock 208 '{"approval_id":"apr-0"}' |
	    grep -q '^APPROVAL_STATE .*"unknown"' ||
	    atf_fail "APPROVAL_WITHDRAW, unknown: $(cat frame.out)"
	for sock in runner.sock approval.sock; do
		"$FRAMETOOL" ping "$AS_RUN/$sock" >/dev/null ||
		    atf_fail "$sock stopped answering"
	done
	! grep -q '"event":"tool.request"\|"event":"approval.withdrawn"' \
	    var/audit.jsonl || atf_fail "a bad frame was recorded as a call"
	as_stop
}
frames_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case sdk
	atf_add_test_case frames
}
