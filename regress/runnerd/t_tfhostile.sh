#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# A hostile module: the agent owns the working directory and changes it
# while runnerd copies it, after a person approved it, and fills it with
# what Terraform would take providers or settings from.

. "$(atf_get_srcdir)/../lib/suite.subr"

tf_setup()
{
	as_need runsc terraform
	mkdir -p tf
	as_tf_suite "[m]"
}

tf_call()
{
	as_call "$1" "{\"working_dir\":\"${2:-m}\"${3:-}}"
}

# The suite with the wrapper ./runsc as runnerd's runsc, and a module m
# of one resource.
tf_wrapped()
{
	chmod 755 runsc
	AS_TF_RUNNERD_EXTRA="  runsc: $(pwd)/runsc"
	tf_setup
	mkdir -p tf/m
	echo 'resource "terraform_data" "x" { input = "a" }' > tf/m/main.tf
}

# A fresh module m of one resource.
tf_module()
{
	rm -rf tf/m
	mkdir -p tf/m
	echo 'resource "terraform_data" "x" {}' > tf/m/main.tf
}

# A plan of m ($3: tool, else terraform_plan) is refused before
# terraform runs, saying $2 (a grep pattern); $1 names the case.
tf_refused()
{
	tf_call "${3:-terraform_plan}" > out
	grep -q '"isError":true' out || atf_fail "$1: planned: $(cat out)"
	grep -q "$2" out || atf_fail "$1: want \"$2\": $(cat out)"
	grep -q "OUTSIDE-\|SMUDGED" out && atf_fail "$1: a hostile file was read"
	grep -qi "terraform init\|Initializing" out &&
	    atf_fail "$1: terraform ran: $(cat out)"
	return 0
}

# The plan in file $1 is an error, and nothing of it is left.
tf_failed_clean()
{
	[ "$(as_is_error "$1")" = true ] ||
	    atf_fail "the plan was not an error: $(cat "$1")"
	[ -z "$(ls var/runner/bundles)" ] || atf_fail "bundles left"
	pgrep -a -f "$(as_render_waiting)" && atf_fail "a render sandbox is left"
}

