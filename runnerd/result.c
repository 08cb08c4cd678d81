/* SPDX-License-Identifier: ISC */
/*
 * How a call's MCP result reads: its text and structured content, the
 * request id and the early end it carries, and its encoding within one
 * frame.  The call layer (call.c) and the tools (tool_*.c, session.c)
 * shape results here; nothing here sends or records.
 */
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "runnerd.h"

json_t *
text_result(int is_error, const char *text, json_t *structured)
{
	return text_result_json(is_error, json_string(text), structured);
}

/* The same with the text a JSON string, which it takes (NULs kept). */
json_t *
text_result_json(int is_error, json_t *text, json_t *structured)
{
	json_t *r;

	r = json_pack("{s:b, s:[{s:s, s:o}]}", "isError", is_error,
	    "content", "type", "text", "text", text);
	if (r != NULL && structured != NULL)
		json_object_set_new(r, "structuredContent", structured);
	else
		json_decref(structured);
	return r;
}

/*
 * Every result names its call, and one that ended early says how
 * (status) and why (reason, its text), as the output schemas have it.
 */
void
result_stamp(const struct call *k, json_t *res)
{
	char rid[REQID_STR_LEN];
	json_t *sc;

	if ((sc = json_object_get(res, "structuredContent")) == NULL) {
		sc = json_pack("{s:s, s:O*}", "status",
		    json_is_true(json_object_get(res, "isError")) ? "failed" :
		    "ok", "reason", json_object_get(json_array_get(
		    json_object_get(res, "content"), 0), "text"));
		json_object_set_new(res, "structuredContent", sc);
	}
	reqid_format(k->id, rid);
	json_object_set_new(sc, "request_id", json_string(rid));
	if (k->revoke_failed)
		json_object_set_new(sc, "credential_revoke_failed",
		    json_true());
}

const char *
status_text(const char *status)
{
	if (strcmp(status, "deadline") == 0)
		return "killed: wall-clock deadline reached";
	if (strcmp(status, "memory_limit") == 0)
		return "killed: memory limit reached";
	if (strcmp(status, "output_limit") == 0)
		return "killed: output limit reached";
	if (strcmp(status, "killed") == 0)
		return "killed: cancelled";
	return "the sandbox failed";
}

static size_t
put(char *buf, size_t at, const char *s, size_t len)
{
	if (len > 0)
		memcpy(buf + at, s, len);
	return at + len;
}

/*
 * What a person reads of a command's run: stdout, stderr (JSON strings,
 * NULs and all), a note; as a JSON string, NULL when out of memory.
 */
json_t *
run_text(const json_t *out, const json_t *err, const char *note)
{
	static const char err_head[] = "\n[stderr]\n";
	static const char note_head[] = "\n[sandbox] ";
	size_t olen = json_string_length(out), elen = json_string_length(err);
	size_t nlen = note != NULL ? strlen(note) : 0, n = 0;
	char *buf;
	json_t *j;

	if ((buf = malloc(olen + elen + nlen + sizeof(err_head) +
	    sizeof(note_head))) == NULL)
		return NULL;
	n = put(buf, n, json_string_value(out), olen);
	if (elen > 0) {
		n = put(buf, n, err_head, sizeof(err_head) - 1);
		n = put(buf, n, json_string_value(err), elen);
	}
	if (note != NULL) {
		n = put(buf, n, note_head, sizeof(note_head) - 1);
		n = put(buf, n, note, nlen);
	}
	j = json_stringn(buf, n);
	free(buf);
	return j;
}

/*
 * A result travels in one frame, and JSON escapes can make output six
 * times its size.  A result whose encoding would not fit, with room
 * for mcpd's envelope, first loses the copies of the output in its
 * structuredContent, base64 ones too (the content text keeps the
 * output), then becomes a short error in place.  The encoding, and in
 * *delivered which of the three went out, for the audit record.
 */
#define RESULT_MAX	(MSG_MAX_PAYLOAD - 64 * 1024)

char *
result_encode(json_t *res, const char **delivered)
{
	json_t *sc, *short_res;
	char *text;

	*delivered = "whole";
	if ((text = json_dumps(res, JSON_COMPACT)) == NULL ||
	    strlen(text) <= RESULT_MAX)
		return text;
	free(text);
	sc = json_object_get(res, "structuredContent");
	if (json_object_get(sc, "stdout") != NULL ||
	    json_object_get(sc, "stderr") != NULL) {
		*delivered = "truncated";
		json_object_del(sc, "stdout");
		json_object_del(sc, "stderr");
		json_object_del(sc, "stdout_base64");
		json_object_del(sc, "stderr_base64");
		json_object_set_new(sc, "truncated", json_true());
		if ((text = json_dumps(res, JSON_COMPACT)) == NULL ||
		    strlen(text) <= RESULT_MAX)
			return text;
		free(text);
	}
	*delivered = "replaced";
	short_res = text_result(1, "the result was too large to deliver "
	    "(over 16 MiB as JSON); write the output to a file and read it "
	    "in parts", json_pack("{s:O*, s:s, s:s}", "request_id",
	    json_object_get(sc, "request_id"), "status", "failed", "reason",
	    "result too large"));
	if (short_res == NULL || json_object_clear(res) == -1 ||
	    json_object_update(res, short_res) == -1) {
		json_decref(short_res);
		return NULL;
	}
	json_decref(short_res);
	return json_dumps(res, JSON_COMPACT);
}
