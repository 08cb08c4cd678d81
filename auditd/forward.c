/* SPDX-License-Identifier: ISC */
/*
 * Syslog over datagrams (RFC 5424 messages; RFC 5426 for UDP), to a
 * Unix socket path or to udp:127.0.0.1:PORT: the checkpoints' outside
 * witness, and optionally every record for a SIEM.  A datagram is sent
 * or lost, never waited for: a receiver that is down or slow costs the
 * log nothing, and says so in auditd's own log.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auditd.h"
#include "log.h"

/*
 * UDP keeps 65507 bytes; RFC 5426 section 3.2 asks receivers to take
 * at least 2048, and common ones take 64 KiB.
 */
#define FORWARD_MAX	65000

/*
 * Opened before the sandbox: target is a socket path, or
 * udp:127.0.0.1:PORT (loopback only: the witness is a local relay).
 */
int
forward_open(struct forward *fw, const char *target)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&fw->addr;
	struct sockaddr_un *sun = (struct sockaddr_un *)&fw->addr;
	const char *port;
	char *end;
	long p;

	memset(fw, 0, sizeof(*fw));
	fw->fd = -1;
	fw->target = target;
	if (target[0] == '\0')
		return 0;
	if (strncmp(target, "udp:", 4) == 0) {
		if ((port = strrchr(target + 4, ':')) == NULL ||
		    (size_t)(port - target - 4) != strlen("127.0.0.1") ||
		    strncmp(target + 4, "127.0.0.1", 9) != 0 ||
		    (p = strtol(port + 1, &end, 10)) < 1 || p > 65535 ||
		    *end != '\0') {
			errno = EINVAL;
			return -1;
		}
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)p);
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fw->len = sizeof(*sin);
	} else {
		sun->sun_family = AF_UNIX;
		if (strlcpy(sun->sun_path, target, sizeof(sun->sun_path)) >=
		    sizeof(sun->sun_path)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		fw->len = sizeof(*sun);
	}
	/* Unconnected: a restarted receiver is found again. */
	fw->fd = socket(fw->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0);
	return fw->fd == -1 ? -1 : 0;
}

/*
 * One message: <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG
 * (RFC 5424 section 6), PRI 110 (facility 13, log audit; severity 6,
 * informational).  A msg too long for one datagram is not cut: it is
 * replaced by a note of its length, so that what arrives is whole JSON.
 */
void
forward_send(struct forward *fw, const char *msgid, const char *time,
    const char *msg, size_t len)
{
	char head[128], *buf;
	int n;

	if (fw->fd == -1)
		return;
	n = snprintf(head, sizeof(head), "<110>1 %s - auditd %d %s - ",
	    time != NULL && *time != '\0' ? time : "-", (int)getpid(), msgid);
	if (n < 0 || (size_t)n >= sizeof(head))
		return;
	if ((size_t)n + len > FORWARD_MAX) {
		fw->toolong++;
		log_warnx("%s: a %zu-byte %s not forwarded (too long for a "
		    "datagram)", fw->target, len, msgid);
		return;
	}
	if ((buf = malloc((size_t)n + len)) == NULL)
		return;
	memcpy(buf, head, (size_t)n);
	memcpy(buf + n, msg, len);
	if (sendto(fw->fd, buf, (size_t)n + len, 0,
	    (struct sockaddr *)&fw->addr, fw->len) == -1) {
		/* Said once per run of failures, not once per record. */
		if (!fw->failing)
			log_warn("%s: not forwarded", fw->target);
		fw->failing = 1;
	} else
		fw->failing = 0;
	free(buf);
}
