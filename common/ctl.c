#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "log.h"
#include "sock.h"

/* Loads the configuration and connects to sockname under its runtime dir. */
void
ctl_open(struct channel *ch, const char *conffile, const char *sockname,
    struct as_config *conf)
{
	char path[PATH_MAX], err[1024];
	int fd;

	if (config_load(conffile, conf, err, sizeof(err)) == -1)
		fatalx("%s", err);
	if (config_socket_path(conf, sockname, path, sizeof(path)) == -1)
		fatal("%s", sockname);
	if ((fd = sock_connect(path)) == -1)
		fatal("connect %s", path);
	channel_init(ch, fd);
}

/* A MSG_ERROR reply: prints the daemon's reason and returns 1. */
int
ctl_error(const struct msg *m)
{
	const struct msg_error *e;

	if (m->hdr.type != MSG_ERROR)
		return 0;
	if (m->len != sizeof(*e)) {
		log_warnx("malformed error reply");
		return 1;
	}
	e = (const struct msg_error *)m->data;
	log_warnx("%.*s", (int)sizeof(e->text), e->text);
	return 1;
}

/*
 * Sends one request and waits for the first reply frame.  A refused
 * peer may find the socket closed while sending: the daemon's reason
 * is still there to read.
 */
int
ctl_request(struct channel *ch, uint32_t type, const void *data, size_t len,
    struct msg *m)
{
	int sent;

	sent = channel_send_sync(ch, type, 0, -1, data, len, CTL_TIMEOUT_MS);
	if (channel_recv_sync(ch, m, CTL_TIMEOUT_MS) == -1) {
		log_warn("%s", msg_type_name(type));
		return -1;
	}
	if (ctl_error(m))
		return -1;
	if (sent == -1) {
		log_warn("%s", msg_type_name(type));
		return -1;
	}
	return 0;
}

int
ctl_ping(struct channel *ch)
{
	const struct msg_pong *p;
	struct msg m;

	if (ctl_request(ch, MSG_PING, NULL, 0, &m) == -1)
		return 1;
	if (m.hdr.type != MSG_PONG || m.len != sizeof(*p)) {
		log_warnx("unexpected %s reply", msg_type_name(m.hdr.type));
		return 1;
	}
	p = (const struct msg_pong *)m.data;
	printf("%.*s pid %u protocol %u: alive\n", (int)sizeof(p->proc),
	    p->proc, p->pid, p->version);
	return 0;
}
