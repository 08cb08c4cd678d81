#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# terraform init, cached per lock file (issue 19, launcher/tfinit.c):
# built once from the lock file alone, copied into each call's sandbox,
# and never changed by what a sandbox writes.

. "$(atf_get_srcdir)/../lib/suite.subr"

# lock NAME PROVIDER: a module requiring PROVIDER (NAMESPACE/TYPE) 3.2.2,
# with the lock file terraform init made against the mirror, as an agent
# would commit it.
lock()
{
	mkdir -p "tf/$1"
	cat > "tf/$1/main.tf" <<TF
terraform {
  required_providers {
    p = { source = "$2", version = "3.2.2" }
  }
}
TF
	(cd "tf/$1" && TF_CLI_CONFIG_FILE=/dev/null CHECKPOINT_DISABLE=1 \
	    terraform init -input=false -no-color -plugin-dir="$W/mirror" \
	    >/dev/null) || atf_fail "terraform init for $1's lock file"
	rm -rf "tf/$1/.terraform"
}

# The suite with a mirror of hashicorp/null (allowed) and hashicorp/random
# (not), provisioners approved, on ./tf:
#   demo     terraform_data only, no lock file
#   locked   hashicorp/null, locked
#   unlisted hashicorp/random, locked
#   forged   a lock file that is not as terraform writes it
#   nested   a call of a local module, no lock file
#   exec     a local-exec that writes into .terraform when applied
#   reader   its plan's output: what /work/.terraform holds
init_setup()
{
	as_need runsc terraform
	W=$(pwd)
	as_fake_provider mirror registry.terraform.io/hashicorp/null
	as_fake_provider mirror registry.terraform.io/hashicorp/random
	mkdir tf
	cp -R "$(as_src)/terraform/demo" tf/
	lock locked hashicorp/null
	lock unlisted hashicorp/random
	lock forged hashicorp/null
	# A version that would close the block and add to the configuration.
	sed -i 's|^  version .*|  version = "3.2.2" } } resource "terraform_data" "x" { input = "|' \
	    tf/forged/.terraform.lock.hcl
	mkdir -p tf/nested/sub tf/exec tf/reader
	echo 'resource "terraform_data" "inner" { input = 1 }' > tf/nested/sub/main.tf
	echo 'module "m" { source = "./sub" }' > tf/nested/main.tf
	cat > tf/exec/main.tf <<'TF'
resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "mkdir -p .terraform/providers && ln -s /work .terraform/providers/planted && echo '[\"/work\"]' > .terraform/plugin_path && echo planted > .terraform/planted; echo \"DATADIR $TF_DATA_DIR\"; touch \"$TF_DATA_DIR/x\" 2>/dev/null && echo DATADIR written; true"
  }
}
TF
	cat > tf/reader/main.tf <<'TF'
output "seen" {
  value = tolist(fileset("/work/.terraform", "**"))
}
TF
	AS_TF_RUNNERD_EXTRA="  terraform_mirror: $W/mirror
${AS_TF_RUNNERD_EXTRA:-}"
	as_tf_suite "[demo, locked, unlisted, forged, nested, exec, reader]" \
	    "[hashicorp/null]" approve
}

# The cache's entries.
entries()
{
	ls var/runner/tfinit 2>/dev/null | grep -Ec '^[0-9a-f]{64}$'
}

# Waits up to 30 s for $1 entries, or for runnerd.log to say $2.
wait_cache()
{
	i=0
	until [ "$(entries)" -ge "$1" ] ||
	    { [ -n "${2:-}" ] && grep -q "$2" runnerd.log; }; do
		i=$((i + 1))
		[ $i -le 300 ] || atf_fail "$(entries) cache entries, not $1: $(grep "init cache" runnerd.log)"
		sleep 0.1
	done
}

