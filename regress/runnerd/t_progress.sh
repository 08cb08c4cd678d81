#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# Progress (issue 16): the real suite (mcpd, runnerd with gVisor,
# approvald, brokerd, auditd) reports terraform's phases (a plan, and
# the apply a person approved) and a session call's heartbeat to an MCP
# SDK client that sent a progressToken, and nothing to a call that did
# not ask.

. "$(atf_get_srcdir)/../lib/suite.subr"

atf_test_case sdk cleanup
sdk_head()
{
	atf_set "descr" "notifications/progress counted by the MCP SDK client: terraform's phases, a session heartbeat"
	atf_set "require.user" "root"
	atf_set "require.progs" "node runsc terraform"
	atf_set "timeout" "300"
}
sdk_body()
{
	modules=${AS_NODE_MODULES:-$(dirname "$(atf_config_get bindir)")/node/node_modules}
	[ -d "$modules/@modelcontextprotocol/sdk" ] ||
	    atf_fail "MCP SDK not installed in $modules (make deps)"
	mkdir tf
	cp -R "$(as_src)/terraform/demo" tf/
	as_tf_suite "[demo]"
	NODE_PATH=$modules node "$(atf_get_srcdir)/progress_client.cjs" \
	    "$(dirname "$(as_bin mcpd)")" "$(pwd)/conf.yaml" >client.out 2>&1 ||
	    { cat client.out >&2; atf_fail "progress client"; }
	cat client.out
	# Asked for nothing, a call gets nothing but its result.
	"$FRAMETOOL" send "$AS_RUN/runner.sock" 100 \
	    '{"tool":"terraform_plan","arguments":{"working_dir":"demo"}}' \
	    >quiet.out || atf_fail "terraform_plan: $(cat quiet.out)"
	grep -q '^TOOL_RESULT ' quiet.out || atf_fail "no result: $(cat quiet.out)"
	! grep -q '^TOOL_PROGRESS' quiet.out ||
	    atf_fail "progress nobody asked for: $(cat quiet.out)"
	as_stop
}
sdk_cleanup()
{
	as_kill_all
}

atf_init_test_cases()
{
	atf_add_test_case sdk
}
