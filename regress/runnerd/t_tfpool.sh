#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# runnerd.terraform_pool: terraform's sandboxes started ahead, each used
# by one call, refilled, and gone with runnerd.

. "$(atf_get_srcdir)/../lib/suite.subr"

# The suite with a pool of $1 on ./tf: the demo module, one module with
# a file of its own and one whose plan lists what /work and /tmp hold.
pool_setup()
{
	as_need runsc terraform
	mkdir -p tf/marked tf/reader
	cp -R "$(as_src)/terraform/demo" tf/
	cp tf/demo/* tf/marked/
	echo "only the marked module has this" > tf/marked/marker.txt
	cat > tf/reader/main.tf <<'TF'
output "seen" {
  value = concat(tolist(fileset("/work", "**")), tolist(fileset("/tmp", "**")))
}
TF
	AS_TF_RUNNERD_EXTRA="  terraform_pool: $1" \
	    as_tf_suite "[demo, marked, reader]"
}

# The sandboxes runsc knows of.
containers()
{
	runsc --root var/runner/runsc list -quiet 2>/dev/null | sort
}

# Waits up to 30 s until runsc knows of $1 sandboxes.
wait_containers()
{
	i=0
	while [ "$(containers | wc -l)" -ne "$1" ]; do
		i=$((i + 1))
		[ $i -le 300 ] || atf_fail "$(containers | wc -l) sandboxes, not $1"
		sleep 0.1
	done
}

# The sandbox that ran each call, in order.
claimed()
{
	sed -n 's/.*terraform pool: sandbox \(as-[0-9a-f]*\) runs.*/\1/p' \
	    runnerd.log
}

plan_ok()
{
	as_call terraform_plan "{\"working_dir\":\"$1\"}" > r.json
	grep -q '"isError":false' r.json || atf_fail "plan $1: $(cat r.json)"
}

atf_test_case once cleanup
once_head()
{
	atf_set "descr" "each pooled sandbox runs one call and is removed; a call sees none of another's files"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
once_body()
{
	pool_setup 1
	plan_ok marked
	plan_ok reader
	as_field plan_text < r.json > seen.txt
	grep -q '"main.tf"' seen.txt || atf_fail "the reader saw no /work: $(cat seen.txt)"
	grep -q marker seen.txt && atf_fail "the marked module's file was seen"
	[ "$(claimed | wc -l)" -eq 2 ] || atf_fail "calls not pooled: $(claimed)"
	[ "$(claimed | sort -u | wc -l)" -eq 2 ] || atf_fail "a sandbox ran twice"
	for cid in $(claimed); do
		containers | grep -qx "$cid" && atf_fail "$cid is still there"
		[ ! -e "var/runner/bundles/$cid" ] || atf_fail "$cid's bundle is left"
	done
	as_stop
}
once_cleanup()
{
	as_kill_all
}

atf_test_case refill cleanup
refill_head()
{
	atf_set "descr" "the pool starts full and is full again after a call"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
refill_body()
{
	pool_setup 2
	wait_containers 2
	containers > before.txt
	plan_ok demo
	wait_containers 2
	containers > after.txt
	# One of the two ran the plan and is gone; a new one took its place.
	[ "$(comm -12 before.txt after.txt | wc -l)" -eq 1 ] ||
	    atf_fail "not one new: $(cat before.txt after.txt)"
	claimed | grep -qxf before.txt || atf_fail "the plan was not pooled"
	as_stop
}
refill_cleanup()
{
	as_kill_all
}

atf_test_case teardown cleanup
teardown_head()
{
	atf_set "descr" "runnerd's exit removes the pool's sandboxes: no container, bundle or cgroup left"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
teardown_body()
{
	pool_setup 2
	wait_containers 2
	containers > pool.txt
	# So that the checks below can fail: their cgroups are there now.
	ls -d /sys/fs/cgroup/*/agent-sandbox/"$(head -1 pool.txt)" \
	    /sys/fs/cgroup/agent-sandbox/"$(head -1 pool.txt)" 2>/dev/null |
	    grep -q . || atf_fail "no cgroup found for a running sandbox"
	as_stop
	[ -z "$(containers)" ] || atf_fail "containers left: $(containers)"
	[ -z "$(ls var/runner/bundles)" ] || atf_fail "bundles left"
	while read -r cid; do
		! ls -d /sys/fs/cgroup/*/agent-sandbox/"$cid" \
		    /sys/fs/cgroup/agent-sandbox/"$cid" 2>/dev/null ||
		    atf_fail "cgroup of $cid left"
	done < pool.txt
	! pgrep -f -- "$(pwd)/var/runner" >/dev/null || atf_fail "processes left"
}
teardown_cleanup()
{
	as_kill_all
}

atf_test_case off cleanup
off_head()
{
	atf_set "descr" "terraform_pool 0 starts nothing ahead, and a plan runs in its own cold sandbox"
	atf_set "require.user" "root"
	atf_set "timeout" "300"
}
off_body()
{
	pool_setup 0
	sleep 2
	[ -z "$(containers)" ] || atf_fail "a sandbox was started ahead"
	plan_ok demo
	[ -z "$(claimed)" ] || atf_fail "a pooled sandbox ran it"
	[ -z "$(containers)" ] || atf_fail "containers left"
	[ -z "$(ls var/runner/bundles)" ] || atf_fail "bundles left"
	as_stop
}
off_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case once
	atf_add_test_case refill
	atf_add_test_case teardown
	atf_add_test_case off
}
