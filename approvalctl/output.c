/* SPDX-License-Identifier: ISC */
/* approvalctl's two ways of printing: for a terminal, and JSON. */
#include <stdio.h>
#include <string.h>

#include "approvalctl.h"
#include "ctl.h"

/* label, then the string at key, escaped, then the end of the line. */
static void
text_line(const char *label, const json_t *e, const char *key)
{
	fputs(label, stdout);
	ctl_put(ctl_str(e, key), 0);
	putchar('\n');
}

/*
 * Who asked: "uid N client ID", and whether any client may spend it;
 * in a list's column (width), briefly.
 */
static void
text_requester(const json_t *e, int width)
{
	const json_t *by = json_object_get(e, "requester");
	char buf[128];

	if (!json_is_object(by))
		snprintf(buf, sizeof(buf), "unrecorded");
	else
		snprintf(buf, sizeof(buf), "uid %lld client %s",
		    (long long)json_integer_value(json_object_get(by, "uid")),
		    ctl_str(by, "client"));
	if (json_is_true(json_object_get(e, "for_any_client")))
		strlcat(buf, width > 0 ? " (any)" : ", any client may spend it",
		    sizeof(buf));
	ctl_put(buf, width);
}

static void
text_row(const json_t *e)
{
	static const struct {
		const char	*key;
		int		 width;
	} cells[] = {
		{ "approval_id", 36 }, { "state", 8 }, { "tool", 18 },
		{ "expires_at", 20 }
	};
	size_t i;

	for (i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
		ctl_put(ctl_str(e, cells[i].key), cells[i].width);
		fputs("  ", stdout);
	}
	text_requester(e, 36);
	fputs("  ", stdout);
	ctl_put_json(json_object_get(e, "arguments"));
	if (json_is_true(json_object_get(e, "destructive")))
		fputs("  DESTRUCTIVE", stdout);
	putchar('\n');
}

/* Each operator's word so far, and what the approval still needs. */
static void
text_reviews(const json_t *e)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(e, "reviews"), i, r) {
		fputs(strcmp(ctl_str(r, "verdict"), "approve") == 0 ?
		    "approved by:  " : "denied by:    ", stdout);
		ctl_put(ctl_str(r, "user"), 0);
		printf(" (uid %lld) at ",
		    (long long)json_integer_value(json_object_get(r, "uid")));
		ctl_put(ctl_str(r, "at"), 0);
		if (json_is_string(json_object_get(r, "reason")))
			text_line(": ", r, "reason");
		else
			putchar('\n');
	}
	if (json_is_string(json_object_get(e, "missing")))
		text_line("missing:      ", e, "missing");
}

static void
text_decided(const json_t *e)
{
	const json_t *by = json_object_get(e, "decided_by");

	if (!json_is_object(by))
		return;
	fputs("decided:      ", stdout);
	ctl_put(ctl_str(e, "state"), 0);
	fputs(" by ", stdout);
	ctl_put(ctl_str(by, "user"), 0);
	printf(" (uid %lld) at ",
	    (long long)json_integer_value(json_object_get(by, "uid")));
	text_line("", e, "decided_at");
	if (json_is_string(json_object_get(e, "reason")))
		text_line("reason:       ", e, "reason");
	if (json_is_string(json_object_get(e, "spent_at"))) {
		fputs("spent:        at ", stdout);
		ctl_put(ctl_str(e, "spent_at"), 0);
		text_line(" by ", e, "spent_by_request");
	}
}

/* A string of a summary, escaped; "?" for anything else. */
static void
text_str(const json_t *v)
{
	ctl_put(json_string_value(v) ? json_string_value(v) : "?", 0);
}

/* The strings of a, after first and between them sep. */
static void
text_list(const json_t *a, const char *first, const char *sep)
{
	const json_t *v;
	size_t i;

	json_array_foreach(a, i, v) {
		fputs(i ? sep : first, stdout);
		text_str(v);
	}
}

/* runnerd's counts of the plan's changes, and whether it destroys. */
static void
text_counts(const json_t *s)
{
	static const char *const counts[] = {
		"create", "update", "delete", "replace", NULL
	};
	const json_t *cs;
	size_t i;
	int n = 0;

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
}

