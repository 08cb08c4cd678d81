/* SPDX-License-Identifier: ISC */
/*
 * Writers: the daemons' MSG_AUDIT_EVENTs.  Every event that arrives in
 * one turn of the event loop joins one batch, which is written and
 * synced once at the end of that turn (a zero-delay timer runs after
 * the turn's descriptors); only then is each sender acknowledged.  Many
 * concurrent writers thus share one fdatasync: group commit.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "auditd.h"
#include "event.h"
#include "log.h"

/*
 * A writer that floods is committed early rather than held in memory:
 * by the caller of batch_add, once the add is done, so that the commit
 * (which adds a checkpoint to the batch) never runs inside an add.
 */
#define BATCH_MAX_BYTES		(8 * 1024 * 1024)
#define EVENT_NAME_MAX		64
#define DAEMON_NAME_MAX		32

struct as_config	 auditd_conf;
struct auditlog		 auditd_log = { .fd = -1 };

static struct arec	*batch;
static size_t		 nbatch, cbatch, batch_bytes;
static uint64_t		 commit_timer;
static int		 committing;

/* Records since the last checkpoint; the one at batch[0], if any. */
static uint64_t		 ckpt_since;
static struct ckpt	 ckpt_next;
static int		 ckpt_in_batch;

static void
commit_cb(void *arg)
{
	(void)arg;
	commit_timer = 0;
	writer_commit();
}

static int
batch_add(json_t *j, uint32_t conn, uint64_t reqid, size_t bytes)
{
	struct arec *n;

	if (j == NULL)
		return -1;
	if (nbatch == cbatch) {
		n = reallocarray(batch, cbatch ? cbatch * 2 : 64, sizeof(*n));
		if (n == NULL) {
			json_decref(j);
			return -1;
		}
		batch = n;
		cbatch = cbatch ? cbatch * 2 : 64;
	}
	memset(&batch[nbatch], 0, sizeof(batch[nbatch]));
	batch[nbatch].j = j;
	batch[nbatch].conn = conn;
	batch[nbatch].reqid = reqid;
	nbatch++;
	batch_bytes += bytes;
	if (commit_timer == 0)
		commit_timer = ev_timer(0, commit_cb, NULL);
	return 0;
}

/* An add from outside the commit: past the bound, the batch goes now. */
static int
batch_add_bounded(json_t *j, uint32_t conn, uint64_t reqid, size_t bytes)
{
	if (batch_add(j, conn, reqid, bytes) == -1)
		return -1;
	if (batch_bytes >= BATCH_MAX_BYTES)
		writer_commit();
	return 0;
}

/* "tool.request", "approval.granted": dotted lower-case words. */
static int
valid_name(const char *s, size_t max, int dots)
{
	size_t i;

	if (*s == '\0' || strlen(s) > max || s[0] == '.')
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] == '.' && dots && s[i + 1] != '.' && s[i + 1] != '\0')
			continue;
		if (!islower((unsigned char)s[i]) &&
		    !isdigit((unsigned char)s[i]) && s[i] != '_' &&
		    (dots || s[i] != '-'))
			return 0;
	}
	return 1;
}

/* "writer" and "seq" make an event one that may be resent: both or none. */
static int
event_writer(const json_t *ev, json_t *rec, char *why, size_t whylen)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789_-:";
	json_t *w = json_object_get(ev, "writer"), *s = json_object_get(ev,
	    "seq");
	const char *ws = json_string_value(w);

	if (w == NULL && s == NULL)
		return 0;
	if (ws == NULL || *ws == '\0' || strlen(ws) > WRITER_MAX ||
	    strspn(ws, chars) != strlen(ws) || !json_is_integer(s) ||
	    json_integer_value(s) <= 0) {
		snprintf(why, whylen, "writer and seq go together: a name of "
		    "[a-z0-9_:-] and a positive integer");
		return -1;
	}
	/* The record's own seq is auditd's: the writer's is writer_seq. */
	if (json_object_set(rec, "writer", w) == -1 ||
	    json_object_set(rec, "writer_seq", s) == -1) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	return 0;
}

/*
 * The record for one event, fields scrubbed; NULL with why.  The
 * audit.* and log.* names are auditd's own, so no writer can forge a
 * rotation, a recovery or a checkpoint.
 */
