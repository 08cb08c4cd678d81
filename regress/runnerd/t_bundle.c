/* SPDX-License-Identifier: ISC */
/* The launcher's checks on what the engine asks of it (helperlib/request.c). */
#include <sys/stat.h>
#include <sys/wait.h>

#include <atf-c.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <jansson.h>
#include <string.h>

#include "../../common/config.h"

#include "launcher.h"
#include "output.h"

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
	char a[CONTAINER_ID_LEN], b[CONTAINER_ID_LEN];
	size_t i;

	/* as- and 16 hex digits, a new one each time. */
	ATF_REQUIRE(container_id_new(a) == 0);
	ATF_REQUIRE(container_id_new(b) == 0);
	ATF_CHECK_EQ(strlen(a), 3 + 16);
	ATF_CHECK(strncmp(a, "as-", 3) == 0);
	for (i = 3; a[i] != '\0'; i++)
		ATF_CHECK(strchr("0123456789abcdef", a[i]) != NULL);
	ATF_CHECK(strcmp(a, b) != 0);
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

#define FFFD	"\xef\xbf\xbd"

/* Sandbox output is bytes; collected files are JSON text. */
ATF_TC_WITHOUT_HEAD(output_text);
ATF_TC_BODY(output_text, tc)
{
	check_text("plain\n", 6, "plain\n");
	check_text("caf\xc3\xa9", 5, "caf\xc3\xa9");
	check_text("\xf0\x9f\x99\x82", 4, "\xf0\x9f\x99\x82");
	check_text("\xff\xfe", 2, FFFD FFFD);
	check_text("\xc0\xaf", 2, FFFD FFFD);		/* overlong '/' */
	check_text("\xed\xa0\x80", 3, FFFD FFFD FFFD);	/* surrogate */
	check_text("x\xc3", 2, "x" FFFD);		/* cut by the cap */
	check_text("", 0, "");
	/* A collected file is read up to a NUL: none is left in it. */
	check_text("a\0b", 3, "a" FFFD "b");
}

static void
check_output(const char *in, size_t len, const char *b64)
{
	json_t *r = json_object();
	const char *got;

	/* A base64 copy of an earlier, longer cut goes. */
	ATF_REQUIRE(json_object_set_new(r, "stdout_base64",
	    json_string("stale")) == 0);
	ATF_REQUIRE(output_set(r, "stdout", in, len) == 0);
	ATF_CHECK(json_is_string(json_object_get(r, "stdout")));
	got = json_string_value(json_object_get(r, "stdout_base64"));
	if (b64 == NULL)
		ATF_CHECK_MSG(got == NULL, "a base64 copy of UTF-8: %s", got);
	else
		ATF_CHECK_STREQ(got != NULL ? got : "(none)", b64);
	json_decref(r);
}

