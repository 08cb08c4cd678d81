#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# What agent-written Terraform may install and run: providers only from
# the operator's mirror and the policy's allowlist, and code that runs at
# apply time shown and governed by terraform.provisioners.

. "$(atf_get_srcdir)/../lib/suite.subr"

# needs NAME PROVIDER: a module that requires PROVIDER (NAMESPACE/TYPE).
needs()
{
	mkdir -p "tf/$1"
	cat > "tf/$1/main.tf" <<TF
terraform {
  required_providers {
    p = { source = "$2", version = "3.2.2" }
  }
}
TF
}

# The suite with a mirror holding hashicorp/null and hashicorp/random,
# of which the policy allows random and hashicorp/time (not mirrored);
# provisioners as $1 says.
gov_setup()
{
	as_need runsc terraform
	as_fake_provider mirror registry.terraform.io/hashicorp/null
	as_fake_provider mirror registry.terraform.io/hashicorp/random
	mkdir -p tf/exec
	cp -R "$(as_src)/terraform/demo" tf/
	needs null hashicorp/null
	needs random hashicorp/random
	# Terraform's implied local mirrors: terraform.d/plugins in the
	# module, and under HOME .terraform.d/plugins and
	# .local/share/terraform/plugins, as a module would bring them.
	needs own-plugins hashicorp/time
	for d in .terraform.d/plugins .local/share/terraform/plugins; do
		as_fake_provider "tf/own-plugins/$d" \
		    registry.terraform.io/hashicorp/time
	done
	needs own-terraform-d hashicorp/time
	as_fake_provider tf/own-terraform-d/terraform.d/plugins \
	    registry.terraform.io/hashicorp/time
	cat > tf/exec/main.tf <<'TF'
resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "echo hi"
  }
}
TF
	# Code the plan never shows: terraform lists a removed block's
	# provisioners neither in the plan JSON nor in its text.
	mkdir -p tf/unlisted
	cat > tf/unlisted/main.tf <<'TF'
resource "terraform_data" "kept" {}
TF
	cat > tf/unlisted/removed.tf <<'TF'
removed {
  from = terraform_data.gone
  lifecycle {
    destroy = true
  }
  provisioner "local-exec" {
    when    = destroy
    command = "echo UNSHOWN"
  }
}
TF
	AS_TF_RUNNERD_EXTRA="  terraform_mirror: $(pwd)/mirror
${AS_TF_RUNNERD_EXTRA:-}"
	dirs="demo, null, random, own-plugins, own-terraform-d, exec, unlisted"
	as_tf_suite "[$dirs]" \
	    "[hashicorp/random, registry.terraform.io/HashiCorp/time]" "$1"
}

plans_saved()
{
	find var/runner/terraform -name '*.tfplan' 2>/dev/null | wc -l
}

atf_test_case provider_allowlist cleanup
provider_allowlist_head()
{
	atf_set "descr" "a provider the mirror has but the policy does not allow fails init, named; an allowed one is installed from the mirror"
	atf_set "require.user" "root"
	atf_set "timeout" "180"
}
provider_allowlist_body()
{
	gov_setup deny
	as_call terraform_plan '{"working_dir":"null"}' > r.json
	as_field text < r.json > r.txt
	[ "$(as_is_error r.json)" = true ] || atf_fail "not an error: $(cat r.txt)"
	grep -q "provider registry.terraform.io/hashicorp/null was not found" \
	    r.txt || atf_fail "provider not named: $(cat r.txt)"
	grep -q "Terraform has been successfully initialized" r.txt &&
	    atf_fail "init went on"
	[ "$(plans_saved)" -eq 0 ] || atf_fail "a plan was saved"
	# Allowed and mirrored: installed, and fails only when plan runs it.
	as_call terraform_plan '{"working_dir":"random"}' | as_field text > r.txt
	grep -q "providers/registry.terraform.io/hashicorp/random/3.2.2/" \
	    r.txt || atf_fail "random not installed from the mirror: $(cat r.txt)"
	as_stop
}
provider_allowlist_cleanup()
{
	as_kill_all
}

