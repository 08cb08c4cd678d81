/* SPDX-License-Identifier: ISC */
/*
 * Which phase a one-shot sandbox is in, for the call's progress.  The
 * request names its phases in order ("phases", tool_terraform.c); the
 * script's shell announces each one on its stdin, a socket to here,
 * and starts the phase's command with stdin from /dev/null, so that
 * the module code terraform runs does not hold the socket.  Only a
 * phase later in the list than the last one counts (a script may skip
 * one: init, when the init cache served), once, and anything else is
 * dropped: since module code runs only in a script's last phase, no
 * phase is left for it to announce early, twice or out of order.  Phases the
 * launcher drives itself (the render) it reports with phase_report.
 *
 * The one exception is a plan's last, "render": the shell says it when
 * terraform plan has exited 0, and the launcher's hook starts the
 * render then, while gVisor tears the sandbox down (launcher.c).
 * Module code that said it early (it would have to reach the shell's
 * stdin first) would only make its own plan be taken early: what is
 * taken then is the plan that is rendered, kept and shown, and it
 * counts only if the sandbox then exits 0.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "event.h"
#include "launcher.h"
#include "log.h"

/* A request's phases: an array of short lowercase words, or none. */
int
phase_request_ok(const json_t *names)
{
	const char *s;
	json_t *v;
	size_t i;

	if (names == NULL)
		return 1;
	if (!json_is_array(names) || json_array_size(names) > 8)
		return 0;
	json_array_foreach(names, i, v) {
		if ((s = json_string_value(v)) == NULL || *s == '\0' ||
		    strlen(s) >= PHASE_NAME_MAX ||
		    strspn(s, "abcdefghijklmnopqrstuvwxyz") != strlen(s))
			return 0;
	}
	return 1;
}

/*
 * name starts: the script's shell said so, or the launcher, whose own
 * phases may be in the list too (the render).  Once each: a phase in
 * the list that has passed is not reported again.
 */
void
phase_report(struct phase *p, const char *name)
{
	const char *want;
	size_t n;

	for (n = 0; (want = json_string_value(json_array_get(p->names, n))) !=
	    NULL; n++)
		if (strcmp(want, name) == 0) {
			if (n < p->next)
				return;
			p->next = n + 1;
			break;
		}
	engine_send(LMSG_PROGRESS, p->id, json_pack("{s:s}", "phase", name));
	if (p->hook != NULL)
		p->hook(p->hook_arg, name);
}

/* Takes what the shell wrote: each line the next phase, or nothing. */
void
phase_read(struct phase *p)
{
	char chunk[256];
	const char *want;
	size_t n;
	ssize_t i, r;

	if (p->fd == -1)
		return;
	while ((r = read(p->fd, chunk, sizeof(chunk))) > 0) {
		for (i = 0; i < r; i++) {
			if (chunk[i] != '\n') {
				if (p->len < sizeof(p->line) - 1)
					p->line[p->len++] = chunk[i];
				else
					p->junk = 1;	/* no phase is so long */
				continue;
			}
			p->line[p->len] = '\0';
			for (n = p->next; !p->junk &&
			    (want = json_string_value(json_array_get(p->names,
			    n))) != NULL; n++)
				if (strcmp(p->line, want) == 0) {
					phase_report(p, want);
					break;
				}
			p->len = 0;
			p->junk = 0;
		}
	}
	if (r == 0 || (errno != EAGAIN && errno != EINTR))
		phase_close(p);
}

static void
phase_event(int fd, short revents, void *arg)
{
	(void)fd;
	(void)revents;
	phase_read(arg);
}

/*
 * Reads phases from fd, the launcher's end of the sandbox's stdin
 * socket, which nothing more is written to.
 */
int
phase_adopt(struct phase *p, uint64_t id, json_t *names, int fd)
{
	memset(p, 0, sizeof(*p));
	p->fd = -1;
	p->id = id;
	if (shutdown(fd, SHUT_WR) == -1 ||
	    fcntl(fd, F_SETFL, O_NONBLOCK) == -1 ||
	    ev_add(fd, POLLIN, phase_event, p) == -1)
		return -1;
	p->fd = fd;
	p->names = names;
	return 0;
}

/*
 * The sandbox's stdin in *in: -1 (/dev/null) when the request names no
 * phases, else its end of a socket whose other end is read here.
 */
int
phase_open(struct phase *p, uint64_t id, json_t *names, int *in)
{
	int sp[2];

	memset(p, 0, sizeof(*p));
	p->fd = *in = -1;
	p->id = id;
	if (json_array_size(names) == 0)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1)
		return -1;
	/* One way: the sandbox reads nothing from its stdin. */
	if (phase_adopt(p, id, names, sp[0]) == -1) {
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	*in = sp[1];
	return 0;
}

void
phase_close(struct phase *p)
{
	if (p->fd == -1)
		return;
	ev_del(p->fd);
	close(p->fd);
	p->fd = -1;
}
