/* runnerctl's two ways of printing: for a terminal, and JSON. */
#include <stdio.h>
#include <stdlib.h>

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
		/* Owner 0: its client has gone and the session is ending. */
		printf("%-20s  %-5lld  %-5s  %-20s  %-20s  %-7s  %s\n",
		    str(e, "session_id"), num(e, "owner"), uid,
		    str(e, "created"), str(e, "used"), str(e, "state"),
		    str(e, "container"));
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
		printf("%lld bytes written to %s:%s\n", num(e, "bytes"),
		    str(e, "session_id"), str(e, "path"));
		break;
	case A_GET:
		printf("%lld bytes read from %s:%s\n", num(e, "bytes"),
		    str(e, "session_id"), str(e, "path"));
		break;
	default:
		break;
	}
}

/* sessions: an array; put, get: the one object. */
static void
json_result(enum action a, const json_t *entries)
{
	char *s;

	if ((s = json_dumps(a == A_SESSIONS ? entries :
	    json_array_get(entries, 0), JSON_COMPACT | JSON_SORT_KEYS |
	    JSON_ENCODE_ANY)) == NULL)
		return;
	printf("%s\n", s);
	free(s);
}

const struct output output_text = { text_result };
const struct output output_json = { json_result };