/* One resource with its actions; "!!" marks what would be destroyed. */
static void
text_resource(const json_t *r)
{
	int destructive = json_is_true(json_object_get(r, "destructive"));

	printf("  %s", destructive ? "!!" : "  ");
	text_list(json_object_get(r, "actions"), " ", "+");
	fputs("  ", stdout);
	ctl_put(ctl_str(r, "address"), 0);
	if (destructive)
		fputs("  (destructive)", stdout);
	text_list(json_object_get(r, "forced_by"), "  forced by ", ", ");
	putchar('\n');
}

static void
text_summary(const json_t *s)
{
	const json_t *r, *f, *c, *changed;
	size_t i;

	if (!json_is_object(s))
		return;
	text_counts(s);
	/* What the apply will run from: runnerd's copy, not the live dir. */
	if (json_is_string(json_object_get(s, "snapshot_digest")))
		text_line("module:      snapshot ", s, "snapshot_digest");
	if (json_is_array(changed = json_object_get(s, "files_changed")))
		printf("files changed since the last apply: %s\n",
		    json_array_size(changed) == 0 ? "none" : "");
	json_array_foreach(changed, i, f) {
		fputs("  ", stdout);
		ctl_put(ctl_str(f, "change"), 8);
		text_line(" ", f, "path");
	}
	json_array_foreach(json_object_get(s, "resources"), i, r)
		text_resource(r);
	/* Code that runs at apply time, as the plan's configuration has it. */
	json_array_foreach(json_object_get(s, "code"), i, c) {
		fputs("runs code:    ", stdout);
		ctl_put(ctl_str(c, "type"), 0);
		fputs(" in ", stdout);
		ctl_put(ctl_str(c, "address"), 0);
		text_line(": ", c, "command");
	}
	json_array_foreach(json_object_get(s, "destructive_reasons"), i, f) {
		fputs("destructive:  ", stdout);
		text_str(f);
		putchar('\n');
	}
	json_array_foreach(json_object_get(s, "destructive_signals"), i, f) {
		fputs("signal:       plan text contains \"", stdout);
		text_str(f);
		fputs("\"\n", stdout);
	}
}

/*
 * After the plan's own text, runnerd's verdict again: whatever that
 * text draws, the last lines a person reads are the summary's.
 */
static void
text_verdict(const json_t *s)
{
	const json_t *r;
	size_t i;

	printf("end of plan text\n");
	if (!json_is_object(s))
		return;
	text_counts(s);
	json_array_foreach(json_object_get(s, "resources"), i, r)
		if (json_is_true(json_object_get(r, "destructive")))
			text_resource(r);
}

static void
text_show(const json_t *e)
{
	const char *text = json_string_value(json_object_get(e, "plan_text"));

	text_line("approval:     ", e, "approval_id");
	text_line("state:        ", e, "state");
	text_line("tool:         ", e, "tool");
	fputs("parameters:   ", stdout);
	ctl_put_json(json_object_get(e, "arguments"));
	putchar('\n');
	text_line("request:      ", e, "request_id");
	fputs("requester:    ", stdout);
	text_requester(e, 0);
	putchar('\n');
	text_line("created:      ", e, "created_at");
	text_line("expires:      ", e, "expires_at");
	text_reviews(e);
	text_decided(e);
	text_line("plan digest:  ", e, "plan_digest");
	text_summary(json_object_get(e, "summary"));
	if (text == NULL || *text == '\0')
		return;
	printf("\nplan text, as terraform rendered it:\n");
	ctl_put_lines(text, "| ");
	text_verdict(json_object_get(e, "summary"));
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
		printf("%-36s  %-8s  %-18s  %-20s  %-36s  %s\n", "ID", "STATE",
		    "TOOL", "EXPIRES", "REQUESTER", "PARAMETERS");
		json_array_foreach(entries, i, e)
			text_row(e);
		break;
	case A_SHOW:
		json_array_foreach(entries, i, e)
			text_show(e);
		break;
	default:
		json_array_foreach(entries, i, e) {
			ctl_put(ctl_str(e, "approval_id"), 0);
			text_line(" ", e, "state");
		}
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
	ctl_put_json(a == A_LIST ? entries : json_array_get(entries, 0));
	putchar('\n');
}

/* One record per line, as it happens. */
static void
json_event(const json_t *e)
{
	ctl_put_json(e);
	putchar('\n');
	fflush(stdout);
}

const struct output output_text = { text_result, text_event };
const struct output output_json = { json_result, json_event };
