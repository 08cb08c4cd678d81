#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Approvals through the live daemon: binding, expiry, denial, single use,
# auditing that fails closed, policy reload, and approvalctl.

. "$(atf_get_srcdir)/approvald.subr"

atf_test_case binding cleanup
binding_head()
{
	atf_set descr "an approval is spent only with the parameters and plan it was granted for"
}
binding_body()
{
	ad_setup
	ad_audit
	ad_start
	id=$($CLIENT request run demo "$PLAN_A")
	[ -n "$id" ] || atf_fail "no approval created"
	atf_check -o match:"is pending, not approved" $CLIENT spend run "$id" demo "$PLAN_A"
	atf_check -o match:"$id approved" $CTL approve "$id"
	atf_check -o match:"ERROR 1 approval $id is bound to other parameters" \
	    $CLIENT spend run "$id" k8s-demo "$PLAN_A"
	atf_check -o match:"ERROR 1 approval $id is bound to another plan" \
	    $CLIENT spend run "$id" demo "$PLAN_B"
	atf_check -o match:"is bound to another plan" $CLIENT spend run "$id" demo null
	atf_check -o match:"ERROR 1 approval apr-0 is unknown" \
	    $CLIENT spend run apr-0 demo "$PLAN_A"
	# Refusals leave it spendable; the right call spends it, once.
	atf_check -o match:"^APPROVAL_SPENT .*$id" $CLIENT spend run "$id" demo "$PLAN_A"
	atf_check -o match:"ERROR 1 approval $id is already spent" \
	    $CLIENT spend run "$id" demo "$PLAN_A"
	ad_state "$id" spent
	# A working_dir the policy refuses is refused before any lookup.
	atf_check -o match:"ERROR 1 working_dir \"../demo\"" \
	    $CLIENT spend run "$id" ../demo "$PLAN_A"
	as_stop
}
binding_cleanup()
{
	as_kill_all
}

atf_test_case requester cleanup
requester_head()
{
	atf_set descr "only the client that asked spends an approval, unless approved --any-client; a refusal leaves it spendable, a replay is refused"
}
requester_body()
{
	ad_setup
	ad_audit_stub
	ad_start
	me="uid $(id -u) client asclient.1"
	id=$($CLIENT request run demo "$PLAN_A")
	atf_check -o match:"$id approved" $CTL approve "$id"
	atf_check -o match:"^ERROR 1 approval $id was asked for by another client: only that client may spend it, unless an operator approves it for any client \\(approvalctl approve --any-client\\)" \
	    $CLIENT spend run "$id" demo "$PLAN_A" intruder.7
	ad_state "$id" approved
	atf_check -o match:"^APPROVAL_SPENT .*$id" $CLIENT spend run "$id" demo "$PLAN_A"
	atf_check -o match:"ERROR 1 approval $id is already spent" \
	    $CLIENT spend run "$id" demo "$PLAN_A"
	atf_check -o match:"ERROR 1 approval $id is already spent" \
	    $CLIENT spend run "$id" demo "$PLAN_A" intruder.7
	# For any client: another one may spend it, once.
	any=$($CLIENT request run demo "$PLAN_A")
	atf_check -o match:"^requester: +$me$" $CTL show "$any"
	atf_check -o match:"^$any +pending +terraform_apply +[^ ]+ +$me " $CTL list
	atf_check -o match:"$any approved" $CTL approve "$any" --any-client
	atf_check -o match:"^requester: +$me, any client may spend it$" \
	    $CTL show "$any"
	atf_check -o match:"^$any +approved +terraform_apply +[^ ]+ +$me \\(any\\) " \
	    $CTL list
	atf_check -o match:"\"requester\":\\{\"client\":\"asclient.1\",\"uid\":$(id -u)\\}" \
	    -o match:"\"for_any_client\":true" $CTL -j show "$any"
	atf_check -o match:"^APPROVAL_SPENT .*$any" \
	    $CLIENT spend run "$any" demo "$PLAN_A" intruder.7
	atf_check -o match:"ERROR 1 approval $any is already spent" \
	    $CLIENT spend run "$any" demo "$PLAN_A"
	atf_check -s exit:1 -e match:"usage" $CTL deny "$any" --any-client
	atf_check -o match:"\"any_client\": *true" \
	    grep "approval.granted.*$any" var/audit.jsonl
	atf_check -o match:"\"client\": *\"asclient.1\"" \
	    grep "approval.requested.*$id" var/audit.jsonl
	atf_check -o match:"\"client\": *\"intruder.7\"" \
	    grep "approval.spent.*$any" var/audit.jsonl
	# runnerd must name the client.
	atf_check -o match:"^ERROR 2 APPROVAL_REQUEST: needs the client" \
	    $CLIENT call run/approval.sock APPROVAL_REQUEST \
	    '{"tool":"terraform_apply","arguments":{"working_dir":"demo"},"plan_digest":null}'
	as_stop
}
requester_cleanup()
{
	as_kill_all
}

