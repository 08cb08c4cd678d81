#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# A crash leaves a complete trail (issue 16, item 3): runnerd killed
# with -9 while a call runs in a sandbox (a one-shot call, or a call in
# a session) and another waits for a stopped approvald; the restarted
# runnerd waits for the old launcher, then every request id has exactly
# one end and each sandbox torn down is recorded as swept.  approvald's
# stand-in is a peers.py of its own, so that it alone can be stopped.

tr_case()
{
	atf_test_case "$1" cleanup
	eval "$1_head() {
		atf_set descr '$2'
		atf_set require.user root
		atf_set require.progs runsc python3
		atf_set timeout 300
	}
	$1_body() { tr_setup; tr_$1; }
	$1_cleanup() {
		tr_setup
		for f in approvald.pid old.launcher; do
			[ -f \$f ] && kill -CONT \$(cat \$f) 2>/dev/null
		done
		rd_stop
	}"
}

tr_setup()
{
	RD_BIN=$(atf_config_get bindir)
	RD_LIB=$(atf_get_srcdir)
	. "$RD_LIB/rd.subr"
}

tr_check()
{
	python3 "$RD_LIB/trail_check.py" "$@" 2>err ||
	    atf_fail "$(tr '\n' ' ' < err)"
}

# tr_wait EVENT ARG=VALUE: the request id, for $(...), where atf_fail
# would end only the subshell.
tr_wait()
{
	python3 "$RD_LIB/trail_check.py" wait events.jsonl "$@" 2>err
}

# tr_start: approvald's stand-in alone, then the other peers and runnerd.
tr_start()
{
	rd_peer_alone approval.sock approvald
	RD_EXTRA="  session_agent: $(atf_config_get srcdir)/sandbox-init/session-agent.py
  warm_pool: 1
  timeout: 60s" rd_start --serve broker.sock --serve audit.sock ||
	    atf_fail "runnerd did not start: $(cat runnerd.log)"
}

# tr_crash: a call stuck at the stopped approvald, then the old launcher
# stopped (so that its teardown waits) and runnerd killed.
tr_crash()
{
	kill -STOP "$(cat approvald.pid)"
	python3 "$RD_LIB/runcall.py" run/runner.sock "echo held" \
	    > held.json 2>&1 &
	held=$(tr_wait tool.request command="echo held") ||
	    atf_fail "$(tr '\n' ' ' < err)"
	launcher=$(ps -o pid= --ppid "$RD_RUNNERD" | tr -d ' ')
	[ "$(echo "$launcher" | wc -w)" -eq 1 ] ||
	    atf_fail "runnerd's children: $launcher"
	echo "$launcher" > old.launcher
	kill -STOP "$launcher"
	kill -KILL "$RD_RUNNERD"
	wait "$RD_RUNNERD" 2>/dev/null
}

# tr_restart: the new runnerd waits for the old launcher, then sweeps.
tr_restart()
{
	rm -f run/runner.sock
	rd_start_runnerd || atf_fail "runnerd did not restart"
	sleep 2
	grep -q "waiting for the previous launcher" runnerd.log ||
	    atf_fail "the new runnerd did not wait: $(cat runnerd.log)"
	! grep -q '"sandbox.swept"' events.jsonl ||
	    atf_fail "swept before the old launcher had finished"
	kill -CONT "$launcher"
	i=0
	while kill -0 "$launcher" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 300 ] || atf_fail "the old launcher did not exit"
		sleep 0.1
	done
	tr_check wait events.jsonl tool.failed command="echo held" >/dev/null
	kill -CONT "$(cat approvald.pid)"
	i=0
	while [ -e var/runner/launcher.journal ]; do
		i=$((i + 1))
		[ $i -le 100 ] || atf_fail "the journal was not removed"
		sleep 0.1
	done
	[ ! -s var/runner/calls.trail ] ||
	    atf_fail "calls left in the trail: $(cat var/runner/calls.trail)"
	kill -0 "$RD_RUNNERD" || atf_fail "runnerd died: $(cat runnerd.log)"
}

tr_oneshot()
{
	tr_start
	python3 "$RD_LIB/runcall.py" run/runner.sock "sleep 30" \
	    > sleep.json 2>&1 &
	busy=$(tr_wait sandbox.started command="sleep 30") ||
	    atf_fail "$(tr '\n' ' ' < err)"
	tr_crash
	tr_restart
	tr_check ends events.jsonl "$busy" -- "$busy" "$held"
	rd_stop
}

tr_session()
{
	RD_SESSIONS_MAX=4 tr_start
	python3 "$RD_LIB/trail_check.py" session run/runner.sock ids \
	    > session.log 2>&1 &
	i=0
	while [ ! -s ids ]; do
		i=$((i + 1))
		[ $i -le 300 ] || atf_fail "no session: $(cat session.log)"
		sleep 0.1
	done
	read -r opener busy < ids
	tr_check wait events.jsonl guardrail.decision \
	    code="import time; time.sleep(30)" >/dev/null
	sleep 1
	tr_crash
	tr_restart
	tr_check ends events.jsonl "$opener" -- "$busy" "$held"
	rd_stop
}

tr_case oneshot "kill -9 mid-call: the sandbox is swept, each call ends once"
tr_case session "kill -9 mid-session: the session is swept, each call ends once"

atf_init_test_cases()
{
	atf_add_test_case oneshot
	atf_add_test_case session
}
