/* The launcher's checks on what the engine asks of it (runnerd/bundle.c). */
#include <atf-c.h>
#include <jansson.h>
#include <string.h>

#include "../../runnerd/launcher.h"

ATF_TC_WITHOUT_HEAD(workspace_names);
ATF_TC_BODY(workspace_names, tc)
{
	ATF_CHECK(workspace_name_ok("main.tf"));
	ATF_CHECK(workspace_name_ok("plan_1-a.json"));
	ATF_CHECK(!workspace_name_ok(""));
	ATF_CHECK(!workspace_name_ok(NULL));
	ATF_CHECK(!workspace_name_ok("."));
	ATF_CHECK(!workspace_name_ok(".."));
	ATF_CHECK(!workspace_name_ok(".hidden"));
	ATF_CHECK(!workspace_name_ok("../etc/passwd"));
	ATF_CHECK(!workspace_name_ok("a/b"));
	ATF_CHECK(!workspace_name_ok("/etc/shadow"));
	ATF_CHECK(!workspace_name_ok("a b"));
}

static int
req_ok(const char *text)
{
	json_t *j;
	int r;

	ATF_REQUIRE((j = json_loads(text, 0, NULL)) != NULL);
	r = request_ok(j);
	json_decref(j);
	return r;
}

ATF_TC_WITHOUT_HEAD(requests);
ATF_TC_BODY(requests, tc)
{
	ATF_CHECK(req_ok("{\"argv\":[\"/bin/sh\",\"-c\",\"true\"]}"));
	ATF_CHECK(req_ok("{\"argv\":[\"true\"],\"egress\":[\"h:443\"],"
	    "\"files_in\":{\"a.txt\":\"x\"},\"files_out\":[\"b.txt\"]}"));
	ATF_CHECK(!req_ok("{}"));
	ATF_CHECK(!req_ok("{\"argv\":[]}"));
	ATF_CHECK(!req_ok("{\"argv\":[\"sh\",1]}"));
	ATF_CHECK(!req_ok("{\"argv\":\"sh\"}"));
	ATF_CHECK(!req_ok("{\"argv\":[\"true\"],\"egress\":[443]}"));
	ATF_CHECK(!req_ok("{\"argv\":[\"true\"],"
	    "\"files_in\":{\"../x\":\"y\"}}"));
	ATF_CHECK(!req_ok("{\"argv\":[\"true\"],\"files_in\":{\"a\":1}}"));
	ATF_CHECK(!req_ok("{\"argv\":[\"true\"],\"files_out\":[\"/etc\"]}"));
}

ATF_TC_WITHOUT_HEAD(container_ids);
ATF_TC_BODY(container_ids, tc)
{
	char cid[CONTAINER_ID_LEN];

	container_id(0x0123456789abcdefULL, cid);
	ATF_CHECK_STREQ(cid, "as-0123456789abcdef");
}

static void
check_text(const char *in, size_t len, const char *want)
{
	json_t *j;

	ATF_REQUIRE((j = text_json(in, len)) != NULL);
	ATF_CHECK_EQ(json_string_length(j), strlen(want));
	ATF_CHECK_STREQ(json_string_value(j), want);
	json_decref(j);
}

/* Sandbox output is bytes; results are JSON text. */
ATF_TC_WITHOUT_HEAD(output_text);
ATF_TC_BODY(output_text, tc)
{
	check_text("plain\n", 6, "plain\n");
	check_text("caf\xc3\xa9", 5, "caf\xc3\xa9");
	check_text("\xf0\x9f\x99\x82", 4, "\xf0\x9f\x99\x82");
	check_text("a\0b", 3, "a?b");
	check_text("\xff\xfe", 2, "??");
	check_text("\xc0\xaf", 2, "??");		/* overlong '/' */
	check_text("\xed\xa0\x80", 3, "???");	/* surrogate */
	check_text("x\xc3", 2, "x?");		/* cut by the cap */
	check_text("", 0, "");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, workspace_names);
	ATF_TP_ADD_TC(tp, requests);
	ATF_TP_ADD_TC(tp, container_ids);
	ATF_TP_ADD_TC(tp, output_text);
	return atf_no_error();
}
