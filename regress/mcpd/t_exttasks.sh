#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
#
# Tasks of the 2026-07-28 extension (io.modelcontextprotocol/tasks)
# against the real suite (mcpd, runnerd with gVisor, approvald,
# brokerd, auditd), over raw JSON-RPC: exttasks_check.py.

. "$(atf_get_srcdir)/../lib/suite.subr"

# The suite on working dirs a and b.
suite()
{
	mkdir tf
	for d in a b; do
		cp -R "$(as_src)/terraform/demo" "tf/$d"
	done
	as_tf_suite "[a, b]"
}

# check PID NAME: exttasks_check.py's scenario NAME, running as PID.
check()
{
	wait "$1" || { cat client.err >&2; tail -30 mcpd.log >&2;
	    atf_fail "scenario $2"; }
	if grep -q "forbidden syscall" mcpd.log client.err; then
		atf_fail "seccomp"
	fi
	as_stop
}

# start NAME: exttasks_check.py's scenario NAME in the background.
start()
{
	python3 "$(atf_get_srcdir)/exttasks_check.py" \
	    "$(dirname "$(as_bin mcpd)")" "$(pwd)/conf.yaml" "$1" \
	    2>client.err &
	client=$!
}

wait_file()
{
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ $i -gt 1200 ] && atf_fail "the client did not write $1"
		sleep 0.05
	done
}

atf_test_case approved cleanup
approved_head()
{
	atf_set "descr" "an approval-gated terraform_apply as a 2026-07-28" \
	    "task: working while it waits, completed with the applied" \
	    "result after approvalctl approve"
	atf_set "require.user" "root"
	atf_set "require.progs" "runsc terraform python3"
	atf_set "timeout" "300"
}
approved_body()
{
	suite
	start approved
	check "$client" approved
}
approved_cleanup() { as_kill_all; }

atf_test_case restart cleanup
restart_head()
{
	atf_set "descr" "a 2026-07-28 task waiting on its approval outlives" \
	    "a kill -9 and restart of runnerd: mcpd waits again on the new" \
	    "connection and the task is applied after approvalctl approve;" \
	    "one cancelled meanwhile is cancelled, its approval left pending"
	atf_set "require.user" "root"
	atf_set "require.progs" "runsc terraform python3"
	atf_set "timeout" "300"
}
restart_body()
{
	suite
	start restart
	wait_file kill-runnerd
	pid=$(awk '$2 == "runnerd" { print $1 }' pids)
	kill -KILL "$pid"
	while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	rm -f run/runner.sock
	wait_file start-runnerd
	as_start runnerd
	: > runnerd-back
	check "$client" restart
}
restart_cleanup() { as_kill_all; }

atf_test_case reconnect cleanup
reconnect_head()
{
	atf_set "descr" "a 2026-07-28 task waiting on its approval outlives" \
	    "a kill -9 of its mcpd: a new mcpd with the same client key file" \
	    "takes it over and gets the applied result after approvalctl" \
	    "approve; one with another key is told there is no such task"
	atf_set "require.user" "root"
	atf_set "require.progs" "runsc terraform python3"
	atf_set "timeout" "300"
}
reconnect_body()
{
	suite
	start reconnect
	check "$client" reconnect
}
reconnect_cleanup() { as_kill_all; }

atf_test_case legacy cleanup
legacy_head()
{
	atf_set "descr" "the same for a 2025-11-25 task: after a kill -9 of" \
	    "its mcpd, tasks/result on a new mcpd with the same key returns" \
	    "the applied result; another key gets no such task"
	atf_set "require.user" "root"
	atf_set "require.progs" "runsc terraform python3"
	atf_set "timeout" "300"
}
legacy_body()
{
	suite
	start legacy
	check "$client" legacy
}
legacy_cleanup() { as_kill_all; }

atf_test_case dropped cleanup
dropped_head()
{
	atf_set "descr" "with runnerd.tasks_per_client 1 a new mcpd gets the" \
	    "newer of two finished tasks, and the older one is refused as no" \
	    "longer kept, naming tasks_per_client"
	atf_set "require.user" "root"
	atf_set "require.progs" "runsc terraform python3"
	atf_set "timeout" "300"
}
dropped_body()
{
	AS_TF_RUNNERD_EXTRA="  tasks_per_client: 1"
	suite
	start dropped
	check "$client" dropped
}
dropped_cleanup() { as_kill_all; }

atf_init_test_cases()
{
	atf_add_test_case approved
	atf_add_test_case restart
	atf_add_test_case reconnect
	atf_add_test_case legacy
	atf_add_test_case dropped
}
