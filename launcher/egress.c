/* SPDX-License-Identifier: ISC */
/*
 * The egress allowlist, enforced outside the sandbox.  A sandbox with
 * an allowlist runs in a network namespace of its own that holds only
 * a loopback interface and, on 127.0.0.1:3128, a socket whose other
 * end is this proxy, running in the host's namespace as nobody.  The
 * proxy speaks HTTP CONNECT and opens only the listed host:port pairs;
 * nothing else has a route out.  Each connection is served by a child
 * of the proxy, at most the sandbox's pids limit at once, and a relay
 * ends when idle or too old.  The proxy runs in a leaf of the
 * sandbox's cgroup, so its children also count against the sandbox's
 * pids.max and die with the sandbox.  (RLIMIT_NPROC would not do: it
 * counts every process of nobody's on the host, other sandboxes' too.)
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <grp.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "launcher.h"
#include "log.h"

#define REQUEST_MAX	4096
#define REQUEST_MS	10000
#define RELAY_BUF	16384
#define RELAY_TOTAL_MS	3600000		/* however busy */

/* Connections served at once: the sandbox's pids limit. */
static long	 relays_max = 1;
/* A relay with no byte either way for this long ends: egress_idle. */
static int	 relay_idle_ms = 60000;

void
egress_init(const struct as_config *conf)
{
	relays_max = conf->runnerd.pids;
	relay_idle_ms = conf->runnerd.egress_idle * 1000;
}

static int
allowed(json_t *allow, const char *hostport)
{
	json_t *v;
	size_t i;

	json_array_foreach(allow, i, v)
		if (strcasecmp(json_string_value(v), hostport) == 0)
			return 1;
	return 0;
}

static void
reply(int fd, const char *status)
{
	char buf[128];
	int n;

	n = snprintf(buf, sizeof(buf), "HTTP/1.1 %s\r\n\r\n", status);
	(void)!write(fd, buf, n);
}

static int
dial(const char *hostport)
{
	struct addrinfo hints, *res, *ai;
	char host[256], *port;
	int fd = -1;

	if (strlcpy(host, hostport, sizeof(host)) >= sizeof(host) ||
	    (port = strrchr(host, ':')) == NULL)
		return -1;
	*port++ = '\0';
	/* [v6]:port */
	if (host[0] == '[' && port[-2] == ']') {
		port[-2] = '\0';
		memmove(host, host + 1, strlen(host));
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &res) != 0)
		return -1;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype, 0)) == -1)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* Copies both ways until both sides are done, it idles or it is too old. */
