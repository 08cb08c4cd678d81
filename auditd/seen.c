/* SPDX-License-Identifier: ISC */
/*
 * The writers auditd has heard from, each with the last seq of its
 * that is in the log, so that a resent event is recorded once.  The
 * table keeps the writers seen most recently; a writer that has been
 * silent through SEEN_MAX others is forgotten.
 */
#include <stdlib.h>
#include <string.h>

#include "auditd.h"

#define SEEN_MAX	256

struct seen {
	char		 writer[WRITER_MAX + 1];	/* "": free */
	uint64_t	 wseq;		/* the highest written */
	uint64_t	 recseq;	/* the record that holds it */
	uint64_t	 pending;	/* the highest in the batch, or 0 */
	uint64_t	 used;		/* last seen; the oldest goes */
};

static struct seen	 seen[SEEN_MAX];
static uint64_t		 seen_clock;

/* The writer's slot; when absent and add is set, a new one. */
static struct seen *
seen_get(const char *writer, int add)
{
	struct seen *s, *old = &seen[0];

	for (s = seen; s < seen + SEEN_MAX; s++) {
		if (strcmp(s->writer, writer) == 0) {
			s->used = ++seen_clock;
			return s;
		}
		if (s->used < old->used)
			old = s;
	}
	if (!add)
		return NULL;
	memset(old, 0, sizeof(*old));
	strlcpy(old->writer, writer, sizeof(old->writer));
	old->used = ++seen_clock;
	return old;
}

/*
 * Whether writer's wseq is new, written (*recseq: its record's seq, 0
 * if that is not known) or in the batch not yet written.
 */
int
seen_check(const char *writer, uint64_t wseq, uint64_t *recseq)
{
	struct seen *s;

	*recseq = 0;
	if ((s = seen_get(writer, 0)) == NULL)
		return SEEN_NEW;
	if (wseq <= s->wseq) {
		if (wseq == s->wseq)
			*recseq = s->recseq;
		return SEEN_WRITTEN;
	}
	return wseq <= s->pending ? SEEN_PENDING : SEEN_NEW;
}

void
seen_pending(const char *writer, uint64_t wseq)
{
	struct seen *s = seen_get(writer, 1);

	if (wseq > s->pending)
		s->pending = wseq;
}

void
seen_written(const char *writer, uint64_t wseq, uint64_t recseq)
{
	struct seen *s = seen_get(writer, 1);

	if (wseq > s->wseq) {
		s->wseq = wseq;
		s->recseq = recseq;
	}
}

/* The batch is written or refused: nothing is pending any more. */
void
seen_settled(void)
{
	size_t i;

	for (i = 0; i < SEEN_MAX; i++)
		seen[i].pending = 0;
}

/* A record's writer and its seq, or NULL for one without. */
const char *
seen_writer(const json_t *rec, uint64_t *wseq)
{
	const char *w = json_string_value(json_object_get(rec, "writer"));

	*wseq = (uint64_t)json_integer_value(json_object_get(rec,
	    "writer_seq"));
	return w;
}

static int
load_line(const char *line, size_t len, void *arg)
{
	const char *w;
	uint64_t wseq;
	json_t *j;

	(void)arg;
	if (memmem(line, len, "\"writer\":", 9) == NULL ||
	    (j = cjson_parse_nul(line, len, NULL, 0)) == NULL)
		return 0;
	if ((w = seen_writer(j, &wseq)) != NULL)
		seen_written(w, wseq, (uint64_t)json_integer_value(
		    json_object_get(j, "seq")));
	json_decref(j);
	return 0;
}

/* At start, from the current file: a resend after a restart is known. */
int
seen_load(struct auditlog *l)
{
	return alog_scan(l, 0, load_line, NULL);
}
