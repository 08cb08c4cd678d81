/* Unix stream sockets: listen, connect, and who is on the other end. */
#ifndef AS_SOCK_H
#define AS_SOCK_H

#include <sys/types.h>

#define PEER_MAXGROUPS	64

struct peer_cred {
	pid_t		pid;
	uid_t		uid;
	gid_t		gid;
	gid_t		groups[PEER_MAXGROUPS];	/* primary and supplementary */
	size_t		ngroups;
};

int	 sock_listen(const char *, mode_t);
int	 sock_connect(const char *);
int	 sock_peer(int, struct peer_cred *);

#endif