atf_test_case provider_allowlist_pooled cleanup
provider_allowlist_pooled_head()
{
	atf_set "descr" "the same from the terraform pool: its sandboxes have the whole mirror, terraform only the allowed providers"
	atf_set "require.user" "root"
	atf_set "timeout" "180"
}
provider_allowlist_pooled_body()
{
	AS_TF_RUNNERD_EXTRA="  terraform_pool: 1"
	provider_allowlist_body
	grep -q "terraform pool: sandbox" runnerd.log || atf_fail "not pooled"
}
provider_allowlist_pooled_cleanup()
{
	as_kill_all
}

atf_test_case module_plugins_ignored cleanup
module_plugins_ignored_head()
{
	atf_set "descr" "a provider in the module's own plugin directories is not installed, even when allowed"
	atf_set "require.user" "root"
	atf_set "timeout" "120"
}
module_plugins_ignored_body()
{
	gov_setup deny
	# The HOME-like ones begin with a dot: refused by name before the
	# sandbox (and HOME is not the module's copy any more).
	as_call terraform_plan '{"working_dir":"own-plugins"}' > r.json
	as_field text < r.json > r.txt
	[ "$(as_is_error r.json)" = true ] || atf_fail "not an error: $(cat r.txt)"
	grep -q "^\.local: a program could read it as its configuration" \
	    r.txt || atf_fail "the dot directory not named: $(cat r.txt)"
	# terraform.d is refused by name before the sandbox, or else unused.
	as_call terraform_plan '{"working_dir":"own-terraform-d"}' > r.json
	as_field text < r.json > r.txt
	[ "$(as_is_error r.json)" = true ] || atf_fail "not an error: $(cat r.txt)"
	grep -Eq "terraform\.d|hashicorp/time was not found" r.txt ||
	    atf_fail "neither named: $(cat r.txt)"
	[ "$(plans_saved)" -eq 0 ] || atf_fail "a plan was saved"
	as_stop
}
module_plugins_ignored_cleanup()
{
	as_kill_all
}

atf_test_case demo_plans cleanup
demo_plans_head()
{
	atf_set "descr" "the builtin terraform_data demo still plans with the plugin directory in place"
	atf_set "require.user" "root"
	atf_set "timeout" "120"
}
demo_plans_body()
{
	gov_setup deny
	as_call terraform_plan '{"working_dir":"demo"}' > r.json
	[ "$(as_is_error r.json)" = false ] || atf_fail "$(as_field text < r.json)"
	[ "$(as_field code < r.json)" = "[]" ] || atf_fail "code in the demo"
	as_stop
}
demo_plans_cleanup()
{
	as_kill_all
}

atf_test_case provisioners_denied cleanup
provisioners_denied_head()
{
	atf_set "descr" "under provisioners: deny a plan with a local-exec is refused, named, and no approval is created"
	atf_set "require.user" "root"
	atf_set "timeout" "120"
}
provisioners_denied_body()
{
	gov_setup deny
	as_call terraform_plan '{"working_dir":"exec"}' > r.json
	as_field text < r.json > r.txt
	[ "$(as_is_error r.json)" = true ] || atf_fail "not refused: $(cat r.txt)"
	grep -q "terraform.provisioners is deny" r.txt || atf_fail "$(cat r.txt)"
	grep -q "local-exec in terraform_data.x: echo hi" r.txt ||
	    atf_fail "code not named: $(cat r.txt)"
	as_call terraform_apply '{"working_dir":"exec"}' > r.json
	[ "$(as_is_error r.json)" = true ] || atf_fail "apply not refused"
	atf_check -o not-match:apr- "$(as_bin approvalctl)" -f conf.yaml list
	as_stop
}
provisioners_denied_cleanup()
{
	as_kill_all
}

