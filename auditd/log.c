/* SPDX-License-Identifier: ISC */
/*
 * The log file: JSON Lines, one canonical record per line, each linking
 * to the SHA-256 of the line before it.  Records are appended whole
 * (O_APPEND, one write per batch) and are durable (fdatasync) before
 * anyone hears they were written.  At start-up a torn tail, left by a
 * crash in the middle of a write, is cut off and the cut is recorded.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auditd.h"
#include "io.h"
#include "log.h"

#define SCAN_CHUNK	(64 * 1024)

static const char genesis[SHA256_HEX_LEN + 1] =
    "0000000000000000000000000000000000000000000000000000000000000000";

/* A record with the fields every line has but seq and prev. */
json_t *
arec_new(const char *daemon, const char *event, json_t *reqid,
    json_t *fields)
{
	struct timespec ts;
	struct tm tm;
	char when[64];
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when + n, sizeof(when) - n, ".%06ldZ", ts.tv_nsec / 1000);
	return json_pack("{s:s, s:s, s:s, s:o, s:o}", "time", when, "daemon",
	    daemon, "event", event, "request_id",
	    reqid != NULL ? reqid : json_null(), "fields",
	    fields != NULL ? fields : json_object());
}

/*
 * Links, writes and syncs recs[0..n) as one batch.  On failure nothing
 * of the batch stays in the file and the head is unchanged.
 */
int
alog_commit(struct auditlog *l, struct arec *recs, size_t n)
{
	char prev[SHA256_HEX_LEN + 1], *buf = NULL, *s;
	size_t i, total = 0, off = 0;
	int saved;

	if (l->fd == -1) {
		errno = EBADF;
		return -1;
	}
	memcpy(prev, l->head, sizeof(prev));
	for (i = 0; i < n; i++) {
		recs[i].seq = l->seq + 1 + i;
		if (json_object_set_new(recs[i].j, "seq",
		    json_integer((json_int_t)recs[i].seq)) == -1 ||
		    json_object_set_new(recs[i].j, "prev",
		    json_string(prev)) == -1 ||
		    (s = cjson_dump(recs[i].j)) == NULL)
			goto nomem;
		recs[i].len = strlen(s);
		sha256_hex(s, recs[i].len, prev);
		free(recs[i].line);
		if ((recs[i].line = realloc(s, recs[i].len + 2)) == NULL) {
			free(s);
			goto nomem;
		}
		recs[i].line[recs[i].len++] = '\n';
		recs[i].line[recs[i].len] = '\0';
		total += recs[i].len;
	}
	if ((buf = malloc(total ? total : 1)) == NULL)
		goto nomem;
	for (i = 0; i < n; i++) {
		memcpy(buf + off, recs[i].line, recs[i].len);
		off += recs[i].len;
	}
	if (write_full(l->fd, buf, total) == -1 || fdatasync(l->fd) == -1) {
		saved = errno;
		/* Take back a partial batch so the chain stays whole. */
		if (ftruncate(l->fd, l->size) == -1 || fdatasync(l->fd) == -1) {
			log_warn("%s: cannot take back a failed write", l->path);
			close(l->fd);
			l->fd = -1;
		}
		free(buf);
		l->failures++;
		errno = saved;
		return -1;
	}
	free(buf);
	l->size += (off_t)total;
	l->seq += n;
	memcpy(l->head, prev, sizeof(prev));
	l->events += n;
	l->batches++;
	if (n > l->max_batch)
		l->max_batch = n;
	return 0;
nomem:
	l->failures++;
	errno = ENOMEM;
	return -1;
}

/* Offset of the last '\n' in [0, end), or -1. */
static off_t
last_newline(int fd, off_t end)
{
	char buf[SCAN_CHUNK];
	off_t from;
	ssize_t n, i;

	while (end > 0) {
		from = end > SCAN_CHUNK ? end - SCAN_CHUNK : 0;
		if ((n = pread(fd, buf, (size_t)(end - from), from)) <= 0)
			return -2;
		for (i = n - 1; i >= 0; i--)
			if (buf[i] == '\n')
				return from + i;
		end = from;
	}
	return -1;
}

/* Reads [from, to) into a fresh buffer. */
static char *
read_range(int fd, off_t from, off_t to)
{
	size_t len = (size_t)(to - from), got = 0;
	ssize_t n;
	char *buf;

	if ((buf = malloc(len + 1)) == NULL)
		return NULL;
	while (got < len) {
		if ((n = pread(fd, buf + got, len - got, from + got)) <= 0) {
			free(buf);
			return NULL;
		}
		got += (size_t)n;
	}
	buf[len] = '\0';
	return buf;
}

/* A whole record: an object with an integer seq and a prev digest. */
static int
line_record(const char *line, size_t len, uint64_t *seq)
{
	json_t *j, *s, *p;
	int ok;

	if ((j = cjson_parse_nul(line, len, NULL, 0)) == NULL)
		return 0;
	s = json_object_get(j, "seq");
	p = json_object_get(j, "prev");
	ok = json_is_integer(s) && json_integer_value(s) > 0 &&
	    json_is_string(p) && json_string_length(p) == SHA256_HEX_LEN;
	if (ok)
		*seq = (uint64_t)json_integer_value(s);
	json_decref(j);
	return ok;
}

/*
 * Finds the last whole record.  Bytes after the last newline are a torn
 * write; so is a final line that is not a record (a crash can leave
 * zeroes).  Anything worse is damage that a person must look at.
 */
