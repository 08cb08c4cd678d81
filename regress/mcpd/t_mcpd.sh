#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
#
# mcpd end to end over stdio, against a stand-in runnerd
# (fake_runnerd.py) and with the real seccomp filter in force.

# Starts the stand-in runnerd on run/runner.sock.
fake_runnerd()
{
	. "$(atf_config_get srcdir)/regress/lib/suite.subr"
	as_conf
	python3 "$(atf_get_srcdir)/fake_runnerd.py" run/runner.sock \
	    >runnerd.log 2>&1 &
	echo $! > runnerd.pid
	i=0
	while [ ! -S run/runner.sock ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && atf_fail "fake runnerd did not start"
		sleep 0.05
	done
}

stop_runnerd()
{
	[ -f runnerd.pid ] && kill "$(cat runnerd.pid)" 2>/dev/null
	:
}

# scenario NAME: runs one scenario of mcp_check.py.
scenario()
{
	fake_runnerd
	if ! python3 "$(atf_get_srcdir)/mcp_check.py" "$(as_bin mcpd)" \
	    "$(pwd)/conf.yaml" "$1"; then
		echo "--- mcpd.log" >&2
		tail -40 mcpd.log >&2
		atf_fail "scenario $1"
	fi
	if grep -q "forbidden syscall\|fatal in mcpd: seccomp" mcpd.log; then
		cat mcpd.log >&2
		atf_fail "seccomp"
	fi
}

for s in malformed lifecycle modern batch logging logging_modern calls \
    cancel timeout inflight eof runner_gone runner_down runner_back tasks \
    tasks_older ext_tasks; do
	eval "
atf_test_case $s cleanup
${s}_head() { atf_set timeout 120; }
${s}_cleanup() { stop_runnerd; }
"
done

malformed_body() { scenario malformed; }
lifecycle_body() { scenario lifecycle; }
modern_body() { scenario modern; }
batch_body() { scenario batch; }
logging_body() { scenario logging; }
logging_modern_body() { scenario logging_modern; }
calls_body() { scenario calls; }
cancel_body() { scenario cancel; }
eof_body() { scenario eof; }
runner_gone_body() { scenario runner_gone; }
runner_down_body() { scenario runner_down; }
runner_back_body() { scenario runner_back; }
tasks_body() { scenario tasks; }
tasks_older_body() { scenario tasks_older; }
ext_tasks_body() { scenario ext_tasks; }

timeout_body()
{
	AS_MCPD_EXTRA="  call_timeout: 1"
	scenario timeout
}

inflight_body()
{
	AS_MCPD_EXTRA="  max_inflight: 2"
	scenario inflight
}

wait_file()
{
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ $i -gt 400 ] && return 1
		sleep 0.05
	done
}

# mcp_check.py's real_restart drives mcpd while runnerd is killed and
# started again here, each step told by a file.
atf_test_case real_restart cleanup
real_restart_head()
{
	atf_set descr "kill -9 the real runnerd, start it again: mcpd serves on"
	atf_set require.user root
	atf_set require.progs runsc python3
	atf_set timeout 120
}
real_restart_body()
{
	. "$(atf_config_get srcdir)/regress/lib/suite.subr"
	as_conf
	as_start auditd approvald brokerd runnerd
	python3 "$(atf_get_srcdir)/mcp_check.py" "$(as_bin mcpd)" \
	    "$(pwd)/conf.yaml" real_restart > check.out 2>&1 &
	check=$!
	wait_file kill-runnerd || atf_fail "no first call"
	pid=$(awk '$2 == "runnerd" { print $1 }' pids)
	kill -KILL "$pid"
	while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	rm -f run/runner.sock
	wait_file runnerd-down || atf_fail "mcpd did not see runnerd go"
	as_start runnerd
	if ! wait "$check"; then
		cat check.out >&2
		tail -40 mcpd.log >&2
		atf_fail "real_restart"
	fi
}
real_restart_cleanup()
{
	. "$(atf_config_get srcdir)/regress/lib/suite.subr"
	as_kill_all
}

atf_init_test_cases()
{
	for s in malformed lifecycle modern batch logging logging_modern \
	    calls cancel timeout inflight eof runner_gone runner_down \
	    runner_back tasks tasks_older ext_tasks; do
		atf_add_test_case $s
	done
	atf_add_test_case real_restart
}
