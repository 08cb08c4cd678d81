#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# runnerctl (issue 10): an operator lists the sessions and copies files
# into and out of any of them, with write_file's and read_file's checks,
# each copy audited without its content; nobody else may.  runnerd runs
# with real runsc and the stand-in peers of rd.subr; each check is in
# rctl_check.py.

rc_case()
{
	atf_test_case "$1" cleanup
	eval "$1_head() {
		atf_set descr '$2'
		atf_set require.user root
		atf_set require.progs runsc python3 setpriv
		atf_set timeout 180
	}
	$1_body() { rc_run $1; }
	$1_cleanup() { rc_setup; rd_stop; }"
}

rc_setup()
{
	RD_BIN=$(atf_config_get bindir)
	RD_LIB=$(atf_get_srcdir)
	. "$RD_LIB/rd.subr"
}

rc_run()
{
	rc_setup
	rd_open_run
	rt=$(cat rundir)
	RD_SESSIONS_MAX=4 RD_EXTRA="  operators: { users: [$(id -u)] }
  session_agent: $(atf_config_get srcdir)/sandbox-init/session-agent.py
  warm_pool: 1
  timeout: 10s" rd_start || atf_fail "runnerd did not start: $(cat runnerd.log)"
	sed "s|^runtime_dir: .*|runtime_dir: $rt|" conf.yaml > "$rt/conf.yaml"
	chmod 644 "$rt/conf.yaml"
	python3 "$RD_LIB/rctl_check.py" "$1" "$RD_BIN/runnerctl" \
	    "$(pwd)/conf.yaml" "$rt/conf.yaml" 2>err ||
	    atf_fail "$(tr '\n' ' ' < err)"
	kill -0 "$(cat rd.runnerd)" || atf_fail "runnerd died: $(cat runnerd.log)"
	rd_stop
}

rc_case copy "put and get are byte for byte, seen by the owner, audited without content"
rc_case refuse "bad paths, links, unknown sessions, sizes and requests are refused"
rc_case peer "a user who is not an operator is refused"

atf_init_test_cases()
{
	atf_add_test_case copy
	atf_add_test_case refuse
	atf_add_test_case peer
}
