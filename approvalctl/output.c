/* approvalctl's two ways of printing: for a terminal, and JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approvalctl.h"
#include "ctl.h"

static void
print_compact(const json_t *j)
{
	char *s;

	if ((s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS |
	    JSON_ENCODE_ANY)) == NULL)
		return;
	fputs(s, stdout);
	free(s);
}

static void
text_row(const json_t *e)
{
	printf("%-36s  %-8s  %-18s  %-20s  ", ctl_str(e, "approval_id"),
	    ctl_str(e, "state"), ctl_str(e, "tool"), ctl_str(e, "expires_at"));
	print_compact(json_object_get(e, "arguments"));
	if (json_is_true(json_object_get(e, "destructive")))
		fputs("  DESTRUCTIVE", stdout);
	putchar('\n');
}

static void
text_decided(const json_t *e)
{
	const json_t *by = json_object_get(e, "decided_by");

	if (!json_is_object(by))
		return;
	printf("decided:      %s by %s (uid %lld) at %s\n",
	    ctl_str(e, "state"), ctl_str(by, "user"),
	    (long long)json_integer_value(json_object_get(by, "uid")),
	    ctl_str(e, "decided_at"));
	if (json_is_string(json_object_get(e, "reason")))
		printf("reason:       %s\n", ctl_str(e, "reason"));
	if (json_is_string(json_object_get(e, "spent_at")))
		printf("spent:        at %s by %s\n", ctl_str(e, "spent_at"),
		    ctl_str(e, "spent_by_request"));
}

static void
text_actions(const json_t *actions)
{
	const json_t *a;
	size_t i;

	json_array_foreach(actions, i, a)
		printf("%s%s", i ? "+" : "", json_string_value(a) ?
		    json_string_value(a) : "?");
}

/*
 * Text the agent wrote, on one line: a newline or an escape sequence in
 * a command must not draw lines of its own on the operator's terminal.
 */
static void
print_escaped(const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)(s != NULL ? s : "?"); *p; p++)
		if (*p == '\n')
			fputs("\\n", stdout);
		else if (*p == '\\')
			fputs("\\\\", stdout);
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\x%02x", *p);
		else
			putchar(*p);
}

/* Each resource with its actions; "!!" marks what would be destroyed. */
static void
text_summary(const json_t *s)
{
	static const char *const counts[] = {
		"create", "update", "delete", "replace", NULL
	};
	const json_t *r, *sig, *cs, *f, *c, *changed;
	size_t i, j;
	int n = 0;

	if (!json_is_object(s))
		return;
	/* runnerd's summaries keep their counts under "counts". */
	if (!json_is_object(cs = json_object_get(s, "counts")))
		cs = s;
	printf("plan:        ");
	for (i = 0; counts[i] != NULL; i++)
		if (json_is_integer(json_object_get(cs, counts[i])))
			printf("%s%lld to %s", n++ ? ", " : " ",
			    (long long)json_integer_value(json_object_get(cs,
			    counts[i])), counts[i]);
	printf("%s\n", json_is_true(json_object_get(s, "destructive")) ?
	    "  (DESTRUCTIVE)" : "");
	/* What the apply will run from: runnerd's copy, not the live dir. */
	if (json_is_string(json_object_get(s, "snapshot_digest")))
		printf("module:      snapshot %s\n",
		    ctl_str(s, "snapshot_digest"));
	if (json_is_array(changed = json_object_get(s, "files_changed")))
		printf("files changed since the last apply: %s\n",
		    json_array_size(changed) == 0 ? "none" : "");
	json_array_foreach(changed, i, f)
		printf("  %-8s %s\n", ctl_str(f, "change"), ctl_str(f, "path"));
	json_array_foreach(json_object_get(s, "resources"), i, r) {
		printf("  %s ", json_is_true(json_object_get(r,
		    "destructive")) ? "!!" : "  ");
		text_actions(json_object_get(r, "actions"));
		printf("  %s%s", ctl_str(r, "address"),
		    json_is_true(json_object_get(r, "destructive")) ?
		    "  (destructive)" : "");
		json_array_foreach(json_object_get(r, "forced_by"), j, f)
			printf("%s%s", j ? ", " : "  forced by ",
			    json_string_value(f) ? json_string_value(f) : "?");
		printf("\n");
	}
	/* Code that runs at apply time, as the plan's configuration has it. */
	json_array_foreach(json_object_get(s, "code"), i, c) {
		printf("runs code:    %s in %s: ", ctl_str(c, "type"),
		    ctl_str(c, "address"));
		print_escaped(json_string_value(json_object_get(c, "command")));
		printf("\n");
	}
	json_array_foreach(json_object_get(s, "destructive_reasons"), i, sig)
		printf("destructive:  %s\n", json_string_value(sig) ?
		    json_string_value(sig) : "?");
	json_array_foreach(json_object_get(s, "destructive_signals"), i, sig)
		printf("signal:       plan text contains \"%s\"\n",
		    json_string_value(sig));
}

static void
text_show(const json_t *e)
{
	const char *text = json_string_value(json_object_get(e, "plan_text"));

	printf("approval:     %s\nstate:        %s\ntool:         %s\n"
	    "parameters:   ", ctl_str(e, "approval_id"), ctl_str(e, "state"),
	    ctl_str(e, "tool"));
	print_compact(json_object_get(e, "arguments"));
	printf("\nrequest:      %s\ncreated:      %s\nexpires:      %s\n",
	    ctl_str(e, "request_id"), ctl_str(e, "created_at"),
	    ctl_str(e, "expires_at"));
	text_decided(e);
	printf("plan digest:  %s\n", ctl_str(e, "plan_digest"));
	text_summary(json_object_get(e, "summary"));
	if (text != NULL && *text != '\0')
		printf("\n%s%s", text, text[strlen(text) - 1] == '\n' ? "" :
		    "\n");
}

static void
text_result(enum action a, const json_t *entries)
{
	const json_t *e;
	size_t i;

	switch (a) {
	case A_LIST:
		if (json_array_size(entries) == 0) {
			printf("no approvals\n");
			break;
		}
		printf("%-36s  %-8s  %-18s  %-20s  %s\n", "ID", "STATE", "TOOL",
		    "EXPIRES", "PARAMETERS");
		json_array_foreach(entries, i, e)
			text_row(e);
		break;
	case A_SHOW:
		json_array_foreach(entries, i, e)
			text_show(e);
		break;
	default:
		json_array_foreach(entries, i, e)
			printf("%s %s\n", ctl_str(e, "approval_id"),
			    ctl_str(e, "state"));
		break;
	}
}

static void
text_event(const json_t *e)
{
	text_row(e);
	fflush(stdout);
}

/* list: an array; show, approve, deny: the one record. */
static void
json_result(enum action a, const json_t *entries)
{
	print_compact(a == A_LIST ? entries : json_array_get(entries, 0));
	putchar('\n');
}

/* One record per line, as it happens. */
static void
json_event(const json_t *e)
{
	print_compact(e);
	putchar('\n');
	fflush(stdout);
}

const struct output output_text = { text_result, text_event };
const struct output output_json = { json_result, json_event };
