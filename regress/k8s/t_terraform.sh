#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# The terraform tools on the kubernetes backend: runnerd, approvald,
# brokerd and auditd real; the cluster is the API double, whose pods run
# the real terraform (path_runner.py).  Working directories, state and
# saved plans live on terraform's claim (cluster/terraform-claim.yaml),
# which the double binds to a directory that runnerd sees at
# kubernetes.pvc_path; each Job mounts only its own calls/<Job name>.

. "$(atf_get_srcdir)/k8s.subr"
. "$(atf_get_srcdir)/../lib/suite.subr"
. "$(atf_get_srcdir)/kb.subr"

jobs_created()
{
	grep -c '"method": "POST", "path": "/apis/batch/v1/namespaces/agent-sandbox/jobs"' \
	    state/requests.jsonl || :
}

# Nothing of a call is left: no Job, no Secret, no call directory.
nothing_left()
{
	kb_left > left
	atf_check -o empty cat left
	atf_check -o empty ls -A "$CLAIM/calls"
}

atf_test_case plan_apply cleanup
plan_apply_head()
{
	atf_set "descr" "terraform_plan and terraform_apply with approval on the kubernetes backend: the plan saved on the claim under runnerd's digest and rendered on runnerd's host, a pending approval that approvalctl show reads, the approved plan applied from a read-only mount, a replay refused, nothing left"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
plan_apply_body()
{
	kb_suite
	as_start auditd approvald brokerd runnerd
	as_call terraform_plan '{"working_dir":"demo"}' > plan.json
	as_field summary < plan.json > summary.txt
	atf_check -o match:'^Plan for demo: 1 to add' cat summary.txt
	digest=$(as_field plan_digest < plan.json)
	saved=$(ls "$CLAIM"/terraform/*/plans/"$digest".tfplan) ||
	    atf_fail "no plan saved on the claim under $digest"
	atf_check_equal "$digest" "$(sha256sum "$saved" | cut -d' ' -f1)"
	nothing_left

	# Without approval_id: a plan, a pending approval, nothing applied.
	as_call terraform_apply '{"working_dir":"demo"}' > pending.json
	atf_check -o match:'"status":"pending_approval"' cat pending.json
	id=$(as_field approval_id < pending.json)
	pdigest=$(as_field plan_digest < pending.json)
	as_field summary < pending.json > summary.txt
	atf_check -o match:'^Plan for demo: 1 to add' cat summary.txt
	[ -z "$(ls "$CLAIM"/terraform/*/terraform.tfstate 2>/dev/null)" ] ||
	    atf_fail "state written before the approval"
	atf_check -o save:shown.txt "$(as_bin approvalctl)" -f conf.yaml \
	    show "$id"
	atf_check -o match:'terraform_data.web' cat shown.txt
	atf_check -o match:"$pdigest" cat shown.txt
	nothing_left

	atf_check -o match:approved "$(as_bin approvalctl)" -f conf.yaml \
	    approve "$id" --any-client
	as_call terraform_apply \
	    "{\"working_dir\":\"demo\",\"approval_id\":\"$id\"}" > applied.json
	atf_check -o match:'"status":"applied"' cat applied.json
	atf_check_equal "$pdigest" "$(as_field plan_digest < applied.json)"
	# The Job read the approved plan at /run/plan (path_runner.py maps
	# only a volumeMount's path there; t_kubejob checks it read-only).
	ls "$CLAIM"/terraform/*/terraform.tfstate >/dev/null 2>&1 ||
	    atf_fail "the apply kept no state on the claim"
	grep -q terraform_data "$CLAIM"/terraform/*/terraform.tfstate ||
	    atf_fail "the state has no resource"

	# Spent: the same approval applies nothing again.
	as_call terraform_apply \
	    "{\"working_dir\":\"demo\",\"approval_id\":\"$id\"}" |
	    as_field text > replay.txt
	atf_check -o match:'already spent' cat replay.txt
	nothing_left
	atf_check -o empty ls -A var/runner/render
	atf_check -o match:"chain intact" "$(as_bin auditctl)" -f conf.yaml \
	    verify
	as_stop
}
plan_apply_cleanup()
{
	as_kill_all
	kb_stop
}

atf_test_case forged_render cleanup
forged_render_head()
{
	atf_set "descr" "plan.json, plan.txt and a plan file forged by the module and by the planning Job after its plan: the pending approval, the destructive flag and approvalctl show come from the render on runnerd's host"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
forged_render_body()
{
	# The pod's shell is the image's: after the real one has planned,
	# it writes what hostile module code in the Job would write.
	mkdir -p image/bin
	cat > image/bin/sh <<'SH'
#!/bin/sh
/bin/sh "$@"
rc=$?
if [ -f plan.tfplan ]; then
	printf '%s' '{"format_version":"1.2","resource_changes":[]}' \
	    > plan.json
	echo "FORGED: no changes" > plan.txt
	echo "FORGED plan" > forged.tfplan
	echo forged >> @MARK@
fi
exit $rc
SH
	sed -i "s|@MARK@|$(pwd)/forged.log|" image/bin/sh
	chmod +x image/bin/sh
	K8S_DOUBLE_IMAGE=$(pwd)/image
	export K8S_DOUBLE_IMAGE
	kb_suite
	# And the module brings its own.
	printf '%s' '{"format_version":"1.2","resource_changes":[]}' \
	    > "$CLAIM/modules/demo/plan.json"
	echo "FORGED: module text" > "$CLAIM/modules/demo/plan.txt"
	echo "FORGED: module plan" > "$CLAIM/modules/demo/plan.tfplan"
	as_start auditd approvald brokerd runnerd
	as_call terraform_apply '{"working_dir":"demo"}' > pending.json
	grep -q FORGED pending.json &&
	    atf_fail "the forged text reached the result"
	atf_check -o match:'"status":"pending_approval"' cat pending.json
	# The Job's end-line wrapper and the command are each a shell of the
	# image's, so the forger may have written twice.
	atf_check -o match:'^forged$' cat forged.log
	grep -q 'Plan for demo: 1 to add' pending.json ||
	    atf_fail "the counts are not the real ones: $(cat pending.json)"
	id=$(as_field approval_id < pending.json)
	atf_check -o save:shown.txt "$(as_bin approvalctl)" -f conf.yaml \
	    show "$id"
	grep -q FORGED shown.txt &&
	    atf_fail "approvalctl show has the forged text: $(cat shown.txt)"
	atf_check -o match:'terraform_data.web' cat shown.txt
	# The plan kept is the one terraform wrote, as its digest says.
	pdigest=$(as_field plan_digest < pending.json)
	saved=$(ls "$CLAIM"/terraform/*/plans/"$pdigest".tfplan) ||
	    atf_fail "no plan saved under $pdigest"
	grep -q FORGED "$saved" && atf_fail "a forged plan file was kept"
	as_call terraform_plan '{"working_dir":"demo"}' > plan.json
	grep -q FORGED plan.json && atf_fail "forged text in the plan result"
	atf_check_equal 1 "$(as_field add < plan.json)"
	nothing_left
	as_stop
}
forged_render_cleanup()
{
	as_kill_all
	kb_stop
}

atf_test_case plans_pruned cleanup
plans_pruned_head()
{
	atf_set "descr" "saving a plan removes that working directory's saved plans older than runnerd.plan_retention, and only those"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
plans_pruned_body()
{
	TK_RUNNERD_EXTRA="  plan_retention: 1h" kb_suite
	as_start auditd approvald brokerd runnerd
	as_call terraform_plan '{"working_dir":"demo"}' > r.json
	plans=$(dirname "$(ls "$CLAIM"/terraform/*/plans/*.tfplan)")
	echo old > "$plans/$(printf '%064d' 1).tfplan"
	echo young > "$plans/$(printf '%064d' 2).tfplan"
	touch -d '2 hours ago' "$plans"/*.tfplan
	touch "$plans/$(printf '%064d' 2).tfplan"
	as_call terraform_plan '{"working_dir":"demo"}' > r.json
	digest=$(as_field plan_digest < r.json)
	ls "$plans" | sort > left.txt
	# The new plan keeps a note of the module snapshot it ran from.
	printf '%s\n' "$(printf '%064d' 2).tfplan" "$digest.tfplan" \
	    "$digest.snapshot" | sort > want.txt
	atf_check -o file:want.txt cat left.txt
	as_stop
}
plans_pruned_cleanup()
{
	as_kill_all
	kb_stop
}

atf_test_case off_the_claim cleanup
off_the_claim_head()
{
	atf_set "descr" "a working directory off the claim or in runnerd's own part of it, or no claim configured: a clear error and no Job"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
off_the_claim_body()
{
	TF_ROOT=$(pwd)/outside kb_suite
	as_start auditd approvald brokerd runnerd
	as_call terraform_plan '{"working_dir":"demo"}' > r.json
	atf_check -o match:'"isError":true' cat r.json
	as_field text < r.json > r.txt
	atf_check -o match:'is not on the claim \(kubernetes.pvc_path' \
	    cat r.txt
	atf_check_equal 0 "$(jobs_created)"
	nothing_left
	as_stop

	# On the claim, but runnerd's own part of it: saved plans would be
	# copied into the sandbox.
	mkdir -p "$CLAIM/terraform/plans-here"
	cp "$(as_src)/terraform/demo/main.tf" "$CLAIM/terraform/plans-here/"
	sed -i -e "s|^terraform_root:.*|terraform_root: $CLAIM|" \
	    -e "s|working_dirs: \[.*\]|working_dirs: [terraform/plans-here]|" \
	    policy.yaml
	as_start auditd approvald brokerd runnerd
	as_call terraform_plan '{"working_dir":"terraform/plans-here"}' |
	    as_field text > r.txt
	grep -q "is runnerd's own on the claim" r.txt ||
	    atf_fail "runnerd's part of the claim: $(cat r.txt)"
	atf_check_equal 0 "$(jobs_created)"
	as_stop

	# No claim at all: the tools say what to configure.
	sed -i -e '/^  pvc:/d' -e '/^  pvc_path:/d' conf.yaml
	as_start auditd approvald brokerd runnerd
	as_call terraform_plan '{"working_dir":"terraform/plans-here"}' |
	    as_field text > r.txt
	grep -q "need terraform's claim.*set kubernetes.pvc" r.txt ||
	    atf_fail "no claim: $(cat r.txt)"
	atf_check_equal 0 "$(jobs_created)"
	as_stop
}
off_the_claim_cleanup()
{
	as_kill_all
	kb_stop
}

atf_test_case claim_checks cleanup
claim_checks_head()
{
	atf_set "descr" "runnerd refuses a claim the cluster does not have and a pvc_path that is no directory; its claim keeper removes call directories a crash left and runs under seccomp"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
claim_checks_body()
{
	TK_PVC=nosuchclaim kb_suite
	atf_check -s not-exit:0 -e match:'no PersistentVolumeClaim nosuchclaim in namespace agent-sandbox' \
	    "$(as_bin runnerd)" -d -f conf.yaml
	sed -i "s|^  pvc:.*|  pvc: terraform|" conf.yaml
	sed -i "s|^  pvc_path:.*|  pvc_path: $(pwd)/nowhere|" conf.yaml
	atf_check -s not-exit:0 -e match:'pvc_path .*/nowhere is not an absolute path to a directory' \
	    "$(as_bin runnerd)" -d -f conf.yaml
	sed -i "s|^  pvc_path:.*|  pvc_path: $CLAIM|" conf.yaml
	mkdir -p "$CLAIM/calls/as-00000000000000aa/.terraform"
	echo '{}' > "$CLAIM/calls/as-00000000000000aa/terraform.tfstate"
	as_start auditd approvald brokerd runnerd
	# The keeper sweeps before it takes a request, maybe after the socket.
	i=0
	while [ -n "$(ls -A "$CLAIM/calls")" ]; do
		i=$((i + 1))
		[ $i -le 100 ] || atf_fail "a crash's call directory was left"
		sleep 0.05
	done
	# The keeper (of the helper's two children while idle, the first
	# forked; the plan renderer the other) is under seccomp.
	rd=$(awk '$2 == "runnerd" { print $1 }' pids)
	helper=$(ps -o pid= --ppid "$rd" | tr -d ' ')
	keeper=$(ps -o pid= --ppid "$helper" --sort=pid | head -1 | tr -d ' ')
	atf_check_equal 2 "$(ps -o pid= --ppid "$helper" | wc -l)"
	[ -n "$keeper" ] || atf_fail "no claim keeper under the helper"
	atf_check -o match:'^Seccomp:[[:space:]]+2$' \
	    grep '^Seccomp:' "/proc/$keeper/status"
	atf_check -o match:'^NoNewPrivs:[[:space:]]+1$' \
	    grep '^NoNewPrivs:' "/proc/$keeper/status"
	as_stop
}
claim_checks_cleanup()
{
	as_kill_all
	kb_stop
}

atf_init_test_cases()
{
	atf_add_test_case plan_apply
	atf_add_test_case forged_render
	atf_add_test_case plans_pruned
	atf_add_test_case off_the_claim
	atf_add_test_case claim_checks
}
