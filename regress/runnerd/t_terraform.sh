#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# terraform_plan and terraform_apply through the real suite: mcpd (via
# the MCP SDK), runnerd with gVisor, approvald, brokerd and auditd.

. "$(atf_get_srcdir)/../lib/suite.subr"

# The suite on the test's own Terraform root, holding the demo module
# and modules that are wrong in each way a working_dir can be.
tf_setup()
{
	as_need runsc terraform
	W=$(pwd)
	mkdir -p tf/empty tf/broken tf/needs-provider outside
	cp -R "$(as_src)/terraform/demo" "$(as_src)/terraform/k8s-demo" tf/
	echo 'resource "terraform_data" "x" { input = }' > tf/broken/main.tf
	cat > tf/needs-provider/main.tf <<'TF'
terraform {
  required_providers {
    null = { source = "hashicorp/null", version = "3.2.2" }
  }
}
resource "null_resource" "x" {}
TF
	cp tf/demo/main.tf outside/
	ln -s "$W/outside" tf/link
	as_tf_suite "[demo, k8s-demo, empty, broken, needs-provider, link]"
}

sandboxes_started()
{
	grep -c '"event":"sandbox.started"' var/audit.jsonl || :
}

atf_test_case scenario cleanup
scenario_head()
{
	atf_set "descr" "the forces-replacement demo, every step checked, through the MCP SDK"
	atf_set "require.user" "root"
	atf_set "require.progs" "node"
	atf_set "timeout" "300"
}
scenario_body()
{
	modules=${AS_NODE_MODULES:-$(dirname "$(atf_config_get bindir)")/node/node_modules}
	[ -d "$modules/@modelcontextprotocol/sdk" ] ||
	    atf_fail "MCP SDK not installed in $modules (make deps)"
	tf_setup
	NODE_PATH=$modules node "$(as_src)/examples/demo-client.cjs" \
	    "$(dirname "$(as_bin mcpd)")" "$(pwd)/conf.yaml" "$(pwd)/tf" \
	    > demo.out 2>&1 || { cat demo.out >&2; atf_fail "demo scenario"; }
	grep -q "the gate held" demo.out || atf_fail "the demo did not finish"
	atf_check -o match:"chain intact" "$(as_bin auditctl)" -f conf.yaml verify
	as_stop
}
scenario_cleanup()
{
	as_kill_all
}

atf_test_case bad_working_dirs cleanup
bad_working_dirs_head()
{
	atf_set "descr" "working_dir escapes and non-modules are refused before any sandbox starts"
	atf_set "require.user" "root"
	atf_set "timeout" "120"
}
bad_working_dirs_body()
{
	tf_setup
	for wd in /etc ../demo demo/.. "demo/../../outside"; do
		as_call terraform_plan "{\"working_dir\":\"$wd\"}" > r.json
		atf_check -o inline:"true\n" -x "python3 -c 'import json; print(str(json.load(open(\"r.json\"))[\"isError\"]).lower())'"
	done
	as_call terraform_plan '{"working_dir":"link"}' | as_field text > r.txt
	grep -q "goes through a symlink" r.txt || atf_fail "symlink: $(cat r.txt)"
	as_call terraform_plan '{"working_dir":"empty"}' | as_field text > r.txt
	grep -q "not a Terraform directory" r.txt || atf_fail "empty: $(cat r.txt)"
	as_call terraform_plan '{"working_dir":"nowhere"}' | as_field text > r.txt
	grep -q "not allowed" r.txt || atf_fail "unlisted: $(cat r.txt)"
	as_call terraform_apply '{"working_dir":"link"}' | as_field text > r.txt
	grep -q "goes through a symlink" r.txt || atf_fail "apply symlink"
	[ "$(sandboxes_started)" -eq 0 ] || atf_fail "a sandbox was started"
	as_stop
}
bad_working_dirs_cleanup()
{
	as_kill_all
}