atf_test_case waiters cleanup
waiters_head()
{
	atf_set descr "runnerd's waits are pushed: 3000 subscribed waits hear only their approval's change, and approvald answers others at once meanwhile"
}
waiters_body()
{
	ad_setup
	ad_audit_stub
	ad_start
	atf_check -o match:"^3000 waits; 2 pushed" $CLIENT subscribe run 3000
	atf_check -o match:"alive" $CTL ping
	as_stop
}
waiters_cleanup()
{
	as_kill_all
}

atf_test_case migration cleanup
migration_head()
{
	atf_set descr "a database made before requesters were recorded gains the columns; its approvals are spendable only when approved for any client"
}
migration_body()
{
	ad_setup
	ad_audit_stub
	now=$(date +%s)
	sqlite3 var/approvals.db "CREATE TABLE approvals (id TEXT PRIMARY KEY,
	    state TEXT NOT NULL CHECK (state IN ('pending','approved',
	    'denied','expired','spent')), tool TEXT NOT NULL,
	    arguments TEXT NOT NULL, params_digest TEXT NOT NULL,
	    plan_digest TEXT, request_id TEXT NOT NULL, summary TEXT NOT NULL,
	    plan_text TEXT NOT NULL, destructive INTEGER NOT NULL,
	    created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
	    decided_at INTEGER, decided_uid INTEGER, decided_user TEXT,
	    reason TEXT, spent_at INTEGER, spent_request TEXT);
	    INSERT INTO approvals VALUES ('apr-old1', 'pending',
	    'terraform_apply', '{}', 'x', NULL, 'req-0000000000000001', '{}',
	    '', 0, $now, $((now + 600)), NULL, NULL, NULL, NULL, NULL, NULL);" ||
	    atf_fail "no old database"
	ad_start
	atf_check -o match:"^requester: +unrecorded$" $CTL show apr-old1
	atf_check -o match:"requester_uid" -o match:"any_client" \
	    sqlite3 var/approvals.db ".schema approvals"
	# A fresh one works as on a new database.
	id=$($CLIENT request run demo "$PLAN_A")
	atf_check -o ignore $CTL approve "$id"
	atf_check -o match:"^APPROVAL_SPENT" $CLIENT spend run "$id" demo "$PLAN_A"
	atf_check -o match:"apr-old1 +pending" $CTL list
	as_stop
}
migration_cleanup()
{
	as_kill_all
}

atf_test_case expiry cleanup
expiry_head()
{
	atf_set descr "pending and approved approvals expire after the TTL, audited"
}
expiry_body()
{
	# Expiry counts whole seconds: a 2s approval lives 1 to 2 s.
	ad_setup 2s
	ad_audit_stub
	ad_start
	pending=$($CLIENT request run demo "$PLAN_A")
	approved=$($CLIENT request run demo "$PLAN_A")
	atf_check -o ignore $CTL approve "$approved"
	sleep 3.2
	atf_check -o match:"ERROR 1 approval $approved has expired" \
	    $CLIENT spend run "$approved" demo "$PLAN_A"
	atf_check -s exit:1 -e match:"approval $pending has expired" \
	    $CTL approve "$pending"
	ad_state "$pending" expired
	ad_state "$approved" expired
	atf_check -o inline:"no approvals\n" $CTL list
	atf_check -o match:"$pending +expired" -o match:"$approved +expired" \
	    $CTL list --all
	atf_check -o match:"\"was\": *\"pending\"" \
	    grep "approval.expired.*$pending" var/audit.jsonl
	atf_check -o match:"\"was\": *\"approved\"" \
	    grep "approval.expired.*$approved" var/audit.jsonl
	as_stop
}
expiry_cleanup()
{
	as_kill_all
}

