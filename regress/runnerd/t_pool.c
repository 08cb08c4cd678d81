/* SPDX-License-Identifier: ISC */
/*
 * A warm pool's bookkeeping (helperlib/pool.c), with members that are
 * only records: how many it starts, what stops a refill, which member
 * a claim takes, and that one its owner ends is never handed out.
 */
#include <atf-c.h>
#include <stdio.h>
#include <string.h>

#include "pool.h"

#define MEMBERS	8

struct member {
	struct pool_entry	 pooled;
	int			 ready;
};

static struct member	 members[MEMBERS];
static int		 started;
static int		 fail_after;	/* starts that succeed; -1: all */

static struct pool_entry *
member_start(char *why, size_t whylen)
{
	struct member *m;

	if (fail_after == 0 || started == MEMBERS) {
		snprintf(why, whylen, "no more");
		return NULL;
	}
	if (fail_after > 0)
		fail_after--;
	m = &members[started++];
	memset(m, 0, sizeof(*m));
	m->pooled.member = m;
	return &m->pooled;
}

static int
member_ready(void *arg)
{
	return ((struct member *)arg)->ready;
}

static struct pool_ops	 ops = { .name = "test pool", .start = member_start };

/* A pool of want, claiming the ready first or just the oldest. */
static void
setup(struct pool *p, int by_readiness, size_t want, int starts_ok)
{
	started = 0;
	fail_after = starts_ok;
	ops.ready = by_readiness ? member_ready : NULL;
	pool_init(p, &ops, want);
	pool_refill(p);
}

ATF_TC_WITHOUT_HEAD(refill);
ATF_TC_BODY(refill, tc)
{
	struct pool p;

	setup(&p, 1, 3, -1);
	ATF_CHECK_EQ(started, 3);
	ATF_CHECK_EQ(p.count, 3);
	pool_refill(&p);
	ATF_CHECK_EQ(started, 3);

	setup(&p, 1, 0, -1);
	ATF_CHECK_EQ(started, 0);
	ATF_CHECK(pool_claim(&p) == NULL);
}

ATF_TC_WITHOUT_HEAD(start_fails);
ATF_TC_BODY(start_fails, tc)
{
	struct pool p;

	setup(&p, 1, 4, 1);
	ATF_CHECK_EQ(started, 1);
	ATF_CHECK_EQ(p.count, 1);
	fail_after = -1;
	pool_refill(&p);
	ATF_CHECK_EQ(p.count, 4);
}

ATF_TC_WITHOUT_HEAD(claim_ready_first);
ATF_TC_BODY(claim_ready_first, tc)
{
	struct pool p;

	setup(&p, 1, 3, -1);
	members[1].ready = members[2].ready = 1;
	ATF_CHECK(pool_claim(&p) == &members[1]);
	ATF_CHECK_EQ(p.count, 2);
	ATF_CHECK(members[1].pooled.pool == NULL);
	ATF_CHECK(pool_claim(&p) == &members[2]);
	/* None up: the oldest that is starting. */
	ATF_CHECK(pool_claim(&p) == &members[0]);
	ATF_CHECK(pool_claim(&p) == NULL);
	ATF_CHECK_EQ(p.count, 0);
	pool_refill(&p);
	ATF_CHECK_EQ(p.count, 3);
	ATF_CHECK_EQ(started, 6);
}

ATF_TC_WITHOUT_HEAD(claim_oldest);
ATF_TC_BODY(claim_oldest, tc)
{
	struct pool p;

	setup(&p, 0, 3, -1);
	members[2].ready = 1;
	ATF_CHECK(pool_claim(&p) == &members[0]);
	ATF_CHECK(pool_claim(&p) == &members[1]);
}

ATF_TC_WITHOUT_HEAD(leave);
ATF_TC_BODY(leave, tc)
{
	struct pool p;
	struct pool_entry never;

	setup(&p, 1, 2, -1);
	members[0].ready = 1;
	pool_leave(&members[0].pooled);
	pool_leave(&members[0].pooled);
	ATF_CHECK_EQ(p.count, 1);
	/* An ending member is not handed out, and a refill replaces it. */
	ATF_CHECK(pool_claim(&p) == &members[1]);
	pool_refill(&p);
	ATF_CHECK_EQ(p.count, 2);
	ATF_CHECK(pool_claim(&p) == &members[2]);
	memset(&never, 0, sizeof(never));
	pool_leave(&never);
	ATF_CHECK_EQ(p.count, 1);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, refill);
	ATF_TP_ADD_TC(tp, start_fails);
	ATF_TP_ADD_TC(tp, claim_ready_first);
	ATF_TP_ADD_TC(tp, claim_oldest);
	ATF_TP_ADD_TC(tp, leave);
	return atf_no_error();
}