static void
relay(int a, int b)
{
	struct pollfd pfd[2];
	struct timespec t0, now;
	char buf[RELAY_BUF];
	int open[2] = { 1, 1 }, i, ms;
	ssize_t n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pfd[0].fd = a;
	pfd[1].fd = b;
	while (open[0] || open[1]) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = RELAY_TOTAL_MS - ((now.tv_sec - t0.tv_sec) * 1000 +
		    (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (ms <= 0)
			return;
		for (i = 0; i < 2; i++)
			pfd[i].events = open[i] ? POLLIN : 0;
		if ((n = poll(pfd, 2, ms < relay_idle_ms ? ms :
		    relay_idle_ms)) == 0)
			return;
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (i = 0; i < 2; i++) {
			if (!open[i] || !(pfd[i].revents &
			    (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(pfd[i].fd, buf, sizeof(buf));
			if (n <= 0) {
				open[i] = 0;
				shutdown(pfd[!i].fd, SHUT_WR);
			} else if (write(pfd[!i].fd, buf, n) != n)
				return;
		}
	}
}

/* One client: "CONNECT host:port HTTP/1.x", headers, then bytes. */
static void __attribute__((noreturn))
serve(int fd, json_t *allow)
{
	char req[REQUEST_MAX + 1], target[300], *end;
	struct pollfd pfd;
	size_t len = 0, extra;
	ssize_t n;
	int up;

	pfd.fd = fd;
	pfd.events = POLLIN;
	while ((end = memmem(req, len, "\r\n\r\n", 4)) == NULL) {
		if (len == REQUEST_MAX || poll(&pfd, 1, REQUEST_MS) <= 0 ||
		    (n = read(fd, req + len, REQUEST_MAX - len)) <= 0)
			_exit(0);
		len += n;
	}
	req[len] = '\0';
	if (sscanf(req, "CONNECT %299s HTTP/1.", target) != 1) {
		reply(fd, "405 Method Not Allowed");
		_exit(0);
	}
	if (!allowed(allow, target)) {
		reply(fd, "403 Forbidden");
		_exit(0);
	}
	if ((up = dial(target)) == -1) {
		reply(fd, "502 Bad Gateway");
		_exit(0);
	}
	reply(fd, "200 Connection established");
	extra = len - (end + 4 - req);
	if (extra > 0 && write(up, end + 4, extra) != (ssize_t)extra)
		_exit(0);
	relay(fd, up);
	_exit(0);
}

static void __attribute__((noreturn))
proxy_main(const char *cid, json_t *allow, int sp)
{
	struct channel ch;
	struct msg m;
	sigset_t none;
	gid_t gid = SANDBOX_GID;
	pid_t launcher = getppid(), pid;
	long nrelays = 0;
	int lfd, c;

	log_procinit("runnerd-egress");
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Before the listener: runsc's child then fails if this does. */
	if (cgroup_enter(cid, "egress", 0) == -1) {
		log_warn("%s: cgroup", cid);
		_exit(1);
	}
	channel_init(&ch, sp);
	if (channel_recv_sync(&ch, &m, REQUEST_MS) == -1 ||
	    m.hdr.type != LMSG_EGRESS_SOCKET || m.fd == -1)
		_exit(1);
	if (dup2(m.fd, 3) == -1)
		_exit(1);
	lfd = 3;
	closefrom(4);
	if (setgroups(1, &gid) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID) == -1 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != launcher)
		_exit(1);
	for (;;) {
		/* Reaps; at the cap, waits for a relay to end first. */
		while ((pid = waitpid(-1, NULL, nrelays < relays_max ?
		    WNOHANG : 0)) > 0 || (pid == -1 && errno == EINTR))
			if (pid > 0)
				nrelays--;
		if ((c = accept(lfd, NULL, NULL)) == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			_exit(1);
		}
		switch (fork()) {
		case -1:
			break;
		case 0:
			close(lfd);
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
				_exit(1);
			serve(c, allow);
		default:
			nrelays++;
		}
		close(c);
	}
}

/*
 * Forks the proxy for the sandbox cid; *fd is where runsc's child
 * sends it the listener.
 */
pid_t
egress_start(const char *cid, json_t *allow, int *fd)
{
	pid_t pid;

	if ((pid = fork_paired(fd)) == 0)
		proxy_main(cid, allow, *fd);
	return pid;
}

/*
 * In runsc's child, before exec: a new network namespace with lo up
 * and the proxy's listener on 127.0.0.1; runsc --network=host then
 * gives the sandbox that namespace and nothing else.
 */
int
egress_listen_here(int fd)
{
	struct sockaddr_in sin;
	struct ifreq ifr;
	struct channel ch;
	int s, one = 1;

	if (unshare(CLONE_NEWNET) == -1 ||
	    (s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strlcpy(ifr.ifr_name, "lo", sizeof(ifr.ifr_name));
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == -1)
		return -1;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) == -1)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(EGRESS_PORT);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(s, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(s, 64) == -1)
		return -1;
	channel_init(&ch, fd);
	if (channel_send_sync(&ch, LMSG_EGRESS_SOCKET, 0, s, NULL, 0,
	    REQUEST_MS) == -1)
		return -1;
	close(fd);
	return 0;
}
