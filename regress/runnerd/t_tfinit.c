/* SPDX-License-Identifier: ISC */
/*
 * The init cache's keys and copies (launcher/tfinit.c): a key for each
 * lock file and provider list, and an entry copied into a workspace
 * only when it holds directories, small files and links into the
 * plugin directory.
 */
#include <sys/stat.h>

#include <atf-c.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "../../common/config.h"
#include "launcher.h"

#define SNAPSHOT "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define LOCK "provider \"registry.terraform.io/hashicorp/null\" {\n" \
	"  version = \"3.2.2\"\n}\n"
#define LINK "/run/providers/registry.terraform.io/hashicorp/null/3.2.2/linux_amd64"

static struct as_config	 conf;

static json_t *
providers(void)
{
	return json_pack("[s]", "registry.terraform.io/hashicorp/null");
}

static void
write_file(const char *path, const char *text)
{
	FILE *f;

	ATF_REQUIRE((f = fopen(path, "w")) != NULL);
	fputs(text, f);
	ATF_REQUIRE(fclose(f) == 0);
}

/*
 * runnerd's state with a snapshot holding lock (NULL: none), a
 * workspace, and the request a terraform call would make; the cache
 * entry's path for it in entry.
 */
static json_t *
setup(const char *lock, char entry[PATH_MAX])
{
	char cwd[PATH_MAX], key[SHA256_HEX_LEN + 1];
	json_t *req, *p = providers();

	ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != NULL);
	ATF_REQUIRE(pathf(conf.runnerd.state_dir,
	    sizeof(conf.runnerd.state_dir), "%s/state", cwd) == 0);
	ATF_REQUIRE(mkdir("state", 0700) == 0);
	ATF_REQUIRE(mkdir("state/tfinit", 0700) == 0);
	ATF_REQUIRE(mkdir("state/wd", 0700) == 0);
	ATF_REQUIRE(mkdir("state/wd/snapshots", 0700) == 0);
	ATF_REQUIRE(mkdir("state/wd/snapshots/" SNAPSHOT, 0700) == 0);
	ATF_REQUIRE(mkdir("work", 0700) == 0);
	if (lock != NULL)
		write_file("state/wd/snapshots/" SNAPSHOT "/.terraform.lock.hcl",
		    lock);
	ATF_REQUIRE(tfinit_key(p, lock, lock != NULL ? strlen(lock) : 0,
	    key) == 0);
	ATF_REQUIRE(pathf(entry, PATH_MAX, "%s/state/tfinit/%s", cwd, key) ==
	    0);
	req = json_pack("{s:s, s:s, s:o}", "state", "state/wd", "snapshot",
	    SNAPSHOT, "providers", p);
	ATF_REQUIRE(req != NULL);
	return req;
}

/* An entry as the builder's is taken in: a link and plugin_path. */
static void
entry_make(const char *entry, const char *link)
{
	char path[PATH_MAX];

	ATF_REQUIRE(mkdir(entry, 0755) == 0);
	ATF_REQUIRE(pathf(path, sizeof(path), "%s/providers", entry) == 0);
	ATF_REQUIRE(mkdir(path, 0755) == 0);
	ATF_REQUIRE(pathf(path, sizeof(path), "%s/providers/null", entry) ==
	    0);
	ATF_REQUIRE(symlink(link, path) == 0);
	ATF_REQUIRE(pathf(path, sizeof(path), "%s/plugin_path", entry) == 0);
	write_file(path, "[\"/run/providers\"]\n");
}

ATF_TC_WITHOUT_HEAD(keys);
ATF_TC_BODY(keys, tc)
{
	char a[SHA256_HEX_LEN + 1], b[SHA256_HEX_LEN + 1];
	json_t *p = providers(), *none = json_array();

	ATF_REQUIRE(tfinit_key(p, LOCK, strlen(LOCK), a) == 0);
	ATF_REQUIRE(tfinit_key(p, LOCK, strlen(LOCK), b) == 0);
	ATF_CHECK_STREQ(a, b);
	ATF_REQUIRE(tfinit_key(p, LOCK, strlen(LOCK) - 1, b) == 0);
	ATF_CHECK(strcmp(a, b) != 0);
	ATF_REQUIRE(tfinit_key(none, LOCK, strlen(LOCK), b) == 0);
	ATF_CHECK_MSG(strcmp(a, b) != 0, "the allowed providers are no part");
	/* No lock file is not an empty one. */
	ATF_REQUIRE(tfinit_key(p, NULL, 0, a) == 0);
	ATF_REQUIRE(tfinit_key(p, "", 0, b) == 0);
	ATF_CHECK(strcmp(a, b) != 0);
	json_decref(p);
	json_decref(none);
}

