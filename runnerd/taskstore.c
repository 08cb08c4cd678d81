/* SPDX-License-Identifier: ISC */
/*
 * mcpd's tasks, kept for the client that made them (MSG_TASK_SAVE,
 * MSG_TASK_LOAD).  mcpd is one process per client and holds its tasks
 * in memory; a client that starts a new mcpd with the same kept key
 * (mcpd -k) asks here for a task the previous one made.  runnerd owns
 * the store because it already names clients by the key's digest
 * (call.c), outlives mcpd, and writes where no agent can: a record is
 * filed under the SHA-256 of the key, never the key, and a lookup
 * matches digest and task id together, so another client's task reads
 * as one never made.
 *
 * Bounds: runnerd.tasks_per_client records per client, and
 * STORE_RECORDS_MAX and STORE_BYTES_MAX over all, the oldest (by
 * creation) dropped first; a record unchanged for
 * runnerd.task_retention, or finished and past its own ttl, is
 * dropped too.  A dropped task leaves a tombstone, so that its lookup
 * says it was dropped and why; tombstones are bounded the same way.
 *
 * On disk: tasks.0 and tasks.1 in the state directory, opened before
 * the sandbox (runnerd's filter has no open), one record a line,
 * {"seq","client","task"} or a tombstone {"seq","client","taskId",
 * "dropped"}, appended to the current file and synced; at start-up the
 * newest seq of each task wins.  Past STORE_COMPACT bytes the records
 * held are written to the other file, synced, and only then is the
 * current one emptied: a crash at any step leaves one whole copy.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cjson.h"
#include "event.h"
#include "io.h"
#include "log.h"
#include "runnerd.h"

#define STORE_RECORDS_MAX	4096
#define STORE_BYTES_MAX		(64 * 1024 * 1024)
#define STORE_COMPACT		(2 * STORE_BYTES_MAX)
#define STORE_FILES		2

struct stored {
	TAILQ_ENTRY(stored)	 entry;		/* oldest first */
	char			 client[SHA256_HEX_LEN + 1];
	char			 id[TASK_ID_LEN];
	uint64_t		 seq;
	int64_t			 created;	/* ms, as mcpd says */
	int64_t			 updated;
	int64_t			 ttl;
	int			 finished;
	json_t			*task;		/* NULL: dropped */
	char			 dropped[160];
	size_t			 size;		/* of its line */
};

static TAILQ_HEAD(, stored) store = TAILQ_HEAD_INITIALIZER(store);
static const char *const files[STORE_FILES] = { "tasks.0", "tasks.1" };
static int		 fds[STORE_FILES] = { -1, -1 };
static int		 cur;		/* the file appended to */
static off_t		 cur_size;
static uint64_t		 last_seq;
static size_t		 nrecords, ntombs;
static size_t		 bytes;

static json_t *
line_of(const struct stored *s)
{
	if (s->task != NULL)
		return json_pack("{s:I, s:s, s:O}", "seq", (json_int_t)s->seq,
		    "client", s->client, "task", s->task);
	return json_pack("{s:I, s:s, s:s, s:s}", "seq", (json_int_t)s->seq,
	    "client", s->client, "taskId", s->id, "dropped", s->dropped);
}

/* One line to fd, synced: 0, or -1 with nothing of it left. */
static int
append(int fd, off_t *size, const char *text)
{
	struct iovec iov[2];
	size_t len = strlen(text);

	iov[0].iov_base = (void *)text;
	iov[0].iov_len = len;
	iov[1].iov_base = "\n";
	iov[1].iov_len = 1;
	if (writev(fd, iov, 2) == (ssize_t)len + 1 && fdatasync(fd) == 0) {
		*size += len + 1;
		return 0;
	}
	if (ftruncate(fd, *size) == -1)
		log_warn("task store");
	return -1;
}

static char *
encode(const struct stored *s)
{
	json_t *j = line_of(s);
	char *text;

	if (j == NULL || (text = json_dumps(j, JSON_COMPACT)) == NULL)
		fatalx("task store: out of memory");
	json_decref(j);
	return text;
}

/* Everything held, into the other file; then the current one is emptied. */
static void
compact(void)
{
	struct stored *s;
	int next = !cur;
	off_t size = 0;
	char *text;

	if (ftruncate(fds[next], 0) == -1) {
		log_warn("%s", files[next]);
		return;
	}
	TAILQ_FOREACH(s, &store, entry) {
		text = encode(s);
		if (append(fds[next], &size, text) == -1) {
			log_warn("%s: not compacted", files[next]);
			free(text);
			return;
		}
		free(text);
	}
	if (ftruncate(fds[cur], 0) == -1)
		log_warn("%s", files[cur]);
	cur = next;
	cur_size = size;
}

static void
persist(struct stored *s)
{
	char *text = encode(s);

	s->size = strlen(text) + 1;
	if (append(fds[cur], &cur_size, text) == -1)
		log_warn("%s: task %s of client %.12s not kept on disk",
		    files[cur], s->id, s->client);
	free(text);
	if (cur_size > STORE_COMPACT)
		compact();
}

