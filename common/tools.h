/* SPDX-License-Identifier: ISC */
/*
 * The tools the suite knows, in one table shared by mcpd (which lists
 * them and checks arguments before forwarding) and runnerd (which must
 * not trust mcpd and checks them again).  Adding a tool is one entry
 * here and one in runnerd/tool_table.c, which says how runnerd runs it
 * (runnerd refuses to start when the two disagree).
 */
#ifndef AS_TOOLS_H
#define AS_TOOLS_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* MCP tool annotations (hints to the client, never a security boundary). */
#define TOOL_READONLY		0x01
#define TOOL_DESTRUCTIVE	0x02
#define TOOL_IDEMPOTENT		0x04
#define TOOL_OPENWORLD		0x08

#define TOOLS_MAX		64	/* the config keeps a bitmask */

/*
 * The phases of a terraform call, each with a credential of its own:
 * planning runs the module's code, applying changes the world.
 */
#define PHASE_PLAN		0x01
#define PHASE_APPLY		0x02
#define PHASE_ANY		(PHASE_PLAN | PHASE_APPLY)

struct tool_def {
	const char	*name;
	const char	*title;
	const char	*description;
	const char	*input_schema;	/* JSON Schema, ' standing for " */
	const char	*output_schema;
	int		 hints;
	int		 phases;	/* PHASE_*; 0: calls have no phase */
};

int		 tools_init(char *, size_t);
size_t		 tools_count(void);
uint64_t	 tools_all(void);
const struct tool_def *tool_at(size_t);
int		 tool_index(const char *);
int		 tool_phases(const char *);
int		 call_phase(const char *, const json_t *);
json_t		*tool_describe(size_t);
int		 tool_validate(size_t, const json_t *, char *, size_t);

#endif
