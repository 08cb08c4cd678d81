#! /usr/bin/env atf-sh
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
	command -v terraform >/dev/null || atf_skip "terraform is not installed"
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
fault_case auditd "new connections are answered, calls complete after"

atf_init_test_cases()
{
	atf_add_test_case brokerd
	atf_add_test_case approvald
	atf_add_test_case auditd
}
