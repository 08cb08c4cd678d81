/* SPDX-License-Identifier: ISC */
/* runnerd's trail of open calls (runnerd/trail.c). */
#include <sys/stat.h>

#include <atf-c.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event.h"
#include "runnerd.h"

#define TRAIL	"calls.trail"
#define R1	"req-0000000000000001"
#define R2	"req-0000000000000002"

static int
dir_open(void)
{
	int fd;

	ATF_REQUIRE((fd = open(".", O_RDONLY | O_DIRECTORY)) != -1);
	return fd;
}

static void
check_file(const char *want)
{
	char buf[4096];
	ssize_t n;
	int fd;

	ATF_REQUIRE((fd = open(TRAIL, O_RDONLY)) != -1);
	ATF_REQUIRE((n = read(fd, buf, sizeof(buf) - 1)) >= 0);
	buf[n] = '\0';
	close(fd);
	ATF_CHECK_STREQ_MSG(buf, want, "the trail holds \"%s\"", buf);
}

ATF_TC_WITHOUT_HEAD(begin_end);
ATF_TC_BODY(begin_end, tc)
{
	ATF_REQUIRE(trail_open(dir_open()) == 0);
	trail_begin(1, "run_shell");
	trail_begin(2, "forged\ne " R1);
	check_file("b " R1 " run_shell\nb " R2 " forged?e?req?0000000000000001\n");
	trail_end(1);
	check_file("b " R1 " run_shell\nb " R2 " forged?e?req?0000000000000001\n"
	    "e " R1 "\n");
	trail_end(2);
	check_file("");
}

/*
 * What a killed runnerd left: 1 ended, 2 open, 3 cut short by the crash.
 * Without auditd's answer, 2's end is not recorded, so it stays open: a
 * file rewritten past its cap keeps it alone.
 */
ATF_TC_WITHOUT_HEAD(left_open);
ATF_TC_BODY(left_open, tc)
{
	static const char left[] = "b " R1 " run_shell\nb " R2 " run_python\n"
	    "e " R1 "\nb req-00000000000";
	struct stat st;
	off_t size = 0;
	FILE *f;
	int i;

	ATF_REQUIRE((f = fopen(TRAIL, "w")) != NULL);
	ATF_REQUIRE(fputs(left, f) >= 0);
	ATF_REQUIRE(fclose(f) == 0);
	ATF_REQUIRE(trail_open(dir_open()) == 0);
	/* No loop runs auditd's answer here: 2's end is never recorded. */
	ev_init();
	peer_init(NULL);
	trail_restart(NULL);
	for (i = 0; i < 100000; i++) {
		trail_begin(100 + i, "run_shell");
		trail_end(100 + i);
		ATF_REQUIRE(stat(TRAIL, &st) == 0);
		if (st.st_size < size)
			break;
		size = st.st_size;
	}
	check_file("b " R2 "\n");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, begin_end);
	ATF_TP_ADD_TC(tp, left_open);
	return atf_no_error();
}