atf_test_case provisioners_approve cleanup
provisioners_approve_head()
{
	atf_set "descr" "under provisioners: approve the plan is destructive and approvalctl show lists the command"
	atf_set "require.user" "root"
	atf_set "timeout" "120"
}
provisioners_approve_body()
{
	gov_setup approve
	as_call terraform_plan '{"working_dir":"exec"}' > r.json
	[ "$(as_is_error r.json)" = false ] || atf_fail "$(as_field text < r.json)"
	[ "$(as_field destructive < r.json)" = true ] || atf_fail "not destructive"
	as_field text < r.json > r.txt
	grep -q "DESTRUCTIVE: runs code at apply time: local-exec in terraform_data.x" \
	    r.txt || atf_fail "no reason: $(cat r.txt)"
	id=$(as_call terraform_apply '{"working_dir":"exec"}' | as_field approval_id)
	case $id in apr-*) ;; *) atf_fail "no pending approval: $id" ;; esac
	atf_check -o match:"runs code:    local-exec in terraform_data.x: echo hi" \
	    -o match:"DESTRUCTIVE" "$(as_bin approvalctl)" -f conf.yaml show "$id"
	as_stop
}
provisioners_approve_cleanup()
{
	as_kill_all
}

atf_test_case unlisted_denied cleanup
unlisted_denied_head()
{
	atf_set "descr" "under provisioners: deny a provisioner block the plan does not list (a removed block's) refuses the plan, by file and line"
	atf_set "require.user" "root"
	atf_set "timeout" "120"
}
unlisted_denied_body()
{
	gov_setup deny
	as_call terraform_plan '{"working_dir":"unlisted"}' > r.json
	as_field text < r.json > r.txt
	[ "$(as_is_error r.json)" = true ] || atf_fail "not refused: $(cat r.txt)"
	grep -q "terraform.provisioners is deny" r.txt || atf_fail "$(cat r.txt)"
	grep -q "provisioner in removed.tf:6: a provisioner block the plan does not list" \
	    r.txt || atf_fail "not named: $(cat r.txt)"
	as_call terraform_apply '{"working_dir":"unlisted"}' > r.json
	[ "$(as_is_error r.json)" = true ] || atf_fail "apply not refused"
	atf_check -o not-match:apr- "$(as_bin approvalctl)" -f conf.yaml list
	as_stop
}
unlisted_denied_cleanup()
{
	as_kill_all
}

atf_test_case unlisted_approve cleanup
unlisted_approve_head()
{
	atf_set "descr" "under provisioners: approve a provisioner block the plan does not list makes the plan destructive, and the person is shown where it is"
	atf_set "require.user" "root"
	atf_set "timeout" "120"
}
unlisted_approve_body()
{
	gov_setup approve
	as_call terraform_plan '{"working_dir":"unlisted"}' > r.json
	[ "$(as_is_error r.json)" = false ] || atf_fail "$(as_field text < r.json)"
	[ "$(as_field destructive < r.json)" = true ] || atf_fail "not destructive"
	as_field text < r.json > r.txt
	grep -q "does not show: 1 provisioner blocks in the module's files, 0 in the plan, the first at removed.tf:6" \
	    r.txt || atf_fail "no reason: $(cat r.txt)"
	id=$(as_call terraform_apply '{"working_dir":"unlisted"}' |
	    as_field approval_id)
	case $id in apr-*) ;; *) atf_fail "no pending approval: $id" ;; esac
	atf_check -o match:"provisioner in removed.tf:6" -o match:"DESTRUCTIVE" \
	    "$(as_bin approvalctl)" -f conf.yaml show "$id"
	as_stop
}
unlisted_approve_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case unlisted_denied
	atf_add_test_case unlisted_approve
	atf_add_test_case provider_allowlist
	atf_add_test_case provider_allowlist_pooled
	atf_add_test_case module_plugins_ignored
	atf_add_test_case demo_plans
	atf_add_test_case provisioners_denied
	atf_add_test_case provisioners_approve
}