atf_test_case approvals cleanup
approvals_head()
{
	atf_set "descr" "an approval for another working dir or whose plan file changed applies nothing"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
approvals_body()
{
	tf_setup
	# Another working dir: approvald refuses, nothing runs.
	id=$(as_call terraform_apply '{"working_dir":"demo"}' | as_field approval_id)
	atf_check -o match:approved "$(as_bin approvalctl)" -f conf.yaml approve "$id" --any-client
	before=$(sandboxes_started)
	as_call terraform_apply "{\"working_dir\":\"k8s-demo\",\"approval_id\":\"$id\"}" |
	    as_field text > r.txt
	grep -q "bound to other parameters" r.txt || atf_fail "other dir: $(cat r.txt)"
	[ "$(sandboxes_started)" -eq "$before" ] || atf_fail "it ran"
	# The saved plan changed after approval: loaded never, applied never.
	id=$(as_call terraform_apply '{"working_dir":"demo"}' | as_field approval_id)
	"$(as_bin approvalctl)" -f conf.yaml approve "$id" --any-client >/dev/null
	for p in var/runner/terraform/*/plans/*.tfplan; do
		printf x >> "$p"
	done
	as_call terraform_apply "{\"working_dir\":\"demo\",\"approval_id\":\"$id\"}" > r.json
	as_field text < r.json > r.txt
	grep -q "plan file was modified" r.txt || atf_fail "tampered: $(cat r.txt)"
	[ ! -e var/runner/terraform/*/terraform.tfstate ] ||
	    atf_fail "state written by a refused apply"
	# And it is spent: a person must look again.
	as_call terraform_apply "{\"working_dir\":\"demo\",\"approval_id\":\"$id\"}" |
	    as_field text > r.txt
	grep -q "already spent" r.txt || atf_fail "replay: $(cat r.txt)"
	as_stop
}
approvals_cleanup()
{
	as_kill_all
}

