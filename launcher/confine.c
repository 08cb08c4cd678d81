/* SPDX-License-Identifier: ISC */
/*
 * The launcher's reads of trees an agent can write, each in a child
 * held by Landlock to the paths it needs (issue 14).
 *
 * The launcher itself stays outside Landlock, because what it runs
 * cannot work in a Landlock domain: the kernel refuses mount(2),
 * umount(2) and pivot_root(2) to any process whose domain handles
 * filesystem access, in every mount namespace (Landlock's "filesystem
 * topology modification" rule), and a domain is inherited by every
 * child and exec.  runsc's gofer and sandbox pivot_root into their own
 * roots and bwrap (launcher/render.c) mounts the render's root; both fail with
 * EPERM under any ruleset.  So the launcher process reads no agent
 * tree itself: seeding a workspace, and collecting files, state and
 * plans from it, run here, in a child whose Landlock domain reads only
 * the tree in hand and runnerd's terraform state, and whose seccomp
 * filter (the claim keeper's) allows file calls only: no socket, no
 * exec.  /etc/shadow, /root and other homes are out of its reach, even
 * were a path followed where it must not be.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "launcher.h"
#include "sandbox.h"

/* json_loadfd reads a byte a call; this, as much as the pipe holds. */
static size_t
reply_read(void *buf, size_t len, void *arg)
{
	ssize_t n;

	while ((n = read(*(int *)arg, buf, len)) == -1 && errno == EINTR)
		;
	return n < 0 ? (size_t)-1 : (size_t)n;
}

/*
 * fn(arg) in a child confined to paths; its object comes back (NULL
 * when the child ended without one, status in why).  The object is the
 * child's last act, so the caller goes on once it is whole: a process's
 * exit costs about 8 ms on this kind of machine, and a terraform plan
 * waits for four of these children.  The launcher's SIGCHLD handler
 * reaps the child then (launcher_reap passes over pids it does not own).
 */
json_t *
confined_run(const struct as_config *c, const struct sandbox_paths *paths,
    json_t *(*fn)(void *), void *arg, char *why, size_t whylen)
{
	json_t *reply;
	pid_t pid;
	int p[2], status;

	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(why, whylen, "confined child: %s", strerror(errno));
		return NULL;
	}
	if ((pid = fork()) == -1) {
		snprintf(why, whylen, "confined child: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return NULL;
	}
	if (pid == 0) {
		close(p[0]);
		sandbox_enter(ROLE_CLAIM, paths, daemon_trap(c));
		reply = fn(arg);
		_exit(reply == NULL || json_dumpfd(reply, p[1],
		    JSON_COMPACT) == -1);
	}
	close(p[1]);
	reply = json_load_callback(reply_read, &p[0], JSON_DISABLE_EOF_CHECK,
	    NULL);
	close(p[0]);
	if (json_is_object(reply))
		return reply;
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	json_decref(reply);
	snprintf(why, whylen, "the confined child ended abnormally "
	    "(status %#x)", status);
	return NULL;
}
