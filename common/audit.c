#include <sys/random.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "frame.h"
#include "log.h"
#include "sock.h"

#define AUDIT_TIMEOUT_MS	5000

static char		 audit_path[PATH_MAX];
static const char	*audit_proc = "?";
static struct channel	 audit_ch = { .fd = -1 };

int
audit_init(const struct as_config *conf, const char *procname)
{
	audit_proc = procname;
	return config_socket_path(conf, "audit.sock", audit_path,
	    sizeof(audit_path));
}

static void
audit_close(void)
{
	if (audit_ch.fd != -1) {
		close(audit_ch.fd);
		channel_clear(&audit_ch);
		audit_ch.fd = -1;
	}
}

static int
audit_send(const char *payload, uint64_t reqid)
{
	const struct msg_error *e;
	struct msg m;

	if (audit_ch.fd == -1) {
		int fd;

		if ((fd = sock_connect(audit_path)) == -1)
			return -1;
		channel_init(&audit_ch, fd);
	}
	if (channel_send_sync(&audit_ch, MSG_AUDIT_EVENT, reqid, -1, payload,
	    strlen(payload), AUDIT_TIMEOUT_MS) == -1 ||
	    channel_recv_sync(&audit_ch, &m, AUDIT_TIMEOUT_MS) == -1) {
		audit_close();
		return -1;
	}
	/*
	 * A refusal is auditd's answer, not a lost connection: no retry.
	 * Its code says why, so that a full disk reads as one.
	 */
	if (m.hdr.type == MSG_ERROR && m.len == sizeof(struct msg_error)) {
		e = (const struct msg_error *)m.data;
		log_warnx("audit: auditd refused the event: %.*s",
		    (int)sizeof(e->text), e->text);
		errno = e->code == ERR_NOSPACE ? ENOSPC :
		    e->code == ERR_UNAVAIL ? EIO : EPERM;
		return -2;
	}
	if (m.hdr.type != MSG_AUDIT_ACK || m.hdr.reqid != reqid) {
		audit_close();
		errno = EPROTO;
		return -1;
	}
	return 0;
}

/* One event as auditd takes it (fields taken), or NULL. */
char *
audit_payload(const char *event, uint64_t reqid, json_t *fields)
{
	char rid[REQID_STR_LEN], *payload;
	json_t *ev;

	reqid_format(reqid, rid);
	ev = json_pack("{s:s, s:s, s:s, s:o}", "event", event, "request_id",
	    rid, "daemon", audit_proc, "fields",
	    fields != NULL ? fields : json_object());
	payload = ev != NULL ? json_dumps(ev, JSON_COMPACT) : NULL;
	json_decref(ev);
	if (payload == NULL)
		errno = ENOMEM;
	return payload;
}

/*
 * Records one event; takes the reference to fields.  One reconnect is
 * tried, since auditd may have been restarted since the last event.
 */
int
audit_emit(const char *event, uint64_t reqid, json_t *fields)
{
	char rid[REQID_STR_LEN], *payload;
	int r;

	if ((payload = audit_payload(event, reqid, fields)) == NULL)
		return -1;
	r = audit_send(payload, reqid);
	if (r == -1)
		r = audit_send(payload, reqid);
	if (r != 0) {
		reqid_format(reqid, rid);
		log_warn("audit: cannot record %s for %s", event, rid);
		r = -1;
	}
	free(payload);
	return r;
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
