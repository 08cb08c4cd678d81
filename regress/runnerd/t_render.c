/* SPDX-License-Identifier: ISC */
/*
 * The render (helperlib/render.c) is a sandbox: what runs in it cannot
 * make a user namespace, and forks and memory are bounded by the call's
 * cgroup.  A probe runs where the render's terraform would, by
 * render_exec, in a cgroup made as a call's is.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <atf-c.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "../../common/config.h"
#include "launcher.h"

#define PROBE_FORKS	300

/*
 * A user namespace; PROBE_FORKS children (each waits, then all are
 * killed); 300 MiB written, past the call's 256 MiB cgroup.
 */
static const char probe[] =
    "unshare -U true 2>/dev/null && echo userns allowed || "
    "echo userns refused; "
    "python3 -c 'import os, signal, time\n"
    "kids = []\n"
    "for i in range(300):\n"
    "    try:\n"
    "        p = os.fork()\n"
    "    except OSError:\n"
    "        break\n"
    "    if p == 0:\n"
    "        time.sleep(30)\n"
    "        os._exit(0)\n"
    "    kids.append(p)\n"
    "print(\"forks\", len(kids), flush=True)\n"
    "for p in kids:\n"
    "    os.kill(p, signal.SIGKILL)\n"
    "for p in kids:\n"
    "    os.waitpid(p, 0)\n"
    "'; python3 -c 'b = b\"x\" * (300 << 20); print(\"allocated\")'; "
    "echo alloc $?";

ATF_TC(bounded);
ATF_TC_HEAD(bounded, tc)
{
	atf_tc_set_md_var(tc, "descr", "in the render no user namespace is "
	    "made, forks stop at its pids bound and a write past the call's "
	    "memory is killed");
	atf_tc_set_md_var(tc, "require.user", "root");
	atf_tc_set_md_var(tc, "require.progs", "/usr/bin/bwrap");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(bounded, tc)
{
	struct as_config conf;
	char cid[CONTAINER_ID_LEN], out[4096], work[PATH_MAX];
	size_t len = 0;
	ssize_t n;
	int p[2], st, forks;
	pid_t pid;

	memset(&conf, 0, sizeof(conf));
	conf.runnerd.memory = 128L * 1024 * 1024;
	conf.runnerd.pids = 64;
	conf.runnerd.cpu_percent = 100;
	ATF_REQUIRE(sandbox_init_find(atf_tc_get_config_var(tc, "bindir")) ==
	    0);
	ATF_REQUIRE(container_id_new(cid) == 0);
	ATF_REQUIRE(getcwd(work, sizeof(work)) != NULL);
	ATF_REQUIRE(strlcat(work, "/work", sizeof(work)) < sizeof(work));
	ATF_REQUIRE(mkdir(work, 0700) == 0);
	ATF_REQUIRE(chown(work, SANDBOX_UID, SANDBOX_GID) == 0);
	ATF_REQUIRE(cgroup_create(&conf, cid) == 0);
	ATF_REQUIRE(pipe(p) == 0);
	if ((pid = fork()) == 0) {
		close(p[0]);
		render_exec(&conf, cid, work, NULL, probe, -1, p[1], p[1]);
	}
	ATF_REQUIRE(pid > 0);
	close(p[1]);
	while (len < sizeof(out) - 1 &&
	    (n = read(p[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += n;
	out[len] = '\0';
	close(p[0]);
	ATF_REQUIRE(waitpid(pid, &st, 0) == pid);
	cgroup_kill(cid);
	cgroup_remove(cid);
	printf("%s", out);
	ATF_CHECK_MSG(strstr(out, "userns refused\n") != NULL,
	    "a user namespace was made: %s", out);
	ATF_REQUIRE_MSG(strstr(out, "forks ") != NULL, "no forks: %s", out);
	forks = atoi(strstr(out, "forks ") + 6);
	ATF_CHECK_MSG(forks > 0 && forks < PROBE_FORKS,
	    "%d of %d forks", forks, PROBE_FORKS);
	ATF_CHECK_MSG(strstr(out, "allocated") == NULL &&
	    strstr(out, "alloc 137\n") != NULL,
	    "300 MiB written past 256 MiB: %s", out);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, bounded);
	return atf_no_error();
}