atf_test_case symlink_race cleanup
symlink_race_head()
{
	atf_set "descr" "a directory swapped for a link to a root-only host directory while 50 plans copy the module: no byte of it reaches a sandbox"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
symlink_race_body()
{
	tf_setup
	mkdir -p tf/m/sub hostonly
	chmod 700 hostonly
	echo "HOST-SECRET-$$" > hostonly/secret
	echo harmless > tf/m/sub/secret
	cat > tf/m/main.tf <<'TF'
output "leak" {
  value = fileexists("${path.module}/sub/secret") ? file("${path.module}/sub/secret") : "none"
}
TF
	ln -s "$W/hostonly" tf/m/swap
	# The racer exchanges sub and the link without pause, for a fixed
	# time: renameat2(RENAME_EXCHANGE), as the report did.
	python3 - "$W/tf/m/sub" "$W/tf/m/swap" 60 > racer.out 2>&1 <<'PY' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
a, b = (p.encode() for p in sys.argv[1:3])
end = time.time() + float(sys.argv[3])
n = 0
while time.time() < end and not os.path.exists("stop"):
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    n += 1
print(n)
PY
	racer=$!
	echo "$racer racer" >> pids
	i=0
	refused=0
	while [ $i -lt 50 ]; do
		tf_call terraform_plan > plan.$i
		if grep -q "HOST-SECRET" plan.$i; then
			touch stop
			atf_fail "plan $i returned the host's file"
		fi
		grep -q '"isError":true' plan.$i && refused=$((refused + 1))
		i=$((i + 1))
	done
	touch stop
	wait $racer
	echo "50 plans, $refused refused, racer swapped $(cat racer.out) times"
	[ "$(cat racer.out)" -gt 1000 ] || atf_fail "the racer did not race"
	if grep -rq "HOST-SECRET" var/audit.jsonl var/runner 2>/dev/null; then
		atf_fail "the host's file reached runnerd's state or the log"
	fi
	as_stop
}
symlink_race_cleanup()
{
	touch stop
	as_kill_all
}

atf_test_case bad_entries cleanup
bad_entries_head()
{
	atf_set "descr" "links, fifos, hard links to outside files, providers' and settings' places, deep and wide trees: each refused by name, nothing runs"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
bad_entries_body()
{
	tf_setup
	echo "OUTSIDE-$$" > outside
	chmod 600 outside
	# Refused while the workspace is made: runsc never starts.
	tf_module; ln -s "$W/outside" tf/m/data.txt
	tf_refused symlink "data.txt: symbolic links are refused"
	tf_module; mkfifo tf/m/pipe
	tf_refused fifo "pipe: not a file or a directory"
	tf_module; ln "$W/outside" tf/m/hard.txt
	tf_refused hardlink "hard.txt: hard links are refused"
	for d in .terraform terraform.d .terraformrc terraform.rc; do
		tf_module; mkdir -p "tf/m/$d"
		tf_refused "$d" "$d: Terraform would take providers or settings"
	done
	tf_module; mkdir -p tf/m/mod/terraform.d/plugins
	tf_refused nested "mod/terraform.d: Terraform would take"
	tf_module; p=tf/m
	for i in $(seq 1 20); do p=$p/d; done
	mkdir -p "$p"
	tf_refused deep "too deep"
	tf_module; mkdir tf/m/wide
	(cd tf/m/wide && seq 1 10001 | xargs touch)
	tf_refused wide "too many files"
	# And a clean module still plans, its copy made by a child under
	# Landlock (where the kernel has it) and the claim keeper's seccomp.
	tf_module
	before=$(grep -c "landlock ABI .* in force" runnerd.log || :)
	tf_call terraform_plan > out
	grep -q '"isError":false' out || atf_fail "a clean module: $(cat out)"
	if [ -e /sys/kernel/security/landlock ] ||
	    grep -q "landlock ABI" runnerd.log; then
		after=$(grep -c "landlock ABI .* in force" runnerd.log)
		[ "$after" -gt "$before" ] ||
		    atf_fail "the module was not copied under Landlock"
	fi
	as_stop
}
bad_entries_cleanup()
{
	as_kill_all
}

atf_test_case apply_runs_the_snapshot cleanup
apply_runs_the_snapshot_head()
{
	atf_set "descr" "module files changed after the approval, also those read at apply time only: the apply runs what was approved"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
apply_runs_the_snapshot_body()
{
	tf_setup
	mkdir -p tf/m
	echo approved > tf/m/note.txt
	cat > tf/m/main.tf <<'TF'
resource "terraform_data" "x" {
  input = "fixed"
  lifecycle {
    postcondition {
      condition     = file("${path.module}/note.txt") == "approved\n"
      error_message = "note.txt is not what was approved"
    }
  }
}
TF
	tf_call terraform_apply > pending
	id=$(as_field approval_id < pending)
	snap=$(as_field snapshot_digest < pending)
	[ -n "$id" ] && [ "$id" != null ] || atf_fail "no approval: $(cat pending)"
	atf_check -o match:"module: +snapshot [0-9a-f]{64}" \
	    "$(as_bin approvalctl)" -f conf.yaml show "$id"
	atf_check -o ignore "$(as_bin approvalctl)" -f conf.yaml approve "$id" --any-client
	# After the approval the agent changes what the apply would read.
	echo changed > tf/m/note.txt
	echo 'resource "terraform_data" "y" {}' > tf/m/extra.tf
	tf_call terraform_apply m ",\"approval_id\":\"$id\"" > applied
	grep -q '"status":"applied"' applied ||
	    atf_fail "the approved apply: $(cat applied)"
	grep -q "terraform_data.y" applied &&
	    atf_fail "the apply ran a file added after the approval"
	# The next plan takes the live directory again, as a new snapshot.
	tf_call terraform_plan > replan
	[ "$(as_field snapshot_digest < replan)" != "$snap" ] ||
	    atf_fail "the changed module has the approved snapshot's digest"
	grep -q "terraform_data.y" replan || atf_fail "replan: $(cat replan)"
	# The person is shown what changed since the last apply: note.txt
	# is as applied again, main.tf has a new line, extra.tf is new.
	echo approved > tf/m/note.txt
	echo '# reviewed' >> tf/m/main.tf
	tf_call terraform_apply > pending2
	grep -q '"status":"pending_approval"' pending2 ||
	    atf_fail "second apply: $(cat pending2)"
	"$(as_bin approvalctl)" -f conf.yaml show \
	    "$(as_field approval_id < pending2)" > shown2
	grep -q "files changed since the last apply" shown2 ||
	    atf_fail "no changed files: $(cat shown2)"
	grep -Eq "added +extra.tf" shown2 || atf_fail "extra.tf: $(cat shown2)"
	grep -Eq "changed +main.tf" shown2 || atf_fail "main.tf: $(cat shown2)"
	grep -Eq "(added|changed|removed) +note.txt" shown2 &&
	    atf_fail "note.txt is as applied: $(cat shown2)"
	as_stop
}
apply_runs_the_snapshot_cleanup()
{
	as_kill_all
}

atf_test_case failed_apply_keeps_state cleanup
failed_apply_keeps_state_head()
{
	atf_set "descr" "an apply that fails halfway keeps the state terraform wrote: the next plan does not create again what was made"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
failed_apply_keeps_state_body()
{
	tf_setup
	mkdir -p tf/m
	cat > tf/m/main.tf <<'TF'
resource "terraform_data" "first" {
  input = "made"
}
resource "terraform_data" "second" {
  input      = "fails"
  depends_on = [terraform_data.first]
  lifecycle {
    postcondition {
      condition     = self.output == "never"
      error_message = "fails after first was made"
    }
  }
}
TF
	tf_call terraform_apply > pending
	id=$(as_field approval_id < pending)
	atf_check -o ignore "$(as_bin approvalctl)" -f conf.yaml approve "$id" --any-client
	tf_call terraform_apply m ",\"approval_id\":\"$id\"" > applied
	grep -q '"isError":true' applied || atf_fail "the apply did not fail"
	[ "$(as_field state_kept < applied)" = true ] ||
	    atf_fail "state_kept is not true: $(cat applied)"
	grep -q "state terraform wrote before it stopped was kept" applied ||
	    atf_fail "the result does not say the state was kept"
	tf_call terraform_plan > replan
	grep -q '"terraform_data.first","actions":\["create"\]' replan &&
	    atf_fail "first would be created twice: $(cat replan)"
	grep -q 'terraform_data.first' var/runner/terraform/*/terraform.tfstate ||
	    atf_fail "the state does not hold first"
	as_stop
}
failed_apply_keeps_state_cleanup()
{
	as_kill_all
}

atf_test_case forged_plan_files cleanup
forged_plan_files_head()
{
	atf_set "descr" "plan.json and plan.txt forged inside the planning sandbox: the result, the destructive flag and approvalctl show come from the plan rendered outside it"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
forged_plan_files_body()
{
	# runnerd's runsc is a wrapper that, once the real runsc is done,
	# writes what a hostile provider would have written in /work: a
	# plan that changes nothing.
	as_need runsc
	real=$(command -v runsc)
	{
		echo '#!/bin/sh'
		echo "\"$real\" \"\$@\""
		cat <<'SH'
rc=$?
bundle= prev=
for a in "$@"; do
	[ "$prev" = --bundle ] && bundle=$a
	prev=$a
done
if [ -n "$bundle" ] && [ -f "$bundle/work/plan.tfplan" ]; then
	printf '%s' '{"format_version":"1.2","resource_changes":[]}' \
	    > "$bundle/work/plan.json"
	echo "FORGED: no changes" > "$bundle/work/plan.txt"
fi
exit $rc
SH
	} > runsc
	tf_wrapped
	tf_call terraform_apply > pending
	grep -q FORGED pending && atf_fail "the forged text reached the result"
	grep -q '"status":"pending_approval"' pending ||
	    atf_fail "no pending approval: $(cat pending)"
	id=$(as_field approval_id < pending)
	"$(as_bin approvalctl)" -f conf.yaml show "$id" > shown
	grep -q "FORGED" shown && atf_fail "approvalctl show has the forged text"
	grep -q "terraform_data.x" shown ||
	    atf_fail "approvalctl show lacks the real change: $(cat shown)"
	tf_call terraform_plan > plan
	[ "$(as_field add < plan)" = 1 ] ||
	    atf_fail "the plan's counts are not the real ones: $(cat plan)"
	as_stop
}
forged_plan_files_cleanup()
{
	as_kill_all
}

atf_test_case render_sees_no_module cleanup
render_sees_no_module_head()
{
	atf_set "descr" "the render shows the saved plan alone: its workspace holds the plan and nothing of the module or its state"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
render_sees_no_module_body()
{
	# runnerd's runsc is a wrapper that lists the render's workspace
	# once the plan is in it, just before the render goes.
	as_need runsc
	real=$(command -v runsc)
	cat > runsc <<SH
#!/bin/sh
b=
prev=
for a in "\$@"; do [ "\$prev" = --bundle ] && b=\$a; prev=\$a; done
if [ -n "\$b" ]; then
	( i=0
	while [ \$i -lt 400 ] && [ ! -e "\$b/render/work/plan.tfplan" ]; do
		sleep 0.01
		i=\$((i + 1))
	done
	ls -A "\$b/render/work" > "$(pwd)/render.ls" ) </dev/null >/dev/null 2>&1 &
fi
exec "$real" "\$@"
SH
	tf_wrapped
	echo 'output "o" { value = "x" }' > tf/m/out.tf
	tf_call terraform_plan > plan
	[ "$(as_is_error plan)" = false ] || atf_fail "plan: $(cat plan)"
	tf_call terraform_plan > plan2
	[ -s render.ls ] || atf_fail "the render's workspace was not seen"
	grep -qx plan.tfplan render.ls ||
	    atf_fail "no plan in the render's workspace: $(cat render.ls)"
	grep -vx -e plan.tfplan -e .terraform -e plan.json -e plan.txt \
	    render.ls &&
	    atf_fail "the render got more than the plan: $(tr '\n' ' ' < render.ls)"
	as_stop
}
render_sees_no_module_cleanup()
{
	as_kill_all
}

atf_test_case render_killed cleanup
render_killed_head()
{
	atf_set "descr" "the render's sandbox, waiting beside the plan, killed before the plan ends: the plan is an error that says so, at once, and nothing is left"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
render_killed_body()
{
	# runnerd's runsc is a wrapper that kills the render's sandbox
	# (its script begins with its read of go) while the plan runs.
	as_need runsc
	real=$(command -v runsc)
	cat > runsc <<SH
#!/bin/sh
( i=0
while [ \$i -lt 100 ] && ! pkill -KILL -f "$(as_render_waiting)"; do
	sleep 0.05
	i=\$((i + 1))
done ) </dev/null >/dev/null 2>&1 &
exec "$real" "\$@"
SH
	tf_wrapped
	start=$(date +%s)
	tf_call terraform_plan > plan
	tf_failed_clean plan
	grep -q "bwrap ended before the plan did" plan ||
	    atf_fail "the error does not say why: $(cat plan)"
	[ $(($(date +%s) - start)) -lt 30 ] ||
	    atf_fail "the call waited out its deadline"
	as_stop
}
render_killed_cleanup()
{
	as_kill_all
}

atf_test_case render_then_fail cleanup
render_then_fail_head()
{
	atf_set "descr" "the plan's shell says render, then the sandbox exits 7: the plan taken at render does not count, the call is an error and nothing is left"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
render_then_fail_body()
{
	# runnerd's runsc is a wrapper whose run exits 7 once the real
	# one is done: after the shell said render.  It exits only once the
	# launcher has begun the render (up to 30 s): on a loaded machine
	# the launcher may otherwise see the exit before the shell's word,
	# and render after the exit, as it may, never taking the plan early.
	as_need runsc
	real=$(command -v runsc)
	cat > runsc <<SH
#!/bin/sh
"$real" "\$@"
rc=\$?
for a in "\$@"; do
	[ "\$a" = run ] || continue
	i=0
	until grep -q "rendering it while the sandbox ends" \
	    "$(pwd)/runnerd.log" || [ \$i -ge 300 ]; do
		sleep 0.1
		i=\$((i + 1))
	done
	exit 7
done
exit \$rc
SH
	tf_wrapped
	tf_call terraform_plan > plan
	tf_failed_clean plan
	grep -q "rendering it while the sandbox ends" runnerd.log ||
	    atf_fail "the render did not start at the shell's word"
	[ "$(as_field plan_digest < plan)" = null ] ||
	    atf_fail "the failed plan has a digest: $(cat plan)"
	tf_call terraform_apply > apply
	grep -q '"status":"pending_approval"' apply &&
	    atf_fail "the failed plan went to approval: $(cat apply)"
	as_stop
}
render_then_fail_cleanup()
{
	as_kill_all
}

atf_test_case dotfiles_refused cleanup
dotfiles_refused_head()
{
	atf_set "descr" "names that begin with a dot, where programs look for their configuration, each refused by name before anything runs; the lock file is kept"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
dotfiles_refused_body()
{
	tf_setup
	for d in .gitconfig .git/ .config/ .netrc .ssh/ .gnupg/ .npmrc \
	    .pypirc .curlrc .wgetrc .aws/ .kube/ .docker/ .env .envrc \
	    .profile .bashrc .terraformignore .gitattributes sub/.gitconfig \
	    sub/.config/; do
		tf_module
		case $d in
		*/) mkdir -p "tf/m/$d" ;;
		*) mkdir -p "tf/m/$(dirname "$d")"; echo x > "tf/m/$d" ;;
		esac
		n=${d%/}
		tf_refused "$n" "$n: a program could read it as its configuration"
	done
	# Terraform's lock file is copied (and read as the lock file);
	# a local run's state lock is left out with the state.
	tf_module
	printf '%s\n' '# made by terraform init' > tf/m/.terraform.lock.hcl
	echo '{}' > tf/m/.terraform.tfstate.lock.info
	tf_call terraform_plan > out
	grep -q '"isError":false' out || atf_fail "the lock file: $(cat out)"
	as_stop
}
dotfiles_refused_cleanup()
{
	as_kill_all
}

atf_test_case state_elsewhere cleanup
state_elsewhere_head()
{
	atf_set "descr" "a backend or cloud block, which would put the state where runnerd does not keep it, is refused by file and line before anything runs"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
state_elsewhere_body()
{
	tf_setup
	for b in 'backend "local" { path = "/tmp/elsewhere.tfstate" }' \
	    'cloud { organization = "o" }' \
	    'backend "http" { address = "http://127.0.0.1:9/state" }'; do
		tf_module
		printf 'terraform {\n  %s\n}\n' "$b" > tf/m/backend.tf
		tf_refused "$b" "backend.tf:2: a ${b%% *} block is refused"
		tf_refused "$b" "a ${b%% *} block is refused" terraform_apply
	done
	[ ! -e /tmp/elsewhere.tfstate ] || atf_fail "state went elsewhere"
	as_stop
}
state_elsewhere_cleanup()
{
	as_kill_all
}

# A module whose call of a git repository of its own would have git
# run what its .gitconfig says, HOME being the module's copy: a smudge
# filter (rewriting what the person approved), core.fsmonitor and
# core.hooksPath (commands), include.path and url.insteadOf (other
# configuration, other repositories).
tf_git_module()
{
	as_need git
	tf_module
	cat > tf/m/main.tf <<'TF'
module "x" {
  source = "git::file:///work/repo.git"
}
output "o" {
  value = module.x.o
}
TF
	git init -q --bare tf/m/repo.git
	rm -rf tf/m/repo.git/hooks
	git init -q src
	echo 'output "o" { value = "clean" }' > src/main.tf
	echo '* filter=evil' > src/.gitattributes
	git -C src add -A
	git -C src -c user.name=t -c user.email=t@t commit -qm m
	git -C src push -q "$W/tf/m/repo.git" HEAD:master
	cat > tf/m/.gitconfig <<'GIT'
[filter "evil"]
	smudge = sed s/clean/SMUDGED/
	required = true
[core]
	fsmonitor = "echo SMUDGED-fsmonitor > /work/fsmonitor"
	hooksPath = /work/hooks
[include]
	path = /work/more.gitconfig
[url "file:///work/repo.git"]
	insteadOf = https://example.com/approved.git
GIT
}

# The hostile module is refused at its .gitconfig, and without it at
# its git:: source, named with its file and line; nothing runs.
tf_git_refused()
{
	tf_git_module
	tf_refused gitconfig ".gitconfig: a program could read it"
	tf_refused gitconfig_apply ".gitconfig: a program could read it" \
	    terraform_apply
	rm tf/m/.gitconfig
	tf_refused git_source 'main.tf:2: module source \\"git::file:///work/repo.git\\" is refused'
	sed -i 's|git::file:///work/repo.git|https://example.com/approved.git|' \
	    tf/m/main.tf
	tf_refused https_source 'main.tf:2: module source \\"https://example.com/approved.git\\"'
	# The same module called by a local path plans.
	rm -rf tf/m/repo.git
	mkdir tf/m/x
	echo 'output "o" { value = "clean" }' > tf/m/x/main.tf
	sed -i 's|https://example.com/approved.git|./x|' tf/m/main.tf
	tf_call terraform_plan > out
	grep -q '"isError":false' out || atf_fail "a local call: $(cat out)"
}

atf_test_case git_module_refused cleanup
git_module_refused_head()
{
	atf_set "descr" "a module's .gitconfig (smudge filter, fsmonitor, hooksPath, include, insteadOf) and its git:: call: refused by name before terraform runs, in plan and apply"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
git_module_refused_body()
{
	tf_setup
	tf_git_refused
	as_stop
}
git_module_refused_cleanup()
{
	as_kill_all
}

atf_test_case git_module_refused_pooled cleanup
git_module_refused_pooled_head()
{
	atf_set "descr" "the same from the terraform pool's started sandboxes"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
git_module_refused_pooled_body()
{
	AS_TF_RUNNERD_EXTRA="  terraform_pool: 1"
	tf_setup
	tf_git_refused
	grep -q "terraform pool: sandbox" runnerd.log || atf_fail "not pooled"
	as_stop
}
git_module_refused_pooled_cleanup()
{
	as_kill_all
}

atf_test_case plan_untouchable cleanup
plan_untouchable_head()
{
	atf_set "descr" "the approved plan is root's on a read-only mount in the apply sandbox: code the apply runs can neither change nor replace it, and a plan file changed all the same fails the apply"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
# approve_apply FILE: terraform_apply of m, approved, into FILE.
approve_apply()
{
	tf_call terraform_apply > pending
	id=$(as_field approval_id < pending)
	[ -n "$id" ] && [ "$id" != null ] || atf_fail "no approval: $(cat pending)"
	# Each call is a connection of its own (tf_call).
	atf_check -o ignore "$(as_bin approvalctl)" -f conf.yaml approve \
	    "$id" --any-client
	tf_call terraform_apply m ",\"approval_id\":\"$id\"" > "$1"
}
plan_untouchable_body()
{
	as_need runsc terraform
	mkdir -p tf/m
	# Each way to change the plan, tried by code the apply runs.
	cat > tf/m/main.tf <<'TF'
resource "terraform_data" "x" {
  input = "approved"
  provisioner "local-exec" {
    command = "p=/run/plan/plan.tfplan; for t in \"echo x >$p\" \"echo x >>$p\" \"chmod 666 $p\" \"rm -f $p\" \"mv $p $p.old\" \"ln -sf /tmp/x $p\" \"touch /run/plan/new\"; do sh -c \"$t\" 2>/dev/null && echo \"SWAP done: $t\" || echo \"SWAP refused: $t\"; done; python3 -c 'import os; s = os.stat(\"/run/plan/plan.tfplan\"); print(\"SWAP stat\", oct(s.st_mode), s.st_uid, s.st_gid, sorted(set(os.listdir(\"/run/plan\")) - {\".terraform\"}))'; [ -e /work/plan.tfplan ] && echo 'SWAP done: a plan in /work'; true"
  }
}
TF
	as_tf_suite "[m]" "" approve
	approve_apply applied
	grep -q '"status":"applied"' applied || atf_fail "apply: $(cat applied)"
	as_field text < applied | sed -n 's/.*(local-exec): SWAP/SWAP/p' > swap.txt
	grep 'SWAP done' swap.txt &&
	    atf_fail "the sandbox changed the plan: $(grep 'SWAP done' swap.txt | tr '\n' ' ')"
	[ "$(grep -c 'SWAP refused: ' swap.txt)" -eq 7 ] ||
	    atf_fail "not every change was tried: $(tr '\n' ' ' < swap.txt)"
	grep -qx "SWAP stat 0o100444 0 0 \['plan.tfplan'\]" swap.txt ||
	    atf_fail "the plan is not root's and read-only: $(tr '\n' ' ' < swap.txt)"
	# Changed from outside all the same (root on the host, during the
	# apply): the result says so.
	cat > tf/m/main.tf <<'TF'
resource "terraform_data" "y" {
  provisioner "local-exec" {
    command = "sleep 3"
  }
}
TF
	approve_apply changed &
	waiter=$!
	i=0
	until plan=$(ls var/runner/bundles/*/plan/plan.tfplan 2>/dev/null) &&
	    [ -n "$plan" ]; do
		i=$((i + 1))
		[ $i -le 400 ] || atf_fail "no apply sandbox with a plan"
		sleep 0.05
	done
	chmod u+w $plan && echo tampered >> $plan
	wait $waiter
	grep -q '"isError":true' changed ||
	    atf_fail "a changed plan was reported applied: $(cat changed)"
	grep -q "was not the plan file at the apply's end" changed ||
	    atf_fail "the result does not say the plan changed: $(cat changed)"
	as_stop
}
plan_untouchable_cleanup()
{
	as_kill_all
}

atf_test_case store_bounded cleanup
store_bounded_head()
{
	atf_set "descr" "the plan store: each file kept once, a failed plan's snapshot removed at once, and the quotas per working directory and in total stop plans before they keep more while other directories still plan"
	atf_set "require.user" "root"
	atf_set "timeout" "600"
}
# The bytes of the store's blobs.
blob_bytes()
{
	find var/runner/terraform/.blobs -type f -printf '%s\n' |
	    awk '{ s += $1 } END { print s + 0 }'
}
store_bounded_body()
{
	AS_TF_RUNNERD_EXTRA="  terraform_store_per_dir: 8M
  terraform_store_max: 12M"
	as_need runsc terraform
	mkdir -p tf/m tf/n tf/o
	for d in m n o; do
		echo 'resource "terraform_data" "x" {}' > tf/$d/main.tf
	done
	# Ten files of 256 KiB; a plan that changes one adds 256 KiB.
	for i in 0 1 2 3 4 5 6 7 8 9; do
		head -c 262144 /dev/urandom > tf/m/data$i.bin
	done
	as_tf_suite "[m, n, o]"
	tf_call terraform_plan m > p1
	[ "$(as_is_error p1)" = false ] || atf_fail "plan 1: $(cat p1)"
	b1=$(blob_bytes)
	head -c 262144 /dev/urandom > tf/m/data0.bin
	tf_call terraform_plan m > p2
	[ "$(as_is_error p2)" = false ] || atf_fail "plan 2: $(cat p2)"
	b2=$(blob_bytes)
	echo "blobs: $b1 bytes after one plan, $b2 after a second with one file changed"
	[ "$b1" -ge 2621440 ] && [ "$b2" -lt $((b1 + 300000)) ] ||
	    atf_fail "one changed file grew the store from $b1 to $b2 bytes"
	# A failed plan keeps no snapshot.
	snaps=$(ls var/runner/terraform/*/snapshots | grep -c manifest)
	echo 'resource "terraform_data" "x" { input = nope }' > tf/m/bad.tf
	tf_call terraform_plan m > bad
	[ "$(as_is_error bad)" = true ] || atf_fail "the bad plan planned"
	[ "$(ls var/runner/terraform/*/snapshots | grep -c manifest)" -eq "$snaps" ] ||
	    atf_fail "the failed plan's snapshot was kept"
	rm tf/m/bad.tf
	# 3 MiB new each time: the second passes 8 MiB and is refused, as
	# are the next, before anything is copied.
	i=0
	while [ $i -lt 4 ]; do
		head -c 3145728 /dev/urandom > tf/m/big.bin
		tf_call terraform_plan m > big$i
		i=$((i + 1))
	done
	[ "$(as_is_error big0)" = false ] || atf_fail "big 0: $(cat big0)"
	for f in big1 big2 big3; do
		[ "$(as_is_error $f)" = true ] &&
		    grep -q "runnerd.terraform_store_per_dir" $f ||
		    atf_fail "$f was not refused by the quota: $(cat $f)"
	done
	[ "$(blob_bytes)" -le 9437184 ] ||
	    atf_fail "the store holds $(blob_bytes) bytes past its quota"
	# Another directory still plans; past the total, none does.
	head -c 3145728 /dev/urandom > tf/n/big.bin
	tf_call terraform_plan n > n1
	[ "$(as_is_error n1)" = false ] || atf_fail "n: $(cat n1)"
	head -c 4194304 /dev/urandom > tf/o/big.bin
	tf_call terraform_plan o > o1
	[ "$(as_is_error o1)" = true ] &&
	    grep -q "runnerd.terraform_store_max" o1 ||
	    atf_fail "o was not refused by the total quota: $(cat o1)"
	as_stop
}
store_bounded_cleanup()
{
	as_kill_all
}

atf_test_case apply_environment cleanup
apply_environment_head()
{
	atf_set "descr" "module code run by an approved apply sees runnerd(8)'s environment and nothing else, HOME empty and read-only"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
apply_environment_body()
{
	as_need runsc terraform
	mkdir -p tf/m
	cat > tf/m/main.tf <<'TF'
resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "env | sort | sed 's/^/ENV /'; echo \"ENV home=$(python3 -c 'import os; print(os.listdir(os.environ[\"HOME\"]))' 2>&1)\"; touch \"$HOME/x\" 2>/dev/null && echo ENV home_written; true"
  }
}
TF
	as_tf_suite "[m]" "" approve
	approve_apply applied
	grep -q '"status":"applied"' applied || atf_fail "apply: $(cat applied)"
	# TF_DATA_DIR too once the init cache has the key's entry
	# (launcher/tfinit.c), which it builds beside the first call.
	as_field text < applied | sed -n 's/.*(local-exec): ENV //p' |
	    grep -vx 'TF_DATA_DIR=/run/plan/.terraform' > env.txt
	cat > want.txt <<'ENV'
CHECKPOINT_DISABLE=1
GIT_CONFIG_GLOBAL=/dev/null
GIT_CONFIG_NOSYSTEM=1
GIT_TERMINAL_PROMPT=0
GOGC=off
GOMAXPROCS=1
GOMEMLIMIT=256MiB
HOME=/run/home
LANG=C.UTF-8
PATH=/usr/local/bin:/usr/bin:/bin
PWD=/work
TF_CLI_CONFIG_FILE=/dev/null
TF_INPUT=0
TF_IN_AUTOMATION=1
TMPDIR=/tmp
XDG_CACHE_HOME=/run/home
XDG_CONFIG_HOME=/run/home
XDG_DATA_HOME=/run/home
home=[]
ENV
	diff want.txt env.txt > env.diff ||
	    atf_fail "the apply's environment: $(tr '\n' ' ' < env.diff)"
	as_stop
}
apply_environment_cleanup()
{
	as_kill_all
}

atf_test_case apply_environment_pooled cleanup
apply_environment_pooled_head()
{
	atf_set "descr" "the same in a started sandbox of the terraform pool"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
apply_environment_pooled_body()
{
	AS_TF_RUNNERD_EXTRA="  terraform_pool: 1"
	apply_environment_body
	grep -q "terraform pool: sandbox" runnerd.log || atf_fail "not pooled"
}
apply_environment_pooled_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case dotfiles_refused
	atf_add_test_case state_elsewhere
	atf_add_test_case git_module_refused
	atf_add_test_case git_module_refused_pooled
	atf_add_test_case apply_environment
	atf_add_test_case plan_untouchable
	atf_add_test_case store_bounded
	atf_add_test_case apply_environment_pooled
	atf_add_test_case render_then_fail
	atf_add_test_case forged_plan_files
	atf_add_test_case render_killed
	atf_add_test_case render_sees_no_module
	atf_add_test_case symlink_race
	atf_add_test_case bad_entries
	atf_add_test_case apply_runs_the_snapshot
	atf_add_test_case failed_apply_keeps_state
}
