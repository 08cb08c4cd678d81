#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# N-of-M approvals by reviewer group: thresholds, deny wins, no
# self-approval, reasons, and what approvalctl show says is missing.
# The operators are uids with no passwd entry, run with setpriv.

. "$(atf_get_srcdir)/approvald.subr"

REVIEWERS=4300		# the reviewer group
ALICE=4301		# in it
BOB=4302		# in it
CAROL=4303		# an operator, not a reviewer

# approvald with terraform_apply under $1 (an approvals: value), its
# sockets and configuration where the operators may reach them.
nm_setup()
{
	D=$(mktemp -d /tmp/as-reviewers.XXXXXX)
	echo "$D" > base
	chmod 755 "$D"
	AS_RUNTIME_DIR=$D/run
	ad_setup
	python3 - "$1" "${2:-false}" <<'PY'
import sys
lines = open("policy.yaml").read().split("\n")
i = lines.index("  terraform_apply:")
lines[i + 2:i + 2] = ["    approvals: " + sys.argv[1],
                      "    require_reason: " + sys.argv[2]]
open("policy.yaml", "w").write("\n".join(lines))
PY
	sed -i "s/operators: { users: \[$(id -u)\] }/operators: { users: [$(id -u), $CAROL], groups: [$REVIEWERS] }/" conf.yaml
	cp conf.yaml "$D/conf.yaml"
	chmod 644 "$D/conf.yaml"
	ad_audit_stub
	ad_start
}

# The approvalctl command of uid $1, in the reviewer group unless it
# is $CAROL (a command, for atf_check).
op()
{
	if [ "$1" = $CAROL ]; then g=$CAROL; else g=$REVIEWERS; fi
	echo "setpriv --reuid=$1 --regid=$g --groups=$g $(as_bin approvalctl) -f $D/conf.yaml"
}

nm_cleanup()
{
	as_kill_all
	[ -f base ] && rm -rf "$(cat base)"
	:
}

atf_test_case two_of_two cleanup
two_of_two_head()
{
	atf_set descr "one approval of two required leaves it pending and unspendable, a second operator grants it, show lists who and what is missing"
	atf_set require.user root
	atf_set require.progs setpriv
}
two_of_two_body()
{
	nm_setup "{required: 2, from: [$REVIEWERS]}"
	id=$($CLIENT request "$AS_RUN" demo "$PLAN_A")
	atf_check -o match:"^missing: +2 more from $REVIEWERS$" $(op $ALICE) show "$id"
	atf_check -o match:"$id pending" $(op $ALICE) approve "$id" --reason "plan read"
	ad_state "$id" pending
	atf_check -o match:"^approved by: +uid $ALICE \\(uid $ALICE\\) at [^ ]+: plan read$" \
	    -o match:"^missing: +1 more from $REVIEWERS$" $(op $BOB) show "$id"
	atf_check -o match:"is pending, not approved" $CLIENT spend "$AS_RUN" "$id" demo "$PLAN_A"
	# The same operator twice is still one approver.
	atf_check -s exit:1 -e match:"has already approved it; another operator must" \
	    $(op $ALICE) approve "$id"
	# An operator outside the reviewer group does not count.
	atf_check -s exit:1 -e match:"needs approvals from groups uid $CAROL is not in" \
	    $(op $CAROL) approve "$id"
	atf_check -o match:"$id approved" $(op $BOB) approve "$id"
	atf_check -o match:"\"reviews\":\\[\\{.*\"uid\":$ALICE.*\\},\\{.*\"uid\":$BOB" \
	    -o not-match:"\"missing\"" $CTL -j show "$id"
	grep "approval.reviewed" var/audit.jsonl | grep -q "\"missing\":\"1 more from $REVIEWERS\"" ||
	    atf_fail "no approval.reviewed record with what was missing"
	grep "approval.granted" var/audit.jsonl | grep -q "\"approvers\":\\[" ||
	    atf_fail "approval.granted does not list the approvers"
	atf_check -o match:"^APPROVAL_SPENT .*$id" $CLIENT spend "$AS_RUN" "$id" demo "$PLAN_A"
	as_stop
}
two_of_two_cleanup()
{
	nm_cleanup
}

atf_test_case deny_wins cleanup
deny_wins_head()
{
	atf_set descr "a deny after one approve of two required denies the approval, also from the operator who approved"
	atf_set require.user root
	atf_set require.progs setpriv
}
deny_wins_body()
{
	nm_setup "{required: 2, from: [$REVIEWERS]}"
	id=$($CLIENT request "$AS_RUN" demo "$PLAN_A")
	atf_check -o match:"$id pending" $(op $ALICE) approve "$id" --reason ok
	atf_check -o match:"$id denied" $(op $BOB) deny "$id" --reason "drops the table"
	ad_state "$id" denied
	atf_check -o match:"^denied by: +uid $BOB \\(uid $BOB\\) at [^ ]+: drops the table$" \
	    $CTL show "$id"
	atf_check -s exit:1 -e match:"approval $id was denied" $(op $CAROL) approve "$id"
	atf_check -o match:"ERROR 1 approval $id was denied" $CLIENT spend "$AS_RUN" "$id" demo "$PLAN_A"
	# An approver who thinks again: the deny replaces the approval.
	id=$($CLIENT request "$AS_RUN" demo "$PLAN_A")
	atf_check -o match:"$id pending" $(op $ALICE) approve "$id" --reason ok
	atf_check -o match:"$id denied" $(op $ALICE) deny "$id" --reason "on second thought"
	atf_check -o match:"^denied by: +uid $ALICE .*: on second thought$" \
	    -o not-match:"^approved by:" $CTL show "$id"
	as_stop
}
deny_wins_cleanup()
{
	nm_cleanup
}

