/* SPDX-License-Identifier: ISC */
/*
 * auditd's table of writers: an event whose seq is not above its
 * writer's last written one is a copy; the table keeps the 256 writers
 * seen most recently.
 */
#include <atf-c.h>
#include <stdio.h>

#include "../../auditd/auditd.h"

ATF_TC_WITHOUT_HEAD(copies);
ATF_TC_BODY(copies, tc)
{
	uint64_t recseq;

	(void)tc;
	ATF_CHECK_EQ(seen_check("a:1:00", 1, &recseq), SEEN_NEW);
	seen_pending("a:1:00", 1);
	ATF_CHECK_EQ(seen_check("a:1:00", 1, &recseq), SEEN_PENDING);
	seen_written("a:1:00", 1, 40);
	seen_settled();
	ATF_CHECK_EQ(seen_check("a:1:00", 1, &recseq), SEEN_WRITTEN);
	ATF_CHECK_EQ(recseq, 40);
	/* A gap is fine; below the last written, the record is unknown. */
	seen_written("a:1:00", 5, 44);
	ATF_CHECK_EQ(seen_check("a:1:00", 3, &recseq), SEEN_WRITTEN);
	ATF_CHECK_EQ(recseq, 0);
	ATF_CHECK_EQ(seen_check("a:1:00", 6, &recseq), SEEN_NEW);
	/* Another writer's numbers are its own. */
	ATF_CHECK_EQ(seen_check("a:2:00", 1, &recseq), SEEN_NEW);
}

ATF_TC_WITHOUT_HEAD(bounded);
ATF_TC_BODY(bounded, tc)
{
	char w[32];
	uint64_t recseq;
	int i;

	(void)tc;
	seen_written("old:1:00", 1, 1);
	seen_written("kept:1:00", 1, 2);
	for (i = 0; i < 255; i++) {
		/* Seen again among the others: not the oldest. */
		if (i == 100)
			(void)seen_check("kept:1:00", 1, &recseq);
		snprintf(w, sizeof(w), "w:%d:00", i);
		seen_written(w, 1, 3 + i);
	}
	ATF_CHECK_EQ(seen_check("old:1:00", 1, &recseq), SEEN_NEW);
	ATF_CHECK_EQ(seen_check("kept:1:00", 1, &recseq), SEEN_WRITTEN);
	ATF_CHECK_EQ(seen_check("w:0:00", 1, &recseq), SEEN_WRITTEN);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, copies);
	ATF_TP_ADD_TC(tp, bounded);
	return atf_no_error();
}