static int
recover(struct auditlog *l, off_t size, off_t *keep)
{
	off_t nl, start;
	char *line;
	int pass;

	*keep = size;
	for (pass = 0; pass < 2; pass++) {
		if ((nl = last_newline(l->fd, *keep)) == -2)
			return -1;
		if (nl == -1) {
			*keep = 0;
			return 0;
		}
		if ((start = last_newline(l->fd, nl)) == -2)
			return -1;
		start++;
		if ((line = read_range(l->fd, start, nl)) == NULL)
			return -1;
		if (line_record(line, (size_t)(nl - start), &l->seq)) {
			sha256_hex(line, (size_t)(nl - start), l->head);
			free(line);
			*keep = nl + 1;
			return 0;
		}
		free(line);
		*keep = start;
	}
	log_warnx("%s: the last two lines are not records: refusing to guess "
	    "(see auditctl verify)", l->path);
	errno = EINVAL;
	return -1;
}

/*
 * Opens (or creates) the log and finds its head.  When a torn tail was
 * cut, *note gets the fields of the audit.recovered record to write.
 */
int
alog_open(struct auditlog *l, const char *path, json_t **note)
{
	char dir[PATH_MAX], torn[SHA256_HEX_LEN + 1];
	struct stat st;
	off_t keep;
	char *tail;

	*note = NULL;
	l->fd = -1;
	l->seq = 0;
	memcpy(l->head, genesis, sizeof(l->head));
	if (strlcpy(l->path, path, sizeof(l->path)) >= sizeof(l->path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strlcpy(dir, path, sizeof(dir));
	if (mkdir(dirname(dir), 0750) == -1 && errno != EEXIST)
		return -1;
	if ((l->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC,
	    0640)) == -1 || fstat(l->fd, &st) == -1)
		return -1;
	if (recover(l, st.st_size, &keep) == -1)
		return -1;
	l->size = keep;
	if (keep == st.st_size)
		return 0;
	if ((tail = read_range(l->fd, keep, st.st_size)) == NULL)
		return -1;
	sha256_hex(tail, (size_t)(st.st_size - keep), torn);
	free(tail);
	if (ftruncate(l->fd, keep) == -1 || fdatasync(l->fd) == -1)
		return -1;
	log_warnx("%s: cut a torn tail of %lld bytes after seq %" PRIu64,
	    path, (long long)(st.st_size - keep), l->seq);
	*note = json_pack("{s:I, s:I, s:s}", "truncated_bytes",
	    (json_int_t)(st.st_size - keep), "offset", (json_int_t)keep,
	    "truncated_sha256", torn);
	return 0;
}

int
alog_sync_dir(const char *path)
{
	char dir[PATH_MAX];
	int fd, r;

	strlcpy(dir, path, sizeof(dir));
	if ((fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return -1;
	r = fsync(fd);
	close(fd);
	return r;
}

/*
 * Moves the current file aside as <log>.<last seq> and starts an empty
 * one; the chain goes on from the same head.  old gets the new name.
 */
int
alog_rotate(struct auditlog *l, char *old, size_t oldlen)
{
	struct stat st;
	int fd, n;

	if (l->fd == -1) {
		errno = EBADF;
		return -1;
	}
	n = snprintf(old, oldlen, "%s.%012" PRIu64, l->path, l->seq);
	if (n < 0 || (size_t)n >= oldlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (stat(old, &st) == 0) {
		errno = EEXIST;
		return -1;
	}
	if (rename(l->path, old) == -1)
		return -1;
	fd = open(l->path, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC,
	    0640);
	if (fd == -1) {
		/* Keep writing where we were rather than lose records. */
		(void)rename(old, l->path);
		return -1;
	}
	close(l->fd);
	l->fd = fd;
	l->size = 0;
	l->rotations++;
	if (alog_sync_dir(l->path) == -1)
		log_warn("fsync directory of %s", l->path);
	return 0;
}

/* Where the last count lines of the file start. */
int
alog_tail_offset(struct auditlog *l, size_t count, off_t *off)
{
	off_t end = l->size, nl;

	*off = 0;
	if (end == 0)
		return 0;
	/* The file ends with '\n': skip it, then count line starts back. */
	end--;
	while (count-- > 0) {
		if ((nl = last_newline(l->fd, end)) == -2)
			return -1;
		/* Fewer lines than count: all of them. */
		if (nl == -1) {
			*off = 0;
			return 0;
		}
		*off = nl + 1;
		end = nl;
	}
	return 0;
}

/*
 * Calls cb with every line from off to the current end (without its
 * '\n'); cb returns non-zero to stop.
 */
int
alog_scan(struct auditlog *l, off_t off, int (*cb)(const char *, size_t,
    void *), void *arg)
{
	char *buf = NULL, *nb, *p, *nl;
	size_t cap = 0, have = 0, want;
	off_t end = l->size;
	ssize_t n;
	int r = 0;

	while (off < end && r == 0) {
		want = have + SCAN_CHUNK;
		if (want > cap) {
			if ((nb = realloc(buf, want)) == NULL) {
				free(buf);
				return -1;
			}
			buf = nb;
			cap = want;
		}
		if (want - have > (size_t)(end - off))
			want = have + (size_t)(end - off);
		if ((n = pread(l->fd, buf + have, want - have, off)) <= 0) {
			free(buf);
			return -1;
		}
		off += n;
		have += (size_t)n;
		p = buf;
		while (r == 0 && (nl = memchr(p, '\n', have - (p - buf))) !=
		    NULL) {
			r = cb(p, (size_t)(nl - p), arg);
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
	}
	free(buf);
	return 0;
}
