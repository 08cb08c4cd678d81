/* SPDX-License-Identifier: ISC */
/*
 * The sandbox really binds: a child that enters a role's sandbox and
 * then makes a call outside its list is killed (or, in trap mode, told
 * which call it was); Landlock hides files outside the allowed paths.
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <atf-c.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"

enum probe { PROBE_NONE, PROBE_OPEN, PROBE_INET, PROBE_EXEC, PROBE_UNIX };

static void
run_probe(enum probe p)
{
	char *argv[] = { "/bin/true", NULL };
	int fd;

	switch (p) {
	case PROBE_NONE:
		_exit(0);
	case PROBE_OPEN:
		fd = open("/etc/hostname", O_RDONLY);
		_exit(fd == -1 ? 2 : 3);
	case PROBE_INET:
		fd = socket(AF_INET, SOCK_STREAM, 0);
		_exit(fd == -1 ? 2 : 3);
	case PROBE_UNIX:
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		_exit(fd == -1 ? 2 : 0);
	case PROBE_EXEC:
		execve(argv[0], argv, NULL);
		_exit(2);
	}
}

/* Returns the child's wait status. */
static int
in_sandbox(enum sandbox_role role, int trap, enum probe p)
{
	pid_t pid;
	int status;

	fflush(stderr);
	if ((pid = fork()) == 0) {
		if (trap) {
			int fd = open("trap.out", O_WRONLY | O_CREAT | O_TRUNC,
			    0600);
			dup2(fd, 2);
		}
		sandbox_enter(role, NULL, trap);
		run_probe(p);
	}
	ATF_REQUIRE(pid > 0);
	ATF_REQUIRE(waitpid(pid, &status, 0) == pid);
	return status;
}

static int
killed_by_seccomp(int status)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
}

ATF_TC_WITHOUT_HEAD(allowed_calls_live);
ATF_TC_BODY(allowed_calls_live, tc)
{
	int st;

	st = in_sandbox(ROLE_MCPD, 0, PROBE_NONE);
	ATF_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = in_sandbox(ROLE_AUDITD, 0, PROBE_UNIX);
	ATF_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* mcpd's one socket type is checked in regress/mcpd/t_sandbox.c. */
ATF_TC_WITHOUT_HEAD(mcpd_forbidden_calls);
ATF_TC_BODY(mcpd_forbidden_calls, tc)
{
	ATF_CHECK(killed_by_seccomp(in_sandbox(ROLE_MCPD, 0, PROBE_OPEN)));
	ATF_CHECK(killed_by_seccomp(in_sandbox(ROLE_MCPD, 0, PROBE_UNIX)));
	ATF_CHECK(killed_by_seccomp(in_sandbox(ROLE_MCPD, 0, PROBE_INET)));
	ATF_CHECK(killed_by_seccomp(in_sandbox(ROLE_MCPD, 0, PROBE_EXEC)));
}

/*
 * Only brokerd (to Vault) and notifyd (to the webhooks) speak IP;
 * nobody but runnerd's launcher execs.
 */
ATF_TC_WITHOUT_HEAD(daemons_forbidden_calls);
ATF_TC_BODY(daemons_forbidden_calls, tc)
{
	ATF_CHECK(killed_by_seccomp(in_sandbox(ROLE_AUDITD, 0, PROBE_INET)));
	ATF_CHECK(killed_by_seccomp(in_sandbox(ROLE_APPROVALD, 0,
	    PROBE_INET)));
	ATF_CHECK(killed_by_seccomp(in_sandbox(ROLE_AUDITD, 0, PROBE_EXEC)));
	ATF_CHECK(killed_by_seccomp(in_sandbox(ROLE_APPROVALD, 0,
	    PROBE_EXEC)));
	ATF_CHECK(killed_by_seccomp(in_sandbox(ROLE_BROKERD, 0, PROBE_EXEC)));
	ATF_CHECK(killed_by_seccomp(in_sandbox(ROLE_NOTIFYD, 0, PROBE_EXEC)));
	ATF_CHECK(killed_by_seccomp(in_sandbox(ROLE_CTL, 0, PROBE_INET)));
	/* runnerd's claim keeper keeps root: files only, no socket. */
	ATF_CHECK(killed_by_seccomp(in_sandbox(ROLE_CLAIM, 0, PROBE_INET)));
	ATF_CHECK(killed_by_seccomp(in_sandbox(ROLE_CLAIM, 0, PROBE_UNIX)));
	ATF_CHECK(killed_by_seccomp(in_sandbox(ROLE_CLAIM, 0, PROBE_EXEC)));
	ATF_CHECK(WIFEXITED(in_sandbox(ROLE_CLAIM, 0, PROBE_OPEN)));
}

ATF_TC_WITHOUT_HEAD(trap_names_the_call);
ATF_TC_BODY(trap_names_the_call, tc)
{
	char buf[256];
	FILE *f;
	int st;

	st = in_sandbox(ROLE_MCPD, 1, PROBE_INET);
	ATF_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 159);
	ATF_REQUIRE((f = fopen("trap.out", "r")) != NULL);
	ATF_REQUIRE(fgets(buf, sizeof(buf), f) != NULL);
	fclose(f);
	ATF_CHECK_MSG(strstr(buf, "forbidden syscall socket") != NULL, "%s",
	    buf);
}

ATF_TC_WITHOUT_HEAD(landlock_limits_files);
ATF_TC_BODY(landlock_limits_files, tc)
{
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	char dir[PATH_MAX];
	pid_t pid;
	int st, fd;

	if (sandbox_landlock_abi() < 1)
		atf_tc_fail("this kernel has no Landlock: the sandbox cannot be proven");
	ATF_REQUIRE(getcwd(dir, sizeof(dir)) != NULL);
	paths.rw[0] = dir;
	if ((pid = fork()) == 0) {
		sandbox_enter(ROLE_AUDITD, &paths, 0);
		if ((fd = open("inside", O_WRONLY | O_CREAT, 0600)) == -1)
			_exit(2);
		close(fd);
		fd = open("/etc/hostname", O_RDONLY);
		_exit(fd == -1 && errno == EACCES ? 0 : 3);
	}
	ATF_REQUIRE(waitpid(pid, &st, 0) == pid);
	ATF_CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
	ATF_CHECK(access("inside", F_OK) == 0);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, allowed_calls_live);
	ATF_TP_ADD_TC(tp, mcpd_forbidden_calls);
	ATF_TP_ADD_TC(tp, daemons_forbidden_calls);
	ATF_TP_ADD_TC(tp, trap_names_the_call);
	ATF_TP_ADD_TC(tp, landlock_limits_files);
	return atf_no_error();
}
