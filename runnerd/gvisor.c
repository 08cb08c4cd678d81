/*
 * The gvisor backend, engine side: checks that runsc is there, forks
 * the privileged launcher (launcher.c) before runnerd drops anything,
 * and turns start/kill into messages to it.  No fallback: without
 * runsc runnerd does not start.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "event.h"
#include "frame.h"
#include "launcher.h"
#include "log.h"

static struct channel	 launcher = { .fd = -1 };
static pid_t		 launcher_pid = -1;
static sbx_done_cb	 done_cb;
static sbx_swept_cb	 swept_cb;
static sbx_session_cb	 session_cb;

static void
launcher_update(void)
{
	ev_set(launcher.fd, POLLIN | (channel_pending(&launcher) ? POLLOUT : 0));
}

static void
launcher_event(int fd, short revents, void *arg)
{
	struct msg m;
	json_t *j;
	ssize_t n;
	int r;

	(void)fd;
	(void)arg;
	if ((revents & POLLOUT) && channel_flush(&launcher) == -1)
		fatal("launcher channel");
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		n = channel_read(&launcher);
		if (n == 0 || (n == -1 && errno != EAGAIN))
			fatalx("the sandbox launcher exited");
		while ((r = channel_get(&launcher, &m)) == 1) {
			if (m.fd != -1 || (m.hdr.type != LMSG_DONE &&
			    m.hdr.type != LMSG_SWEPT &&
			    m.hdr.type != LMSG_SESSION_READY &&
			    m.hdr.type != LMSG_SESSION_REPLY &&
			    m.hdr.type != LMSG_SESSION_ENDED))
				fatalx("launcher: unexpected message %u",
				    m.hdr.type);
			if ((j = json_loadb((const char *)m.data, m.len, 0,
			    NULL)) == NULL)
				fatalx("launcher: bad JSON");
			if (m.hdr.type == LMSG_DONE)
				done_cb(m.hdr.reqid, j);
			else if (m.hdr.type == LMSG_SWEPT)
				swept_cb(j);
			else
				session_cb(m.hdr.type == LMSG_SESSION_READY ?
				    SBX_SESSION_READY : m.hdr.type ==
				    LMSG_SESSION_REPLY ? SBX_SESSION_REPLY :
				    SBX_SESSION_ENDED, m.hdr.reqid, j);
			json_decref(j);
		}
		if (r == -1)
			fatalx("launcher: garbled frame");
	}
	launcher_update();
}

static void
mkdirs(const char *dir)
{
	char path[PATH_MAX], *p;

	if (strlcpy(path, dir, sizeof(path)) >= sizeof(path))
		fatalx("%s: path too long", dir);
	for (p = path + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(path, 0755) == -1 && errno != EEXIST)
			fatal("mkdir %s", path);
		*p = '/';
	}
	if (mkdir(path, 0700) == -1 && errno != EEXIST)
		fatal("mkdir %s", path);
}

static void
gvisor_init(const struct as_config *conf, sbx_done_cb done,
    sbx_swept_cb swept, sbx_session_cb session)
{
	char runsc_root[PATH_MAX];
	struct stat st;
	int sp[2];

	if (stat(conf->runnerd.runsc, &st) == -1 || !S_ISREG(st.st_mode) ||
	    access(conf->runnerd.runsc, X_OK) == -1)
		fatalx("gvisor backend: no runsc at %s: install the Debian "
		    "package runsc (apt-get install runsc), or set "
		    "runnerd.runsc; runnerd never runs tools without gVisor",
		    conf->runnerd.runsc);
	if (geteuid() != 0)
		fatalx("gvisor backend: runsc needs root; start runnerd as "
		    "root (it drops to runnerd.user itself)");
	done_cb = done;
	swept_cb = swept;
	session_cb = session;
	mkdirs(conf->runnerd.state_dir);
	if (pathf(runsc_root, sizeof(runsc_root), "%s/runsc",
	    conf->runnerd.state_dir) == -1)
		fatalx("state_dir too long");
	mkdirs(runsc_root);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1)
		fatal("socketpair");
	if ((launcher_pid = fork()) == -1)
		fatal("fork");
	if (launcher_pid == 0) {
		close(sp[0]);
		launcher_main(conf, sp[1]);
	}
	close(sp[1]);
	channel_init(&launcher, sp[0]);
	if (ev_add(sp[0], POLLIN, launcher_event, NULL) == -1)
		fatal("ev_add");
}

/* One message to the launcher; payload (taken) may be NULL. */
static int
launcher_send(uint32_t type, uint64_t id, int fd, json_t *payload)
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
	rv = channel_compose(&launcher, type, 0, id, fd, text,
	    text != NULL ? strlen(text) : 0);
	free(text);
	launcher_update();
	return rv;
}

static int
gvisor_start(const struct sbx_request *r)
{
	json_t *req;

	req = json_pack("{s:O, s:O*, s:O*, s:O*}", "argv", r->argv,
	    "files_in", r->files_in, "files_out", r->files_out, "egress",
	    r->egress);
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
	return launcher_send(LMSG_RUN, r->id, r->credfd, req);
}

static void
gvisor_kill(uint64_t id)
{
	if (launcher_send(LMSG_KILL, id, -1, NULL) == -1)
		log_warn("kill %016llx", (unsigned long long)id);
}

static int
gvisor_session_open(uint64_t key)
{
	return launcher_send(LMSG_SESSION_OPEN, key, -1, json_object());
}

static int
gvisor_session_call(uint64_t key, json_t *req)
{
	return launcher_send(LMSG_SESSION_CALL, key, -1, json_incref(req));
}

static void
gvisor_session_cancel(uint64_t key)
{
	if (launcher_send(LMSG_SESSION_CANCEL, key, -1, NULL) == -1)
		log_warn("cancel in session %016llx", (unsigned long long)key);
}

static void
gvisor_session_close(uint64_t key)
{
	if (launcher_send(LMSG_SESSION_CLOSE, key, -1, NULL) == -1)
		log_warn("close session %016llx", (unsigned long long)key);
}

/* Closing the channel tells the launcher to end every sandbox. */
static void
gvisor_stop(void)
{
	if (launcher.fd == -1)
		return;
	(void)channel_flush(&launcher);
	ev_del(launcher.fd);
	close(launcher.fd);
	channel_clear(&launcher);
	launcher.fd = -1;
	while (waitpid(launcher_pid, NULL, 0) == -1 && errno == EINTR)
		;
}

const struct backend gvisor_backend = {
	.name = "gvisor",
	.init = gvisor_init,
	.start = gvisor_start,
	.kill = gvisor_kill,
	.stop = gvisor_stop,
	.session_open = gvisor_session_open,
	.session_call = gvisor_session_call,
	.session_cancel = gvisor_session_cancel,
	.session_close = gvisor_session_close,
};