# call TOOL ARGS: the call with progress; r.json its result, p.txt the
# phases it reported.
call()
{
	"$FRAMETOOL" send "$AS_RUN/runner.sock" 100 \
	    "{\"tool\":\"$1\",\"arguments\":$2,\"progress\":true}" > out.txt
	sed -n 's/^TOOL_RESULT //p' out.txt > r.json
	sed -n 's/^TOOL_PROGRESS //p' out.txt > p.txt
	[ -s r.json ] || atf_fail "$1: no result: $(cat out.txt)"
}

plan_ok()
{
	call terraform_plan "{\"working_dir\":\"$1\"}"
	[ "$(as_is_error r.json)" = false ] ||
	    atf_fail "plan $1: $(as_field text < r.json)"
}

atf_test_case reuse cleanup
reuse_head()
{
	atf_set "descr" "the first plan of a lock file runs init; the next ones copy the cache's entry, root's, made from the lock file alone"
	atf_set "require.user" "root"
	atf_set "timeout" "240"
}
reuse_body()
{
	init_setup
	plan_ok demo
	grep -q '"terraform init"' p.txt || atf_fail "no init: $(cat p.txt)"
	wait_cache 1
	plan_ok demo
	grep -q '"terraform plan"' p.txt || atf_fail "no plan phase: $(cat p.txt)"
	grep -q '"terraform init"' p.txt && atf_fail "init ran again"
	# A module with no lock file needs no provider: its entry is empty.
	[ -z "$(ls -A var/runner/tfinit/*)" ] ||
	    atf_fail "demo's entry: $(ls -AR var/runner/tfinit)"
	# The locked module fails only when its provider, no provider at
	# all, is run: init found it installed both times.
	call terraform_plan '{"working_dir":"locked"}'
	as_field text < r.json > r1.txt
	grep -q '"terraform init"' p.txt || atf_fail "no init: $(cat p.txt)"
	wait_cache 2
	call terraform_plan '{"working_dir":"locked"}'
	as_field text < r.json > r2.txt
	grep -q '"terraform init"' p.txt && atf_fail "init ran again"
	for r in r1.txt r2.txt; do
		grep -q "hashicorp/null" $r || atf_fail "$r: $(cat $r)"
		grep -Eq "Inconsistent dependency lock file|not installed|terraform init" \
		    $r && atf_fail "$r: init was wanted: $(cat $r)"
	done
	# What terraform init makes: a link into the plugin directory and
	# plugin_path, no more, all root's.
	e=$(grep -l . var/runner/tfinit/*/plugin_path | xargs dirname)
	[ "$(find "$e" -type l)" = \
	    "$e/providers/registry.terraform.io/hashicorp/null/3.2.2/linux_amd64" ] ||
	    atf_fail "entry: $(find "$e" -ls)"
	[ "$(readlink "$e"/providers/*/*/*/*/*)" = \
	    /run/providers/registry.terraform.io/hashicorp/null/3.2.2/linux_amd64 ] ||
	    atf_fail "link: $(readlink "$e"/providers/*/*/*/*/*)"
	grep -q '"/run/providers"' "$e/plugin_path" || atf_fail "plugin_path"
	[ -z "$(find var/runner/tfinit ! -user 0)" ] ||
	    atf_fail "not root's: $(find var/runner/tfinit ! -user 0)"
	[ -z "$(find var/runner/tfinit -name '.build-*')" ] || atf_fail "a build left"
	as_stop
}
reuse_cleanup()
{
	as_kill_all
}

atf_test_case reuse_pooled cleanup
reuse_pooled_head()
{
	atf_set "descr" "the same in the terraform pool's started sandboxes"
	atf_set "require.user" "root"
	atf_set "timeout" "240"
}
reuse_pooled_body()
{
	AS_TF_RUNNERD_EXTRA="  terraform_pool: 1"
	reuse_body
	grep -q "terraform pool: sandbox" runnerd.log || atf_fail "not pooled"
}
reuse_pooled_cleanup()
{
	as_kill_all
}