atf_test_case phase_scopes cleanup
phase_scopes_head()
{
	atf_set "descr" "a plan and an apply without approval get the plan scope, an approved apply the apply scope"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
phase_scopes_body()
{
	tf_setup
	as_call terraform_plan '{"working_dir":"demo"}' > r.json
	grep -q '"isError":false' r.json || atf_fail "plan: $(cat r.json)"
	id=$(as_call terraform_apply '{"working_dir":"demo"}' | as_field approval_id)
	"$(as_bin approvalctl)" -f conf.yaml approve "$id" --any-client >/dev/null
	as_call terraform_apply "{\"working_dir\":\"demo\",\"approval_id\":\"$id\"}" > r.json
	grep -q '"isError":false' r.json || atf_fail "apply: $(cat r.json)"
	# brokerd's record of each credential: the tool, then the scope.
	python3 -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["event"] == "credential.issued":
        print(r["fields"]["tool"], r["fields"]["scope"])' var/audit.jsonl > scopes.txt
	atf_check -o inline:"terraform_plan terraform-plan
terraform_apply terraform-plan
terraform_apply terraform-apply
" cat scopes.txt
	as_stop
}
phase_scopes_cleanup()
{
	as_kill_all
}

atf_test_case terraform_errors cleanup
terraform_errors_head()
{
	atf_set "descr" "terraform's own errors come back as they are, nothing left behind, not the render's sandbox"
	atf_set "require.user" "root"
	atf_set "timeout" "180"
}
terraform_errors_body()
{
	tf_setup
	as_call terraform_plan '{"working_dir":"broken"}' > r.json
	as_field text < r.json > r.txt
	grep -q '"isError":true' r.json || atf_fail "syntax error not an error"
	grep -q "Error: " r.txt || atf_fail "no terraform message: $(cat r.txt)"
	# One whose module calls cannot be read is refused before terraform
	# runs, with where (helperlib/tfsource.c).
	echo 'resource "terraform_data" "x" {' > tf/broken/main.tf
	as_call terraform_plan '{"working_dir":"broken"}' > r.json
	as_field text < r.json > r.txt
	grep -q "^main.tf:2: a bracket that does not close" r.txt ||
	    atf_fail "not refused with where: $(cat r.txt)"
	as_call terraform_plan '{"working_dir":"needs-provider"}' > r.json
	as_field text < r.json > r.txt
	grep -q '"isError":true' r.json || atf_fail "missing provider not an error"
	grep -q "hashicorp/null" r.txt || atf_fail "no init message: $(cat r.txt)"
	[ -z "$(ls var/runner/bundles 2>/dev/null)" ] || atf_fail "bundles left"
	# Each plan's render sandbox waited beside it (its script begins
	# with its read of go): a plan that failed ends it too.
	pgrep -a -f "$(as_render_waiting)" && atf_fail "a render sandbox is left"
	as_stop
}
terraform_errors_cleanup()
{
	as_kill_all
}

# plan_ok DIR: a plan of DIR succeeds; apply_ok DIR: an approved apply does.
plan_ok()
{
	as_call terraform_plan "{\"working_dir\":\"$1\"}" > r.json
	[ "$(as_is_error r.json)" = false ] || atf_fail "plan $1: $(cat r.json)"
}
apply_ok()
{
	as_call terraform_apply "{\"working_dir\":\"$1\"}" > pending.json
	id=$(as_field approval_id < pending.json)
	"$(as_bin approvalctl)" -f conf.yaml approve "$id" --any-client \
	    >/dev/null || atf_fail "no approval for $1: $(cat pending.json)"
	as_call terraform_apply "{\"working_dir\":\"$1\",\"approval_id\":\"$id\"}" > r.json
	[ "$(as_is_error r.json)" = false ] || atf_fail "apply $1: $(cat r.json)"
}

atf_test_case many_files cleanup
many_files_head()
{
	atf_set "descr" "a directory of 1,000 entries and a module of 500 files plan, apply and plan again"
	atf_set "require.user" "root"
	atf_set "timeout" "600"
}
many_files_body()
{
	as_need runsc terraform
	# wide: one directory of 1,000 entries (glibc's qsort of as many
	# names asks sysinfo(2) how much memory there is).  many: 500
	# files in directories of 50, which only the comparison with the
	# last apply's snapshot sorts all at once.
	mkdir -p tf/wide/data tf/many
	echo 'resource "terraform_data" "x" {}' > tf/wide/main.tf
	echo 'resource "terraform_data" "x" {}' > tf/many/main.tf
	for i in $(seq 1000); do
		echo "$i" > "tf/wide/data/f$i"
	done
	for d in $(seq 10); do
		mkdir "tf/many/d$d"
		for i in $(seq 50); do
			echo "$i" > "tf/many/d$d/f$i"
		done
	done
	as_tf_suite "[wide, many]"
	for wd in wide many; do
		plan_ok $wd
		apply_ok $wd
		plan_ok $wd
	done
	as_stop
}
many_files_cleanup()
{
	as_kill_all
}

atf_test_case hostile_text cleanup
hostile_text_head()
{
	atf_set "descr" "a replace whose values, names and outputs draw an update in place is shown escaped by approvalctl, its verdict last"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
hostile_text_body()
{
	as_need runsc terraform
	# Terraform escapes a one-line string but prints a multi-line one
	# as it is: up eight lines, erase, and an update in place drawn.
	mkdir -p tf/m
	cat > tf/m/main.tf <<'TF'
variable "v" {
  default = "one"
}
locals {
  draw = "\u001b[8A\u001b[J  ~ update in-place\r\u009b2K\u202e"
}
resource "terraform_data" "x" {
  for_each         = toset(["k\u001b[1A\u2066"])
  triggers_replace = var.v
  input            = "a\n${local.draw}\nPlan: 0 to add, 1 to change, 0 to destroy."
}
output "o" {
  value = "b\n${local.draw}\u007f"
}
TF
	as_tf_suite "[m]"
	apply_ok m
	echo 'v = "two"' > tf/m/m.auto.tfvars
	id=$(as_call terraform_apply '{"working_dir":"m"}' | as_field approval_id)
	case $id in apr-*) ;; *) atf_fail "no pending approval: $id" ;; esac
	atf_check -o save:show.txt "$(as_bin approvalctl)" -f conf.yaml show "$id"
	atf_check -o save:show.json "$(as_bin approvalctl)" -f conf.yaml -j \
	    show "$id"
	as_no_raw_controls show.txt || atf_fail "raw controls in show"
	as_no_raw_controls show.json || atf_fail "raw controls in show -j"
	grep -qF '\x1b[8A\x1b[J  ~ update in-place\x0d\u009b2K\u202e' \
	    show.txt || atf_fail "show: $(cat show.txt)"
	tail -n 2 show.txt > verdict.txt
	atf_check -o match:"^plan: .*1 to replace  \\(DESTRUCTIVE\\)$" \
	    -o match:"^  !! delete\\+create  terraform_data.x" cat verdict.txt
	as_stop
}
hostile_text_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case scenario
	atf_add_test_case bad_working_dirs
	atf_add_test_case approvals
	atf_add_test_case phase_scopes
	atf_add_test_case terraform_errors
	atf_add_test_case many_files
	atf_add_test_case hostile_text
}
