#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# kill -9 at any point leaves the database consistent and nothing
# spendable twice.

. "$(atf_get_srcdir)/approvald.subr"

integrity()
{
	atf_check -o inline:"ok\n" python3 -c '
import sqlite3
print(sqlite3.connect("var/approvals.db").execute(
    "PRAGMA integrity_check").fetchone()[0])'
}

atf_test_case between cleanup
between_head()
{
	atf_set descr "kill -9 between request, approval and spend; state survives each restart"
}
between_body()
{
	ad_setup
	ad_audit
	ad_start
	id=$($CLIENT request run demo "$PLAN_A")
	kill -KILL "$(ad_pid)"
	ad_start
	ad_state "$id" pending
	atf_check -o ignore $CTL approve "$id"
	kill -KILL "$(ad_pid)"
	ad_start
	ad_state "$id" approved
	atf_check -o match:APPROVAL_SPENT $CLIENT spend run "$id" demo "$PLAN_A"
	kill -KILL "$(ad_pid)"
	ad_start
	atf_check -o match:"is already spent" $CLIENT spend run "$id" demo "$PLAN_A"
	integrity
	as_stop
}
between_cleanup()
{
	as_kill_all
}

atf_test_case under_load cleanup
under_load_head()
{
	atf_set descr "kill -9 while 8 processes spend 300 approvals: no approval is spent twice"
	atf_set timeout 300
}
under_load_body()
{
	ad_setup
	ad_audit
	ad_start
	$CLIENT load run 300 spends > load.out 2>&1 &
	loader=$!
	while [ ! -e spends.ready ]; do
		kill -0 $loader 2>/dev/null || atf_fail "the load did not start"
		sleep 0.05
	done
	# Let some spends commit, then kill in the middle of the rest.
	until [ -s spends.spent ] && [ $(wc -l < spends.spent) -ge 20 ]; do
		sleep 0.01
	done
	kill -KILL "$(ad_pid)"
	wait $loader
	n=$(wc -l < spends.spent)
	[ "$n" -lt 300 ] || atf_fail "the kill came after every spend ($n)"
	ad_start
	integrity
	atf_check -o match:"300 approvals, .* none twice" $CLIENT respend run spends
	as_stop
}
under_load_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case between
	atf_add_test_case under_load
}
