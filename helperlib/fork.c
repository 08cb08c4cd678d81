/* SPDX-License-Identifier: ISC */
/*
 * The one way runnerd's processes start a child they talk to: the
 * engine its helper (runnerd/helper.c), the launcher its egress proxy,
 * the kubernetes helper its claim keeper and session workers.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <unistd.h>

#include "launcher.h"

/*
 * fork(2) with a socketpair between parent and child: the child's pid
 * in the parent, 0 in the child, and *fd the caller's end in each; -1
 * with nothing left open when either call fails.
 */
pid_t
fork_paired(int *fd)
{
	int sp[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	close(sp[pid == 0 ? 0 : 1]);
	*fd = sp[pid == 0 ? 1 : 0];
	return pid;
}