atf_test_case denied cleanup
denied_head()
{
	atf_set descr "a denied approval cannot be approved or spent; who denied it is on record"
}
denied_body()
{
	ad_setup
	ad_audit_stub
	ad_start
	id=$($CLIENT request run demo "$PLAN_A")
	atf_check -o match:"$id denied" $CTL deny "$id" --reason "not on a Friday"
	atf_check -s exit:1 -e match:"approval $id was denied" $CTL approve "$id"
	atf_check -o match:"ERROR 1 approval $id was denied" \
	    $CLIENT spend run "$id" demo "$PLAN_A"
	atf_check -o match:"reason: +not on a Friday" \
	    -o match:"decided: +denied by root \\(uid 0\\)" $CTL show "$id"
	atf_check -o match:"\"operator\": *\\{\"uid\": *$(id -u), *\"user\": *\"$(id -un)\"\\}" \
	    -o match:"not on a Friday" grep "approval.denied" var/audit.jsonl
	as_stop
}
denied_cleanup()
{
	as_kill_all
}

atf_test_case audit_trail cleanup
audit_trail_head()
{
	atf_set descr "requested, granted and spent are audited with the request id and operator"
}
audit_trail_body()
{
	ad_setup
	ad_audit_stub
	ad_start
	id=$($CLIENT request run demo "$PLAN_A")
	atf_check -o ignore $CTL approve "$id"
	atf_check -o match:APPROVAL_SPENT $CLIENT spend run "$id" demo "$PLAN_A"
	atf_check -o match:"approval.requested.*\"request_id\": *\"req-0000000000000001\".*$id.*\"destructive\": *true" \
	    cat var/audit.jsonl
	atf_check -o match:"\"operator\": *\\{\"uid\": *0, *\"user\": *\"root\"\\}" \
	    grep "approval.granted.*req-0000000000000001" var/audit.jsonl
	atf_check -o match:"\"plan_digest\": *\"$PLAN_A\"" \
	    grep "approval.spent.*$id" var/audit.jsonl
	atf_check -o inline:"3\n" sh -c "grep -c $id var/audit.jsonl"
	as_stop
}
audit_trail_cleanup()
{
	as_kill_all
}

atf_test_case audit_fail_closed cleanup
audit_fail_closed_head()
{
	atf_set descr "when auditd cannot record a change, the change does not happen"
}
audit_fail_closed_body()
{
	ad_setup
	ad_audit_stub
	ad_start
	id=$($CLIENT request run demo "$PLAN_A")
	other=$($CLIENT request run demo "$PLAN_A")
	atf_check -o ignore $CTL approve "$other"
	touch var/REFUSE
	atf_check -o match:"^ERROR 4 cannot record the approval request" \
	    $CLIENT call run/approval.sock APPROVAL_REQUEST \
	    '{"tool":"terraform_apply","arguments":{"working_dir":"demo"},"plan_digest":null,"client":{"uid":0,"id":"c"}}'
	atf_check -s exit:1 -e match:"cannot record the decision" \
	    $CTL approve "$id"
	atf_check -o match:"^ERROR 4 cannot spend" \
	    $CLIENT spend run "$other" demo "$PLAN_A"
	rm var/REFUSE
	ad_state "$id" pending
	ad_state "$other" approved
	n=$($CTL -j list --all | python3 -c \
	    'import json, sys; print(len(json.load(sys.stdin)))')
	[ "$n" = 2 ] || atf_fail "$n approvals recorded, want 2"
	atf_check -o match:APPROVAL_SPENT $CLIENT spend run "$other" demo "$PLAN_A"
	as_stop
}
audit_fail_closed_cleanup()
{
	as_kill_all
}

