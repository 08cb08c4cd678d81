/* SPDX-License-Identifier: ISC */
/*
 * mcpd's seccomp filter: once sandboxed it can read and write the
 * descriptors it has and reconnect to runnerd (one Unix socket type,
 * then connect), and nothing opens a file or another kind of socket.
 */
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atf-c.h>

#include "sandbox.h"
#include "sock.h"

#define LISTENER	"runner.sock"

enum probe {
	P_WRITE, P_OPEN, P_SOCKET_BLOCKING, P_SOCKET_INET, P_SOCKET_DGRAM,
	P_RECONNECT
};

/* Runs probe in a sandboxed child; returns its wait status. */
static int
sandboxed(enum probe probe)
{
	int p[2], l, status;
	pid_t pid;

	ATF_REQUIRE(pipe(p) == 0);
	/* runnerd's side, which a reconnect reaches through Landlock. */
	ATF_REQUIRE((l = sock_listen(LISTENER, 0600)) != -1);
	ATF_REQUIRE((pid = fork()) != -1);
	if (pid == 0) {
		sandbox_enter(ROLE_MCPD, NULL, 0);
		switch (probe) {
		case P_WRITE:
			_exit(write(p[1], "ok", 2) == 2 ? 0 : 2);
		case P_OPEN:
			(void)open("/etc/passwd", O_RDONLY);
			break;
		case P_SOCKET_BLOCKING:
			(void)socket(AF_UNIX, SOCK_STREAM, 0);
			break;
		case P_SOCKET_INET:
			(void)socket(AF_INET, SOCK_CONNECT_NONBLOCK, 0);
			break;
		case P_SOCKET_DGRAM:
			(void)socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK |
			    SOCK_CLOEXEC, 0);
			break;
		case P_RECONNECT:
			_exit(sock_connect_nonblock(LISTENER) != -1 ? 0 :
			    errno == EACCES ? 4 : 2);
		}
		_exit(3);	/* the call was allowed: the test fails */
	}
	close(p[0]);
	close(p[1]);
	ATF_REQUIRE(waitpid(pid, &status, 0) == pid);
	close(l);
	unlink(LISTENER);
	return status;
}

static void
expect_killed(enum probe probe, const char *what)
{
	int st = sandboxed(probe);

	ATF_CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "%s: child %s %d, not killed by SIGSYS", what,
	    WIFSIGNALED(st) ? "got signal" : "exited",
	    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

ATF_TC_WITHOUT_HEAD(may_write);
ATF_TC_BODY(may_write, tc)
{
	int st = sandboxed(P_WRITE);

	ATF_CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "write on an inherited descriptor failed (status %#x)", st);
}

ATF_TC_WITHOUT_HEAD(no_open);
ATF_TC_BODY(no_open, tc)
{
	expect_killed(P_OPEN, "open");
}

ATF_TC_WITHOUT_HEAD(no_blocking_socket);
ATF_TC_BODY(no_blocking_socket, tc)
{
	expect_killed(P_SOCKET_BLOCKING, "blocking Unix socket");
}

ATF_TC_WITHOUT_HEAD(no_inet_socket);
ATF_TC_BODY(no_inet_socket, tc)
{
	expect_killed(P_SOCKET_INET, "AF_INET socket");
}

ATF_TC_WITHOUT_HEAD(no_dgram_socket);
ATF_TC_BODY(no_dgram_socket, tc)
{
	expect_killed(P_SOCKET_DGRAM, "Unix datagram socket");
}

/* Seccomp admits the reconnect and Landlock does not stand in its way. */
ATF_TC_WITHOUT_HEAD(may_reconnect);
ATF_TC_BODY(may_reconnect, tc)
{
	int st = sandboxed(P_RECONNECT);

	ATF_CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "reconnecting to a Unix socket failed (status %#x%s)", st,
	    WIFEXITED(st) && WEXITSTATUS(st) == 4 ? ", EACCES" : "");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, may_write);
	ATF_TP_ADD_TC(tp, no_open);
	ATF_TP_ADD_TC(tp, no_blocking_socket);
	ATF_TP_ADD_TC(tp, no_inet_socket);
	ATF_TP_ADD_TC(tp, no_dgram_socket);
	ATF_TP_ADD_TC(tp, may_reconnect);
	return atf_no_error();
}