atf_test_case self_approval cleanup
self_approval_head()
{
	atf_set descr "the uid whose MCP client asked cannot approve its own request, though it is a reviewer, and a reason the policy requires is required"
	atf_set require.user root
	atf_set require.progs setpriv
}
self_approval_body()
{
	nm_setup "[{required: 2, from: [$REVIEWERS]}, {required: 1, from: [$CAROL]}]" true
	id=$(AS_CLIENT_UID=$ALICE $CLIENT request "$AS_RUN" demo "$PLAN_A")
	atf_check -s exit:1 -e match:"approval $id was asked for by an MCP client of uid $ALICE: that uid cannot approve it" \
	    $(op $ALICE) approve "$id" --reason mine
	atf_check -o match:"^missing: +2 more from $REVIEWERS or 1 more from $CAROL$" \
	    $CTL show "$id"
	atf_check -s exit:1 -e match:"approval $id needs a reason" $(op $BOB) approve "$id"
	atf_check -o match:"$id pending" $(op $BOB) approve "$id" --reason "read it"
	# The alternative rule: one of the second group grants it.
	atf_check -o match:"$id approved" $(op $CAROL) approve "$id" --reason "on call"
	atf_check -o match:"^APPROVAL_SPENT .*$id" \
	    env AS_CLIENT_UID=$ALICE $CLIENT spend "$AS_RUN" "$id" demo "$PLAN_A"
	# The requester may still deny its own request.
	id=$(AS_CLIENT_UID=$ALICE $CLIENT request "$AS_RUN" demo "$PLAN_A")
	atf_check -o match:"$id denied" $(op $ALICE) deny "$id"
	as_stop
}
self_approval_cleanup()
{
	nm_cleanup
}

atf_test_case root_self_approval cleanup
root_self_approval_head()
{
	atf_set descr "root cannot approve what its own MCP client asked for, unless self_approval: root says so; another value is refused"
	atf_set require.user root
	atf_set require.progs setpriv
}
root_self_approval_body()
{
	AS_SELF_APPROVAL=never nm_setup "[{required: 1, from: [0]}, {required: 1, from: [$REVIEWERS]}]"
	id=$($CLIENT request "$AS_RUN" demo "$PLAN_A")
	atf_check -s exit:1 -e match:"approval $id was asked for by an MCP client of uid 0: that uid cannot approve it" \
	    $CTL approve "$id"
	ad_state "$id" pending
	atf_check -o match:"$id approved" $(op $BOB) approve "$id"
	atf_check -o match:"^APPROVAL_SPENT .*$id" $CLIENT spend "$AS_RUN" "$id" demo "$PLAN_A"
	as_stop
	sed "s/self_approval: never/self_approval: sometimes/" conf.yaml > bad.conf
	atf_check -s exit:1 -e match:"self_approval" \
	    "$(as_bin approvald)" -n -f "$(pwd)/bad.conf"
	# self_approval: root lets root, and root alone.
	sed -i "s/self_approval: never/self_approval: root/" conf.yaml
	ad_audit_stub
	ad_start
	ad_wait_log "self_approval root: root may approve"
	id=$($CLIENT request "$AS_RUN" demo "$PLAN_A")
	atf_check -o match:"$id approved" $CTL approve "$id"
	id=$(AS_CLIENT_UID=$BOB $CLIENT request "$AS_RUN" demo "$PLAN_A")
	atf_check -s exit:1 -e match:"asked for by an MCP client of uid $BOB" \
	    $(op $BOB) approve "$id"
	as_stop
}
root_self_approval_cleanup()
{
	nm_cleanup
}

atf_test_case policy_errors
policy_errors_head()
{
	atf_set descr "approvals rules the policy cannot hold are refused with file and line"
}
policy_errors_body()
{
	ad_setup
	for bad in "{required: 0}" "{required: 2, from: [no_such_group_x]}" \
	    "{required: 2, form: [0]}" "[]" "{from: [0]}"; do
		python3 - "$bad" <<'PY'
import sys
lines = open("policy.yaml").read().split("\n")
i = lines.index("  terraform_apply:")
lines[i + 2:i + 3] = ["    approvals: " + sys.argv[1]] + lines[i + 2:i + 3]
open("bad.yaml", "w").write("\n".join(lines))
PY
		sed "s#policy: .*/policy.yaml#policy: $(pwd)/bad.yaml#" conf.yaml > bad.conf
		atf_check -s exit:1 -e match:"bad.yaml:[0-9]+: " \
		    "$(as_bin approvald)" -n -f "$(pwd)/bad.conf"
	done
}

atf_init_test_cases()
{
	atf_add_test_case two_of_two
	atf_add_test_case deny_wins
	atf_add_test_case self_approval
	atf_add_test_case root_self_approval
	atf_add_test_case policy_errors
}