static void
forget(struct stored *s)
{
	TAILQ_REMOVE(&store, s, entry);
	if (s->task != NULL) {
		nrecords--;
		bytes -= s->size;
	} else
		ntombs--;
	json_decref(s->task);
	free(s);
}

/* The record becomes a tombstone saying why. */
static void
drop(struct stored *s, const char *why, int write)
{
	log_info("task %s of client %.12s dropped: %s", s->id, s->client, why);
	json_decref(s->task);
	s->task = NULL;
	nrecords--;
	bytes -= s->size;
	ntombs++;
	snprintf(s->dropped, sizeof(s->dropped), "%s", why);
	s->seq = ++last_seq;
	if (write)
		persist(s);
}

static size_t
count(const char *client, int tombs)
{
	struct stored *s;
	size_t n = 0;

	TAILQ_FOREACH(s, &store, entry)
		if ((s->task == NULL) == tombs &&
		    (client == NULL || strcmp(s->client, client) == 0))
			n++;
	return n;
}

/* client's oldest record (tombs: tombstone), or over all when NULL. */
static struct stored *
oldest(const char *client, int tombs)
{
	struct stored *s, *o = NULL;

	TAILQ_FOREACH(s, &store, entry)
		if ((s->task == NULL) == tombs &&
		    (client == NULL || strcmp(s->client, client) == 0) &&
		    (o == NULL || s->created < o->created))
			o = s;
	return o;
}

/* Drops what retention or a ttl ended, and what is over the bounds. */
static void
enforce(const char *client, int write)
{
	struct stored *s, *next;
	size_t per = (size_t)runnerd_conf.runnerd.tasks_per_client;
	int64_t now = ev_wall_ms();

	TAILQ_FOREACH_SAFE(s, &store, entry, next) {
		if (s->task == NULL)
			continue;
		if (s->updated + runnerd_conf.runnerd.task_retention * 1000 <=
		    now)
			drop(s, "unchanged for longer than runnerd's "
			    "task_retention", write);
		else if (s->finished && s->created + s->ttl <= now)
			drop(s, "finished, and past the ttl it was created "
			    "with", write);
	}
	while (client != NULL && count(client, 0) > per)
		drop(oldest(client, 0), "the client's oldest task, over "
		    "runnerd's tasks_per_client", write);
	while (nrecords > STORE_RECORDS_MAX || bytes > STORE_BYTES_MAX)
		drop(oldest(NULL, 0), "the oldest task of all, over the "
		    "store's bound", write);
	while (client != NULL && count(client, 1) > per)
		forget(oldest(client, 1));
	while (ntombs > STORE_RECORDS_MAX)
		forget(oldest(NULL, 1));
}

static struct stored *
find(const char *client, const char *id)
{
	struct stored *s;

	TAILQ_FOREACH(s, &store, entry)
		if (strcmp(s->id, id) == 0 && strcmp(s->client, client) == 0)
			return s;
	return NULL;
}

/* The task's fields the bounds need: 0, or -1 when it is not mcpd's. */
static int
fill(struct stored *s, json_t *task)
{
	const char *status;

	status = json_string_value(json_object_get(task, "status"));
	if (status == NULL || !json_is_integer(json_object_get(task,
	    "created")) || !json_is_integer(json_object_get(task, "updated")) ||
	    !json_is_integer(json_object_get(task, "ttl")))
		return -1;
	s->created = json_integer_value(json_object_get(task, "created"));
	s->updated = json_integer_value(json_object_get(task, "updated"));
	s->ttl = json_integer_value(json_object_get(task, "ttl"));
	s->finished = strcmp(status, "completed") == 0 || strcmp(status,
	    "failed") == 0 || strcmp(status, "cancelled") == 0;
	return 0;
}

/* A line of a file (j borrowed) into the store, if newer than held. */
static void
load_line(json_t *j)
{
	const char *client, *id, *dropped;
	json_t *task = json_object_get(j, "task");
	json_int_t seq = json_integer_value(json_object_get(j, "seq"));
	struct stored *s, tmp;

	client = json_string_value(json_object_get(j, "client"));
	id = json_string_value(json_object_get(task != NULL ? task : j,
	    "taskId"));
	dropped = json_string_value(json_object_get(j, "dropped"));
	memset(&tmp, 0, sizeof(tmp));
	if (client == NULL || strlen(client) != SHA256_HEX_LEN ||
	    !task_id_valid(id) || seq <= 0 || (task == NULL && dropped == NULL) ||
	    (task != NULL && fill(&tmp, task) == -1))
		return;
	if ((uint64_t)seq > last_seq)
		last_seq = (uint64_t)seq;
	if ((s = find(client, id)) != NULL) {
		if (s->seq >= (uint64_t)seq)
			return;
		forget(s);
	}
	if ((s = calloc(1, sizeof(*s))) == NULL)
		fatal("task store");
	*s = tmp;
	strlcpy(s->client, client, sizeof(s->client));
	strlcpy(s->id, id, sizeof(s->id));
	s->seq = (uint64_t)seq;
	if (task != NULL) {
		s->task = json_incref(task);
		s->size = json_dumpb(j, NULL, 0, JSON_COMPACT) + 1;
		nrecords++;
		bytes += s->size;
	} else {
		strlcpy(s->dropped, dropped, sizeof(s->dropped));
		ntombs++;
	}
	TAILQ_INSERT_TAIL(&store, s, entry);
}

