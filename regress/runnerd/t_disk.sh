#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# /work is bounded (runnerd.work_max, issue 29): a sandbox or session
# that fills it gets ENOSPC and its call ends and is recorded; the state
# directory, on a small file system of the test's own, keeps its room;
# no mount of /work is left after a call, an exit or a crash.  Every
# fill writes twice work_max and no more.

rd_setup()
{
	RD_BIN=$(atf_config_get bindir)
	RD_LIB=$(atf_get_srcdir)
	. "$RD_LIB/rd.subr"
}

disk_case()
{
	atf_test_case "$1" cleanup
	eval "$1_head() {
		atf_set descr '$2'
		atf_set require.user root
		atf_set require.progs runsc python3
		atf_set timeout 120
	}
	$1_cleanup() { rd_setup; rd_stop; disk_unmount; }"
}

FILL='head -c 16777216 /dev/zero > /work/fill; echo rc=$?'

# The call of request id $1 has its end in the audit log.
recorded()
{
	grep '"tool.result"' events.jsonl | grep -qF "\"$1\"" ||
	    atf_fail "no tool.result for $1: $(tail -3 events.jsonl)"
}

# The mounts of this test's state directory, as the host sees them.
work_mounts()
{
	grep -F "$(pwd)/var/runner/bundles/" /proc/mounts || :
}

# Until a sandbox's /work is mounted, 10 s at most.
wait_mount()
{
	i=0
	while [ -z "$(work_mounts)" ] && [ $i -lt 200 ]; do
		i=$((i + 1)); sleep 0.05
	done
}

disk_unmount()
{
	if grep -qF " $(pwd)/var " /proc/mounts; then
		umount -l "$(pwd)/var"
	fi
}

disk_case oneshot_full "a one-shot call past work_max gets ENOSPC and ends recorded"
oneshot_full_body()
{
	rd_setup
	RD_EXTRA="  work_max: 8M" rd_start || atf_fail "start"
	rd_call "$FILL; df -k /work | tail -1" || atf_fail "call"
	rd_expect_status exited 2>err || atf_fail "$(tr '\n' ' ' < err)"
	rd_expect "rc=1" 2>err || atf_fail "$(tr '\n' ' ' < err)"
	rd_get stderr | grep -q "No space left on device" ||
	    atf_fail "no ENOSPC: $(rd_get text)"
	recorded "$(rd_get request_id)"
	rd_leftovers 2>err || atf_fail "$(tr '\n' ' ' < err)"
	rd_stop
}

disk_case session_full "a session that fills /work gets ENOSPC and lives on"
session_full_body()
{
	rd_setup
	RD_SESSIONS_MAX=2 RD_EXTRA="  session_agent: $(atf_config_get srcdir)/sandbox-init/session-agent.py
  warm_pool: 0
  work_max: 8M" rd_start || atf_fail "start"
	python3 - run/runner.sock "$FILL" "$RD_LIB" > ids 2>err <<'EOF' ||
import json, sys
sys.path.insert(0, sys.argv[3])
from sesscall import Client

c = Client(sys.argv[1])
def call(tool, **args):
    r = c.call(tool, **args)
    print(r["structuredContent"]["request_id"])
    return r["structuredContent"]
def fail(what, r):
    sys.exit("%s: %s" % (what, json.dumps(r)))

r = call("run_python", code="x = 41")
sid = r["session_id"]
r = call("run_shell", command=sys.argv[2], session_id=sid)
if "rc=1" not in r["stdout"] or "No space left on device" not in r["stderr"]:
    fail("no ENOSPC", r)
# Full, the session still answers; emptied, it writes again.
r = call("run_python", code="print(x + 1)", session_id=sid)
if r["stdout"] != "42\n":
    fail("the session lost its state", r)
r = call("run_shell", command="rm /work/fill && echo more > /work/f && "
         "cat /work/f", session_id=sid)
if r["stdout"] != "more\n":
    fail("no room after the fill", r)
call("close_session", session_id=sid)
EOF
	    atf_fail "$(tr '\n' ' ' < err)"
	for rid in $(cat ids); do
		recorded "$rid"
	done
	rd_leftovers 2>err || atf_fail "$(tr '\n' ' ' < err)"
	rd_stop
}

