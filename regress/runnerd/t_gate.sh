#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# A person in the loop for any tool: with a policy tier of high, a call
# stops at a pending approval bound to its arguments, and runs only when
# made again with the approval a person granted, once, by the client
# (runner.sock connection) that asked for it unless granted for any.

. "$(atf_get_srcdir)/../lib/suite.subr"

# The suite with run_shell in tier high, one-shot.
gate_suite()
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
}

started()
{
	grep -c '"event":"sandbox.started"' var/audit.jsonl || :
}

atf_test_case run_shell_high cleanup
run_shell_high_head()
{
	atf_set "descr" "run_shell in tier high runs only with a granted, matching, unspent approval, presented by the client that asked unless approved for any"
	atf_set "require.user" "root"
	atf_set "require.progs" "runsc"
	atf_set "timeout" "120"
}
run_shell_high_body()
{
	gate_suite
	ctl="$(as_bin approvalctl) -f conf.yaml"

	python3 "$(atf_get_srcdir)/gate_check.py" "$AS_RUN/runner.sock" \
	    $ctl >gate.out 2>&1 || atf_fail "$(cat gate.out)"
	# One sandbox for each approval, none for a refusal.
	[ "$(started)" -eq 2 ] || atf_fail "$(started) sandboxes for two approvals"
	as_stop
}
run_shell_high_cleanup()
{
	as_kill_all
}

atf_test_case task_cancel cleanup
task_cancel_head()
{
	atf_set "descr" "a task's cancel of a call waiting on its approval says what it did: withdrawn (nothing ran), or too late (the approved call runs and its result follows); a wait outlives approvald's restart"
	atf_set "require.user" "root"
	atf_set "require.progs" "runsc"
	atf_set "timeout" "180"
}
task_cancel_body()
{
	gate_suite
	python3 "$(atf_get_srcdir)/await_check.py" "$AS_RUN/runner.sock" \
	    "$(dirname "$(as_bin approvald)")" \
	    "$(pwd)/conf.yaml" >await.out 2>&1 || atf_fail "$(cat await.out)"
	cat await.out
	as_stop
}
task_cancel_cleanup()
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
	atf_add_test_case task_cancel
	atf_add_test_case warm_pool_off
}