/*
 * Before privileges drop: opens both files in the state directory
 * dirfd, takes the newest of each task from them, and writes what is
 * held into one.
 */
int
taskstore_open(int dirfd)
{
	struct stat st;
	char *buf, *line, *save;
	json_t *j;
	int i;

	for (i = 0; i < STORE_FILES; i++) {
		if ((fds[i] = openat(dirfd, files[i], O_RDWR | O_APPEND |
		    O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) == -1)
			return -1;
		if (fstat(fds[i], &st) == -1)
			return -1;
		if (!S_ISREG(st.st_mode)) {
			errno = EINVAL;
			return -1;
		}
		if ((buf = read_lines(fds[i], st.st_size)) == NULL)
			return -1;
		for (line = strtok_r(buf, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save)) {
			if ((j = json_loads(line, 0, NULL)) == NULL) {
				log_warnx("%s: a garbled line skipped",
				    files[i]);
				continue;
			}
			load_line(j);
			json_decref(j);
		}
		free(buf);
	}
	enforce(NULL, 0);
	compact();
	if (nrecords > 0)
		log_info("task store: %zu tasks kept for mcpd's clients",
		    nrecords);
	return 0;
}

static int
client_of(const json_t *j, char *client)
{
	const char *key;

	if (!call_client_key(j) || (key = json_string_value(json_object_get(j,
	    "client_key"))) == NULL)
		return -1;
	sha256_hex(key, strlen(key), client);
	return 0;
}

/* MSG_TASK_SAVE: {"client_key","task"}; nothing is answered. */
int
taskstore_save(struct conn *c, struct msg *m, json_t *j)
{
	char client[SHA256_HEX_LEN + 1];
	json_t *task = json_object_get(j, "task");
	const char *id;
	struct stored *s, tmp;
	char *text;

	(void)c;
	id = json_string_value(json_object_get(task, "taskId"));
	memset(&tmp, 0, sizeof(tmp));
	if (client_of(j, client) == -1 || !json_is_object(task) ||
	    !task_id_valid(id) || fill(&tmp, task) == -1 ||
	    m->len > TASK_RECORD_MAX) {
		log_warnx("TASK_SAVE: not a task of mcpd's, or too large: "
		    "not kept");
		return 0;
	}
	if ((s = find(client, id)) == NULL) {
		if ((s = calloc(1, sizeof(*s))) == NULL)
			fatal("task store");
		strlcpy(s->client, client, sizeof(s->client));
		strlcpy(s->id, id, sizeof(s->id));
		TAILQ_INSERT_TAIL(&store, s, entry);
	} else if (s->task != NULL) {
		nrecords--;
		bytes -= s->size;
	} else
		ntombs--;
	nrecords++;
	json_decref(s->task);
	s->task = json_incref(task);
	s->created = tmp.created;
	s->updated = tmp.updated;
	s->ttl = tmp.ttl;
	s->finished = tmp.finished;
	s->seq = ++last_seq;
	text = encode(s);
	s->size = strlen(text) + 1;
	bytes += s->size;
	free(text);
	persist(s);
	enforce(client, 1);
	return 0;
}

/* MSG_TASK_LOAD: {"client_key","taskId"}: the task, or why not. */
int
taskstore_load(struct conn *c, struct msg *m, json_t *j)
{
	char client[SHA256_HEX_LEN + 1];
	const char *id;
	struct stored *s;

	id = json_string_value(json_object_get(j, "taskId"));
	if (client_of(j, client) == -1 || !task_id_valid(id))
		return conn_error(c, m->hdr.reqid, ERR_BADMSG, "bad TASK_LOAD: "
		    "needs client_key and a task id");
	enforce(client, 1);
	if ((s = find(client, id)) == NULL)
		return conn_error(c, m->hdr.reqid, ERR_DENIED, "no such task "
		    "for this client key: never made, or no longer known");
	if (s->task == NULL)
		return conn_error(c, m->hdr.reqid, ERR_DENIED, "task %s is no "
		    "longer kept: %s", s->id, s->dropped);
	if (conn_send_json(c, MSG_TASK_RECORD, m->hdr.reqid, -1,
	    json_incref(s->task)) == -1)
		return conn_error(c, m->hdr.reqid, ERR_INTERNAL, "task %s "
		    "cannot be sent", s->id);
	return 0;
}
