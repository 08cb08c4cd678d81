#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# MCP log messages (issue 20): a call whose TOOL_CALL asks ("log") gets
# its audit events as MSG_TOOL_LOG on its own connection, scrubbed as
# the audit log is, at the level their meaning gives; a call that does
# not ask gets none, and no call sees another's.  Output with NULs goes
# whole through all of it, and into the audit log.

lg_setup()
{
	RD_BIN=$(atf_config_get bindir)
	RD_LIB=$(atf_get_srcdir)
	export RD_LIB
	. "$RD_LIB/rd.subr"
	FRAMETOOL="$RD_LIB/../lib/frametool"
}

lg_head()
{
	atf_set require.user root
	atf_set require.progs runsc python3
	atf_set timeout 120
}

# send OUT COMMAND LOG: one run_shell call, its frames in OUT.
send()
{
	"$FRAMETOOL" send "${AS_RUN:-run}/runner.sock" 100 "$(python3 -c '
import json, sys
print(json.dumps({"tool": "run_shell", "arguments": {"command": sys.argv[1]},
                  "log": sys.argv[2] == "true"}))' "$2" "$3")" > "$1" ||
	    atf_fail "call: $(cat "$1")"
}

# trail OUT: "level event" a line for each TOOL_LOG in OUT, after checking
# that each names the call its result names.
trail()
{
	python3 -c '
import json, sys
logs, rid = [], None
for line in open(sys.argv[1]):
    kind, _, payload = line.rstrip("\n").partition(" ")
    if kind == "TOOL_LOG":
        logs.append(json.loads(payload))
    elif kind == "TOOL_RESULT":
        rid = json.loads(payload)["structuredContent"]["request_id"]
for e in logs:
    if e["request_id"] != rid or not isinstance(e["fields"], dict):
        sys.exit("%r is not of call %s" % (e, rid))
    print(e["level"], e["event"])' "$1" || atf_fail "$(cat "$1")"
}

# expect FILE TEXT: FILE holds exactly TEXT (and a newline).
expect()
{
	printf '%s\n' "$2" | cmp -s - "$1" ||
	    atf_fail "got: $(cat "$1"); frames: $(cat out)"
}

atf_test_case trail cleanup
trail_head() { lg_head; atf_set descr "the whole trail at info, no secret in it"; }
trail_body()
{
	lg_setup
	rd_start --secret s3 || atf_fail "start"
	secret=ghp_mHtGpGL43CKhh0tuH4gLHyreE3IwETcUHZ9l
	send out "echo $secret >/dev/null" true
	trail out > got
	expect got "info tool.request
info guardrail.decision
info credential.issued
info sandbox.started
info sandbox.completed
info credential.revoked
info tool.result"
	grep '^TOOL_LOG' out | grep -q "$secret" && atf_fail "a secret in a log message"
	grep '^TOOL_LOG' out | grep -q '"event":"tool.request".*"command":' ||
	    atf_fail "the request's arguments are not shown: $(cat out)"
	rd_stop
}
trail_cleanup() { lg_setup; rd_stop; }

atf_test_case escaped cleanup
escaped_head() { lg_head; atf_set descr "secrets after a JSON escape or glued to a word are cut too"; }
escaped_body()
{
	lg_setup
	rd_start || atf_fail "start"
	send out 'printf "%s\n" "{\"out\":\"ok\\nxoxb-1234567890-2345678901234-Xq9hT2mLpR7vKc3nBw8sYz4d\"}" "using keyAKIAQ3EGUV7NH4XWZKPM"' true
	grep '^TOOL_LOG' out > logs
	grep -q '"event":"tool.request"' logs || atf_fail "no request shown: $(cat out)"
	grep -q 'xoxb-1234567890\|AKIAQ3EGUV7NH4XWZKPM' logs &&
	    atf_fail "a secret in a log message: $(cat logs)"
	grep -q '\\n<redacted:slack-token>' logs &&
	    grep -q 'key<redacted:aws-key-id>' logs || atf_fail "$(cat logs)"
	rd_stop
}
escaped_cleanup() { lg_setup; rd_stop; }

atf_test_case refusal cleanup
refusal_head() { lg_head; atf_set descr "a policy refusal at warning"; }
refusal_body()
{
	lg_setup
	rd_start --deny run_shell || atf_fail "start"
	send out "echo hi" true
	trail out > got
	expect got "info tool.request
warning guardrail.decision
warning tool.denied"
	rd_stop
}
refusal_cleanup() { lg_setup; rd_stop; }

atf_test_case failure cleanup
failure_head() { lg_head; atf_set descr "a failed command's result at error"; }
failure_body()
{
	lg_setup
	rd_start || atf_fail "start"
	send out "exit 3" true
	trail out > got
	tail -1 got | grep -qx "error tool.result" || atf_fail "$(cat got)"
	rd_stop
}
failure_cleanup() { lg_setup; rd_stop; }