ATF_TC(seeded);
ATF_TC_HEAD(seeded, tc)
{
	atf_tc_set_md_var(tc, "descr", "an entry is copied into the "
	    "workspace's .terraform, links as links, owned by the sandbox");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(seeded, tc)
{
	char entry[PATH_MAX], target[PATH_MAX];
	json_t *req = setup(LOCK, entry), *r;
	struct stat st;
	ssize_t n;

	entry_make(entry, LINK);
	ATF_REQUIRE((r = tfinit_seed(&conf, "work", 0, req)) != NULL);
	ATF_CHECK(json_is_true(json_object_get(r, "cached")));
	ATF_REQUIRE(lstat("work/.terraform/providers/null", &st) == 0);
	ATF_CHECK(S_ISLNK(st.st_mode));
	ATF_CHECK_EQ(st.st_uid, 65534);
	n = readlink("work/.terraform/providers/null", target,
	    sizeof(target) - 1);
	ATF_REQUIRE(n > 0);
	target[n] = '\0';
	ATF_CHECK_STREQ(target, LINK);
	ATF_REQUIRE(stat("work/.terraform/plugin_path", &st) == 0);
	ATF_CHECK_EQ(st.st_uid, 65534);
	json_decref(r);
	json_decref(req);
}

ATF_TC_WITHOUT_HEAD(missing);
ATF_TC_BODY(missing, tc)
{
	char entry[PATH_MAX];
	json_t *req = setup(LOCK, entry), *r;

	/* No entry: the key and the lock file, for the builder. */
	ATF_REQUIRE((r = tfinit_seed(&conf, "work", 0, req)) != NULL);
	ATF_CHECK(!json_is_true(json_object_get(r, "cached")));
	ATF_CHECK_STREQ(json_string_value(json_object_get(r, "lock")), LOCK);
	ATF_CHECK_STREQ(json_string_value(json_object_get(r, "key")),
	    strrchr(entry, '/') + 1);
	ATF_CHECK(access("work/.terraform", F_OK) == -1);
	json_decref(r);
	json_decref(req);
}

/* An entry with what the cache never holds is not copied at all. */
static void
refused(const char *link, int fifo)
{
	char entry[PATH_MAX], path[PATH_MAX];
	json_t *req = setup(NULL, entry), *r;

	entry_make(entry, link);
	if (fifo) {
		ATF_REQUIRE(pathf(path, sizeof(path), "%s/fifo", entry) == 0);
		ATF_REQUIRE(mkfifo(path, 0644) == 0);
	}
	r = tfinit_seed(&conf, "work", 0, req);
	ATF_CHECK_MSG(r == NULL, "copied: %s", json_dumps(r, 0));
	ATF_CHECK_MSG(access("work/.terraform", F_OK) == -1,
	    "half a copy left");
	json_decref(r);
	json_decref(req);
}

ATF_TC(bad_links);
ATF_TC_HEAD(bad_links, tc)
{
	atf_tc_set_md_var(tc, "descr", "a link out of the plugin directory, "
	    "through .., or a fifo: nothing copied");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(bad_links, tc)
{
	refused("/etc/shadow", 0);
}

ATF_TC(dotdot);
ATF_TC_HEAD(dotdot, tc)
{
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(dotdot, tc)
{
	refused("/run/providers/../../etc", 0);
}

ATF_TC(fifo);
ATF_TC_HEAD(fifo, tc)
{
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(fifo, tc)
{
	refused(LINK, 1);
}

ATF_TC_WITHOUT_HEAD(big_lock);
ATF_TC_BODY(big_lock, tc)
{
	static char lock[70 * 1024];
	char entry[PATH_MAX];
	json_t *req;

	memset(lock, '#', sizeof(lock) - 1);
	req = setup(lock, entry);
	/* Past 64 KiB no key: init runs in the sandbox as before. */
	ATF_CHECK(tfinit_seed(&conf, "work", 0, req) == NULL);
	json_decref(req);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, keys);
	ATF_TP_ADD_TC(tp, seeded);
	ATF_TP_ADD_TC(tp, missing);
	ATF_TP_ADD_TC(tp, bad_links);
	ATF_TP_ADD_TC(tp, dotdot);
	ATF_TP_ADD_TC(tp, fifo);
	ATF_TP_ADD_TC(tp, big_lock);
	return atf_no_error();
}
