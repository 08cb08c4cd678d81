#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# runnerd's call pipeline around the sandbox: policy, audit, credential,
# cancel, start-up sweep, and no start without runsc.

rd_setup()
{
	RD_BIN=$(atf_config_get bindir)
	RD_LIB=$(atf_get_srcdir)
	. "$RD_LIB/rd.subr"
}

rd_head()
{
	atf_set require.user root
	atf_set require.progs runsc python3
	atf_set timeout 60
}

# Events recorded for the one call made so far, in order.
events()
{
	python3 -c 'import json
for l in open("events.jsonl"):
    e = json.loads(l)
    print(e.get("event") or ("brokerd." + ("issued" if "issued" in e else "revoked")))'
}

atf_test_case order cleanup
order_head() { rd_head; atf_set descr "a call's events come in the contract's order"; }
order_body()
{
	rd_setup
	rd_start --secret s3 || atf_fail "start"
	rd_call 'echo hi' || atf_fail "call"
	[ "$(rd_get isError)" = false ] || atf_fail "$(rd_get text)"
	events > ev
	atf_check -o inline:"tool.request\nguardrail.decision\nbrokerd.issued\nsandbox.started\nsandbox.completed\nbrokerd.revoked\ntool.result\n" cat ev
	rd_stop
}
order_cleanup() { rd_setup; rd_stop; }

atf_test_case denied cleanup
denied_head() { rd_head; atf_set descr "a denied call runs nothing"; }
denied_body()
{
	rd_setup
	rd_start --deny run_shell || atf_fail "start"
	rd_call 'echo hi' || atf_fail "call"
	[ "$(rd_get isError)" = true ] || atf_fail "not an error"
	rd_get text | grep -q "denied by policy" || atf_fail "$(rd_get text)"
	# A refusal names its call and says how and why it ended.
	[ "$(rd_get status)" = denied ] || atf_fail "status $(rd_get status)"
	rd_get reason | grep -q "denied by policy" || atf_fail "no reason"
	grep -q "\"request_id\": \"$(rd_get request_id)\"" events.jsonl ||
	    atf_fail "request_id $(rd_get request_id) is not the call's"
	events > ev
	atf_check -o inline:"tool.request\nguardrail.decision\ntool.denied\n" cat ev
	rd_stop
}
denied_cleanup() { rd_setup; rd_stop; }

atf_test_case audit_down cleanup
audit_down_head() { rd_head; atf_set descr "no audit record, no sandbox (fail closed)"; }
audit_down_body()
{
	rd_setup
	rd_start --audit-fail || atf_fail "start"
	rd_call 'echo hi' || atf_fail "call"
	[ "$(rd_get isError)" = true ] || atf_fail "not an error"
	rd_get text | grep -q "audit log unavailable" || atf_fail "$(rd_get text)"
	[ "$(rd_get status)" = unrecorded ] || atf_fail "status $(rd_get status)"
	rd_get request_id | grep -Eq '^req-[0-9a-f]{16}$' || atf_fail "no request_id"
	# brokerd was never asked, so no sandbox can have started
	events > ev
	atf_check -o empty cat ev
	rd_stop
}
audit_down_cleanup() { rd_setup; rd_stop; }

# stall_start: auditd's stand-in alone, then the other peers and
# runnerd, so that auditd can be stopped (SIGSTOP) by itself.
stall_start()
{
	rd_peer_alone audit.sock auditd
	rd_start --serve approval.sock --serve broker.sock || atf_fail "start"
	kill -STOP "$(cat auditd.pid)"
}

stall_cleanup()
{
	rd_setup
	[ -f auditd.pid ] && kill -CONT "$(cat auditd.pid)" 2>/dev/null
	rd_stop
}

atf_test_case audit_stalled cleanup
audit_stalled_head() { rd_head; atf_set descr "an event auditd does not acknowledge in time is spooled and recorded later"; }
audit_stalled_body()
{
	rd_setup
	stall_start
	rd_call 'echo hi' || atf_fail "call"
	[ "$(rd_get isError)" = false ] || atf_fail "$(rd_get text)"
	[ "$(wc -l < var/runner/audit.spool)" -eq 5 ] ||
	    atf_fail "spooled: $(cat var/runner/audit.spool)"
	kill -CONT "$(cat auditd.pid)"
	i=0
	while [ -s var/runner/audit.spool ]; do
		i=$((i + 1))
		[ $i -le 100 ] || atf_fail "the spool was not emptied"
		sleep 0.1
	done
	events | grep -v brokerd > ev
	atf_check -o inline:"tool.request\nguardrail.decision\nsandbox.started\nsandbox.completed\ntool.result\n" cat ev
	rd_stop
}
audit_stalled_cleanup() { stall_cleanup; }

atf_test_case audit_stalled_strict cleanup
audit_stalled_strict_head() { rd_head; atf_set descr "audit_spool_after 0: an event auditd does not acknowledge fails its call (fail closed)"; }
audit_stalled_strict_body()
{
	rd_setup
	RD_EXTRA="  audit_spool_after: 0
  peer_timeout: 2s
brokerd:
  vault: { request_timeout: 1s, retries: 0 }"
	stall_start
	rd_call 'echo hi' || atf_fail "call"
	[ "$(rd_get isError)" = true ] || atf_fail "not an error"
	rd_get text | grep -q "audit log unavailable" || atf_fail "$(rd_get text)"
	[ "$(rd_get status)" = unrecorded ] || atf_fail "status $(rd_get status)"
	[ ! -s var/runner/audit.spool ] || atf_fail "spooled"
	rd_stop
}
audit_stalled_strict_cleanup() { stall_cleanup; }

