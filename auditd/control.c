/* SPDX-License-Identifier: ISC */
/*
 * Readers (auditctl): tail, follow, a call's trail, stats, rotation.
 * They read through auditd's descriptor and never write; a follower
 * that cannot keep up is cut off rather than let auditd's memory grow.
 */
#include <sys/socket.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "auditd.h"
#include "log.h"

#define TAIL_DEFAULT		10
#define TAIL_MAX		10000
#define FOLLOWER_MAX_QUEUED	(16 * 1024 * 1024)

struct follower {
	TAILQ_ENTRY(follower)	 entry;
	struct conn		*c;
};

static TAILQ_HEAD(, follower) followers = TAILQ_HEAD_INITIALIZER(followers);
static size_t nfollowers;

static int
send_line(const char *line, size_t len, void *arg)
{
	return conn_send(arg, MSG_AUDIT_RECORD, 0, -1, line, len);
}

static int
send_end(struct conn *c)
{
	return conn_send(c, MSG_AUDIT_END, 0, -1, NULL, 0);
}

/* {"count": n, "follow": bool}: the last n records, then new ones. */
int
control_tail(struct conn *c, struct msg *m, json_t *j)
{
	struct follower *f;
	json_int_t count = TAIL_DEFAULT;
	json_t *v;
	off_t off;
	int follow;

	if ((v = json_object_get(j, "count")) != NULL)
		count = json_is_integer(v) ? json_integer_value(v) : -1;
	follow = json_is_true(json_object_get(j, "follow"));
	if (count < 0 || count > TAIL_MAX)
		return conn_error(c, m->hdr.reqid, ERR_BADMSG,
		    "count must be 0..%d", TAIL_MAX);
	if (c->data != NULL)
		return conn_error(c, m->hdr.reqid, ERR_BADMSG,
		    "already following");
	if (alog_tail_offset(&auditd_log, (size_t)count, &off) == -1 ||
	    (count > 0 && alog_scan(&auditd_log, off, send_line, c) == -1))
		return conn_error(c, m->hdr.reqid, ERR_INTERNAL,
		    "cannot read the log");
	if (!follow)
		return send_end(c);
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -1;
	f->c = c;
	c->data = f;
	TAILQ_INSERT_TAIL(&followers, f, entry);
	nfollowers++;
	return 0;
}

struct show {
	struct conn	*c;
	char		 needle[64];
	const char	*rid;
};

/* The canonical form makes a byte search exact; parsing confirms it. */
static int
show_line(const char *line, size_t len, void *arg)
{
	struct show *s = arg;
	json_t *j;
	int r = 0;

	if (memmem(line, len, s->needle, strlen(s->needle)) == NULL)
		return 0;
	if ((j = cjson_parse_nul(line, len, NULL, 0)) == NULL)
		return 0;
	if (json_is_string(json_object_get(j, "request_id")) &&
	    strcmp(json_string_value(json_object_get(j, "request_id")),
	    s->rid) == 0)
		r = send_line(line, len, s->c);
	json_decref(j);
	return r;
}

/* {"request_id"}: every record of that call in the current file. */
int
control_show(struct conn *c, struct msg *m, json_t *j)
{
	struct show s;
	uint64_t id;

	s.c = c;
	s.rid = json_string_value(json_object_get(j, "request_id"));
	if (s.rid == NULL || reqid_parse(s.rid, &id) == -1)
		return conn_error(c, m->hdr.reqid, ERR_BADMSG,
		    "request_id must look like req-<16 hex digits>");
	snprintf(s.needle, sizeof(s.needle), "\"request_id\":\"%s\"", s.rid);
	if (alog_scan(&auditd_log, 0, show_line, &s) == -1)
		return conn_error(c, m->hdr.reqid, ERR_INTERNAL,
		    "cannot read the log");
	return send_end(c);
}

int
control_stats(struct conn *c, struct msg *m, json_t *j)
{
	const struct auditlog *l = &auditd_log;

	(void)m;
	(void)j;
	if (conn_send_json(c, MSG_AUDIT_RECORD, 0, -1, json_pack("{s:s, s:I, "
	    "s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b}",
	    "log", l->path, "size", (json_int_t)l->size, "seq",
	    (json_int_t)l->seq,
	    "head", l->head, "events", (json_int_t)l->events,
	    "batches", (json_int_t)l->batches,
	    "max_batch", (json_int_t)l->max_batch,
	    "failures", (json_int_t)l->failures,
	    "rotations", (json_int_t)l->rotations,
	    "duplicates", (json_int_t)l->duplicates,
	    "rotate_size", (json_int_t)auditd_conf.auditd.rotate_size,
	    "connections", (json_int_t)server_nconns(),
	    "followers", (json_int_t)nfollowers,
	    "writable", l->fd != -1)) == -1)
		return -1;
	return send_end(c);
}

int
control_rotate(struct conn *c, struct msg *m, json_t *j)
{
	char old[PATH_MAX];

	(void)j;
	if (writer_rotate("auditctl", old, sizeof(old)) == -1)
		return conn_error(c, m->hdr.reqid, ERR_INTERNAL,
		    "cannot rotate %s", auditd_log.path);
	if (conn_send_json(c, MSG_AUDIT_RECORD, 0, -1, json_pack(
	    "{s:s, s:s, s:I, s:s}", "log", auditd_log.path, "previous_file",
	    old, "seq", (json_int_t)auditd_log.seq, "head",
	    auditd_log.head)) == -1)
		return -1;
	return send_end(c);
}

static void
follower_remove(struct follower *f)
{
	TAILQ_REMOVE(&followers, f, entry);
	nfollowers--;
	f->c->data = NULL;
	free(f);
}

/*
 * New records to every follower.  A slow one is shut down, not dropped
 * here: we may be inside the dispatch of that very connection.
 */
void
control_publish(const struct arec *recs, size_t n)
{
	struct follower *f, *next;
	size_t i;

	for (f = TAILQ_FIRST(&followers); f != NULL; f = next) {
		next = TAILQ_NEXT(f, entry);
		for (i = 0; i < n; i++)
			if (send_line(recs[i].line, recs[i].len - 1, f->c) == -1)
				break;
		if (i < n || f->c->ch.wqueued > FOLLOWER_MAX_QUEUED) {
			log_warnx("audit.sock: follower %u too slow, cut off",
			    f->c->id);
			shutdown(f->c->ch.fd, SHUT_RDWR);
			follower_remove(f);
		}
	}
}

void
control_closed(struct conn *c)
{
	if (c->data != NULL)
		follower_remove(c->data);
}
