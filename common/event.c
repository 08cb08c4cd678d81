/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "event.h"
#include "log.h"
#include "platform.h"

struct ev_fd {
	int		 fd;
	short		 events;
	ev_fd_cb	 cb;
	void		*arg;
};

struct ev_tm {
	uint64_t	 id;
	int64_t		 when;
	ev_timer_cb	 cb;
	void		*arg;
};

static struct ev_fd	*evs;
static size_t		 nevs, cevs;
static struct ev_tm	*tms;
static size_t		 ntms, ctms;
static uint64_t		 next_timer_id = 1;
static int		 ev_stop;
static int		 sigfd = -1;
static ev_signal_cb	 sig_cb;
static void		*sig_arg;

static int64_t
clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* For timers: never steps. */
int64_t
ev_now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

/* Milliseconds since the epoch, for records that outlive the process. */
int64_t
ev_wall_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

void
ev_init(void)
{
	nevs = ntms = 0;
	ev_stop = 0;
}

int
ev_add(int fd, short events, ev_fd_cb cb, void *arg)
{
	struct ev_fd *n;

	if (nevs == cevs) {
		n = reallocarray(evs, cevs ? cevs * 2 : 16, sizeof(*n));
		if (n == NULL)
			return -1;
		evs = n;
		cevs = cevs ? cevs * 2 : 16;
	}
	evs[nevs].fd = fd;
	evs[nevs].events = events;
	evs[nevs].cb = cb;
	evs[nevs].arg = arg;
	nevs++;
	return 0;
}

void
ev_set(int fd, short events)
{
	size_t i;

	for (i = 0; i < nevs; i++)
		if (evs[i].fd == fd)
			evs[i].events = events;
}

/* Safe from inside a callback: the slot is only marked, then compacted. */
void
ev_del(int fd)
{
	size_t i;

	for (i = 0; i < nevs; i++)
		if (evs[i].fd == fd) {
			evs[i].fd = -1;
			evs[i].cb = NULL;
		}
}

uint64_t
ev_timer(long ms, ev_timer_cb cb, void *arg)
{
	struct ev_tm *n;

	if (ntms == ctms) {
		n = reallocarray(tms, ctms ? ctms * 2 : 16, sizeof(*n));
		if (n == NULL)
			fatal("ev_timer");
		tms = n;
		ctms = ctms ? ctms * 2 : 16;
	}
	tms[ntms].id = next_timer_id++;
	tms[ntms].when = ev_now_ms() + ms;
	tms[ntms].cb = cb;
	tms[ntms].arg = arg;
	return tms[ntms++].id;
}

void
ev_timer_cancel(uint64_t id)
{
	size_t i;

	for (i = 0; i < ntms; i++)
		if (tms[i].id == id) {
			tms[i] = tms[--ntms];
			return;
		}
}

static void
ev_signal_read(int fd, short revents, void *arg)
{
	int sig;

	(void)revents;
	(void)arg;
	while ((sig = plat_signal_next(fd)) != 0)
		sig_cb(sig, sig_arg);
}

/* Blocks the signals in list (0-terminated) and delivers them to cb. */
int
ev_signals(const int *list, ev_signal_cb cb, void *arg)
{
	sigset_t set;

	sigemptyset(&set);
	for (; *list != 0; list++)
		sigaddset(&set, *list);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		return -1;
	if ((sigfd = plat_signal_fd(&set)) == -1)
		return -1;
	sig_cb = cb;
	sig_arg = arg;
	return ev_add(sigfd, POLLIN, ev_signal_read, NULL);
}

void
ev_break(void)
{
	ev_stop = 1;
}

static void
ev_compact(void)
{
	size_t i, j;

	for (i = j = 0; i < nevs; i++)
		if (evs[i].fd != -1)
			evs[j++] = evs[i];
	nevs = j;
}

static int
ev_timeout(void)
{
	int64_t soonest = -1, now, left;
	size_t i;

	for (i = 0; i < ntms; i++)
		if (soonest == -1 || tms[i].when < soonest)
			soonest = tms[i].when;
	if (soonest == -1)
		return -1;
	now = ev_now_ms();
	left = soonest - now;
	return left < 0 ? 0 : (left > 60000 ? 60000 : (int)left);
}

static void
ev_run_timers(void)
{
	struct ev_tm t;
	int64_t now = ev_now_ms();
	size_t i;

	for (i = 0; i < ntms; ) {
		if (tms[i].when > now) {
			i++;
			continue;
		}
		t = tms[i];
		tms[i] = tms[--ntms];
		t.cb(t.arg);
		if (ev_stop)
			return;
	}
}

int
ev_loop(void)
{
	struct pollfd *pfds = NULL;
	size_t i, n;
	int r;

	while (!ev_stop) {
		ev_compact();
		n = nevs;
		free(pfds);
		if ((pfds = calloc(n ? n : 1, sizeof(*pfds))) == NULL)
			return -1;
		for (i = 0; i < n; i++) {
			pfds[i].fd = evs[i].fd;
			pfds[i].events = evs[i].events;
		}
		r = poll(pfds, n, ev_timeout());
		if (r == -1) {
			if (errno == EINTR)
				continue;
			free(pfds);
			return -1;
		}
		for (i = 0; i < n && !ev_stop; i++) {
			/* Callbacks may add or delete: match by descriptor. */
			if (pfds[i].revents == 0 || i >= nevs ||
			    evs[i].fd != pfds[i].fd || evs[i].cb == NULL)
				continue;
			evs[i].cb(evs[i].fd, pfds[i].revents, evs[i].arg);
		}
		if (!ev_stop)
			ev_run_timers();
	}
	free(pfds);
	return 0;
}
