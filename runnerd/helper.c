/* SPDX-License-Identifier: ISC */
/*
 * The engine's end of the channel to a backend's helper: the process
 * started before runnerd sandboxes itself, because it keeps what the
 * engine gives up (root for runsc; the network and libcurl's syscalls
 * for a cluster).  It is runnerd re-executed (helperlib/exec.c), so
 * that it has nothing of the engine's: not its descriptors, not its
 * memory layout.  Both backends speak LMSG_* frames (proto.h) over a
 * socketpair.  One backend runs per runnerd, so there is one channel.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "backend.h"
#include "event.h"
#include "frame.h"
#include "launcher.h"
#include "log.h"

static struct channel	 helper = { .fd = -1 };
static pid_t		 helper_pid = -1;
static const char	*helper_name;
static sbx_done_cb	 done_cb;
static sbx_swept_cb	 swept_cb;
static sbx_session_cb	 session_cb;
static sbx_progress_cb	 progress_cb;

static void
helper_update(void)
{
	ev_set(helper.fd, POLLIN | (channel_pending(&helper) ? POLLOUT : 0));
}

/* The session event a message reports, or -1 when it reports none. */
static int
helper_session_event(uint32_t type)
{
	switch (type) {
	case LMSG_SESSION_READY:
		return SBX_SESSION_READY;
	case LMSG_SESSION_REPLY:
		return SBX_SESSION_REPLY;
	case LMSG_SESSION_ENDED:
		return SBX_SESSION_ENDED;
	}
	return -1;
}

/*
 * The helper is part of runnerd: a message it should not send means the
 * two disagree, and carrying on would lose track of what runs.
 */
static void
helper_dispatch(const struct msg *m)
{
	json_t *j;
	int ev = helper_session_event(m->hdr.type);

	if (m->fd != -1 || (m->hdr.type != LMSG_DONE &&
	    m->hdr.type != LMSG_SWEPT && (m->hdr.type != LMSG_PROGRESS ||
	    progress_cb == NULL) && (ev == -1 || session_cb == NULL)))
		fatalx("%s: unexpected message %u", helper_name, m->hdr.type);
	/* A result's output may hold NULs. */
	if ((j = json_loadb((const char *)m->data, m->len, JSON_ALLOW_NUL,
	    NULL)) == NULL)
		fatalx("%s: bad JSON", helper_name);
	if (m->hdr.type == LMSG_DONE)
		done_cb(m->hdr.reqid, j);
	else if (m->hdr.type == LMSG_PROGRESS)
		progress_cb(m->hdr.reqid, j);
	else if (m->hdr.type == LMSG_SWEPT)
		swept_cb(j);
	else
		session_cb(ev, m->hdr.reqid, j);
	json_decref(j);
}

static void
helper_event(int fd, short revents, void *arg)
{
	struct msg m;
	ssize_t n;
	int r;

	(void)fd;
	(void)arg;
	if ((revents & POLLOUT) && channel_flush(&helper) == -1)
		fatal("%s channel", helper_name);
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		n = channel_read(&helper);
		if (n == 0 || (n == -1 && errno != EAGAIN))
			fatalx("the %s exited", helper_name);
		while ((r = channel_get(&helper, &m)) == 1)
			helper_dispatch(&m);
		if (r == -1)
			fatalx("%s: garbled frame", helper_name);
	}
	helper_update();
}

/*
 * In the child: runnerd again, as `runnerd role [-d] [-v...]`, with the
 * channel on HELPER_CHANNEL_FD and nothing else above stdio.
 * /proc/self/exe is the engine's own image, also when the file it
 * was started from has been replaced since.
 */
static __attribute__((noreturn)) void
helper_exec(const char *role, int fd)
{
	char *argv[8];
	int argc = 0, v;

	argv[argc++] = "runnerd";
	argv[argc++] = (char *)role;
	if (log_getforeground())
		argv[argc++] = "-d";
	for (v = log_getverbose(); v > 0 && argc < 7; v--)
		argv[argc++] = "-v";
	argv[argc] = NULL;
	/* dup2 onto itself would keep the pair's close-on-exec. */
	if ((fd != HELPER_CHANNEL_FD && dup2(fd, HELPER_CHANNEL_FD) == -1) ||
	    fcntl(HELPER_CHANNEL_FD, F_SETFD, 0) == -1)
		log_warn("helper channel");
	else {
		closefrom(HELPER_CHANNEL_FD + 1);
		execv("/proc/self/exe", argv);
		log_warn("exec runnerd %s", role);
	}
	/* The engine sees the channel close and stops. */
	_exit(127);
}

