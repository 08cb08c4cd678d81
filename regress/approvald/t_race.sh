#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Single use under contention: 64 processes spend one approval at once,
# exactly one wins and 63 hear "already spent"; 32 times over (each
# round forks 64 clients: 100 rounds ran past 300 s beside other tests).

. "$(atf_get_srcdir)/approvald.subr"

atf_test_case race cleanup
race_head()
{
	atf_set descr "64 concurrent spends of one approval: exactly one succeeds, 32 rounds"
	atf_set timeout 600
}
race_body()
{
	ad_setup
	ad_audit
	ad_start
	atf_check -o match:"32 rounds: exactly one of 64 spenders won each" \
	    $CLIENT race run 64 32
	n=$($CTL -j list --all | python3 -c \
	    'import json, sys; print(sum(e["state"] == "spent" for e in json.load(sys.stdin)))')
	[ "$n" = 32 ] || atf_fail "$n approvals spent, want 32"
	as_stop
}
race_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case race
}
