/* SPDX-License-Identifier: ISC */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sock.h"

static int
sun_fill(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlcpy(sun->sun_path, path, sizeof(sun->sun_path)) >=
	    sizeof(sun->sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* unlink, umask, bind, chmod, listen: the socket is never wider than mode. */
int
sock_listen(const char *path, mode_t mode)
{
	struct sockaddr_un sun;
	mode_t old;
	int fd, saved;

	if (sun_fill(&sun, path) == -1)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	if (unlink(path) == -1 && errno != ENOENT)
		goto fail;
	old = umask(S_IXUSR | S_IXGRP | S_IRWXO);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		umask(old);
		goto fail;
	}
	umask(old);
	if (chmod(path, mode) == -1 || listen(fd, 128) == -1) {
		unlink(path);
		goto fail;
	}
	return fd;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

static int
connect_type(const char *path, int type)
{
	struct sockaddr_un sun;
	int fd, saved;

	if (sun_fill(&sun, path) == -1)
		return -1;
	if ((fd = socket(AF_UNIX, type, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int
sock_connect(const char *path)
{
	return connect_type(path, SOCK_STREAM | SOCK_CLOEXEC);
}

/* Never waits: a listener with a full backlog fails it with EAGAIN. */
int
sock_connect_nonblock(const char *path)
{
	return connect_type(path, SOCK_CONNECT_NONBLOCK);
}

/* SO_PEERCRED for the ids, SO_PEERGROUPS for every group of the peer. */
int
sock_peer(int fd, struct peer_cred *p)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);
	gid_t groups[PEER_MAXGROUPS];
	size_t i, n;

	memset(p, 0, sizeof(*p));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == -1)
		return -1;
	p->pid = uc.pid;
	p->uid = uc.uid;
	p->gid = uc.gid;
	p->groups[p->ngroups++] = uc.gid;
	len = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == -1) {
		/* More groups than we keep: decide on the primary one only. */
		if (errno == ERANGE)
			return 0;
		return -1;
	}
	n = len / sizeof(gid_t);
	for (i = 0; i < n && p->ngroups < PEER_MAXGROUPS; i++)
		p->groups[p->ngroups++] = groups[i];
	return 0;
}
