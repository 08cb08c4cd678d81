/* SPDX-License-Identifier: ISC */
/*
 * run_shell without a session (sessions off and no session_id): sh -c
 * in a fresh sandbox, its result shaped as a session's run_shell, the
 * request id standing for the session it never had.
 */
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "runnerd.h"

json_t *
shell_argv(const json_t *args)
{
	return json_pack("[s, s, O]", "/bin/sh", "-c",
	    json_object_get(args, "command"));
}

/* The MCP result from the backend's. */
json_t *
shell_result(struct call *k, json_t *r)
{
	const char *status, *note;
	char rid[REQID_STR_LEN];
	json_t *code, *sc, *text, *err;
	int is_error;

	reqid_format(k->id, rid);
	status = json_string_value(json_object_get(r, "status"));
	code = json_object_get(r, "exit_code");
	is_error = status == NULL || strcmp(status, "exited") != 0 ||
	    json_integer_value(code) != 0;
	sc = json_deep_copy(r);
	json_object_set_new(sc, "session_id", json_string(rid));
	if (!json_is_integer(code))
		json_object_set_new(sc, "exit_code", json_integer(-1));
	json_object_set_new(sc, "truncated", json_boolean(
	    json_is_true(json_object_get(r, "stdout_truncated")) ||
	    json_is_true(json_object_get(r, "stderr_truncated"))));
	json_object_set_new(sc, "timed_out", json_boolean(status != NULL &&
	    strcmp(status, "deadline") == 0));
	json_object_del(sc, "files");
	json_object_del(sc, "stderr_in_stdout");
	err = json_object_get(r, json_is_true(json_object_get(r,
	    "stderr_in_stdout")) ? "stdout" : "stderr");
	note = run_limits(sc, err, is_error,
	    status != NULL && strcmp(status, "memory_limit") == 0);
	/* An allocation that failed inside ended it as the cgroup would. */
	if (status != NULL && strcmp(status, "exited") == 0 &&
	    json_is_true(json_object_get(sc, "memory_limit")))
		json_object_set_new(sc, "status", json_string("memory_limit"));
	else if (is_error && status != NULL && strcmp(status, "exited") != 0)
		note = json_string_value(json_object_get(r, "error")) != NULL ?
		    json_string_value(json_object_get(r, "error")) :
		    status_text(status);
	text = run_text(json_object_get(r, "stdout"),
	    json_object_get(r, "stderr"), note);
	return text_result_json(is_error, text != NULL ? text :
	    json_string(""), sc);
}
