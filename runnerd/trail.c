/* SPDX-License-Identifier: ISC */
/*
 * The crash trail, engine side.  runnerd notes in its state directory
 * each call whose tool.request is recorded ("b req-... tool") and each
 * whose end is ("e req-..."); the file is emptied whenever no call is
 * open, and past 1 MiB keeps only the open ones.  A runnerd killed
 * mid-call leaves calls begun and not ended, and the launcher leaves a
 * journal of the sandboxes it tore down after runnerd was gone
 * (launcher/journal.c).  At the next start both become
 * audit events: sandbox.swept for each sandbox, and for each call the
 * one end it never got, tool.failed "runnerd restarted".
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "io.h"
#include "launcher.h"
#include "log.h"
#include "runnerd.h"

#define TRAIL_FILE	"calls.trail"
#define TRAIL_COMPACT	(1024 * 1024)	/* rewritten past this size */
#define TRAIL_MAX	(4 * TRAIL_COMPACT)	/* read no more of it */
#define RESTARTED	"runnerd restarted"

/* A multiset of request ids: an id used twice is begun twice. */
struct ids {
	uint64_t	*v;
	size_t		 n, cap;
};

static int		 trail_fd = -1;
static size_t		 trail_size;
static struct ids	 open_ids;	/* begun, not ended, this file */
static struct ids	 left_ids;	/* the previous runnerd left open */
static struct ids	 known_ids;	/* the previous runnerd began */

static void
ids_add(struct ids *s, uint64_t id)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		if ((s->v = reallocarray(s->v, s->cap, sizeof(*s->v))) == NULL)
			fatal("trail");
	}
	s->v[s->n++] = id;
}

static ssize_t
ids_find(const struct ids *s, uint64_t id)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i] == id)
			return (ssize_t)i;
	return -1;
}

static int
ids_del(struct ids *s, uint64_t id)
{
	ssize_t i;

	if ((i = ids_find(s, id)) == -1)
		return -1;
	s->v[i] = s->v[--s->n];
	return 0;
}

static void
ids_free(struct ids *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/*
 * Appends a line.  No fsync: what the trail must survive is runnerd's
 * death, which leaves written data in the page cache; a crash of the
 * machine ends the sandboxes too, and their calls are then the start-up
 * sweep's.  A short write to a local file is an error, never a wait.
 */
static void
trail_write(const char *line)
{
	if (trail_fd == -1)
		return;
	if (write(trail_fd, line, strlen(line)) != (ssize_t)strlen(line))
		log_warn("%s", TRAIL_FILE);
	else
		trail_size += strlen(line);
}

/*
 * Empties the file, then notes again the calls still open: when none
 * is, and when calls that overlap keep it from ever being so.
 */
static void
trail_compact(void)
{
	char rid[REQID_STR_LEN], line[64];
	size_t i;

	if (trail_fd == -1)
		return;
	if (ftruncate(trail_fd, 0) == -1) {
		log_warn("%s", TRAIL_FILE);
		return;
	}
	trail_size = 0;
	for (i = 0; i < open_ids.n; i++) {
		reqid_format(open_ids.v[i], rid);
		snprintf(line, sizeof(line), "b %s\n", rid);
		trail_write(line);
	}
}

/* Reads what the previous runnerd wrote. */
static int
trail_load(void)
{
	struct stat st;
	char *buf, *line, *save, rid[REQID_STR_LEN + 1];
	uint64_t id;

	if (fstat(trail_fd, &st) == -1)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	trail_size = st.st_size;
	if ((buf = read_lines(trail_fd, TRAIL_MAX)) == NULL)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line + 1, " %21s", rid) != 1 ||
		    reqid_parse(rid, &id) == -1)
			continue;
		if (line[0] == 'b') {
			ids_add(&left_ids, id);
			ids_add(&known_ids, id);
		} else if (line[0] == 'e')
			(void)ids_del(&left_ids, id);
	}
	free(buf);
	return 0;
}

/*
 * Before privileges drop: opens the trail in the state directory dirfd
 * and takes note of what it holds.  The calls left open stay open, in
 * the file too, until trail_restart() has recorded their end.
 */
