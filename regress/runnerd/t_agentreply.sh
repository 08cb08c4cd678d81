#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# A session agent's replies are hostile input (issue 21): each bad
# reply of bad_agent.py ends its own session with a reason, in the
# result and the audit log; runnerd stays up, and a session opened
# before keeps answering (agentreply_check.py).

ar_case()
{
	atf_test_case "$1" cleanup
	eval "$1_head() {
		atf_set descr '$2'
		atf_set require.user root
		atf_set require.progs runsc python3
		atf_set timeout 120
	}
	$1_body() { ar_run $1; }
	$1_cleanup() { ar_setup; rd_stop; }"
}

ar_setup()
{
	RD_BIN=$(atf_config_get bindir)
	RD_LIB=$(atf_get_srcdir)
	. "$RD_LIB/rd.subr"
}

ar_run()
{
	ar_setup
	RD_SESSIONS_MAX=4 RD_EXTRA="  session_agent: $RD_LIB/bad_agent.py
  warm_pool: 1
  memory: 512M" rd_start || atf_fail "runnerd did not start"
	python3 "$RD_LIB/agentreply_check.py" "$1" run/runner.sock 2>err ||
	    atf_fail "$(tr '\n' ' ' < err) $(grep fatal runnerd.log | tr '\n' ' ')"
	kill -0 "$(cat rd.runnerd)" || atf_fail "runnerd died: $(cat runnerd.log)"
	rd_stop
}

ar_case oversized "a reply over the cap ends its session only"
ar_case growing "reals that grow on re-encoding end their session only"
ar_case nonobject "a reply that is not an object ends its session only"
ar_case duplicate "a second reply to one call ends its session only"
ar_case othercall "a reply for another call ends its session only"
ar_case flood "a flood of unsolicited replies ends its session only"

atf_init_test_cases()
{
	for t in oversized growing nonobject duplicate othercall flood; do
		atf_add_test_case "$t"
	done
}