atf_test_case reload cleanup
reload_head()
{
	atf_set descr "SIGHUP loads a good policy and keeps the old one when the new one is bad"
}
reload_body()
{
	ad_setup
	ad_audit
	ad_start
	id=$($CLIENT request run demo "$PLAN_A")
	atf_check -o ignore $CTL approve "$id"
	cp policy.yaml policy.good
	printf 'tools:\n  terraform_apply:\n    tier: sometimes\n' > policy.yaml
	kill -HUP "$(ad_pid)"
	ad_wait_log "keeping the policy in force"
	atf_check -o match:"policy.yaml:3: tier: \"sometimes\" is not low, high or deny; keeping the policy in force" \
	    cat approvald.log
	atf_check -o match:"approval_required" $CLIENT call run/approval.sock \
	    DECIDE '{"tool":"terraform_apply","arguments":{"working_dir":"demo"}}'
	# A policy without terraform_apply: decisions and spends follow it.
	printf 'tools:\n  run_python:\n    tier: low\n' > policy.yaml
	kill -HUP "$(ad_pid)"
	ad_wait_log "policy .*policy.yaml loaded: 1 tools"
	atf_check -o match:"tool terraform_apply is not in the policy" \
	    $CLIENT call run/approval.sock DECIDE \
	    '{"tool":"terraform_apply","arguments":{"working_dir":"demo"}}'
	atf_check -o match:"ERROR 1 tool terraform_apply is not in the policy" \
	    $CLIENT spend run "$id" demo "$PLAN_A"
	ad_state "$id" approved
	as_stop
}
reload_cleanup()
{
	as_kill_all
}

atf_test_case approvalctl cleanup
approvalctl_head()
{
	atf_set descr "list, show, watch, JSON output, and the operators ACL"
}
approvalctl_body()
{
	ad_setup
	ad_audit
	ad_start
	$CTL -j watch > watch.out 2>&1 &
	watcher=$!
	ad_wait_log "control.sock: peer 1 uid"
	sleep 0.2
	id=$($CLIENT request run demo "$PLAN_A")
	atf_check -o match:"^ID +STATE +TOOL" \
	    -o match:"^$id +pending +terraform_apply .*\\{\"working_dir\":\"demo\"\\} +DESTRUCTIVE" \
	    $CTL list
	atf_check -o match:"^approval: +$id" -o match:"^tool: +terraform_apply" \
	    -o match:"^request: +req-0000000000000001" \
	    -o match:"^parameters: +\\{\"working_dir\":\"demo\"\\}" \
	    -o match:"^plan digest: +$PLAN_A" \
	    -o match:"^  !! delete\\+create  terraform_data.app  \\(destructive\\)" \
	    -o match:"^     update  terraform_data.labels$" \
	    -o match:"plan text contains \"must be replaced\"" \
	    -o match:"^\\| # terraform_data.app must be replaced" $CTL show "$id"
	atf_check -o match:"\"plan_text\":\"# terraform_data.app must be replaced\"" \
	    -o match:"\"state\":\"pending\"" $CTL -j show "$id"
	atf_check -o match:"^\\[\\{\"approval_id\":\"$id\"" $CTL -j list
	atf_check -o match:"^\\{\"approval_id\":\"$id\",.*\"state\":\"approved\"" \
	    $CTL -j approve "$id"
	ad_wait_log "\"state\":\"approved\"" watch.out
	kill $watcher
	atf_check -o match:"\"approval_id\":\"$id\".*\"state\":\"pending\"" \
	    -o match:"\"approval_id\":\"$id\".*\"state\":\"approved\"" cat watch.out
	atf_check -s exit:1 -e match:"approval apr-nope is unknown" $CTL show apr-nope
	# A request control.sock does not list is refused; the peer stays.
	atf_check -o match:"ERROR 2 unexpected APPROVAL_SPEND" $CLIENT call \
	    run/control.sock APPROVAL_SPEND '{}'
	as_stop
	# Not an operator: control.sock refuses the peer.
	sed -i "s/operators: { users: \[$(id -u)\] }/operators: { users: [4242] }/" conf.yaml
	ad_audit
	ad_start
	atf_check -s exit:1 -e match:"control.sock: uid $(id -u) is not allowed" \
	    $CTL list
	as_stop
}
approvalctl_cleanup()
{
	as_kill_all
}

