#! /usr/bin/env atf-sh
#
# mcpd end to end over stdio, against a stand-in runnerd
# (fake_runnerd.py) and with the real seccomp filter in force.

# Starts the stand-in runnerd on run/runner.sock.
fake_runnerd()
{
	. "$(atf_config_get srcdir)/regress/lib/suite.subr"
	as_conf
	python3 "$(atf_get_srcdir)/fake_runnerd.py" run/runner.sock \
	    >runnerd.log 2>&1 &
	echo $! > runnerd.pid
	i=0
	while [ ! -S run/runner.sock ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && atf_fail "fake runnerd did not start"
		sleep 0.05
	done
}

stop_runnerd()
{
	[ -f runnerd.pid ] && kill "$(cat runnerd.pid)" 2>/dev/null
	:
}

# scenario NAME: runs one scenario of mcp_check.py.
scenario()
{
	fake_runnerd
	if ! python3 "$(atf_get_srcdir)/mcp_check.py" "$(as_bin mcpd)" \
	    "$(pwd)/conf.yaml" "$1"; then
		echo "--- mcpd.log" >&2
		tail -40 mcpd.log >&2
		atf_fail "scenario $1"
	fi
	if grep -q "forbidden syscall\|fatal in mcpd: seccomp" mcpd.log; then
		cat mcpd.log >&2
		atf_fail "seccomp"
	fi
}

for s in malformed lifecycle modern calls cancel timeout inflight eof \
    runner_gone runner_down runner_back; do
	eval "
atf_test_case $s cleanup
${s}_head() { atf_set timeout 120; }
${s}_cleanup() { stop_runnerd; }
"
done

malformed_body() { scenario malformed; }
lifecycle_body() { scenario lifecycle; }
modern_body() { scenario modern; }
calls_body() { scenario calls; }
cancel_body() { scenario cancel; }
eof_body() { scenario eof; }
runner_gone_body() { scenario runner_gone; }
runner_down_body() { scenario runner_down; }
runner_back_body() { scenario runner_back; }

timeout_body()
{
	AS_MCPD_EXTRA="  call_timeout: 1"
	scenario timeout
}

inflight_body()
{
	AS_MCPD_EXTRA="  max_inflight: 2"
	scenario inflight
}

atf_init_test_cases()
{
	for s in malformed lifecycle modern calls cancel timeout inflight \
	    eof runner_gone runner_down runner_back; do
		atf_add_test_case $s
	done
}