disk_case state_small "the state directory on a small file system keeps recording while a sandbox fills its /work"
state_small_body()
{
	rd_setup
	# State and the audit log on 24 MiB; the sandbox writes 32.
	mkdir var
	mount -t tmpfs -o size=24m tmpfs var || atf_skip "cannot mount tmpfs"
	ln -s var/events.jsonl events.jsonl
	RD_EXTRA="  work_max: 8M
  timeout: 20s" rd_start || atf_fail "start"
	python3 "$RD_LIB/runcall.py" run/runner.sock \
	    'head -c 33554432 /dev/zero > /work/fill; echo rc=$?; sleep 6' \
	    > filler.json &
	filler=$!
	# Until the sandbox has written what its /work takes (8 MiB).
	i=0
	until [ "$(stat -c %s var/runner/bundles/*/work/fill 2>/dev/null || echo 0)" \
	    -ge 8323072 ] || [ $i -ge 400 ]; do
		i=$((i + 1)); sleep 0.05
	done
	avail=$(df -k --output=avail var | tail -1)
	[ "$avail" -gt 16384 ] ||
	    atf_fail "the sandbox's writes landed in the state file system: ${avail}k left"
	rd_call 'echo recorded' || atf_fail "call"
	rd_expect recorded 2>err || atf_fail "$(cat err) $(rd_get text)"
	recorded "$(rd_get request_id)"
	wait $filler
	mv filler.json result.json
	rd_expect "rc=1" 2>err || atf_fail "$(tr '\n' ' ' < err)"
	recorded "$(rd_get request_id)"
	rd_leftovers 2>err || atf_fail "$(tr '\n' ' ' < err)"
	rd_stop
	disk_unmount
}

disk_case mounts "/work is a mount of work_max bytes, gone after the call, the exit of runnerd and the sweep after a crash"
mounts_body()
{
	rd_setup
	RD_EXTRA="  work_max: 8M" rd_start || atf_fail "start"
	python3 "$RD_LIB/runcall.py" run/runner.sock 'sleep 1000' \
	    > /dev/null 2>&1 &
	wait_mount
	work_mounts | grep -q " tmpfs .*size=8192k" ||
	    atf_fail "no 8 MiB tmpfs on /work: $(work_mounts)"
	# A crash leaves it; the next runnerd's sweep removes it.
	pid=$(cat rd.runnerd)
	kill -KILL $(ps -o pid= --ppid "$pid") "$pid"
	[ -n "$(work_mounts)" ] || atf_fail "nothing for the sweep"
	rm -f run/runner.sock
	rd_start_runnerd || atf_fail "restart"
	i=0
	while ! grep -q '"sandbox.swept"' events.jsonl && [ $i -lt 400 ]; do
		i=$((i + 1)); sleep 0.05
	done
	rd_leftovers 2>err || atf_fail "after the sweep: $(cat err)"
	# A call, and runnerd's exit while a second one runs.
	rd_call 'echo x > /work/x && cat /work/x' || atf_fail "call"
	rd_expect x 2>err || atf_fail "$(tr '\n' ' ' < err)"
	rd_leftovers 2>err || atf_fail "after a call: $(cat err)"
	python3 "$RD_LIB/runcall.py" run/runner.sock 'sleep 1000' \
	    > /dev/null 2>&1 &
	wait_mount
	[ -n "$(work_mounts)" ] || atf_fail "the second call has no mount"
	rd_stop_runnerd
	[ -z "$(work_mounts)" ] || atf_fail "left after exit: $(work_mounts)"
	rd_stop
}

atf_init_test_cases()
{
	atf_add_test_case oneshot_full
	atf_add_test_case session_full
	atf_add_test_case state_small
	atf_add_test_case mounts
}
