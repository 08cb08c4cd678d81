/* SPDX-License-Identifier: ISC */
/*
 * runnerd's keeping of approvald's decisions (runnerd/decision_cache.c):
 * only an allow with reuse_ms, only for its tool, only until it expires,
 * and a fresh decision replaces what was kept.
 */
#include <unistd.h>

#include <atf-c.h>

#include "runnerd.h"

static void
store(const char *tool, const char *verdict, int reuse_ms)
{
	json_t *d;

	d = json_pack("{s:s, s:s, s:[s]}", "decision", verdict, "reason",
	    "test", "egress", "pypi.org:443");
	ATF_REQUIRE(d != NULL);
	if (reuse_ms > 0)
		json_object_set_new(d, "reuse_ms", json_integer(reuse_ms));
	deccache_store(tool, d);
	json_decref(d);
}

static int
kept(const char *tool)
{
	json_t *d;
	int64_t age = -1;

	if ((d = deccache_lookup(tool, &age)) == NULL)
		return 0;
	ATF_CHECK(age >= 0 && age < 60000);
	json_decref(d);
	return 1;
}

ATF_TC_WITHOUT_HEAD(verdicts);
ATF_TC_BODY(verdicts, tc)
{
	json_t *d;
	int64_t age;

	(void)tc;
	store("a", "allow", 60000);
	ATF_REQUIRE((d = deccache_lookup("a", &age)) != NULL);
	/* The whole decision, egress list and all. */
	ATF_CHECK_STREQ(json_string_value(json_array_get(json_object_get(d,
	    "egress"), 0)), "pypi.org:443");
	json_decref(d);
	ATF_CHECK(!kept("b"));
	/* Whatever approvald says, a deny or an approval is never kept. */
	store("b", "deny", 60000);
	ATF_CHECK(!kept("b"));
	store("c", "approval_required", 60000);
	ATF_CHECK(!kept("c"));
	store("d", "allow", 0);
	ATF_CHECK(!kept("d"));
	/* A fresh decision without reuse_ms ends the reuse at once. */
	store("a", "allow", 0);
	ATF_CHECK(!kept("a"));
	store("a", "allow", 60000);
	store("a", "deny", 60000);
	ATF_CHECK(!kept("a"));
}

ATF_TC_WITHOUT_HEAD(expiry);
ATF_TC_BODY(expiry, tc)
{
	(void)tc;
	store("a", "allow", 200);
	ATF_CHECK(kept("a"));
	usleep(300 * 1000);
	ATF_CHECK(!kept("a"));
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, verdicts);
	ATF_TP_ADD_TC(tp, expiry);
	return atf_no_error();
}
