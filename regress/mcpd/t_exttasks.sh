#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
#
# Tasks of the 2026-07-28 extension (io.modelcontextprotocol/tasks)
# against the real suite (mcpd, runnerd with gVisor, approvald,
# brokerd, auditd), over raw JSON-RPC: exttasks_check.py.

. "$(atf_get_srcdir)/../lib/suite.subr"

# scenario NAME: the suite on working dirs a and b, then NAME.
scenario()
{
	mkdir tf
	for d in a b; do
		cp -R "$(as_src)/terraform/demo" "tf/$d"
	done
	as_tf_suite "[a, b]"
	python3 "$(atf_get_srcdir)/exttasks_check.py" \
	    "$(dirname "$(as_bin mcpd)")" "$(pwd)/conf.yaml" "$1" \
	    2>client.err || { cat client.err >&2; atf_fail "scenario $1"; }
	if grep -q "forbidden syscall" mcpd.log client.err 2>/dev/null; then
		atf_fail "seccomp"
	fi
	as_stop
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
approved_body() { scenario approved; }
approved_cleanup() { as_kill_all; }

atf_init_test_cases()
{
	atf_add_test_case approved
}
