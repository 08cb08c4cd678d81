/* SPDX-License-Identifier: ISC */
/* runnerctl's two ways of printing: for a terminal, and JSON. */
#include <stdio.h>

#include "ctl.h"
#include "runnerctl.h"

static const char *
str(const json_t *e, const char *key)
{
	const char *s = json_string_value(json_object_get(e, key));

	return s != NULL && *s != '\0' ? s : "-";
}

static long long
num(const json_t *e, const char *key)
{
	return (long long)json_integer_value(json_object_get(e, key));
}

static void
text_sessions(const json_t *entries)
{
	const json_t *e;
	size_t i;
	char uid[16];

	if (json_array_size(entries) == 0) {
		printf("no sessions\n");
		return;
	}
	printf("%-20s  %-5s  %-5s  %-20s  %-20s  %-7s  %s\n", "SESSION",
	    "OWNER", "UID", "CREATED", "LAST USED", "STATE", "CONTAINER");
	json_array_foreach(entries, i, e) {
		if (json_is_integer(json_object_get(e, "owner_uid")))
			snprintf(uid, sizeof(uid), "%lld", num(e, "owner_uid"));
		else
			snprintf(uid, sizeof(uid), "-");
		ctl_put(str(e, "session_id"), 20);
		/* Owner 0: its client has gone and the session is ending. */
		printf("  %-5lld  %-5s  ", num(e, "owner"), uid);
		ctl_put(str(e, "created"), 20);
		fputs("  ", stdout);
		ctl_put(str(e, "used"), 20);
		fputs("  ", stdout);
		ctl_put(str(e, "state"), 7);
		fputs("  ", stdout);
		ctl_put(str(e, "container"), 0);
		putchar('\n');
	}
}

static void
text_result(enum action a, const json_t *entries)
{
	const json_t *e = json_array_get(entries, 0);

	switch (a) {
	case A_SESSIONS:
		text_sessions(entries);
		break;
	case A_PUT:
	case A_GET:
		printf("%lld bytes %s ", num(e, "bytes"), a == A_PUT ?
		    "written to" : "read from");
		ctl_put(str(e, "session_id"), 0);
		putchar(':');
		ctl_put(str(e, "path"), 0);
		putchar('\n');
		break;
	default:
		break;
	}
}

/* sessions: an array; put, get: the one object. */
static void
json_result(enum action a, const json_t *entries)
{
	ctl_put_json(a == A_SESSIONS ? entries : json_array_get(entries, 0));
	putchar('\n');
}

const struct output output_text = { text_result };
const struct output output_json = { json_result };