atf_test_case escapes cleanup
escapes_head()
{
	atf_set descr "CSI, OSC, C1 and bidi controls in names, values and file names are shown escaped, and the verdict comes last"
}
escapes_body()
{
	ad_setup
	ad_audit_stub
	ad_start
	id=$($CLIENT hostile run sent.json)
	atf_check -o save:show.txt $CTL show "$id"
	atf_check -o save:list.txt $CTL list
	atf_check -o save:show.json $CTL -j show "$id"
	atf_check -o save:list.json $CTL -j list
	raw=
	for f in show.txt list.txt show.json list.json; do
		as_no_raw_controls $f || raw="$raw $f"
	done
	[ -z "$raw" ] || atf_fail "raw control characters in$raw"
	# Visible, in the names, values and file names they came in.
	for s in '\x1b[2K\x1b[1A' '\x1b]0;t\x07' '\x1b]8;;x\x1b' \
	    '\u009b1A\u0085' '\u202e\u2066\x0d\x7f' \
	    'added    \x1b[2K' 'app["\x1b[2K' 'triggers_replace\x1b[2K' \
	    '~ input = "\x1b[2K' '\x1b[8A\x1b[J  # terraform_data.app'; do
		grep -qF -- "$s" show.txt || atf_fail "show lacks $s"
	done
	grep -qF '"note":"\u001B[2K' list.txt || atf_fail "list: $(cat list.txt)"
	# The plan text's lines are marked as its own; runnerd's verdict
	# is the first and the last thing said of the plan.
	atf_check -o inline:"2\n" grep -c "^plan: .* 1 to replace  (DESTRUCTIVE)$" show.txt
	atf_check -o inline:"0\n" -s exit:1 grep -c "^plan: .* 1 to update" show.txt
	atf_check -o match:"^  !! delete\\+create  terraform_data.app\\[" \
	    tail -n 1 show.txt
	# approvald's refusal quotes what it was given, escaped too.
	atf_check -s exit:1 -e save:refused.txt \
	    $CTL show "$(printf 'apr-\033[2K\302\233x')"
	as_no_raw_controls refused.txt || atf_fail "the refusal is raw"
	grep -qF 'approval apr-\x1b[2K\u009bx is unknown' refused.txt ||
	    atf_fail "refusal: $(cat refused.txt)"
	# JSON escapes them and keeps every character.
	atf_check python3 -c 'import json, sys
sent = json.load(open("sent.json"))
shown = json.load(open("show.json"))
listed = json.load(open("list.json"))[0]
assert shown["plan_text"] == sent["plan_text"], "plan_text"
assert shown["arguments"] == sent["arguments"] == listed["arguments"]
for k in ("resources", "files_changed"):
    for a, b in zip(shown["summary"][k], sent["summary"][k]):
        assert all(a[f] == b[f] for f in b), k'
	as_stop
}
escapes_cleanup()
{
	as_kill_all
}

atf_test_case watch_exec cleanup
watch_exec_head()
{
	atf_set descr "watch starts with the live approvals, streams their changes, and runs --exec once per pending approval"
}
watch_exec_body()
{
	ad_setup
	ad_audit_stub
	ad_start
	old=$($CLIENT request run demo "$PLAN_A")
	cat > hook.sh <<'HOOK'
#!/bin/sh
read -r record
printf '%s %s %s %s\n' "$APPROVAL_ID" "$APPROVAL_TOOL" "$APPROVAL_STATE" \
    "$record" >> hook.out
HOOK
	chmod +x hook.sh
	$CTL -j watch --exec "$(pwd)/hook.sh" > watch.out 2>watch.err &
	watcher=$!
	# The approval waiting before the watch began comes first.
	ad_wait_log "\"approval_id\":\"$old\"" watch.out
	ad_wait_log "^$old terraform_apply pending {" hook.out
	new=$($CLIENT request run demo "$PLAN_A")
	ad_wait_log "^$new terraform_apply pending {.*\"approval_id\":\"$new\"" hook.out
	atf_check -o ignore $CTL approve "$new"
	atf_check -o ignore $CTL deny "$old" --reason "not today"
	ad_wait_log "\"approval_id\":\"$old\".*\"state\":\"denied\"" watch.out
	ad_wait_log "\"approval_id\":\"$new\".*\"state\":\"approved\"" watch.out
	kill $watcher
	wait $watcher 2>/dev/null
	# Once per pending approval: a decision runs nothing.
	atf_check -o inline:"2\n" wc -l < hook.out
	atf_check -o inline:"1\n" grep -c "^$new " hook.out
	atf_check -o inline:"1\n" grep -c "^$old " hook.out
	atf_check -s exit:1 -e match:"usage" $CTL watch --exec
	atf_check -s exit:1 -e match:"usage" $CTL list --exec true
	as_stop
}
watch_exec_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case binding
	atf_add_test_case requester
	atf_add_test_case migration
	atf_add_test_case waiters
	atf_add_test_case escapes
	atf_add_test_case expiry
	atf_add_test_case denied
	atf_add_test_case audit_trail
	atf_add_test_case audit_fail_closed
	atf_add_test_case reload
	atf_add_test_case approvalctl
	atf_add_test_case watch_exec
}