/*
 * Starts the helper, runnerd with role (-L, -K), and hands it conf.  A
 * backend without sessions passes session NULL, one without phases
 * progress NULL.
 */
void
helper_start(const char *name, const struct as_config *conf,
    const char *role, sbx_done_cb done, sbx_swept_cb swept,
    sbx_session_cb session, sbx_progress_cb progress)
{
	int fd;

	helper_name = name;
	done_cb = done;
	swept_cb = swept;
	session_cb = session;
	progress_cb = progress;
	if ((helper_pid = fork_paired(&fd)) == -1)
		fatal("%s", name);
	if (helper_pid == 0)
		helper_exec(role, fd);
	channel_init(&helper, fd);
	if (channel_send_sync(&helper, LMSG_CONFIG, 0, -1, conf,
	    sizeof(*conf), -1) == -1)
		fatal("%s: the configuration", name);
	if (ev_add(fd, POLLIN, helper_event, NULL) == -1)
		fatal("ev_add");
}

/* One message to the helper; payload (taken) may be NULL, fd is taken. */
int
helper_send(uint32_t type, uint64_t id, int fd, json_t *payload)
{
	char *text = NULL;
	int rv;

	if (payload != NULL && (text = json_dumps(payload, JSON_COMPACT)) ==
	    NULL) {
		json_decref(payload);
		if (fd != -1)
			close(fd);
		return -1;
	}
	json_decref(payload);
	rv = channel_compose(&helper, type, 0, id, fd, text,
	    text != NULL ? strlen(text) : 0);
	free(text);
	helper_update();
	return rv;
}

/* LMSG_RUN: the request as one JSON object, terraform's keys in it. */
int
helper_run(const struct sbx_request *r)
{
	json_t *req;

	req = json_pack("{s:O, s:O*, s:O*, s:O*, s:b}", "argv", r->argv,
	    "files_in", r->files_in, "files_out", r->files_out, "egress",
	    r->egress, "agent_code", r->agent_code);
	if (req != NULL && r->workspace != NULL &&
	    json_object_update(req, r->workspace) == -1) {
		json_decref(req);
		req = NULL;
	}
	if (req == NULL) {
		if (r->credfd != -1)
			close(r->credfd);
		return -1;
	}
	return helper_send(LMSG_RUN, r->id, r->credfd, req);
}

/* Sessions, either backend's: the helper's sessbox.c answers. */
int
helper_session_open(uint64_t key, uint64_t origin, const char *id)
{
	char rid[REQID_STR_LEN];

	reqid_format(origin, rid);
	return helper_send(LMSG_SESSION_OPEN, key, -1, json_pack("{s:s, s:s}",
	    "origin", rid, "session_id", id));
}

int
helper_session_call(uint64_t key, json_t *req)
{
	return helper_send(LMSG_SESSION_CALL, key, -1, json_incref(req));
}

void
helper_session_cancel(uint64_t key)
{
	if (helper_send(LMSG_SESSION_CANCEL, key, -1, NULL) == -1)
		log_warn("cancel in session %016llx", (unsigned long long)key);
}

void
helper_session_close(uint64_t key)
{
	if (helper_send(LMSG_SESSION_CLOSE, key, -1, NULL) == -1)
		log_warn("close session %016llx", (unsigned long long)key);
}

/* The journal the helper left at start is recorded: it may go. */
void
helper_journal_recorded(void)
{
	if (helper_send(LMSG_JOURNAL_DONE, 0, -1, NULL) == -1)
		log_warn("%s: journal", helper_name);
}

void
helper_kill(uint64_t id)
{
	if (helper_send(LMSG_KILL, id, -1, NULL) == -1)
		log_warn("kill %016llx", (unsigned long long)id);
}

/* Closing the channel tells the helper to end what runs and clean up. */
void
helper_stop(void)
{
	if (helper.fd == -1)
		return;
	(void)channel_flush(&helper);
	ev_del(helper.fd);
	close(helper.fd);
	channel_clear(&helper);
	helper.fd = -1;
	while (waitpid(helper_pid, NULL, 0) == -1 && errno == EINTR)
		;
}
