/* SPDX-License-Identifier: ISC */
/*
 * approvalctl watch: the live approvals, then each change, as approvald
 * streams them.  With --exec, a helper forked before the sandbox runs
 * the command once per approval the watch sees pending for the first
 * time; the sandboxed side, which reads what came from the agent,
 * can neither fork nor exec and only writes the record down a pipe.
 */
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "approvalctl.h"
#include "ctl.h"
#include "log.h"

#define PENDING_MAX	4096	/* ids kept to run the command once each */

static int	 exec_pipe = -1;	/* to the helper; -1 without --exec */
static char	 pending[PENDING_MAX][40];

/*
 * One run of cmd under /bin/sh with the record on its stdin and the
 * id, tool and state in its environment; the next waits for it.
 */
static void
run_command(const char *cmd, const char *line)
{
	json_t *e;
	pid_t pid;
	int p[2], status;

	if ((e = json_loads(line, 0, NULL)) == NULL)
		return;
	if (pipe(p) == -1) {
		log_warn("pipe");
		json_decref(e);
		return;
	}
	if ((pid = fork()) == -1) {
		log_warn("fork");
		close(p[0]);
		close(p[1]);
		json_decref(e);
		return;
	}
	if (pid == 0) {
		if (dup2(p[0], STDIN_FILENO) == -1)
			_exit(127);
		close(p[0]);
		close(p[1]);
		setenv("APPROVAL_ID", ctl_str(e, "approval_id"), 1);
		setenv("APPROVAL_TOOL", ctl_str(e, "tool"), 1);
		setenv("APPROVAL_STATE", ctl_str(e, "state"), 1);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	(void)!write(p[1], line, strlen(line));
	close(p[1]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		log_warnx("--exec: status %d for %s", status,
		    ctl_str(e, "approval_id"));
	json_decref(e);
}

/* The helper: one record a line from the pipe until the watch ends. */
static __attribute__((noreturn)) void
exec_helper(int fd, const char *cmd)
{
	FILE *in;
	char *line = NULL;
	size_t len = 0;

	signal(SIGPIPE, SIG_IGN);
	if ((in = fdopen(fd, "r")) == NULL)
		fatal("fdopen");
	while (getline(&line, &len, in) != -1)
		run_command(cmd, line);
	_exit(0);
}

/* Before the sandbox: the helper that runs cmd. */
void
watch_exec_start(const char *cmd)
{
	int p[2];
	pid_t pid;

	if (pipe(p) == -1)
		fatal("pipe");
	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid == 0) {
		close(p[1]);
		exec_helper(p[0], cmd);
	}
	close(p[0]);
	exec_pipe = p[1];
}

/*
 * 1 the first time id is seen pending; a later state forgets it, so
 * the set holds the approvals now pending.
 */
static int
first_pending(const char *id, const char *state)
{
	size_t i, slot = PENDING_MAX;
	int is_pending = strcmp(state, "pending") == 0;

	for (i = 0; i < PENDING_MAX; i++) {
		if (strcmp(pending[i], id) == 0) {
			if (!is_pending)
				pending[i][0] = '\0';
			return 0;
		}
		if (pending[i][0] == '\0' && slot == PENDING_MAX)
			slot = i;
	}
	if (!is_pending)
		return 0;
	if (slot < PENDING_MAX)
		strlcpy(pending[slot], id, sizeof(pending[slot]));
	return 1;
}

static void
exec_for(const json_t *e)
{
	char *line;

	if (exec_pipe == -1 || !first_pending(ctl_str(e, "approval_id"),
	    ctl_str(e, "state")))
		return;
	/* ASCII: nothing from the agent reaches the command raw. */
	if ((line = json_dumps(e, JSON_COMPACT | JSON_ENSURE_ASCII)) == NULL)
		fatalx("out of memory");
	if (write(exec_pipe, line, strlen(line)) == -1 ||
	    write(exec_pipe, "\n", 1) == -1)
		fatal("--exec helper");
	free(line);
}

int
watch(struct channel *ch, const struct output *out)
{
	struct msg m;
	json_t *e;

	if (channel_send_sync(ch, MSG_CTL_WATCH, 0, -1, NULL, 0,
	    CTL_TIMEOUT_MS) == -1)
		fatal("watch");
	for (;;) {
		if (channel_recv_sync(ch, &m, -1) == -1)
			fatal("watch");
		if (ctl_error(&m))
			return 1;
		e = ctl_entry(&m, MSG_CTL_ENTRY);
		out->event(e);
		exec_for(e);
		json_decref(e);
	}
}
