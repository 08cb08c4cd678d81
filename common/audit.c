/* SPDX-License-Identifier: ISC */
#include <sys/random.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "cjson.h"
#include "frame.h"
#include "log.h"
#include "sock.h"


static char		 audit_path[PATH_MAX];
static const char	*audit_proc = "?";
static int		 audit_timeout_ms;
static struct channel	 audit_ch = { .fd = -1 };

/* audit_emit()'s writer; one with a channel of its own has another. */
static struct audit_writer emit_writer;

int
audit_init(const struct as_config *conf, const char *procname)
{
	audit_proc = procname;
	audit_timeout_ms = (int)conf->auditd.ack_timeout * 1000;
	return config_socket_path(conf, "audit.sock", audit_path,
	    sizeof(audit_path));
}

/*
 * A new writer and its sequence from 1.  The random part tells a
 * restarted process from its predecessor with a reused pid.
 */
static void
writer_new(struct audit_writer *w)
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		fatal("getrandom");
	w->pid = getpid();
	snprintf(w->name, sizeof(w->name), "%s:%d:%016" PRIx64, audit_proc,
	    (int)w->pid, r);
	w->seq = 0;
}

/*
 * One event as auditd takes it, from writer w; takes the reference to
 * fields.  Each call uses up a seq, so that a resend of the text is
 * known as one.  auditd holds a seq not above the last one it wrote as
 * a resend: each writer's events must reach it in order, on one
 * channel, so a second channel needs a writer of its own.
 */
char *
audit_payload_by(struct audit_writer *w, const char *event, uint64_t reqid,
    json_t *fields)
{
	char rid[REQID_STR_LEN], *s, *payload;
	json_free_t json_free;
	json_t *ev;

	/* A forked child writes under a name of its own. */
	if (w->pid != getpid())
		writer_new(w);
	reqid_format(reqid, rid);
	ev = json_pack("{s:s, s:s, s:s, s:o, s:s, s:I}", "event", event,
	    "request_id", rid, "daemon", audit_proc, "fields",
	    fields != NULL ? fields : json_object(), "writer", w->name,
	    "seq", (json_int_t)++w->seq);
	if (ev == NULL || (s = json_dumps(ev, JSON_COMPACT)) == NULL) {
		json_decref(ev);
		errno = ENOMEM;
		return NULL;
	}
	json_decref(ev);
	/* json_dumps() allocates with the allocator jansson was given. */
	payload = strdup(s);
	json_get_alloc_funcs(NULL, &json_free);
	json_free(s);
	if (payload == NULL)
		errno = ENOMEM;
	return payload;
}

char *
audit_payload(const char *event, uint64_t reqid, json_t *fields)
{
	return audit_payload_by(&emit_writer, event, reqid, fields);
}

/*
 * auditd's answer to the event sent with reqid: 0 recorded (a resend
 * it had recorded before included), -2 refused, -1 not an answer.
 */
int
audit_ack_check(const struct msg *m, uint64_t reqid)
{
	const struct msg_error *e;
	char rid[REQID_STR_LEN];
	json_t *j;

	/*
	 * A refusal is auditd's answer, not a lost connection: no retry.
	 * Its code says why, so that a full disk reads as one.  reqid 0
	 * refuses the connection itself.
	 */
	if (m->hdr.type == MSG_ERROR && m->len == sizeof(struct msg_error) &&
	    (m->hdr.reqid == reqid || m->hdr.reqid == 0)) {
		e = (const struct msg_error *)m->data;
		log_warnx("audit: auditd refused the event: %.*s",
		    (int)sizeof(e->text), e->text);
		errno = e->code == ERR_NOSPACE ? ENOSPC :
		    e->code == ERR_UNAVAIL ? EIO : EPERM;
		return -2;
	}
	if (m->hdr.type != MSG_AUDIT_ACK || m->hdr.reqid != reqid) {
		errno = EPROTO;
		return -1;
	}
	j = cjson_parse(m->data, m->len, NULL, 0);
	if (json_is_true(json_object_get(j, "duplicate"))) {
		reqid_format(reqid, rid);
		log_info("audit: an event for %s was sent again; auditd had "
		    "recorded it and dropped the copy", rid);
	}
	json_decref(j);
	return 0;
}

static void
audit_close(void)
{
	int saved = errno;

	if (audit_ch.fd != -1) {
		close(audit_ch.fd);
		channel_clear(&audit_ch);
		audit_ch.fd = -1;
	}
	errno = saved;
}

/* 0 recorded, -2 refused, -1 failed (ETIMEDOUT: the fate is unknown). */
static int
audit_send(const char *payload, uint64_t reqid)
{
	struct msg m;
	int fd, r;

	if (audit_ch.fd == -1) {
		if ((fd = sock_connect(audit_path)) == -1)
			return -1;
		channel_init(&audit_ch, fd);
	}
	if (channel_send_sync(&audit_ch, MSG_AUDIT_EVENT, reqid, -1, payload,
	    strlen(payload), audit_timeout_ms) == -1 ||
	    channel_recv_sync(&audit_ch, &m, audit_timeout_ms) == -1) {
		audit_close();
		return -1;
	}
	if ((r = audit_ack_check(&m, reqid)) == -1)
		audit_close();
	return r;
}

/* No answer in time: whether auditd wrote the event is not known. */
static void
timeout_warn(const char *event, const char *rid, const char *then)
{
	log_warnx("audit: auditd did not answer within %d ms: %s for %s may "
	    "or may not be recorded%s", audit_timeout_ms, event, rid, then);
	errno = ETIMEDOUT;
}

/*
 * Records one event; takes the reference to fields.  One resend of the
 * same payload is tried: auditd may have been restarted since the last
 * event, or have recorded this one without answering in time, and it
 * drops a copy of an event it has recorded.
 */
int
audit_emit(const char *event, uint64_t reqid, json_t *fields)
{
	char rid[REQID_STR_LEN], *payload;
	int r;

	reqid_format(reqid, rid);
	if ((payload = audit_payload(event, reqid, fields)) == NULL) {
		log_warn("audit: cannot record %s for %s", event, rid);
		return -1;
	}
	r = audit_send(payload, reqid);
	if (r == -1 && errno == ETIMEDOUT)
		timeout_warn(event, rid, "; sending it again");
	if (r == -1)
		r = audit_send(payload, reqid);
	free(payload);
	if (r == -1 && errno == ETIMEDOUT)
		timeout_warn(event, rid, "");
	else if (r != 0)
		log_warn("audit: cannot record %s for %s", event, rid);
	return r == 0 ? 0 : -1;
}

void
reqid_format(uint64_t id, char out[REQID_STR_LEN])
{
	snprintf(out, REQID_STR_LEN, "req-%016" PRIx64, id);
}

int
reqid_parse(const char *s, uint64_t *id)
{
	char *end;

	if (strncmp(s, "req-", 4) != 0 || strlen(s) != REQID_STR_LEN - 1)
		return -1;
	errno = 0;
	*id = strtoull(s + 4, &end, 16);
	return (*end != '\0' || errno != 0) ? -1 : 0;
}

uint64_t
reqid_new(void)
{
	uint64_t id = 0;

	while (id == 0)
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			fatal("getrandom");
	return id;
}