atf_test_case audit_spool_full cleanup
audit_spool_full_head() { rd_head; atf_set descr "an event that does not fit in audit_spool_max is not recorded: its call fails closed"; }
audit_spool_full_body()
{
	rd_setup
	RD_EXTRA="  audit_spool_max: 64k
  peer_timeout: 2s
brokerd:
  vault: { request_timeout: 1s, retries: 0 }"
	stall_start
	# tool.request carries the command, whole up to 64 KiB: with the
	# rest of the event, more than the spool holds.
	rd_call "echo $(head -c 65531 /dev/zero | tr '\0' x)" || atf_fail "call"
	[ "$(rd_get isError)" = true ] || atf_fail "not an error"
	rd_get text | grep -q "audit log unavailable" || atf_fail "$(rd_get text)"
	[ ! -s var/runner/audit.spool ] || atf_fail "spooled"
	grep -q "audit spool: .*No space left" runnerd.log ||
	    atf_fail "$(tr '\n' ' ' < runnerd.log)"
	# A call whose events fit is recorded in the spool.
	rd_call 'echo hi' || atf_fail "call"
	[ "$(rd_get isError)" = false ] || atf_fail "$(rd_get text)"
	[ -s var/runner/audit.spool ] || atf_fail "not spooled"
	rd_stop
}
audit_spool_full_cleanup() { stall_cleanup; }

atf_test_case cancel cleanup
cancel_head() { rd_head; atf_set descr "MSG_TOOL_CANCEL kills the call's sandbox"; }
cancel_body()
{
	rd_setup
	rd_start || atf_fail "start"
	python3 "$RD_LIB/runcall.py" run/runner.sock 'sleep 1000' \
	    --cancel-after 1 > result.json || atf_fail "call"
	rd_expect_status killed 2>err || atf_fail "$(cat err)"
	grep -q '"revoked"' events.jsonl || atf_fail "lease not revoked"
	rd_leftovers 2>err || atf_fail "$(cat err)"
	rd_stop
}
cancel_cleanup() { rd_setup; rd_stop; }

atf_test_case revoke_after_failure cleanup
revoke_after_failure_head() { rd_head; atf_set descr "the lease is revoked after a failing and after a timed-out sandbox"; }
revoke_after_failure_body()
{
	rd_setup
	RD_EXTRA="  timeout: 3s"
	rd_start --secret s3 || atf_fail "start"
	rd_call 'exit 3' || atf_fail "call"
	[ "$(rd_get isError)" = true ] || atf_fail "exit 3 is not an error"
	[ "$(grep -c '"revoked"' events.jsonl)" -eq 1 ] ||
	    atf_fail "lease not revoked after a failure"
	rd_call 'sleep 1000' || atf_fail "call"
	rd_expect_status deadline 2>err || atf_fail "$(cat err)"
	[ "$(grep -c '"revoked"' events.jsonl)" -eq 2 ] ||
	    atf_fail "lease not revoked after the deadline"
	rd_stop
}
revoke_after_failure_cleanup() { rd_setup; rd_stop; }

atf_test_case sweep cleanup
sweep_head() { rd_head; atf_set descr "leftovers of a killed runnerd are swept and recorded"; }
sweep_body()
{
	rd_setup
	rd_start || atf_fail "start"
	python3 "$RD_LIB/runcall.py" run/runner.sock 'sleep 1000' \
	    > /dev/null 2>&1 &
	i=0
	while [ -z "$(ls var/runner/bundles)" ] && [ $i -lt 100 ]; do
		i=$((i + 1)); sleep 0.05
	done
	sleep 1
	pid=$(cat rd.runnerd)
	kill -KILL $(ps -o pid= --ppid "$pid") "$pid"
	[ -n "$(ls var/runner/bundles)" ] || atf_fail "nothing to sweep"
	rid=$(sed -n 's/.*"event": "tool.request", "request_id": "\([^"]*\)".*/\1/p' \
	    events.jsonl)
	"$RD_BIN/runnerd" -d -v -f "$(pwd)/conf.yaml" > runnerd2.log 2>&1 &
	echo $! > rd.runnerd
	RD_RUNNERD=$!
	i=0
	while ! grep -q '"sandbox.swept"' events.jsonl && [ $i -lt 400 ]; do
		i=$((i + 1)); sleep 0.05
	done
	grep '"sandbox.swept"' events.jsonl | grep -q "\"$rid\"" ||
	    atf_fail "no sandbox.swept for $rid: $(cat runnerd2.log)"
	rd_leftovers 2>err || atf_fail "$(cat err)"
	rd_stop
}
sweep_cleanup() { rd_setup; rd_stop; }

atf_test_case no_runsc
no_runsc_head() { atf_set require.user root; atf_set descr "without runsc runnerd refuses to start"; }
no_runsc_body()
{
	RD_BIN=$(atf_config_get bindir)
	mkdir run
	cat > conf.yaml <<CONF
runtime_dir: $(pwd)/run
runnerd:
  user: ""
  runsc: $(pwd)/no-such-runsc
  state_dir: $(pwd)/var
CONF
	atf_check -s not-exit:0 -e match:"install the Debian package runsc" \
	    "$RD_BIN/runnerd" -d -f "$(pwd)/conf.yaml"
	atf_check test ! -e run/runner.sock
}

atf_init_test_cases()
{
	atf_add_test_case order
	atf_add_test_case denied
	atf_add_test_case audit_down
	atf_add_test_case audit_stalled
	atf_add_test_case audit_stalled_strict
	atf_add_test_case audit_spool_full
	atf_add_test_case cancel
	atf_add_test_case revoke_after_failure
	atf_add_test_case sweep
	atf_add_test_case no_runsc
}