static json_t *
event_record(const struct msg *m, json_t *ev, char *why, size_t whylen)
{
	char rid[REQID_STR_LEN];
	const char *key, *event, *daemon;
	json_t *v, *fields = NULL, *rec = NULL;

	reqid_format(m->hdr.reqid, rid);
	event = json_string_value(json_object_get(ev, "event"));
	daemon = json_string_value(json_object_get(ev, "daemon"));
	v = json_object_get(ev, "fields");
	if (event == NULL || !valid_name(event, EVENT_NAME_MAX, 1) ||
	    strncmp(event, "audit.", 6) == 0 || strncmp(event, "log.", 4) == 0)
		snprintf(why, whylen, "bad or missing event name");
	else if (daemon == NULL || !valid_name(daemon, DAEMON_NAME_MAX, 0))
		snprintf(why, whylen, "bad or missing daemon name");
	else if (!json_is_string(json_object_get(ev, "request_id")) ||
	    strcmp(json_string_value(json_object_get(ev, "request_id")),
	    rid) != 0)
		snprintf(why, whylen, "request_id does not match the frame");
	else if (v != NULL && !json_is_object(v))
		snprintf(why, whylen, "fields is not an object");
	else if ((fields = scrub_value(v != NULL ? v : json_object())) == NULL)
		snprintf(why, whylen, "out of memory");
	else if ((rec = arec_new(daemon, event, json_string(rid), fields)) ==
	    NULL)
		snprintf(why, whylen, "out of memory");
	else if (event_writer(ev, rec, why, whylen) == -1) {
		json_decref(rec);
		rec = NULL;
	}
	json_object_foreach(ev, key, v)
		if (rec != NULL && strcmp(key, "event") != 0 &&
		    strcmp(key, "daemon") != 0 &&
		    strcmp(key, "request_id") != 0 &&
		    strcmp(key, "fields") != 0 && strcmp(key, "writer") != 0 &&
		    strcmp(key, "seq") != 0) {
			snprintf(why, whylen, "unknown key \"%s\"", key);
			json_decref(rec);
			rec = NULL;
		}
	return rec;
}

/*
 * A writer's answer: the ack with its record's seq (for a copy dropped
 * as a duplicate, the original's, or null when not known), or, when
 * err is set, why the event was not recorded.
 */
static void
answer(uint32_t conn, uint64_t reqid, int err, uint64_t seq, int dup)
{
	char ack[64];
	struct conn *c;

	if (conn == 0 || (c = conn_find(conn)) == NULL)
		return;
	if (err == 0) {
		if (dup && seq == 0)
			strlcpy(ack, "{\"duplicate\":true,\"seq\":null}",
			    sizeof(ack));
		else
			snprintf(ack, sizeof(ack), "{%s\"seq\":%" PRIu64 "}",
			    dup ? "\"duplicate\":true," : "", seq);
		(void)conn_send(c, MSG_AUDIT_ACK, reqid, -1, ack, strlen(ack));
	} else
		(void)conn_error(c, reqid, err == ENOSPC ? ERR_NOSPACE :
		    ERR_UNAVAIL, "auditd cannot record the event: %s",
		    strerror(err));
	/*
	 * Send now rather than on the next turn's POLLOUT: the writer's
	 * next event then makes the next batch.
	 */
	if (channel_flush(&c->ch) == 0 && !channel_pending(&c->ch))
		ev_set(c->ch.fd, POLLIN);
}

/*
 * A bad event is refused with a reason and the connection stays; the
 * sender treats the refusal as a failure to record (fail closed).
 */
int
writer_event(struct conn *c, struct msg *m, json_t *ev)
{
	char why[200];
	const char *w;
	uint64_t wseq, recseq;
	json_t *rec;
	int st;

	if ((rec = event_record(m, ev, why, sizeof(why))) == NULL) {
		log_warnx("audit.sock: peer %u (pid %d): event refused: %s",
		    c->id, (int)c->cred.pid, why);
		return conn_error(c, m->hdr.reqid, ERR_BADMSG, "%s", why);
	}
	if ((w = seen_writer(rec, &wseq)) != NULL) {
		/* The original is in this batch: written first, then known. */
		if ((st = seen_check(w, wseq, &recseq)) == SEEN_PENDING) {
			writer_commit();
			st = seen_check(w, wseq, &recseq);
		}
		if (st == SEEN_WRITTEN) {
			log_info("audit.sock: peer %u (pid %d): %s seq %" PRIu64
			    " again, dropped", c->id, (int)c->cred.pid, w,
			    wseq);
			json_decref(rec);
			auditd_log.duplicates++;
			answer(c->id, m->hdr.reqid, 0, recseq, 1);
			return 0;
		}
		seen_pending(w, wseq);
	}
	if (batch_add_bounded(rec, c->id, m->hdr.reqid, m->len) == -1)
		return conn_error(c, m->hdr.reqid, ERR_INTERNAL,
		    "out of memory");
	return 0;
}

/* auditd's own records (request_id null); takes fields. */
int
writer_own_event(const char *event, json_t *fields)
{
	return batch_add_bounded(arec_new("auditd", event, NULL, fields), 0, 0,
	    0);
}