atf_test_case writes_stay cleanup
writes_stay_head()
{
	atf_set "descr" "what an applied local-exec writes into .terraform stays in its sandbox: the entry is unchanged, the next call sees none of it"
	atf_set "require.user" "root"
	atf_set "timeout" "240"
}
writes_stay_body()
{
	init_setup
	plan_ok exec
	wait_cache 1
	before=$(cd var/runner/tfinit && find . -printf '%p %u %m %l\n' | sort)
	call terraform_apply '{"working_dir":"exec"}'
	id=$(as_field approval_id < r.json)
	case $id in apr-*) ;; *) atf_fail "no pending approval: $(cat r.json)" ;; esac
	atf_check -o ignore "$(as_bin approvalctl)" -f conf.yaml approve "$id" --any-client
	call terraform_apply "{\"working_dir\":\"exec\",\"approval_id\":\"$id\"}"
	[ "$(as_is_error r.json)" = false ] ||
	    atf_fail "apply: $(as_field text < r.json)"
	after=$(cd var/runner/tfinit && find . -printf '%p %u %m %l\n' | sort)
	[ "$before" = "$after" ] || atf_fail "the cache changed: $after"
	# The apply's .terraform is the cache's copy, root's and read-only.
	as_field text < r.json | sed -n 's/.*(local-exec): DATADIR/DATADIR/p' \
	    > datadir.txt
	[ "$(cat datadir.txt)" = "DATADIR /run/plan/.terraform" ] ||
	    atf_fail "the apply's data directory: $(cat datadir.txt)"
	# The same key (no lock file): a copy of the empty entry.
	plan_ok reader
	grep -q '"terraform init"' p.txt && atf_fail "not from the cache"
	as_field plan_text < r.json > seen.txt
	grep -q planted seen.txt && atf_fail "the next call saw: $(cat seen.txt)"
	grep -q 'seen *= *\[\]' seen.txt || atf_fail "reader: $(cat seen.txt)"
	as_stop
}
writes_stay_cleanup()
{
	as_kill_all
}

atf_test_case module_fallback cleanup
module_fallback_head()
{
	atf_set "descr" "a module call needs init beyond the providers: terraform says so before running anything, and the plan runs after init"
	atf_set "require.user" "root"
	atf_set "timeout" "240"
}
module_fallback_body()
{
	init_setup
	plan_ok nested
	wait_cache 1
	plan_ok nested
	as_field plan_text < r.json > r.txt
	grep -q "module.m.terraform_data.inner" r.txt ||
	    atf_fail "no module resource: $(cat r.txt)"
	grep -q "Module not installed" r.txt && atf_fail "the error shown"
	as_stop
}
module_fallback_cleanup()
{
	as_kill_all
}

atf_test_case refused_locks cleanup
refused_locks_head()
{
	atf_set "descr" "a lock file of a provider the policy does not allow, or not as terraform writes it, builds no entry; the call says what terraform says"
	atf_set "require.user" "root"
	atf_set "timeout" "240"
}
refused_locks_body()
{
	init_setup
	call terraform_plan '{"working_dir":"unlisted"}'
	[ "$(as_is_error r.json)" = true ] || atf_fail "unlisted planned"
	as_field text < r.json | grep -q "hashicorp/random" ||
	    atf_fail "provider not named: $(as_field text < r.json)"
	wait_cache 1 "not built"
	call terraform_plan '{"working_dir":"forged"}'
	[ "$(as_is_error r.json)" = true ] || atf_fail "forged planned"
	wait_cache 1 "not as terraform writes it"
	[ "$(entries)" -eq 0 ] || atf_fail "entries: $(ls var/runner/tfinit)"
	[ "$(grep -c 'not built' runnerd.log)" -eq 2 ] ||
	    atf_fail "builds: $(grep 'init cache' runnerd.log)"
	# Failed lately: not built again at the next call.
	call terraform_plan '{"working_dir":"unlisted"}'
	sleep 2
	[ "$(grep -c 'init cache: building' runnerd.log)" -eq 2 ] ||
	    atf_fail "built again: $(grep 'init cache' runnerd.log)"
	as_stop
}
refused_locks_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case reuse
	atf_add_test_case reuse_pooled
	atf_add_test_case writes_stay
	atf_add_test_case module_fallback
	atf_add_test_case refused_locks
}
