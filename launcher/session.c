/* SPDX-License-Identifier: ISC */
/*
 * Session sandboxes on gvisor: each is a long-lived runsc sandbox whose
 * one process is the session agent (bound read-only at AGENT_MOUNT),
 * spoken to over a socketpair that is its stdin and stdout.  Limits,
 * bundle and cleanup are those of a one-shot sandbox; the protocol and
 * the warm pool are sessbox.c's.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sessbox.h"

#define START_MS	30000	/* the agent says ready, or the sandbox goes */

static const struct as_config	*conf;
static const char		*rootfs;
static int			 agent_ok;

static int
runsc_spawn(struct sess *s, int *fd)
{
	json_t *req;
	int sp[2], null, rv;

	if (!agent_ok) {
		errno = ENOENT;
		return -1;
	}
	if (pathf(s->dir, sizeof(s->dir), "%s/bundles/%s",
	    conf->runnerd.state_dir, s->cid) == -1)
		return -1;
	req = json_pack("{s:o, s:b}", "argv", sessbox_agent_argv(conf,
	    AGENT_MOUNT, "/work"), "session", 1);
	rv = req == NULL || cgroup_create(conf, s->cid) == -1 ||
	    bundle_create(conf, s->dir, s->cid, rootfs, req, -1) == -1 ? -1 : 0;
	json_decref(req);
	if (rv == -1)
		return -1;
	/* What the agent writes to stderr is nobody's business. */
	if ((null = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1) {
		close(null);
		return -1;
	}
	if ((s->pid = fork()) == -1) {
		close(null);
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	if (s->pid == 0)
		runsc_exec(conf, s->dir, s->cid, sp[1], sp[1], null, -1);
	close(null);
	close(sp[1]);
	*fd = sp[0];
	return 0;
}

static void
runsc_stop(struct sess *s)
{
	cgroup_kill(s->cid);
}

static const char *
runsc_exit_why(struct sess *s, int status)
{
	(void)status;
	return cgroup_hit_memory_limit(s->cid) ?
	    "the session sandbox reached its memory limit" : NULL;
}

/* Removes what the sandbox made, once runsc is gone. */
static void
runsc_cleanup(struct sess *s)
{
	(void)runsc_cmd(conf, NULL, 0, "delete", "--force", s->cid, NULL);
	cgroup_remove(s->cid);
	if (s->dir[0] != '\0' && bundle_remove(s->dir) == -1)
		log_warn("session %s: remove %s", s->cid, s->dir);
}

static void
runsc_shutdown(struct sess *s)
{
	if (s->key != 0)
		journal_note(s->origin, s->session);
	cgroup_kill(s->cid);
	if (s->pid > 0)
		kill(s->pid, SIGKILL);
}

static struct sessbox_ops runsc_ops = {
	.spawn = runsc_spawn,
	.stop = runsc_stop,
	.exit_why = runsc_exit_why,
	.cleanup = runsc_cleanup,
	.shutdown = runsc_shutdown,
	.start_ms = START_MS,
	.warm_here = 1,
};

void
launcher_sessions(const struct as_config *c, const char *root)
{
	struct stat st;

	conf = c;
	rootfs = root;
	agent_ok = stat(conf->runnerd.session_agent, &st) == 0 &&
	    S_ISREG(st.st_mode);
	if (!agent_ok)
		log_warnx("no session agent at %s: session tools will fail",
		    conf->runnerd.session_agent);
	runsc_ops.pool = conf->runnerd.warm_pool;
	sessbox_init(conf, &runsc_ops);
}