atf_test_case own_only cleanup
own_only_head() { lg_head; atf_set descr "nothing unasked for, nothing of another call"; }
own_only_body()
{
	lg_setup
	rd_start || atf_fail "start"
	send quiet "echo hi" false
	grep -q '^TOOL_RESULT' quiet || atf_fail "$(cat quiet)"
	grep -q '^TOOL_LOG' quiet && atf_fail "log nobody asked for: $(cat quiet)"
	# Two clients at once: each sees its own call's events only.
	python3 - run/runner.sock <<'PY' || atf_fail "two clients"
import json, os, socket, sys
sys.path.insert(0, os.path.join(os.environ["RD_LIB"], "..", "lib"))
from asframe import MSG_TOOL_CALL, MSG_TOOL_LOG, MSG_TOOL_RESULT, \
    recv_frame, send_frame
clients = {}
for reqid, cmd in ((11, "sleep 1; echo a"), (12, "echo b")):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    send_frame(s, MSG_TOOL_CALL, reqid, {"tool": "run_shell", "log": True,
               "arguments": {"command": cmd}})
    clients[reqid] = s
for reqid, s in clients.items():
    logs = []
    while True:
        mtype, rid, payload, _ = recv_frame(s)
        if mtype == MSG_TOOL_RESULT:
            break
        assert mtype == MSG_TOOL_LOG, mtype
        e = json.loads(payload)
        assert rid == reqid and e["request_id"] == "req-%016x" % reqid, e
        logs.append(e["event"])
    assert logs[0] == "tool.request" and logs[-1] == "tool.result", logs
PY
	rd_stop
}
own_only_cleanup() { lg_setup; rd_stop; }

atf_test_case pending cleanup
pending_head() { lg_head; atf_set descr "a call stopped at a pending approval at notice, with the real peers"; }
pending_body()
{
	lg_setup
	. "$RD_LIB/../lib/suite.subr"
	sed '/^  run_shell:/,/^  [a-z]/s/    tier: low/    tier: high/' \
	    "$(as_src)/etc/policy.yaml" > policy.yaml
	AS_RUNNERD_EXTRA="  sessions_max: 0
  warm_pool: 0"
	AS_BROKERD_EXTRA="  scopes:
    code: { engine: none, tools: [run_shell] }"
	as_conf
	as_start auditd approvald brokerd runnerd
	send out "echo gated" true
	trail out > got
	expect got "info tool.request
info guardrail.decision
notice tool.result"
	# Through the real mcpd: the same trail as notifications/message,
	# each one's fields what auditd recorded for the event.
	python3 - "$(as_bin mcpd)" conf.yaml var/audit.jsonl <<'PY' ||
import json, subprocess, sys
secret = "ghp_mHtGpGL43CKhh0tuH4gLHyreE3IwETcUHZ9l"
p = subprocess.Popen([sys.argv[1], "-f", sys.argv[2]], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
def send(rid, method, params):
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method,
                              "params": params}) + "\n")
    p.stdin.flush()
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == rid:
            return m
        notes.append(m)
notes = []
send(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}})
send(2, "logging/setLevel", {"level": "notice"})
send(3, "tools/call", {"name": "run_shell",
                       "arguments": {"command": "echo " + secret}})
assert [(n["params"]["level"], n["params"]["data"]["event"]) for n in notes] \
    == [("notice", "tool.result")], notes
notes.clear()
send(4, "logging/setLevel", {"level": "debug"})
send(5, "tools/call", {"name": "run_shell",
                       "arguments": {"command": "echo " + secret}})
p.stdin.close()
p.wait()
assert secret not in json.dumps(notes), notes
events = [n["params"]["data"] for n in notes]
assert [e["event"] for e in events] == \
    ["tool.request", "guardrail.decision", "tool.result"], events
recorded = {}
for line in open(sys.argv[3]):
    r = json.loads(line)
    recorded[(r["request_id"], r["event"])] = r["fields"]
for e in events:
    assert recorded[(e["request_id"], e["event"])] == e["fields"], \
        (e, recorded.get((e["request_id"], e["event"])))
PY
	    atf_fail "through mcpd"
	as_stop
}
pending_cleanup()
{
	. "$(atf_get_srcdir)/../lib/suite.subr"
	as_kill_all
}

atf_test_case nul cleanup
nul_head() { lg_head; atf_set descr "output with NULs, through mcpd and the real peers: the result, its log messages and the audit log hold them whole; the chain verifies"; }
nul_body()
{
	lg_setup
	. "$RD_LIB/../lib/suite.subr"
	as_conf
	as_start auditd approvald brokerd runnerd
	python3 - "$(as_bin mcpd)" conf.yaml var/audit.jsonl <<'PY' ||
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "-f", sys.argv[2]], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
def send(rid, method, params):
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method,
                              "params": params}) + "\n")
    p.stdin.flush()
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == rid:
            return m
        notes.append(m)
notes = []
send(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}})
send(2, "logging/setLevel", {"level": "debug"})
r = send(3, "tools/call", {"name": "run_python",
                           "arguments": {"code": "print('x\\0y')"}})["result"]
sid = r["structuredContent"]["session_id"]
assert not r["isError"] and r["structuredContent"]["stdout"] == "x\0y\n" \
    and r["content"][0]["text"] == "x\0y\n", r
r = send(4, "tools/call", {"name": "run_shell", "arguments": {
    "command": "printf 'a\\0b'", "session_id": sid}})["result"]
assert not r["isError"] and r["structuredContent"]["stdout"] == "a\0b", r
send(5, "tools/call", {"name": "close_session",
                       "arguments": {"session_id": sid}})
p.stdin.close()
p.wait()
results = [n["params"]["data"]["fields"] for n in notes
           if n["params"]["data"]["event"] == "tool.result"]
assert [f.get("stdout") for f in results][:2] == ["x\0y\n", "a\0b"], results
recorded = [json.loads(line)["fields"] for line in open(sys.argv[3])
            if '"event":"tool.result"' in line]
assert recorded == results, (recorded, results)
PY
	    atf_fail "through mcpd"
	atf_check -o match:"chain intact" \
	    "$(as_bin auditctl)" -f conf.yaml verify
	as_stop
}
nul_cleanup()
{
	. "$(atf_get_srcdir)/../lib/suite.subr"
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case trail
	atf_add_test_case escaped
	atf_add_test_case refusal
	atf_add_test_case failure
	atf_add_test_case own_only
	atf_add_test_case pending
	atf_add_test_case nul
}
