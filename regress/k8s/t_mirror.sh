#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# The provider mirror on the kubernetes backend: a read-only claim
# (cluster/provider-mirror-claim.yaml, kubernetes.provider_mirror_pvc)
# that runnerd sees at runnerd.terraform_mirror; each terraform Job
# mounts, read-only and by subPath, the allowed providers it holds and
# nothing else.  The double's runner (path_runner.py) makes the mounts as
# the kubelet does, read-only ones included.

. "$(atf_get_srcdir)/k8s.subr"
. "$(atf_get_srcdir)/../lib/suite.subr"
. "$(atf_get_srcdir)/kb.subr"

# needs NAME PROVIDER: a module on the claim that requires PROVIDER.
needs()
{
	mkdir -p "$CLAIM/modules/$1"
	cat > "$CLAIM/modules/$1/main.tf" <<TF
terraform {
  required_providers {
    p = { source = "$2", version = "3.2.2" }
  }
}
TF
}

# probe MIRROR TYPE: a provider hashicorp/TYPE that, when terraform
# starts it, tries to write beside itself and in the plugin directory
# above it, says what it sees there and fails the handshake: terraform
# shows its line ("Unrecognized remote plugin message").
probe()
{
	d=$1/registry.terraform.io/hashicorp/$2/3.2.2/linux_amd64
	mkdir -p "$d"
	cat > "$d/terraform-provider-$2_v3.2.2" <<'SH'
#!/bin/sh
d=$(cd "$(dirname "$0")" && pwd -P)
touch "$d/planted" 2>/dev/null && own=written || own=refused
touch "$d/../../../planted" 2>/dev/null && top=written || top=refused
echo "probe own $own top $top sees $(ls "$d/../../.." | tr '\n' ' ')"
exit 1
SH
	chmod 755 "$d/terraform-provider-$2_v3.2.2"
}

# The suite with the mirror claim holding hashicorp/null and random, of
# which the policy allows random and time (not mirrored).
mirror_suite()
{
	MIRROR=$(pwd)/state/claims/agent-sandbox/provider-mirror
	KB_POLICY_SED='s|providers: \[.*\]|providers: [hashicorp/random, hashicorp/time]|;s|working_dirs: \[demo\]|working_dirs: [demo, null, random, time]|' \
	TK_RUNNERD_EXTRA="  terraform_mirror: $MIRROR" kb_suite
	kubectl create --validate=false \
	    -f "$(k8s_cluster)/provider-mirror-claim.yaml" >/dev/null ||
	    atf_fail "cannot create the mirror's claim"
	i=0
	until [ -d "$MIRROR" ]; do
		i=$((i + 1))
		[ $i -le 100 ] || atf_fail "the mirror's claim was not bound"
		sleep 0.05
	done
	probe "$MIRROR" null
	probe "$MIRROR" random
	needs null hashicorp/null
	needs random hashicorp/random
	needs time hashicorp/time
	echo "  provider_mirror_pvc: provider-mirror" >> conf.yaml
	as_start auditd approvald brokerd runnerd
}

atf_test_case allowed cleanup
allowed_head()
{
	atf_set "descr" "an allowed provider of the mirror is installed from it and started by the plan in the Job, which sees no other provider"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
allowed_body()
{
	mirror_suite
	as_call terraform_plan '{"working_dir":"random"}' | as_field text > r.txt
	# Terraform started it: its line is the handshake terraform got.
	grep -q "remote plugin message: probe" r.txt ||
	    atf_fail "random not started: $(tr '\n' ' ' < r.txt)"
	grep -q "providers/registry.terraform.io/hashicorp/random/3.2.2/" \
	    r.txt || atf_fail "random not installed from the mirror"
	grep -q "probe own refused top refused sees random *$" r.txt ||
	    atf_fail "the probe: $(grep probe r.txt)"
	# The module without providers still plans.
	as_call terraform_plan '{"working_dir":"demo"}' | as_field summary |
	    grep -q '^Plan for demo: 1 to add' || atf_fail "demo does not plan"
	as_stop
}
allowed_cleanup()
{
	as_kill_all
	kb_stop
}

atf_test_case not_allowed cleanup
not_allowed_head()
{
	atf_set "descr" "a provider the mirror has but the policy does not allow is not mounted: init fails naming it; an allowed one the mirror lacks fails the same way, and the Job still starts"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
not_allowed_body()
{
	mirror_suite
	for p in null time; do
		as_call terraform_plan "{\"working_dir\":\"$p\"}" > r.json
		as_field text < r.json > r.txt
		[ "$(as_is_error r.json)" = true ] ||
		    atf_fail "$p: not an error: $(tr '\n' ' ' < r.txt)"
		grep -q "provider registry.terraform.io/hashicorp/$p was not found" \
		    r.txt || atf_fail "$p: not named: $(tr '\n' ' ' < r.json)"
		grep -q "probe" r.txt && atf_fail "$p: a provider ran"
	done
	as_stop
}
not_allowed_cleanup()
{
	as_kill_all
	kb_stop
}

atf_test_case read_only cleanup
read_only_head()
{
	atf_set "descr" "the mirror is read-only in the Job: the provider it started could write neither beside itself nor in the plugin directory, and the mirror is unchanged"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
read_only_body()
{
	mirror_suite
	(cd "$MIRROR" && find . | sort) > before.txt
	as_call terraform_plan '{"working_dir":"random"}' | as_field text > r.txt
	grep -q "probe own refused top refused" r.txt ||
	    atf_fail "the probe: $(grep probe r.txt || tr '\n' ' ' < r.txt)"
	(cd "$MIRROR" && find . | sort) > after.txt
	atf_check -o empty diff before.txt after.txt
	as_stop

	# runnerd needs to see the mirror to mount what it holds.
	sed -i '/^  terraform_mirror:/d' conf.yaml
	atf_check -s not-exit:0 \
	    -e match:'provider_mirror_pvc needs runnerd.terraform_mirror' \
	    "$(as_bin runnerd)" -d -f conf.yaml
}
read_only_cleanup()
{
	as_kill_all
	kb_stop
}

atf_init_test_cases()
{
	atf_add_test_case allowed
	atf_add_test_case not_allowed
	atf_add_test_case read_only
}
