/* SPDX-License-Identifier: ISC */
/* Unix stream sockets: listen, connect, and who is on the other end. */
#ifndef AS_SOCK_H
#define AS_SOCK_H

#include <sys/types.h>
#include <sys/socket.h>

#define PEER_MAXGROUPS	64

/* Linux 6.16: 0 refuses descriptors sent to the socket (EPERM). */
#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS	83
#endif

/* sock_connect_nonblock's socket type, which mcpd's seccomp filter admits. */
#define SOCK_CONNECT_NONBLOCK	(SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC)

struct peer_cred {
	pid_t		pid;
	uid_t		uid;
	gid_t		gid;
	gid_t		groups[PEER_MAXGROUPS];	/* primary and supplementary */
	size_t		ngroups;
};

int	 sock_listen(const char *, mode_t);
int	 sock_connect(const char *);
int	 sock_connect_nonblock(const char *);
int	 sock_peer(int, struct peer_cred *);

#endif