/* The exact bytes as base64 when, and only when, they are not UTF-8. */
ATF_TC_WITHOUT_HEAD(output_bytes);
ATF_TC_BODY(output_bytes, tc)
{
	json_t *r;

	check_output("a\0b", 3, NULL);
	r = json_object();
	ATF_REQUIRE(output_set(r, "out", "a\0b\0", 4) == 0);
	ATF_CHECK(json_string_length(json_object_get(r, "out")) == 4 &&
	    memcmp(json_string_value(json_object_get(r, "out")), "a\0b\0",
	    4) == 0);
	json_decref(r);
	check_output("caf\xc3\xa9", 5, NULL);
	check_output("", 0, NULL);
	check_output("a\xff\0", 3, "Yf8A");
	check_output("x\xc3", 2, "eMM=");
	/* A cut goes back to the start of the character it would split. */
	ATF_CHECK_EQ(output_cut("ab\xe2\x82\xac", 4), 2);
	ATF_CHECK_EQ(output_cut("ab\xe2\x82\xac", 3), 2);
	ATF_CHECK_EQ(output_cut("ab\xe2\x82\xac", 2), 2);
	ATF_CHECK_EQ(output_cut("abc", 1), 1);
	/* Not inside a character, just bad bytes: cut where asked. */
	ATF_CHECK_EQ(output_cut("\x80\x80\x80\x80\x80\x80", 5), 5);
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

static void
file_put(const char *path, const char *text, mode_t mode)
{
	int fd;

	ATF_REQUIRE((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode)) != -1);
	ATF_REQUIRE(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	ATF_REQUIRE(fchmod(fd, mode) == 0);
	close(fd);
}

/*
 * A host tree of /etc copied into the shared root (launcher/etccopy.c):
 * links stay links, never followed; modes are the host's; a fifo is
 * left out; a second copy replaces the first whole, and a part-made
 * copy a crash left is cleared.
 */
ATF_TC_WITHOUT_HEAD(etc_tree_copy);
ATF_TC_BODY(etc_tree_copy, tc)
{
	char cwd[PATH_MAX], host[PATH_MAX], root[PATH_MAX], copy[PATH_MAX];
	char cmd[3 * PATH_MAX], path[PATH_MAX + 16], target[64];
	struct stat st;
	ssize_t n;

	(void)tc;
	ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != NULL);
	ATF_REQUIRE(pathf(host, sizeof(host), "%s/host/tree", cwd) == 0);
	ATF_REQUIRE(pathf(root, sizeof(root), "%s/root", cwd) == 0);
	ATF_REQUIRE(pathf(copy, sizeof(copy), "%s%s", root, host) == 0);
	ATF_REQUIRE(pathf(cmd, sizeof(cmd), "mkdir -p '%s/host/tree/sub' '%s%s/host'",
	    cwd, root, cwd) == 0);
	ATF_REQUIRE(system(cmd) == 0);
	ATF_REQUIRE(chmod(host, 0751) == 0);
	ATF_REQUIRE(chmod("host/tree/sub", 0750) == 0);
	file_put("host/tree/secret", "key\n", 0600);
	file_put("host/tree/sub/cfg", "a=1\n", 0644);
	ATF_REQUIRE(symlink("/nonexistent/target", "host/tree/link") == 0);
	ATF_REQUIRE(symlink("sub", "host/tree/dirlink") == 0);
	ATF_REQUIRE(mkfifo("host/tree/fifo", 0644) == 0);

	ATF_REQUIRE_EQ(host_tree_install(root, host), 0);
	ATF_CHECK(stat(copy, &st) == 0 && (st.st_mode & 07777) == 0751);
	ATF_REQUIRE(pathf(path, sizeof(path), "%s/secret", copy) == 0);
	ATF_CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 &&
	    st.st_size == 4);
	ATF_REQUIRE(pathf(path, sizeof(path), "%s/sub", copy) == 0);
	ATF_CHECK(lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	    (st.st_mode & 07777) == 0750);
	ATF_REQUIRE(pathf(path, sizeof(path), "%s/sub/cfg", copy) == 0);
	ATF_CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644);
	ATF_REQUIRE(pathf(path, sizeof(path), "%s/link", copy) == 0);
	ATF_CHECK((n = readlink(path, target, sizeof(target) - 1)) > 0 &&
	    (target[n] = '\0', strcmp(target, "/nonexistent/target") == 0));
	ATF_REQUIRE(pathf(path, sizeof(path), "%s/dirlink", copy) == 0);
	ATF_CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode));
	ATF_REQUIRE(pathf(path, sizeof(path), "%s/fifo", copy) == 0);
	ATF_CHECK(lstat(path, &st) == -1 && errno == ENOENT);

	/* Again, after the host's tree changed and a crash left a .new. */
	ATF_REQUIRE(unlink("host/tree/secret") == 0);
	file_put("host/tree/added", "b=2\n", 0644);
	ATF_REQUIRE(pathf(path, sizeof(path), "%s.new", copy) == 0);
	ATF_REQUIRE(mkdir(path, 0700) == 0);
	ATF_REQUIRE(pathf(path, sizeof(path), "%s.new/junk", copy) == 0);
	file_put(path, "x", 0600);
	ATF_REQUIRE_EQ(host_tree_install(root, host), 0);
	ATF_REQUIRE(pathf(path, sizeof(path), "%s/secret", copy) == 0);
	ATF_CHECK(lstat(path, &st) == -1 && errno == ENOENT);
	ATF_REQUIRE(pathf(path, sizeof(path), "%s/added", copy) == 0);
	ATF_CHECK(stat(path, &st) == 0);
	ATF_REQUIRE(pathf(path, sizeof(path), "%s.new", copy) == 0);
	ATF_CHECK(lstat(path, &st) == -1 && errno == ENOENT);
}

