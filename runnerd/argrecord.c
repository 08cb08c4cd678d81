/* SPDX-License-Identifier: ISC */
/*
 * What the audit log keeps of a call's arguments.  A record is read
 * by people and kept for years: it says what was asked, not the
 * payload.  File content (write_file's base64) and any text longer than
 * ARG_RECORD_MAX stand as their size and SHA-256; everything else is
 * kept as sent.
 */
#include <string.h>

#include "cjson.h"
#include "runnerd.h"

json_t *
args_recorded(const json_t *args)
{
	const char *key;
	json_t *rec, *v, *summary;
	size_t len;

	if (!json_is_object(args))
		return json_incref((json_t *)args);
	if ((rec = json_object()) == NULL)
		return NULL;
	json_object_foreach((json_t *)args, key, v) {
		len = json_string_length(v);
		if (json_is_string(v) && (strcmp(key, "content") == 0 ||
		    len > ARG_RECORD_MAX))
			summary = content_summary(json_string_value(v), len,
			    strcmp(key, "content") == 0);
		else
			summary = json_incref(v);
		if (json_object_set_new(rec, key, summary) == -1) {
			json_decref(rec);
			return NULL;
		}
	}
	return rec;
}
