#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# No daemon blocks on another: each of runnerd's peers in turn is
# stopped (SIGSTOP) for 10 s while session calls, one-shot terraform
# plans and a new client run, then continued.  The real suite, gVisor;
# the traffic and the checks are fault_check.py's.

. "$(atf_get_srcdir)/../lib/suite.subr"

# The peer's pid, from the list as_start keeps.
peer_pid()
{
	awk -v d="$1" '$2 == d { print $1 }' pids
}

fault()
{
	as_need terraform
	mkdir tf
	cp -R "$(as_src)/terraform/demo" tf/
	# Longer than the stop (and than brokerd's Vault waits, 30.6 s): a
	# stalled peer delays a call, never fails it.
	AS_TF_RUNNERD_EXTRA="  peer_timeout: 40s" as_tf_suite "[demo]"
	python3 "$(atf_get_srcdir)/fault_check.py" "$1" "$(peer_pid "$1")" \
	    "$AS_RUN/runner.sock" var/audit.jsonl ||
	    atf_fail "$1 stopped: see stderr"
	for d in auditd approvald brokerd runnerd; do
		kill -0 "$(peer_pid $d)" || atf_fail "$d died"
	done
	as_stop
}

# wait_for CMD: up to 30 s for CMD to succeed.
wait_for()
{
	i=0
	until eval "$1"; do
		i=$((i + 1))
		[ $i -le 300 ] || return 1
		sleep 0.1
	done
}

# The suite, auditd stopped, session calls whose events wait in
# runnerd's spool (a copy in spooled.jsonl); $client holds the session.
spool_stall()
{
	AS_RUNNERD_EXTRA="  warm_pool: 0
  peer_timeout: 40s"
	as_conf
	as_start auditd approvald brokerd runnerd
	python3 "$(atf_get_srcdir)/spool_check.py" calls "$AS_RUN/runner.sock" \
	    "$(peer_pid auditd)" 5 > calls.out 2>&1 &
	client=$!
	wait_for "grep -qs answered calls.out" ||
	    atf_fail "session calls: $(cat calls.out)"
	cp var/runner/audit.spool spooled.jsonl
}

spool_emptied()
{
	wait_for "[ ! -s var/runner/audit.spool ] &&
	    [ ! -e var/runner/launcher.journal ]" ||
	    atf_fail "the spool was not emptied: $(wc -l var/runner/audit.spool)"
	python3 "$(atf_get_srcdir)/spool_check.py" once spooled.jsonl \
	    var/audit.jsonl 2>err || atf_fail "$(cat err)"
}

# runnerd killed while its events wait in the spool for a stopped
# auditd: the next runnerd sends them first, and auditd, continued,
# writes each once although the old connection delivers them too.
spool_crash()
{
	spool_stall
	kill -KILL "$(peer_pid runnerd)"
	kill "$client"
	rm -f "$AS_RUN/runner.sock"
	as_start runnerd
	grep -q "the previous runnerd spooled go to auditd first" runnerd.log ||
	    atf_fail "the spool was not read: $(tr "\n" " " < runnerd.log)"
	kill -CONT "$(peer_pid auditd)"
	spool_emptied
	"$(as_bin auditctl)" -f conf.yaml -j stats | python3 -c '
import json, sys
sys.exit(json.load(sys.stdin)["duplicates"] == 0)' ||
	    atf_fail "auditd dropped no copy: the spool was not resent"
	as_stop
}

# auditd killed while stopped, with runnerd's spooled events unread on
# its connection: runnerd connects to the next auditd and sends them.
spool_reconnect()
{
	spool_stall
	kill -KILL "$(peer_pid auditd)"
	rm -f "$AS_RUN/audit.sock"
	as_start auditd
	spool_emptied
	kill "$client"
	grep -q "auditd: connection lost" runnerd.log ||
	    atf_fail "runnerd kept its connection to the killed auditd"
	as_stop
}

# Whatever happened, nothing stays stopped.
fault_cleanup()
{
	[ -f pids ] && awk '{ print $1 }' pids | xargs -r kill -CONT 2>/dev/null
	as_kill_all
}

fault_case()
{
	atf_test_case "$1" cleanup
	eval "$1_head() {
		atf_set descr '$1 stopped for 10 s: $2; after SIGCONT \
every call ends once, no record twice'
		atf_set require.user root
		atf_set require.progs 'runsc python3'
		atf_set timeout 240
	}
	$1_body() { fault $1; }
	$1_cleanup() { fault_cleanup; }"
}

fault_case brokerd "session calls answer within 1 s, credentialed calls wait"
fault_case approvald "new connections are answered, made results delivered"
fault_case auditd "session calls answer within 1 s, their events spooled"

atf_test_case spool_crash cleanup
spool_crash_head()
{
	atf_set descr 'runnerd killed (-9) with events spooled for a stopped \
auditd: restarted, it resends them, and each is in the log once'
	atf_set require.user root
	atf_set require.progs 'runsc python3'
	atf_set timeout 120
}
spool_crash_body() { spool_crash; }
spool_crash_cleanup() { fault_cleanup; }

atf_test_case spool_reconnect cleanup
spool_reconnect_head()
{
	atf_set descr 'auditd killed with events spooled: runnerd sends them \
to the restarted auditd, each recorded once'
	atf_set require.user root
	atf_set require.progs 'runsc python3'
	atf_set timeout 120
}
spool_reconnect_body() { spool_reconnect; }
spool_reconnect_cleanup() { fault_cleanup; }

atf_init_test_cases()
{
	atf_add_test_case brokerd
	atf_add_test_case approvald
	atf_add_test_case auditd
	atf_add_test_case spool_crash
	atf_add_test_case spool_reconnect
}
