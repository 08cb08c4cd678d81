/* SPDX-License-Identifier: ISC */
/* auditctl's two ways to print: for people, and JSON for programs (-j). */
#include <stdio.h>

#include "auditctl.h"
#include "ctl.h"

/* time #seq daemon event request_id {fields} */
static void
text_record(const json_t *r)
{
	static const char *const words[] = { "daemon", "event", "request_id" };
	const json_t *fields = json_object_get(r, "fields");
	size_t i;

	ctl_put(ctl_str(r, "time"), 0);
	printf(" #%lld", (long long)json_integer_value(json_object_get(r,
	    "seq")));
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		putchar(' ');
		ctl_put(ctl_str(r, words[i]), 0);
	}
	putchar(' ');
	if (fields != NULL)
		ctl_put_json(fields);
	else
		fputs("{}", stdout);
	putchar('\n');
	fflush(stdout);
}

static void
text_object(const json_t *o)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)o, key, v) {
		ctl_put(key, 0);
		fputs(": ", stdout);
		if (json_is_string(v))
			ctl_put(json_string_value(v), 0);
		else
			ctl_put_json(v);
		putchar('\n');
	}
}

static void
text_verified(const struct verify_sum *v)
{
	if (v->records == 0) {
		printf("chain intact: no records%s\n", v->compared ? "" :
		    "; no checkpoint compared");
		return;
	}
	printf("chain intact: %llu records, seq %llu..%llu in %zu file%s\n",
	    (unsigned long long)v->records, (unsigned long long)v->first_seq,
	    (unsigned long long)v->last_seq, v->files, v->files > 1 ? "s" : "");
	if (!v->anchored)
		printf("first record links to an earlier file, not given\n");
	printf("head: %s%s\n", v->head, v->daemon_checked ?
	    " (auditd's head)" : "");
	if (v->origin[0] != '\0')
		printf("log: %s\n", v->origin);
	printf("checkpoints: %llu signed", (unsigned long long)v->checkpoints);
	if (v->latest_seq > 0)
		printf(", the latest (seq %llu) reached",
		    (unsigned long long)v->latest_seq);
	printf("%s\n", v->compared ? "" : "; no checkpoint compared");
}

static void
text_broken(const struct verify_fail *f)
{
	ctl_put(f->file, 0);
	printf(":%zu: seq %llu: ", f->line, (unsigned long long)f->seq);
	ctl_put(f->what, 0);
	putchar('\n');
}

static void
json_print(json_t *j)
{
	if (j != NULL) {
		ctl_put_json(j);
		putchar('\n');
	}
	json_decref(j);
	fflush(stdout);
}

static void
json_object_out(const json_t *o)
{
	json_print(json_incref((json_t *)o));
}

static void
json_verified(const struct verify_sum *v)
{
	json_print(json_pack("{s:b, s:I, s:I, s:I, s:I, s:s, s:b, s:b, s:I, "
	    "s:I, s:b, s:s*}", "ok", 1, "files", (json_int_t)v->files,
	    "records", (json_int_t)v->records, "first_seq",
	    (json_int_t)v->first_seq, "last_seq", (json_int_t)v->last_seq,
	    "head", v->head, "anchored", v->anchored, "daemon_checked",
	    v->daemon_checked, "checkpoints", (json_int_t)v->checkpoints,
	    "latest_checkpoint", (json_int_t)v->latest_seq,
	    "checkpoint_compared", v->compared, "origin", v->origin[0] !=
	    '\0' ? v->origin : NULL));
}

static void
json_broken(const struct verify_fail *f)
{
	static const char *const kinds[] = { "intact", "error", "tampered",
	    "truncated", "other_log" };

	json_print(json_pack("{s:b, s:s, s:I, s:I, s:s, s:s}", "ok", 0,
	    "file", f->file, "line", (json_int_t)f->line,
	    "seq", (json_int_t)f->seq, "error", f->what, "kind",
	    kinds[f->kind]));
}

const struct output output_text = {
	.record = text_record,
	.object = text_object,
	.verified = text_verified,
	.broken = text_broken,
};

/*
 * A record is printed as the canonical line it is in the log, but for
 * DEL, C1 and bidi controls, which are \u escapes here (ctl_put_json).
 */
const struct output output_json = {
	.record = json_object_out,
	.object = json_object_out,
	.verified = json_verified,
	.broken = json_broken,
};
