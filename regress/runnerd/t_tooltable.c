/* SPDX-License-Identifier: ISC */
/*
 * runnerd's table of tools (runnerd/tool_table.c) against the suite's
 * (common/tools.c).  What a new tool has to provide: an entry in both,
 * and in runnerd's the members its kind needs, as kinds[] lists them.
 */
#include <atf-c.h>
#include <string.h>

#include "runnerd.h"
#include "tools.h"

#define ARGV		0x01	/* its sandbox's command */
#define PREPARE		0x02	/* its sandbox's whole request */
#define SHAPE		0x04	/* the MCP result of its sandbox's run */
#define AGENT_OP	0x08	/* what its session's agent is asked */
#define REPLY		0x10	/* the MCP result of the agent's reply */

static const struct {
	enum tool_kind	 kind;
	const char	*what;
	int		 needs;		/* and nothing else */
} kinds[] = {
	{ TOOL_ONESHOT, "one-shot", ARGV | SHAPE },
	{ TOOL_TERRAFORM, "terraform", PREPARE | SHAPE },
	{ TOOL_SESSION, "session", AGENT_OP | REPLY },
	{ TOOL_SESSION_END, "session end", 0 },
	{ TOOL_SHELL, "shell", ARGV | SHAPE | AGENT_OP | REPLY },
};

static int
members(const struct runner_tool *rt)
{
	return (rt->argv != NULL ? ARGV : 0) |
	    (rt->prepare != NULL ? PREPARE : 0) |
	    (rt->shape != NULL ? SHAPE : 0) |
	    (rt->agent_op != NULL || rt->agent_args[0] != NULL ? AGENT_OP : 0) |
	    (rt->reply != NULL ? REPLY : 0);
}

/* The agent is given only arguments the tool's inputSchema has. */
static void
check_agent_args(const struct runner_tool *rt)
{
	json_t *tool, *props;
	size_t i;

	tool = tool_describe(tool_index(rt->name));
	props = json_object_get(json_object_get(tool, "inputSchema"),
	    "properties");
	for (i = 0; i < AGENT_ARGS_MAX && rt->agent_args[i] != NULL; i++)
		ATF_CHECK_MSG(json_object_get(props, rt->agent_args[i]) !=
		    NULL, "%s: agent argument %s is none of the tool's",
		    rt->name, rt->agent_args[i]);
	json_decref(tool);
}

ATF_TC_WITHOUT_HEAD(tables_agree);
ATF_TC_BODY(tables_agree, tc)
{
	char err[256] = "";
	size_t i;

	ATF_CHECK_MSG(runner_tools_check(runner_tools, err, sizeof(err)) == 0,
	    "%s", err);
	for (i = 0; i < tools_count(); i++)
		ATF_CHECK_MSG(runner_tool(tool_at(i)->name) != NULL,
		    "tool %s has no runner entry", tool_at(i)->name);
}

ATF_TC_WITHOUT_HEAD(entries_complete);
ATF_TC_BODY(entries_complete, tc)
{
	const struct runner_tool *rt;
	char err[256];
	size_t i;

	ATF_REQUIRE_MSG(tools_init(err, sizeof(err)) == 0, "%s", err);
	for (rt = runner_tools; rt->name != NULL; rt++) {
		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (kinds[i].kind == rt->kind)
				break;
		if (i == sizeof(kinds) / sizeof(kinds[0])) {
			atf_tc_fail_nonfatal("%s: unknown kind %d", rt->name,
			    (int)rt->kind);
			continue;
		}
		ATF_CHECK_MSG(members(rt) == kinds[i].needs, "%s: a %s tool "
		    "has members 0x%x, not 0x%x", rt->name, kinds[i].what,
		    members(rt), kinds[i].needs);
		check_agent_args(rt);
	}
}

static void
check_refused(const struct runner_tool *table, const char *want)
{
	char err[256] = "";

	ATF_CHECK(runner_tools_check(table, err, sizeof(err)) == -1);
	ATF_CHECK_MSG(strstr(err, want) != NULL, "\"%s\" lacks \"%s\"", err,
	    want);
}

/* runnerd will not start with a tool of either table missing in the other. */
ATF_TC_WITHOUT_HEAD(disagreement_found);
ATF_TC_BODY(disagreement_found, tc)
{
	static const struct runner_tool extra[] = {
		{ .name = "launch_missiles", .kind = TOOL_ONESHOT },
		{ .name = NULL }
	};
	static const struct runner_tool twice[] = {
		{ .name = "reset", .kind = TOOL_SESSION },
		{ .name = "reset", .kind = TOOL_SESSION },
		{ .name = NULL }
	};
	struct runner_tool missing[TOOLS_MAX + 1];
	size_t n = 0;
	const struct runner_tool *rt;

	for (rt = runner_tools; rt->name != NULL; rt++)
		if (strcmp(rt->name, "read_file") != 0)
			missing[n++] = *rt;
	missing[n].name = NULL;
	check_refused(missing, "tool read_file of common/tools.c has no "
	    "entry");
	check_refused(extra, "has tool launch_missiles, which common/tools.c "
	    "does not define");
	check_refused(twice, "has tool reset twice");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, tables_agree);
	ATF_TP_ADD_TC(tp, entries_complete);
	ATF_TP_ADD_TC(tp, disagreement_found);
	return atf_no_error();
}
