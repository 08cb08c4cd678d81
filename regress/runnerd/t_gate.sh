#! /usr/bin/env atf-sh
# A person in the loop for any tool: with a policy tier of high, a call
# stops at a pending approval bound to its arguments, and runs only when
# made again with the approval a person granted, once.

. "$(atf_get_srcdir)/../lib/suite.subr"

call()
{
	as_call run_shell "$1" > r.json
	python3 -c 'import json; r = json.load(open("r.json"))
print(str(r["isError"]).lower()); print(r["content"][0]["text"])' > r.txt
}

started()
{
	grep -c '"event":"sandbox.started"' var/audit.jsonl || :
}

atf_test_case run_shell_high cleanup
run_shell_high_head()
{
	atf_set "descr" "run_shell in tier high runs only with a granted, matching, unspent approval"
	atf_set "require.user" "root"
	atf_set "require.progs" "runsc"
	atf_set "timeout" "120"
}
run_shell_high_body()
{
	sed '/^  run_shell:/,/^  [a-z]/s/    tier: low/    tier: high/' \
	    "$(as_src)/etc/policy.yaml" > policy.yaml
	grep -A1 '^  run_shell:' policy.yaml | grep -q 'tier: high' ||
	    atf_fail "policy not edited"
	AS_RUNNERD_EXTRA="  sessions_max: 0
  warm_pool: 0"
	AS_BROKERD_EXTRA="  scopes:
    code: { engine: none, tools: [run_shell] }"
	as_conf
	as_start auditd approvald brokerd runnerd
	ctl="$(as_bin approvalctl) -f conf.yaml"

	call '{"command":"echo gated"}'
	head -1 r.txt | grep -q true || atf_fail "ran without approval"
	id=$(grep -o 'apr-[A-Za-z0-9_-]*' r.txt | head -1)
	[ -n "$id" ] || atf_fail "no approval id: $(cat r.txt)"
	[ "$(started)" -eq 0 ] || atf_fail "a sandbox started before approval"
	# Not yet approved: refused, nothing runs.
	call "{\"command\":\"echo gated\",\"approval_id\":\"$id\"}"
	grep -q "is pending, not approved" r.txt || atf_fail "$(cat r.txt)"
	atf_check -o match:approved $ctl approve "$id"
	# Granted for other arguments: refused.
	call "{\"command\":\"echo other\",\"approval_id\":\"$id\"}"
	grep -q "bound to other parameters" r.txt || atf_fail "$(cat r.txt)"
	[ "$(started)" -eq 0 ] || atf_fail "a sandbox started on a bad approval"
	call "{\"command\":\"echo gated\",\"approval_id\":\"$id\"}"
	head -1 r.txt | grep -q false || atf_fail "approved call: $(cat r.txt)"
	grep -q "^gated" r.txt || atf_fail "no output: $(cat r.txt)"
	call "{\"command\":\"echo gated\",\"approval_id\":\"$id\"}"
	grep -q "already spent" r.txt || atf_fail "replayed: $(cat r.txt)"
	[ "$(started)" -eq 1 ] || atf_fail "$(started) sandboxes for one approval"
	as_stop
}
run_shell_high_cleanup()
{
	as_kill_all
}

atf_test_case warm_pool_off cleanup
warm_pool_off_head()
{
	atf_set "descr" "with sessions off (sessions_max: 0) the warm pool starts no sandbox, whatever warm_pool says"
	atf_set "require.user" "root"
	atf_set "require.progs" "runsc"
	atf_set "timeout" "120"
}
warm_pool_off_body()
{
	# The control: with sessions on, the pool's bundles appear.
	AS_RUNNERD_EXTRA="  sessions_max: 1
  warm_pool: 1"
	as_conf
	as_start auditd approvald brokerd runnerd
	i=0
	while [ -z "$(ls var/runner/bundles 2>/dev/null)" ]; do
		i=$((i + 1))
		[ $i -le 100 ] || atf_fail "the control's pool never started"
		sleep 0.05
	done
	as_stop
	rm -rf var run
	AS_RUNNERD_EXTRA="  sessions_max: 0
  warm_pool: 2"
	as_conf
	as_start auditd approvald brokerd runnerd
	sleep 2
	[ -z "$(ls var/runner/bundles 2>/dev/null)" ] ||
	    atf_fail "a warm sandbox started: $(ls var/runner/bundles)"
	as_stop
}
warm_pool_off_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case run_shell_high
	atf_add_test_case warm_pool_off
}
