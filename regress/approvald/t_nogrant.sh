#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# No message from runnerd's side grants an approval: every message type
# of the suite, naming a pending approval, leaves it unapproved.

. "$(atf_get_srcdir)/approvald.subr"

# Fails unless no approval on record is approved or spent.
none_granted()
{
	$CTL -j list --all > all.json
	python3 -c '
import json, sys
# Withdrawn (APPROVAL_WITHDRAW) reads as denied: never granted.
bad = [e["approval_id"] + " " + e["state"] for e in json.load(open("all.json"))
       if e["state"] != "pending" and not (e["state"] == "denied" and
       (e["reason"] or "").startswith("withdrawn"))]
if bad:
    sys.exit("granted: " + ", ".join(bad))
' || atf_fail "an approval left the pending state"
}

atf_test_case approval_sock cleanup
approval_sock_head()
{
	atf_set descr "every message type on approval.sock: only DECIDE, APPROVAL_REQUEST, APPROVAL_SPEND, APPROVAL_STATUS and APPROVAL_WITHDRAW are served, none approves"
}
approval_sock_body()
{
	ad_setup
	ad_audit
	ad_start
	id=$($CLIENT request run demo "$PLAN_A")
	$CLIENT every run/approval.sock "$id" > every.out
	# Anything else is refused as unexpected; type 0 is no frame at all.
	atf_check -s ignore -o empty -x "grep -v -e '^PING' -e '^DECIDE ' \
	    -e '^APPROVAL_REQUEST ' -e '^APPROVAL_SPEND ' \
	    -e '^APPROVAL_STATUS ' -e '^APPROVAL_WITHDRAW ' every.out |
	    grep -v -e '-> ERROR 2 unexpected ' -e '^NONE .* -> CLOSED\$'"
	atf_check -o match:"^APPROVAL_SPEND json -> ERROR 1 approval $id is pending, not approved" \
	    -o match:"^DECIDE json -> DECISION" \
	    -o match:"^PING empty -> PONG approvald" \
	    -o match:"^CTL_APPROVE json -> ERROR 2 unexpected CTL_APPROVE" \
	    -o match:'^APPROVAL_STATUS json -> APPROVAL_STATE .*"state":"pe' \
	    -o match:'^APPROVAL_WITHDRAW json -> APPROVAL_STATE .*"state":"de' \
	    cat every.out
	none_granted
	atf_check -o match:"alive" $CTL ping
	as_stop
}
approval_sock_cleanup()
{
	as_kill_all
}

atf_test_case runner_sock cleanup
runner_sock_head()
{
	atf_set descr "every message type on runner.sock, naming a pending approval, leaves it pending"
	atf_set timeout 300
}
runner_sock_body()
{
	ad_setup
	ad_audit
	ad_start
	id=$($CLIENT request run demo "$PLAN_A")
	# as_start fails the test if runnerd does not start: a skip here
	# would count as a pass for a security test that never ran.
	as_start runnerd
	$CLIENT every run/runner.sock "$id" > every.out
	cat every.out
	atf_check -o match:"^TOOL_CALL json -> " cat every.out
	none_granted
	as_stop
}
runner_sock_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case approval_sock
	atf_add_test_case runner_sock
}
