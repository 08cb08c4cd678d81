#! /usr/bin/env atf-sh
#
# mcpd against the official MCP TypeScript SDK client.  The SDK is
# installed outside the source tree, in <build>/node (see
# regress/mcpd/package.json), or wherever AS_NODE_MODULES points.

atf_test_case sdk_client cleanup
sdk_client_head()
{
	atf_set descr "initialize, tools/list, calls, isError results," \
	    "progress and cancellation through @modelcontextprotocol/sdk"
	atf_set require.progs "node python3"
	atf_set timeout 120
}

sdk_client_body()
{
	. "$(atf_config_get srcdir)/regress/lib/suite.subr"
	modules=${AS_NODE_MODULES:-$(dirname "$(atf_config_get bindir)")/node/node_modules}
	[ -d "$modules/@modelcontextprotocol/sdk" ] || atf_skip \
	    "MCP SDK not installed in $modules (npm ci, see regress/mcpd/package.json)"
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
	NODE_PATH=$modules node "$(atf_get_srcdir)/sdk_client.cjs" \
	    "$(as_bin mcpd)" "$(pwd)/conf.yaml" 2>sdk.err ||
	    { cat sdk.err >&2; atf_fail "SDK client"; }
	if grep -q "forbidden syscall" sdk.err; then
		cat sdk.err >&2
		atf_fail "seccomp"
	fi
}

sdk_client_cleanup()
{
	[ -f runnerd.pid ] && kill "$(cat runnerd.pid)" 2>/dev/null
	:
}

atf_init_test_cases()
{
	atf_add_test_case sdk_client
}