/* Acks (or refuses) the batch; the written seqs go to the table. */
static void
batch_answer(int ok, int err)
{
	const char *w;
	uint64_t wseq;
	size_t i;

	for (i = 0; i < nbatch; i++) {
		answer(batch[i].conn, batch[i].reqid, ok ? 0 : err != 0 ?
		    err : EIO, batch[i].seq, 0);
		if (ok && (w = seen_writer(batch[i].j, &wseq)) != NULL)
			seen_written(w, wseq, batch[i].seq);
	}
	seen_settled();
}

/*
 * A checkpoint of the head before the batch goes first in it: it costs
 * one signature and shares the batch's fdatasync.
 */
static int
ckpt_prepend(void)
{
	struct arec r;

	if (ckpt_in_batch)
		return 0;
	if (ckpt_make(&auditd_log, &ckpt_next) == -1) {
		log_warnx("checkpoint: cannot sign");
		return -1;
	}
	if (batch_add(arec_new("auditd", CKPT_EVENT, NULL,
	    ckpt_json(&ckpt_next)), 0, 0, 0) == -1)
		return -1;
	r = batch[nbatch - 1];
	memmove(batch + 1, batch, (nbatch - 1) * sizeof(*batch));
	batch[0] = r;
	ckpt_in_batch = 1;
	return 0;
}

struct forward	 auditd_forward = { .fd = -1 };

/* Durable records to the SIEM's syslog, each as it is in the file. */
static void
forward_batch(void)
{
	size_t i;

	for (i = 0; i < nbatch && auditd_forward.fd != -1; i++)
		forward_send(&auditd_forward, "record", json_string_value(
		    json_object_get(batch[i].j, "time")), batch[i].line,
		    batch[i].len > 0 ? batch[i].len - 1 : 0);
}

/*
 * Writes the batch, syncs once, acknowledges (or refuses) every event.
 * Nothing it calls may commit: a commit inside a commit would write the
 * batch in hand twice, or recurse until the stack is gone.
 */
void
writer_commit(void)
{
	char old[PATH_MAX];
	size_t i;
	int ok, saved;

	if (committing) {
#ifdef AS_DEBUG
		fatalx("writer_commit entered again");
#else
		log_warnx("writer_commit entered again: refused");
		return;
#endif
	}
	if (commit_timer != 0) {
		ev_timer_cancel(commit_timer);
		commit_timer = 0;
	}
	if (nbatch == 0)
		return;
	committing = 1;
	if (ckpt_since >= (uint64_t)auditd_conf.auditd.checkpoint_every)
		(void)ckpt_prepend();
	ok = alog_commit(&auditd_log, batch, nbatch) == 0;
	saved = errno;
	if (!ok)
		log_warn("%s: cannot record %zu events", auditd_log.path,
		    nbatch);
	batch_answer(ok, saved);
	if (ok) {
		control_publish(batch, nbatch);
		forward_batch();
	}
	if (ok && ckpt_in_batch) {
		ckpt_publish(&ckpt_next);
		ckpt_since = 0;
	}
	if (ok)
		ckpt_since += nbatch - (size_t)ckpt_in_batch;
	ckpt_in_batch = 0;
	for (i = 0; i < nbatch; i++) {
		json_decref(batch[i].j);
		free(batch[i].line);
	}
	nbatch = batch_bytes = 0;
	committing = 0;
	if (ok && auditd_conf.auditd.rotate_size > 0 &&
	    auditd_log.size >= auditd_conf.auditd.rotate_size)
		(void)writer_rotate("size", old, sizeof(old));
}

/*
 * Starts a new file; its first record, audit.rotated, links to the
 * last record of the old one and names it.  old gets the old file.
 */
int
writer_rotate(const char *reason, char *old, size_t oldlen)
{
	uint64_t last;

	writer_commit();
	last = auditd_log.seq;
	if (alog_rotate(&auditd_log, old, oldlen) == -1) {
		log_warn("%s: cannot rotate", auditd_log.path);
		return -1;
	}
	log_info("%s: rotated (%s) to %s", auditd_log.path, reason, old);
	if (writer_own_event("audit.rotated", json_pack("{s:s, s:s, s:I, s:s}",
	    "reason", reason, "previous_file", basename(old), "previous_seq",
	    (json_int_t)last, "origin", auditd_log.origin)) == -1)
		return -1;
	writer_commit();
	return 0;
}

/* A checkpoint now (timer, shutdown) if anything was written since. */
int
writer_checkpoint(void)
{
	uint64_t failures = auditd_log.failures;

	if (ckpt_since == 0 && nbatch == 0)
		return 0;
	if (ckpt_prepend() == -1)
		return -1;
	writer_commit();
	return auditd_log.failures == failures ? 0 : -1;
}

static void
ckpt_timer_cb(void *arg)
{
	(void)arg;
	(void)writer_checkpoint();
	writer_checkpoint_start();
}

void
writer_checkpoint_start(void)
{
	(void)ev_timer(auditd_conf.auditd.checkpoint_interval * 1000,
	    ckpt_timer_cb, NULL);
}
