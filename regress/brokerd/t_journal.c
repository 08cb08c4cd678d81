/* SPDX-License-Identifier: ISC */
/* The lease journal: replayed, compacted, appended, emptied. */
#include <atf-c.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../brokerd/brokerd.h"

static char	seen[1024];

static void
collect(const char *id, void *arg)
{
	(void)arg;
	strlcat(seen, id, sizeof(seen));
	strlcat(seen, " ", sizeof(seen));
}

static void
contents(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	ATF_REQUIRE((fd = open(path, O_RDONLY)) != -1);
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
}

ATF_TC_WITHOUT_HEAD(replay);
ATF_TC_BODY(replay, tc)
{
	char err[256], buf[1024];
	FILE *f;

	ATF_REQUIRE((f = fopen("j", "w")) != NULL);
	/* A bad line and a torn last write are skipped. */
	fputs("+k/creds/r/a\n+k/creds/r/b\n-k/creds/r/a\n+bad id\nline\n"
	    "+k/creds/r/c\n+k/creds/r/d", f);
	fclose(f);
	ATF_REQUIRE_MSG(journal_open("j", collect, NULL, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK_STREQ(seen, "k/creds/r/b k/creds/r/c ");
	contents("j", buf, sizeof(buf));
	ATF_CHECK_STREQ(buf, "+k/creds/r/b\n+k/creds/r/c\n");
	ATF_CHECK(journal_add("k/creds/r/e") == 0);
	ATF_CHECK(journal_remove("k/creds/r/b", 0) == 0);
	contents("j", buf, sizeof(buf));
	ATF_CHECK_STREQ(buf, "+k/creds/r/b\n+k/creds/r/c\n+k/creds/r/e\n"
	    "-k/creds/r/b\n");
	ATF_CHECK(journal_remove("k/creds/r/c", 1) == 0);
	contents("j", buf, sizeof(buf));
	ATF_CHECK_STREQ(buf, "");
}

ATF_TC_WITHOUT_HEAD(fresh);
ATF_TC_BODY(fresh, tc)
{
	char err[256];

	seen[0] = '\0';
	ATF_REQUIRE_MSG(journal_open("none-yet", collect, NULL, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK_STREQ(seen, "");
	ATF_CHECK(access("none-yet", F_OK) == 0);
}

ATF_TC_WITHOUT_HEAD(lease_ids);
ATF_TC_BODY(lease_ids, tc)
{
	ATF_CHECK(lease_id_valid("kubernetes/creds/pod-reader/Ab9.x_y-z"));
	ATF_CHECK(!lease_id_valid(""));
	ATF_CHECK(!lease_id_valid("a\nb"));
	ATF_CHECK(!lease_id_valid("a b"));
	ATF_CHECK(!lease_id_valid("a\"b"));
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, replay);
	ATF_TP_ADD_TC(tp, fresh);
	ATF_TP_ADD_TC(tp, lease_ids);
	return atf_no_error();
}
