/*
 * mcpd's seccomp filter: once sandboxed it can read and write the
 * descriptors it has, and nothing opens a file or reaches a socket.
 */
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atf-c.h>

#include "sandbox.h"

enum probe { P_WRITE, P_OPEN, P_SOCKET, P_CONNECT };

/* Runs probe in a sandboxed child; returns its wait status. */
static int
sandboxed(enum probe probe)
{
	struct sockaddr_un sun;
	int p[2], s, status;
	pid_t pid;

	ATF_REQUIRE(pipe(p) == 0);
	/* Made before the sandbox, as mcpd makes runner.sock's. */
	ATF_REQUIRE((s = socket(AF_UNIX, SOCK_STREAM, 0)) != -1);
	ATF_REQUIRE((pid = fork()) != -1);
	if (pid == 0) {
		sandbox_enter(ROLE_MCPD, NULL, 0);
		switch (probe) {
		case P_WRITE:
			_exit(write(p[1], "ok", 2) == 2 ? 0 : 2);
		case P_OPEN:
			(void)open("/etc/passwd", O_RDONLY);
			break;
		case P_SOCKET:
			(void)socket(AF_UNIX, SOCK_STREAM, 0);
			break;
		case P_CONNECT:
			memset(&sun, 0, sizeof(sun));
			sun.sun_family = AF_UNIX;
			strlcpy(sun.sun_path, "/run/nothing.sock",
			    sizeof(sun.sun_path));
			(void)connect(s, (struct sockaddr *)&sun, sizeof(sun));
			break;
		}
		_exit(3);	/* the call was allowed: the test fails */
	}
	close(p[0]);
	close(p[1]);
	close(s);
	ATF_REQUIRE(waitpid(pid, &status, 0) == pid);
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

ATF_TC_WITHOUT_HEAD(no_socket);
ATF_TC_BODY(no_socket, tc)
{
	expect_killed(P_SOCKET, "socket");
}

ATF_TC_WITHOUT_HEAD(no_connect);
ATF_TC_BODY(no_connect, tc)
{
	expect_killed(P_CONNECT, "connect");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, may_write);
	ATF_TP_ADD_TC(tp, no_open);
	ATF_TP_ADD_TC(tp, no_socket);
	ATF_TP_ADD_TC(tp, no_connect);
	return atf_no_error();
}
