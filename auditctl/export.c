/* SPDX-License-Identifier: ISC */
/*
 * auditctl export: the log's records for a SIEM, read from the files
 * themselves (no daemon needed), as they are (jsonl) or as OCSF events.
 *
 * The OCSF mapping (schema 1.1.0, https://schema.ocsf.io):
 *   sandbox.started              Process Activity (1007), Launch (1)
 *   sandbox.completed, .swept    Process Activity (1007), Terminate (2)
 *   credential.issued            API Activity (6003), Create (1)
 *   credential.revoked           API Activity (6003), Delete (4)
 *   every other event            API Activity (6003), Other (99), with
 *                                activity_name the event's name
 * type_uid is class_uid * 100 + activity_id and category_uid the class's
 * thousands digit (System Activity 1, Application Activity 6).  time is
 * the record's, in milliseconds since the epoch; metadata.uid is its
 * seq, metadata.correlation_uid its request id; the record's own fields,
 * seq and prev go under unmapped, so nothing of it is lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auditctl.h"
#include "cjson.h"

#define OCSF_VERSION		"1.1.0"
#define CLASS_PROCESS		1007
#define CLASS_API		6003
#define ACTIVITY_OTHER		99

static const struct ocsf_map {
	const char	*event;
	int		 class_uid;
	int		 activity_id;
	const char	*activity_name;
} ocsf_maps[] = {
	{ "sandbox.started", CLASS_PROCESS, 1, "Launch" },
	{ "sandbox.completed", CLASS_PROCESS, 2, "Terminate" },
	{ "sandbox.swept", CLASS_PROCESS, 2, "Terminate" },
	{ "credential.issued", CLASS_API, 1, "Create" },
	{ "credential.revoked", CLASS_API, 4, "Delete" },
	{ NULL, CLASS_API, ACTIVITY_OTHER, NULL },
};

/* RFC 3339 UTC, fraction ignored: seconds since the epoch, or -1. */
time_t
export_time(const char *s)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	if (s == NULL || (end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) ==
	    NULL)
		return -1;
	if (*end == '.')
		end += strspn(end + 1, "0123456789") + 1;
	if (strcmp(end, "Z") != 0 && *end != '\0')
		return -1;
	return timegm(&tm);
}

static long long
time_ms(const char *s)
{
	const char *frac;
	long long ms;
	time_t t;
	int i, scale;

	if ((t = export_time(s)) == -1)
		return 0;
	ms = (long long)t * 1000;
	if ((frac = strchr(s, '.')) != NULL)
		for (i = 1, scale = 100; i <= 3 && frac[i] >= '0' &&
		    frac[i] <= '9'; i++, scale /= 10)
			ms += (frac[i] - '0') * scale;
	return ms;
}

static json_t *
ocsf_event(const json_t *rec)
{
	const struct ocsf_map *m;
	const char *ev, *rid, *daemon;
	json_t *o;

	ev = json_string_value(json_object_get(rec, "event"));
	rid = json_string_value(json_object_get(rec, "request_id"));
	daemon = json_string_value(json_object_get(rec, "daemon"));
	for (m = ocsf_maps; m->event != NULL; m++)
		if (ev != NULL && strcmp(ev, m->event) == 0)
			break;
	o = json_pack("{s:i, s:i, s:i, s:s, s:I, s:I, s:i, s:s?,"
	    " s:{s:s, s:{s:s, s:s}, s:I, s:s?, s:s?},"
	    " s:{s:s?}, s:{s:O*, s:O*, s:O*}}",
	    "class_uid", m->class_uid, "category_uid", m->class_uid / 1000,
	    "activity_id", m->activity_id, "activity_name",
	    m->activity_name != NULL ? m->activity_name : (ev ? ev : "?"),
	    "type_uid", (json_int_t)m->class_uid * 100 + m->activity_id,
	    "time", (json_int_t)time_ms(json_string_value(json_object_get(rec,
	    "time"))), "severity_id", 1, "message", ev,
	    "metadata", "version", OCSF_VERSION, "product", "name",
	    "agent-sandbox", "vendor_name", "agent-sandbox", "sequence",
	    json_integer_value(json_object_get(rec, "seq")),
	    "correlation_uid", rid, "original_time",
	    json_string_value(json_object_get(rec, "time")),
	    "actor", "app_name", daemon,
	    "unmapped", "fields", json_object_get(rec, "fields"), "seq",
	    json_object_get(rec, "seq"), "prev", json_object_get(rec, "prev"));
	if (o != NULL && m->class_uid == CLASS_API)
		json_object_set_new(o, "api", json_pack("{s:s?, s:{s:s?}}",
		    "operation", ev, "request", "uid", rid));
	return o;
}

/* A record the filters keep: since (seconds, or -1) and a request id. */
static int
wanted(const json_t *rec, time_t since, const char *rid)
{
	const char *r;

	if (rid != NULL && ((r = json_string_value(json_object_get(rec,
	    "request_id"))) == NULL || strcmp(r, rid) != 0))
		return 0;
	return since == -1 || export_time(json_string_value(
	    json_object_get(rec, "time"))) >= since;
}

/*
 * Writes the records of files, in order, that pass the filters; a line
 * that is not a record (a torn tail) is skipped and counted.  Returns
 * the records written, or -1 with errno.
 */
long
export_files(char **files, size_t n, int ocsf, time_t since, const char *rid,
    FILE *out, size_t *skipped)
{
	char *line = NULL, *s;
	size_t cap = 0, i;
	ssize_t len;
	json_t *rec, *o;
	long written = 0;
	FILE *f;

	*skipped = 0;
	for (i = 0; i < n; i++) {
		if ((f = fopen(files[i], "re")) == NULL)
			goto fail;
		while ((len = getline(&line, &cap, f)) > 0) {
			if (line[len - 1] == '\n')
				line[--len] = '\0';
			if ((rec = cjson_parse_nul(line, (size_t)len, NULL,
			    0)) == NULL || !json_is_integer(json_object_get(rec,
			    "seq"))) {
				json_decref(rec);
				(*skipped)++;
				continue;
			}
			if (!wanted(rec, since, rid)) {
				json_decref(rec);
				continue;
			}
			/* jsonl: the record's own bytes, as hashed. */
			s = NULL;
			if (ocsf && ((o = ocsf_event(rec)) == NULL ||
			    (s = cjson_dump(o)) == NULL)) {
				json_decref(o);
				json_decref(rec);
				fclose(f);
				errno = ENOMEM;
				goto fail;
			}
			fprintf(out, "%s\n", ocsf ? s : line);
			if (ocsf) {
				free(s);
				json_decref(o);
			}
			written++;
			json_decref(rec);
		}
		fclose(f);
	}
	free(line);
	return fflush(out) == 0 ? written : -1;
fail:
	free(line);
	return -1;
}
