/* SPDX-License-Identifier: ISC */
/*
 * The same outbox row for a Slack incoming webhook: "text" for the
 * notification itself and Block Kit blocks (a header, the summary, the
 * commands).  Strings are Slack's mrkdwn with &, < and > escaped, so
 * nothing in them becomes a link or a mention.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notifyd.h"

/* s with Slack's three control characters escaped, appended to buf. */
static void
put(char *buf, size_t len, const char *s)
{
	char one[2] = { 0, 0 };

	for (; s != NULL && *s != '\0'; s++) {
		if (*s == '&')
			strlcat(buf, "&amp;", len);
		else if (*s == '<')
			strlcat(buf, "&lt;", len);
		else if (*s == '>')
			strlcat(buf, "&gt;", len);
		else {
			one[0] = *s;
			strlcat(buf, one, len);
		}
	}
}

static const char *
str(const json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));

	return s != NULL ? s : "-";
}

static void
summary_line(const json_t *data, char *buf, size_t len)
{
	const json_t *s = json_object_get(data, "summary"), *v;
	const char *k;
	char n[64];
	int first = 1;

	json_object_foreach((json_t *)json_object_get(s, "counts"), k, v) {
		snprintf(n, sizeof(n), "%s%lld to %s", first ? "" : ", ",
		    (long long)json_integer_value(v), k);
		put(buf, len, n);
		first = 0;
	}
	if (first)
		put(buf, len, "no counts");
	if (json_is_true(json_object_get(s, "destructive")))
		strlcat(buf, " *DESTRUCTIVE*", len);
}

/* The Slack body for a standard body; NULL when out of memory. */
char *
slack_render(const char *body)
{
	char head[256], text[2048], cmds[512], uid[32];
	json_t *j, *data, *slack;
	char *out;

	j = json_loads(body, 0, NULL);
	data = json_object_get(j, "data");
	head[0] = text[0] = cmds[0] = '\0';
	put(head, sizeof(head), str(j, "type"));
	strlcat(head, ": ", sizeof(head));
	put(head, sizeof(head), str(data, "tool"));
	strlcat(text, "*approval* `", sizeof(text));
	put(text, sizeof(text), str(data, "approval_id"));
	strlcat(text, "`\n*state* ", sizeof(text));
	put(text, sizeof(text), str(data, "state"));
	strlcat(text, "\n*requester* uid ", sizeof(text));
	snprintf(uid, sizeof(uid), "%lld", (long long)json_integer_value(
	    json_object_get(json_object_get(data, "requester"), "uid")));
	strlcat(text, uid, sizeof(text));
	strlcat(text, "\n*expires* ", sizeof(text));
	put(text, sizeof(text), str(data, "expires_at"));
	strlcat(text, "\n*plan* ", sizeof(text));
	summary_line(data, text, sizeof(text));
	if (json_is_string(json_object_get(data, "missing"))) {
		strlcat(text, "\n*missing* ", sizeof(text));
		put(text, sizeof(text), str(data, "missing"));
	}
	strlcat(cmds, "```", sizeof(cmds));
	put(cmds, sizeof(cmds), str(json_object_get(data, "commands"),
	    "show"));
	strlcat(cmds, "\n", sizeof(cmds));
	put(cmds, sizeof(cmds), str(json_object_get(data, "commands"),
	    "approve"));
	strlcat(cmds, "```", sizeof(cmds));
	json_decref(j);
	slack = json_pack("{s:s, s:[{s:s, s:{s:s, s:s}}, {s:s, s:{s:s, s:s}},"
	    " {s:s, s:{s:s, s:s}}]}", "text", head, "blocks",
	    "type", "header", "text", "type", "plain_text", "text", head,
	    "type", "section", "text", "type", "mrkdwn", "text", text,
	    "type", "section", "text", "type", "mrkdwn", "text", cmds);
	out = slack != NULL ? json_dumps(slack, JSON_COMPACT) : NULL;
	json_decref(slack);
	return out;
}