int
trail_open(int dirfd)
{
	size_t i;

	if ((trail_fd = openat(dirfd, TRAIL_FILE, O_RDWR | O_APPEND |
	    O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) == -1)
		return -1;
	if (trail_load() == -1) {
		close(trail_fd);
		trail_fd = -1;
		return -1;
	}
	for (i = 0; i < left_ids.n; i++)
		ids_add(&open_ids, left_ids.v[i]);
	if (left_ids.n > 0)
		log_info("%zu calls were open when runnerd last stopped",
		    left_ids.n);
	return 0;
}

/*
 * A call's tool.request is recorded.  The tool's name is the client's
 * until it is checked: it is noted for a reader, as one word.
 */
void
trail_begin(uint64_t id, const char *tool)
{
	char rid[REQID_STR_LEN], line[128], *p;

	reqid_format(id, rid);
	snprintf(line, sizeof(line), "b %s %.64s", rid, tool);
	for (p = line + 2 + strlen(rid) + 1; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			*p = '?';
	strlcat(line, "\n", sizeof(line));
	trail_write(line);
	ids_add(&open_ids, id);
}

/* A call's end is recorded; with no call open the file starts afresh. */
void
trail_end(uint64_t id)
{
	char rid[REQID_STR_LEN], line[64];

	if (ids_del(&open_ids, id) == -1)
		return;
	reqid_format(id, rid);
	snprintf(line, sizeof(line), "e %s\n", rid);
	trail_write(line);
	if (open_ids.n == 0 || trail_size > TRAIL_COMPACT)
		trail_compact();
}

/*
 * The restart's records go to auditd together; the launcher's journal
 * is forgotten once every one of them is acknowledged.
 */
static struct {
	size_t		 posted, answered;
	int		 failed;
	int		 journal;	/* the launcher left one */
} restart;

static void
restart_done(void)
{
	log_info("restart: %zu records%s", restart.posted, restart.failed ?
	    "; not all of them were recorded, the next start tries again" :
	    "");
	if (!restart.failed && restart.journal)
		helper_journal_recorded();
}

/* arg: the id of a call whose end this is, or 0. */
static void
restart_recorded(void *arg, const char *why)
{
	uint64_t id = (uintptr_t)arg;

	if (why != NULL) {
		restart.failed = 1;
		log_warnx("restart: a record is missing: %s", why);
	} else if (id != 0)
		trail_end(id);
	if (++restart.answered == restart.posted)
		restart_done();
}

static void
restart_post(const char *event, uint64_t id, json_t *fields, int ends)
{
	restart.posted++;
	audit_post(event, id, fields, restart_recorded,
	    (void *)(uintptr_t)(ends ? id : 0));
}

static void
restart_failed(uint64_t id)
{
	restart_post("tool.failed", id, json_pack("{s:s}", "reason",
	    RESTARTED), 1);
}

/* One sandbox of the launcher's journal. */
static void
restart_swept(json_t *e)
{
	const char *rid, *kind;
	uint64_t id;

	rid = json_string_value(json_object_get(e, "request_id"));
	kind = json_string_value(json_object_get(e, "kind"));
	if (rid == NULL || kind == NULL || reqid_parse(rid, &id) == -1)
		return;
	restart_post("sandbox.swept", id, json_pack("{s:s, s:s, s:s, s:O*,"
	    " s:O*}", "backend", runnerd_conf.runnerd.backend, "reason", RESTARTED,
	    "kind", kind, "session_id", json_object_get(e, "session_id"),
	    "torn_down_at", json_object_get(e, "when")), 0);
	/*
	 * A session's id is the call that opened it, which ended long
	 * ago; a one-shot call's end is the trail's to record, unless
	 * the trail never heard of it.
	 */
	if (strcmp(kind, "call") == 0 && ids_find(&known_ids, id) == -1)
		restart_failed(id);
}

/*
 * After the backend's sweep: journal, the launcher's entries (NULL
 * when it has none), each becomes sandbox.swept, and each call left
 * open gets its end.
 */
void
trail_restart(json_t *journal)
{
	json_t *e;
	size_t i;

	restart.journal = journal != NULL;
	json_array_foreach(journal, i, e)
		restart_swept(e);
	for (i = 0; i < left_ids.n; i++)
		restart_failed(left_ids.v[i]);
	ids_free(&left_ids);
	ids_free(&known_ids);
	if (restart.posted == 0)
		restart_done();
}