/*
 * The shared root's copies of the host's /etc trees: one for each of
 * /etc/python3* here, and none of a tree the host no longer has.
 */
ATF_TC(etc_trees_pruned);
ATF_TC_HEAD(etc_trees_pruned, tc)
{
	atf_tc_set_md_var(tc, "require.files", "/etc/python3");
}
ATF_TC_BODY(etc_trees_pruned, tc)
{
	char cwd[PATH_MAX], root[PATH_MAX], path[PATH_MAX];
	struct stat st;

	(void)tc;
	ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != NULL);
	ATF_REQUIRE(pathf(root, sizeof(root), "%s/root", cwd) == 0);
	ATF_REQUIRE(mkdir("root", 0755) == 0 && mkdir("root/etc", 0755) == 0);
	/* A Python since removed from the host, and a crash's part-copy. */
	ATF_REQUIRE(mkdir("root/etc/python3.0", 0755) == 0);
	file_put("root/etc/python3.0/sitecustomize.py", "x", 0644);
	ATF_REQUIRE(mkdir("root/etc/python3.new", 0755) == 0);
	ATF_REQUIRE_EQ(etc_trees_install(root), 0);
	ATF_CHECK(lstat("root/etc/python3.0", &st) == -1 && errno == ENOENT);
	ATF_CHECK(lstat("root/etc/python3.new", &st) == -1 && errno == ENOENT);
	ATF_CHECK(lstat("root/etc/python3", &st) == 0 && S_ISDIR(st.st_mode));
	ATF_REQUIRE(pathf(path, sizeof(path), "%s/etc/python3/debian_config",
	    root) == 0);
	ATF_CHECK(stat("/etc/python3/debian_config", &st) == -1 ||
	    stat(path, &st) == 0);
}

/*
 * The launcher leaves user namespaces to runsc's --oci-seccomp only
 * when this machine's section of runsc's syscall table has clone3
 * unimplemented (launcher/userns.c); anything else keeps sandbox-init.
 */
ATF_TC_WITHOUT_HEAD(syscall_table_clone3);
ATF_TC_BODY(syscall_table_clone3, tc)
{
#if defined(__x86_64__)
#define HERE	"linux/amd64:\n"
#define OTHER	"linux/arm64:\n"
#else
#define HERE	"linux/arm64:\n"
#define OTHER	"linux/amd64:\n"
#endif
#define TOP	"\nNUM  NAME   SUPPORT          NOTE\n" \
	"56   clone  Partial Support  Mount namespace not supported.\n"

	(void)tc;
	ATF_CHECK(table_lacks_clone3(HERE TOP "435  clone3  Unimplemented  "
	    "Returns \"invalid system call number\".\n"));
	ATF_CHECK(table_lacks_clone3(OTHER "435  clone3  Full Support\n" HERE
	    "435  clone3  Unimplemented  Returns ENOSYS.\n"));
	/* A runsc that has clone3, here or in this machine's section. */
	ATF_CHECK(!table_lacks_clone3(HERE "435  clone3  Full Support  "
	    "Fully Supported.\n"));
	ATF_CHECK(!table_lacks_clone3(HERE "435  clone3  Partial Support  "
	    "Namespaces not supported.\n" OTHER "435  clone3  Unimplemented\n"));
	/* Nothing said of clone3 here, or no table at all. */
	ATF_CHECK(!table_lacks_clone3(OTHER "435  clone3  Unimplemented\n"));
	ATF_CHECK(!table_lacks_clone3(HERE));
	ATF_CHECK(!table_lacks_clone3(""));
	ATF_CHECK(!table_lacks_clone3("usage: runsc <flags> <subcommand>\n"));
#undef TOP
#undef HERE
#undef OTHER
}

