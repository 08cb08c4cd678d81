/* SPDX-License-Identifier: ISC */
/*
 * What runnerd does for each tool: one entry per tool of common/tools.c
 * (which holds what mcpd shows and what both check), looked up once per
 * call.  Adding a tool is an entry there and one here;
 * regress/runnerd/t_tooltable.c lists what an entry of each kind needs.
 */
#include <stdio.h>
#include <string.h>

#include "runnerd.h"
#include "tools.h"

const struct runner_tool runner_tools[] = {
	{
		.name = "k8s_get_pod_status",
		.kind = TOOL_ONESHOT,
		.argv = k8s_argv,
		.shape = k8s_result,
	},
	{
		.name = "terraform_plan",
		.kind = TOOL_TERRAFORM,
		.prepare = tf_prepare,
		.shape = tf_result,
	},
	{
		.name = "terraform_apply",
		.kind = TOOL_TERRAFORM,
		.prepare = tf_prepare,
		.shape = tf_result,
	},
	{
		.name = "run_python",
		.kind = TOOL_SESSION,
		.agent_op = "python",
		.agent_args = { "code" },
		.reply = session_run_reply,
	},
	{
		.name = "run_shell",
		.kind = TOOL_SHELL,
		.argv = shell_argv,
		.shape = shell_result,
		.agent_op = "shell",
		.agent_args = { "command" },
		.reply = session_run_reply,
	},
	{
		.name = "write_file",
		.kind = TOOL_SESSION,
		.agent_op = "write",
		.agent_args = { "path", "content" },
		.reply = session_write_reply,
	},
	{
		.name = "read_file",
		.kind = TOOL_SESSION,
		.agent_op = "read",
		.agent_args = { "path" },
		.reply = session_read_reply,
	},
	{
		.name = "reset",
		.kind = TOOL_SESSION,
		.agent_op = "reset",
		.reply = session_reset_reply,
	},
	{
		.name = "close_session",
		.kind = TOOL_SESSION_END,
	},
	{ .name = NULL }
};

/* The first entry of table named name, or NULL. */
static const struct runner_tool *
table_find(const struct runner_tool *table, const char *name)
{
	const struct runner_tool *rt;

	for (rt = table; rt->name != NULL; rt++)
		if (strcmp(rt->name, name) == 0)
			return rt;
	return NULL;
}

const struct runner_tool *
runner_tool(const char *name)
{
	return table_find(runner_tools, name);
}

/*
 * 0 when table (ended by a NULL name) has exactly the tools of
 * common/tools.c, once each; else -1 and the first difference in err.
 */
int
runner_tools_check(const struct runner_tool *table, char *err, size_t errlen)
{
	const struct runner_tool *rt;
	const char *name;
	size_t i;

	for (rt = table; rt->name != NULL; rt++) {
		if (tool_index(rt->name) == -1) {
			snprintf(err, errlen, "runnerd/tool_table.c has tool "
			    "%s, which common/tools.c does not define",
			    rt->name);
			return -1;
		}
		if (table_find(table, rt->name) != rt) {
			snprintf(err, errlen, "runnerd/tool_table.c has tool "
			    "%s twice", rt->name);
			return -1;
		}
	}
	for (i = 0; i < tools_count(); i++) {
		name = tool_at(i)->name;
		if (table_find(table, name) == NULL) {
			snprintf(err, errlen, "tool %s of common/tools.c has "
			    "no entry in runnerd/tool_table.c", name);
			return -1;
		}
	}
	return 0;
}
