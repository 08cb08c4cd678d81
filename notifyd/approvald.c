/* SPDX-License-Identifier: ISC */
/*
 * notify.sock, notifyd's side: hello, then outbox rows as they come,
 * an ack for each one delivered.  When approvald goes away, notifyd
 * keeps what it holds and says hello again each second until approvald
 * is back; approvald then sends every row not yet acked.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event.h"
#include "frame.h"
#include "log.h"
#include "notifyd.h"
#include "sock.h"

#define RECONNECT_MS	1000

static struct channel	 ch = { .fd = -1 };

static void
disconnect(void)
{
	ev_del(ch.fd);
	close(ch.fd);
	channel_clear(&ch);
	ch.fd = -1;
	log_warnx("notify.sock: approvald went away; hello again in %d ms",
	    RECONNECT_MS);
	if (ev_timer(RECONNECT_MS, approvald_connect, NULL) == 0)
		fatal("reconnect timer");
}

static void
send_msg(uint32_t type, const char *payload)
{
	if (ch.fd == -1)
		return;
	if (channel_compose(&ch, type, 0, 0, -1, payload, payload ?
	    strlen(payload) : 0) == -1 || channel_flush(&ch) == -1)
		disconnect();
}

static void
on_event(const struct msg *m)
{
	json_t *j;
	const char *id, *payload;

	if ((j = json_loadb((const char *)m->data, m->len, 0, NULL)) == NULL)
		fatalx("notify.sock: a NOTIFY_EVENT that is not JSON");
	id = json_string_value(json_object_get(j, "event_id"));
	payload = json_string_value(json_object_get(j, "payload"));
	if (id == NULL || payload == NULL || strlen(id) >= EVENT_ID_MAX ||
	    strchr(id, '.') != NULL)
		fatalx("notify.sock: a NOTIFY_EVENT without its id or body");
	deliver_event(id, payload, json_object_get(j, "delivered"));
	json_decref(j);
}

static void
on_read(int fd, short events, void *arg)
{
	struct msg m;
	ssize_t n;
	int r;

	(void)fd;
	(void)events;
	(void)arg;
	if ((n = channel_read(&ch)) == 0 || (n == -1 && errno != EAGAIN &&
	    errno != EINTR)) {
		disconnect();
		return;
	}
	while ((r = channel_get(&ch, &m)) == 1) {
		/* An internal channel: anything unexpected is fatal. */
		if (m.hdr.type != MSG_NOTIFY_EVENT)
			fatalx("notify.sock: unexpected %s",
			    msg_type_name(m.hdr.type));
		on_event(&m);
	}
	if (r == -1)
		disconnect();
}

void
approvald_connect(void *arg)
{
	char path[PATH_MAX];
	int fd;

	(void)arg;
	if (config_socket_path(&notifyd_conf, "notify.sock", path,
	    sizeof(path)) == -1)
		fatal("notify.sock");
	if ((fd = sock_connect(path)) == -1) {
		log_debug("connect %s: %s", path, strerror(errno));
		if (ev_timer(RECONNECT_MS, approvald_connect, NULL) == 0)
			fatal("reconnect timer");
		return;
	}
	channel_init(&ch, fd);
	if (ev_add(fd, POLLIN, on_read, NULL) == -1)
		fatal("ev_add");
	log_info("notify.sock: connected");
	send_msg(MSG_NOTIFY_HELLO, NULL);
}

/* Event id reached webhook (its URL's SHA-256), or, with NULL, all. */
void
approvald_ack(const char *id, const char *webhook)
{
	json_t *j = json_pack("{s:s, s:s*}", "event_id", id, "webhook",
	    webhook);
	char *text = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;

	if (text == NULL)
		fatalx("out of memory");
	send_msg(MSG_NOTIFY_ACK, text);
	free(text);
	json_decref(j);
}
