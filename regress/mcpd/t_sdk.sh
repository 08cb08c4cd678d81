#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
#
# mcpd against the official MCP TypeScript clients: the SDK 1.x client
# and the v2 client (@modelcontextprotocol/client).  They are installed
# outside the source tree, in <build>/node (see regress/mcpd/package.json),
# or wherever AS_NODE_MODULES points.

# run_client PACKAGE SCRIPT NODE_MAJOR: SCRIPT with PACKAGE's client
# against mcpd and a stand-in runnerd, on node NODE_MAJOR or later.
run_client()
{
	. "$(atf_config_get srcdir)/regress/lib/suite.subr"
	modules=${AS_NODE_MODULES:-$(dirname "$(atf_config_get bindir)")/node/node_modules}
	[ -d "$modules/$1" ] || atf_fail \
	    "$1 not installed in $modules (make deps, see regress/mcpd/package.json)"
	major=$(node -p 'process.versions.node.split(".")[0]')
	[ "$major" -ge "$3" ] || atf_skip "$1 needs node >= $3, not $major"
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
	NODE_PATH=$modules node "$(atf_get_srcdir)/$2" \
	    "$(as_bin mcpd)" "$(pwd)/conf.yaml" 2>sdk.err ||
	    { cat sdk.err >&2; atf_fail "$1 client"; }
	if grep -q "forbidden syscall" sdk.err; then
		cat sdk.err >&2
		atf_fail "seccomp"
	fi
}

stop_runnerd()
{
	[ -f runnerd.pid ] && kill "$(cat runnerd.pid)" 2>/dev/null
	:
}

atf_test_case sdk_client cleanup
sdk_client_head()
{
	atf_set descr "initialize, tools/list, calls, isError results," \
	    "progress, cancellation and logging through @modelcontextprotocol/sdk"
	atf_set require.progs "node python3"
	atf_set timeout 120
}
sdk_client_body() { run_client @modelcontextprotocol/sdk sdk_client.cjs 18; }
sdk_client_cleanup() { stop_runnerd; }

atf_test_case v2_client cleanup
v2_client_head()
{
	atf_set descr "@modelcontextprotocol/client in legacy, auto and" \
	    "2026-07-28 modes: getServerVersion(), logging at each level," \
	    "unknown levels; batches and error ids on raw stdio"
	atf_set require.progs "node python3"
	atf_set timeout 120
}
v2_client_body() { run_client @modelcontextprotocol/client sdk_v2_client.cjs 20; }
v2_client_cleanup() { stop_runnerd; }

atf_init_test_cases()
{
	atf_add_test_case sdk_client
	atf_add_test_case v2_client
}
