#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# runnerd reuses an allow that approvald marked reusable (reuse_ms) for
# the next calls of the same tool, until reuse_ms passes: with approvald
# stopped, a session keeps answering.  A deny, an approval required and
# a call carrying approval_id always go to approvald.

. "$(atf_get_srcdir)/../lib/suite.subr"

rd_setup()
{
	RD_BIN=$(atf_config_get bindir)
	RD_LIB=$(atf_get_srcdir)
	. "$RD_LIB/rd.subr"
}

dc_head()
{
	atf_set require.user root
	atf_set require.progs runsc python3
	atf_set timeout 120
}

# dc_expect LOG WANT: each guardrail.decision in audit log LOG, asked
# (of approvald) or reused, one a line, is WANT.
dc_expect()
{
	python3 "$(atf_get_srcdir)/deccache_check.py" decisions "$1" > d.txt ||
	    atf_fail "$(cat d.txt)"
	atf_check -o inline:"$2" cat d.txt
}

# dc_start [peers.py options]: runnerd and the stand-in peers; the
# decisions that reach approvald are noted in decisions.jsonl.
dc_start()
{
	rd_setup
	: > decisions.jsonl
	rd_start --decisions "$(pwd)/decisions.jsonl" "$@" || atf_fail "start"
}

# dc_asked N WHY: N decisions have reached approvald, or the test fails.
dc_asked()
{
	n=$(wc -l < decisions.jsonl)
	[ "$n" -eq "$1" ] || atf_fail "$2: approvald was asked $n times, not $1"
}

# dc_shell ARGS ok|error: one run_shell call with ARGS, and its outcome.
dc_shell()
{
	python3 "$RD_LIB/sesscall.py" run/runner.sock run_shell "$1" > r.json
	python3 -c 'import json, sys; r = json.load(open("r.json"))
sys.exit(1 if r.get("isError") != (sys.argv[1] == "error") else 0)' "$2" ||
	    atf_fail "expected $2: $(cat r.json)"
}

atf_test_case reuse cleanup
reuse_head()
{
	dc_head
	atf_set descr "a second call within reuse_ms does not reach approvald; one with approval_id, or after expiry, does"
}
reuse_body()
{
	# 20 s: beside other tests on a loaded machine one call took more
	# than 5 s, and the second then came after the window.
	dc_start --reuse-ms 20000
	dc_shell '{"command":"echo one"}' ok
	dc_shell '{"command":"echo two"}' ok
	dc_asked 1 "a call within reuse_ms"
	dc_shell '{"command":"echo three","approval_id":"apr-x"}' ok
	dc_asked 2 "a call with approval_id"
	sleep 20.5
	dc_shell '{"command":"echo four"}' ok
	dc_asked 3 "a call after reuse_ms"
	dc_expect events.jsonl "asked\nreused\nasked\nasked\n"
	rd_stop
}
reuse_cleanup() { rd_setup; rd_stop; }

atf_test_case deny_never cleanup
deny_never_head()
{
	dc_head
	atf_set descr "a deny is never reused"
}
deny_never_body()
{
	dc_start --deny run_shell --reuse-ms 60000
	dc_shell '{"command":"echo one"}' error
	dc_shell '{"command":"echo two"}' error
	dc_asked 2 "a denied call"
	dc_expect events.jsonl "asked\nasked\n"
	rd_stop
}
deny_never_cleanup() { rd_setup; rd_stop; }

atf_test_case approval_never cleanup
approval_never_head()
{
	dc_head
	atf_set descr "an approval required is never reused (the real approvald)"
}
approval_never_body()
{
	sed '/^  run_shell:/,/^  [a-z]/s/    tier: low/    tier: high/' \
	    "$(as_src)/etc/policy.yaml" > policy.yaml
	grep -q '^decision_reuse: 30s' policy.yaml ||
	    atf_fail "the example policy does not reuse decisions"
	AS_RUNNERD_EXTRA="  sessions_max: 0
  warm_pool: 0"
	as_conf
	as_start auditd approvald brokerd runnerd
	for i in 1 2; do
		as_call run_shell '{"command":"echo gated"}' > r.json
		grep -q pending_approval r.json || atf_fail "$(cat r.json)"
	done
	dc_expect var/audit.jsonl "asked\nasked\n"
	as_stop
}
approval_never_cleanup() { as_kill_all; }

atf_test_case stalled_approvald cleanup
stalled_approvald_head()
{
	dc_head
	atf_set descr "with approvald stopped, run_python in an open session answers each call in under 1 s until reuse_ms passes"
}
stalled_approvald_body()
{
	sed 's/^decision_reuse:.*/decision_reuse: 5s/' \
	    "$(as_src)/etc/policy.yaml" > policy.yaml
	AS_RUNNERD_EXTRA="  sessions_max: 2
  warm_pool: 1"
	as_conf
	as_start auditd approvald brokerd runnerd
	pid=$(awk '$2 == "approvald" { print $1 }' pids)
	python3 "$(atf_get_srcdir)/deccache_check.py" stalled \
	    "$AS_RUN/runner.sock" "$pid" 5 2>err ||
	    atf_fail "$(tr '\n' ' ' < err)"
	# The session's first call, its ten with approvald stopped, the last.
	want="asked\n"
	for i in 1 2 3 4 5 6 7 8 9 10; do
		want="${want}reused\n"
	done
	dc_expect var/audit.jsonl "${want}asked\n"
	as_stop
}
stalled_approvald_cleanup()
{
	pid=$(awk '$2 == "approvald" { print $1 }' pids 2>/dev/null)
	[ -z "$pid" ] || kill -CONT "$pid" 2>/dev/null || :
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case reuse
	atf_add_test_case deny_never
	atf_add_test_case approval_never
	atf_add_test_case stalled_approvald
}
