/* The launcher's checks on what the engine asks of it (launcher_bundle.c). */
#include <sys/stat.h>

#include <atf-c.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>
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
	ATF_CHECK(req_ok("{\"argv\":[\"true\"],\"agent_code\":true}"));
	ATF_CHECK(!req_ok("{\"argv\":[\"true\"],\"agent_code\":1}"));
}

static int
poolable(const char *text)
{
	json_t *j;
	int r;

	ATF_REQUIRE((j = json_loads(text, 0, NULL)) != NULL);
	r = tfpool_script(j) != NULL;
	json_decref(j);
	return r;
}

/* Only the launcher makes pooled bundles; only terraform's script fits one. */
ATF_TC_WITHOUT_HEAD(pool_requests);
ATF_TC_BODY(pool_requests, tc)
{
	ATF_CHECK(!req_ok("{\"argv\":[\"true\"],\"pooled\":true}"));
	ATF_CHECK(!req_ok("{\"argv\":[\"true\"],\"pooled\":false}"));
	ATF_CHECK(poolable("{\"argv\":[\"/bin/sh\",\"-c\",\"terraform plan\"],"
	    "\"poolable\":true}"));
	ATF_CHECK(!poolable("{\"argv\":[\"/bin/sh\",\"-c\",\"terraform plan\"]}"));
	ATF_CHECK(!poolable("{\"argv\":[\"/bin/sh\",\"-c\",\"a\\nb\"],"
	    "\"poolable\":true}"));
	ATF_CHECK(!poolable("{\"argv\":[\"/bin/sh\",\"-c\",\"x\"],"
	    "\"poolable\":true,\"egress\":[\"h:443\"]}"));
	ATF_CHECK(!poolable("{\"argv\":[\"/bin/sh\",\"-c\",\"x\"],"
	    "\"poolable\":true,\"files_in\":{\"a\":\"b\"}}"));
	ATF_CHECK(!poolable("{\"argv\":[\"/bin/sh\",\"-c\",\"x\"],"
	    "\"poolable\":true,\"agent_code\":true}"));
	ATF_CHECK(!poolable("{\"argv\":[\"/bin/bash\",\"-c\",\"x\"],"
	    "\"poolable\":true}"));
	ATF_CHECK(!poolable("{\"argv\":[\"/bin/sh\",\"-c\"],\"poolable\":true}"));
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

/*
 * What a sandbox leaves in its workspace is removed without following
 * anything: a link to a directory outside loses only the link, a deep
 * tree goes, and a file of the same name outside is untouched.
 */
ATF_TC(rm_tree_links);
ATF_TC_HEAD(rm_tree_links, tc)
{
	/* As the launcher: root, who may enter a directory of mode 0. */
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(rm_tree_links, tc)
{
	char path[PATH_MAX];
	struct stat st;
	int i, fd;

	(void)tc;
	ATF_REQUIRE(mkdir("outside", 0755) == 0);
	ATF_REQUIRE((fd = open("outside/keep", O_WRONLY | O_CREAT, 0644)) !=
	    -1);
	close(fd);
	ATF_REQUIRE(mkdir("work", 0755) == 0);
	ATF_REQUIRE(symlink("../outside", "work/dirlink") == 0);
	ATF_REQUIRE(symlink("../outside/keep", "work/filelink") == 0);
	ATF_REQUIRE(mkfifo("work/fifo", 0600) == 0);
	strlcpy(path, "work", sizeof(path));
	for (i = 0; i < 100; i++) {
		strlcat(path, "/d", sizeof(path));
		ATF_REQUIRE(mkdir(path, 0700) == 0);
	}
	/* A directory without the owner's rights is taken apart too. */
	ATF_REQUIRE(chmod("work/d", 0) == 0);
	ATF_REQUIRE(getcwd(path, sizeof(path)) != NULL);
	strlcat(path, "/work", sizeof(path));
	ATF_CHECK_EQ(rm_tree(path), 0);
	ATF_CHECK(lstat("work", &st) == -1 && errno == ENOENT);
	ATF_CHECK(stat("outside/keep", &st) == 0);
	/* Gone already: nothing to do. */
	ATF_CHECK_EQ(rm_tree(path), 0);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, rm_tree_links);
	ATF_TP_ADD_TC(tp, workspace_names);
	ATF_TP_ADD_TC(tp, requests);
	ATF_TP_ADD_TC(tp, pool_requests);
	ATF_TP_ADD_TC(tp, container_ids);
	ATF_TP_ADD_TC(tp, output_text);
	return atf_no_error();
}