static int
cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The render's and the init cache builder's sandbox (bwrap_terraform)
 * has runnerd(8)'s environment and nothing else (PWD is the shell's),
 * and HOME is an empty directory it cannot write.
 */
ATF_TC(namespace_sandbox_environment);
ATF_TC_HEAD(namespace_sandbox_environment, tc)
{
	atf_tc_set_md_var(tc, "require.user", "root");
	atf_tc_set_md_var(tc, "require.progs", "/usr/bin/bwrap");
}
ATF_TC_BODY(namespace_sandbox_environment, tc)
{
	static const char want[] = "GIT_CONFIG_GLOBAL=/dev/null "
	    "GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 HOME=/run/home "
	    "LANG=C.UTF-8 PATH=/usr/local/bin:/usr/bin:/bin PWD=/work "
	    "TF_CLI_CONFIG_FILE=/dev/null TMPDIR=/tmp "
	    "XDG_CACHE_HOME=/run/home XDG_CONFIG_HOME=/run/home "
	    "XDG_DATA_HOME=/run/home home=0 ";
	struct as_config conf;
	char work[PATH_MAX], buf[8192], got[8192] = "", *lines[64], *p;
	size_t len = 0, n = 0, i;
	ssize_t r;
	int fds[2], status;
	pid_t pid;

	config_defaults(&conf);
	ATF_REQUIRE(sandbox_init_find(atf_tc_get_config_var(tc, "bindir")) ==
	    0);
	ATF_REQUIRE(getcwd(work, sizeof(work)) != NULL);
	strlcat(work, "/work", sizeof(work));
	ATF_REQUIRE(mkdir(work, 0700) == 0);
	ATF_REQUIRE(chown(work, SANDBOX_UID, SANDBOX_GID) == 0);
	ATF_REQUIRE(pipe(fds) == 0);
	ATF_REQUIRE((pid = fork()) != -1);
	if (pid == 0)
		bwrap_terraform(&conf, work, NULL, "env; echo home=$(ls -A "
		    "\"$HOME\" 2>&1 | wc -l); touch \"$HOME/.gitconfig\" && "
		    "echo home_written", -1, fds[1], 2);
	close(fds[1]);
	while (len < sizeof(buf) - 1 && (r = read(fds[0], buf + len,
	    sizeof(buf) - 1 - len)) > 0)
		len += (size_t)r;
	buf[len] = '\0';
	close(fds[0]);
	ATF_REQUIRE(waitpid(pid, &status, 0) == pid);
	for (p = strtok(buf, "\n"); p != NULL && n < 64; p = strtok(NULL,
	    "\n"))
		lines[n++] = p;
	qsort(lines, n, sizeof(*lines), cmp_line);
	for (i = 0; i < n; i++) {
		strlcat(got, lines[i], sizeof(got));
		strlcat(got, " ", sizeof(got));
	}
	ATF_CHECK_STREQ(got, want);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, namespace_sandbox_environment);
	ATF_TP_ADD_TC(tp, rm_tree_links);
	ATF_TP_ADD_TC(tp, etc_tree_copy);
	ATF_TP_ADD_TC(tp, etc_trees_pruned);
	ATF_TP_ADD_TC(tp, syscall_table_clone3);
	ATF_TP_ADD_TC(tp, workspace_names);
	ATF_TP_ADD_TC(tp, requests);
	ATF_TP_ADD_TC(tp, pool_requests);
	ATF_TP_ADD_TC(tp, container_ids);
	ATF_TP_ADD_TC(tp, output_text);
	ATF_TP_ADD_TC(tp, output_bytes);
	return atf_no_error();
}
