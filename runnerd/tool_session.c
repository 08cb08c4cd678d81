/* SPDX-License-Identifier: ISC */
/*
 * A session tool's reply from the session agent as its MCP result, and
 * the fields its tool.result records: one function per shape, named by
 * the tool's entry in tool_table.c.  The error reply, common to all, is
 * session.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cjson.h"
#include "output.h"
#include "runnerd.h"

#define AUDIT_OUTPUT	4096	/* bytes of each stream in tool.result */

/* Copies reply[key] into sc when it has the type the schema says. */
static void
field(json_t *sc, json_t *reply, const char *key, json_type type)
{
	json_t *v = json_object_get(reply, key);

	if (v != NULL && json_typeof(v) == type)
		json_object_set(sc, key, v);
}

/* The first AUDIT_OUTPUT bytes of a string, cut between characters. */
static json_t *
capped(json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);

	if (s == NULL)
		return json_string("");
	return json_stringn(s, n > AUDIT_OUTPUT ? output_cut(s, AUDIT_OUTPUT) :
	    n);
}

#define LOST	"; the Python state (variables, imports) is lost, the next " \
		"call starts afresh"

/* The MCP result of a run_python or run_shell, and its audit fields. */
json_t *
session_run_reply(const struct call *k, json_t *reply, json_t *sc,
    json_t *audit)
{
	const char *limit;
	char note[256];
	json_t *res, *text;
	int code, lost;

	(void)k;
	field(sc, reply, "exit_code", JSON_INTEGER);
	field(sc, reply, "stdout", JSON_STRING);
	field(sc, reply, "stderr", JSON_STRING);
	field(sc, reply, "stdout_base64", JSON_STRING);
	field(sc, reply, "stderr_base64", JSON_STRING);
	if (json_object_get(sc, "exit_code") == NULL)
		json_object_set_new(sc, "exit_code", json_integer(-1));
	code = json_integer_value(json_object_get(sc, "exit_code"));
	json_object_set_new(sc, "truncated", json_boolean(
	    json_is_true(json_object_get(reply, "stdout_truncated")) ||
	    json_is_true(json_object_get(reply, "stderr_truncated"))));
	json_object_set_new(sc, "timed_out", json_boolean(json_is_true(
	    json_object_get(reply, "timed_out"))));
	lost = json_is_true(json_object_get(reply, "state_lost"));
	if (json_object_get(reply, "state_lost") != NULL)
		json_object_set_new(sc, "state_lost", json_boolean(lost));
	limit = run_limits(sc, json_object_get(sc, "stderr"), code != 0, 0);
	if (json_is_true(json_object_get(sc, "timed_out")))
		snprintf(note, sizeof(note), "killed: the call ran past its "
		    "%ld s timeout%s", runnerd_conf.runnerd.timeout,
		    lost ? LOST : "");
	else if (json_is_true(json_object_get(reply, "cancelled")))
		snprintf(note, sizeof(note), "killed: cancelled%s",
		    lost ? LOST : "");
	else if (limit != NULL)
		snprintf(note, sizeof(note), "%s%s", limit, lost ? LOST : "");
	else if (lost)
		snprintf(note, sizeof(note), "the Python worker ended%s", LOST);
	else
		note[0] = '\0';
	text = run_text(json_object_get(sc, "stdout"),
	    json_object_get(sc, "stderr"), note[0] != '\0' ? note : NULL);
	res = text_result_json(code != 0 || note[0] != '\0', text != NULL ?
	    text : json_string(""), json_incref(sc));
	json_object_set_new(audit, "exit_code", json_integer(code));
	json_object_set_new(audit, "stdout", capped(json_object_get(sc,
	    "stdout")));
	json_object_set_new(audit, "stderr", capped(json_object_get(sc,
	    "stderr")));
	json_object_set(audit, "truncated", json_object_get(sc, "truncated"));
	json_object_set(audit, "timed_out", json_object_get(sc, "timed_out"));
	json_object_set(audit, "memory_limit", json_object_get(sc,
	    "memory_limit"));
	json_object_set(audit, "pids_limit", json_object_get(sc, "pids_limit"));
	return res;
}

/*
 * write_file's and read_file's: the path, the bytes written or read,
 * and of what was read its SHA-256, never the content itself.
 */
static void
file_fields(const struct call *k, json_t *reply, json_t *sc, json_t *audit)
{
	json_t *content, *summary;

	json_object_set(sc, "path", json_object_get(k->args, "path"));
	field(sc, reply, "bytes", JSON_INTEGER);
	field(sc, reply, "content", JSON_STRING);
	if (json_object_get(sc, "bytes") == NULL)
		json_object_set_new(sc, "bytes", json_integer(0));
	json_object_set(audit, "bytes", json_object_get(sc, "bytes"));
	if ((content = json_object_get(sc, "content")) != NULL &&
	    (summary = content_summary(json_string_value(content),
	    json_string_length(content), 1)) != NULL) {
		json_object_set(audit, "sha256", json_object_get(summary,
		    "sha256"));
		json_decref(summary);
	}
}

json_t *
session_write_reply(const struct call *k, json_t *reply, json_t *sc,
    json_t *audit)
{
	char text[64];

	file_fields(k, reply, sc, audit);
	snprintf(text, sizeof(text), "wrote %" JSON_INTEGER_FORMAT " bytes",
	    json_integer_value(json_object_get(sc, "bytes")));
	return text_result(0, text, json_incref(sc));
}

json_t *
session_read_reply(const struct call *k, json_t *reply, json_t *sc,
    json_t *audit)
{
	file_fields(k, reply, sc, audit);
	if (json_object_get(sc, "content") == NULL)
		json_object_set_new(sc, "content", json_string(""));
	json_object_set_new(sc, "truncated", json_boolean(json_is_true(
	    json_object_get(reply, "truncated"))));
	return text_result(0, json_string_value(json_object_get(sc,
	    "content")), json_incref(sc));
}

json_t *
session_reset_reply(const struct call *k, json_t *reply, json_t *sc,
    json_t *audit)
{
	(void)k;
	(void)reply;
	(void)audit;
	json_object_set_new(sc, "reset", json_true());
	return text_result(0, "the Python state is cleared", json_incref(sc));
}
