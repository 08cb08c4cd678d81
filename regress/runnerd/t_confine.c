/* SPDX-License-Identifier: ISC */
/*
 * The launcher reads agent trees only in a Landlock domain
 * (helperlib/confine.c): a read outside the paths it was given fails
 * there, even as root.
 */
#include <sys/stat.h>

#include <atf-c.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "../../common/config.h"
#include "../../common/sandbox.h"
#include "launcher.h"

static struct as_config	 conf;
static char		 base[PATH_MAX];

/* A tree with a file, a secret beside it, and runnerd's state dir. */
static void
setup(void)
{
	char path[PATH_MAX];
	FILE *f;

	if (sandbox_landlock_abi() < 1)
		atf_tc_fail("Landlock is not available: the confinement cannot be proven");
	ATF_REQUIRE(getcwd(base, sizeof(base)) != NULL);
	strlcpy(conf.seccomp, "trap", sizeof(conf.seccomp));
	strlcpy(conf.runnerd.backend, "gvisor", sizeof(conf.runnerd.backend));
	ATF_REQUIRE(pathf(conf.runnerd.state_dir,
	    sizeof(conf.runnerd.state_dir), "%s/state", base) == 0);
	conf.runnerd.output_max = 4096;
	ATF_REQUIRE(mkdir("state", 0700) == 0);
	ATF_REQUIRE(mkdir("state/terraform", 0700) == 0);
	ATF_REQUIRE(mkdir("work", 0700) == 0);
	ATF_REQUIRE(mkdir("outside", 0700) == 0);
	ATF_REQUIRE((f = fopen("work/out.txt", "w")) != NULL);
	fputs("from the sandbox\n", f);
	fclose(f);
	ATF_REQUIRE((f = fopen("outside/secret", "w")) != NULL);
	fputs("host secret\n", f);
	fclose(f);
	ATF_REQUIRE(pathf(path, sizeof(path), "%s/outside/secret", base) == 0);
	/* Readable here, outside the domain. */
	ATF_REQUIRE(access(path, R_OK) == 0);
}

static json_t *
try_open(void *arg)
{
	const char *const *paths = arg;
	json_t *r;
	int fd;

	r = json_object();
	for (; *paths != NULL; paths++) {
		fd = open(*paths, O_RDONLY);
		json_object_set_new(r, *paths, json_integer(fd == -1 ? errno :
		    0));
		if (fd != -1)
			close(fd);
	}
	return r;
}

static int
result(json_t *r, const char *path)
{
	ATF_REQUIRE(json_object_get(r, path) != NULL);
	return (int)json_integer_value(json_object_get(r, path));
}

ATF_TC_WITHOUT_HEAD(reads_outside_denied);
ATF_TC_BODY(reads_outside_denied, tc)
{
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	char work[PATH_MAX], in[PATH_MAX], secret[PATH_MAX], why[256];
	const char *probes[] = { in, secret, "/etc/shadow", "/root",
	    "/etc/passwd", NULL };
	json_t *r;

	(void)tc;
	setup();
	ATF_REQUIRE(pathf(work, sizeof(work), "%s/work", base) == 0);
	ATF_REQUIRE(pathf(in, sizeof(in), "%s/work/out.txt", base) == 0);
	ATF_REQUIRE(pathf(secret, sizeof(secret), "%s/outside/secret",
	    base) == 0);
	paths.ro[0] = work;
	r = confined_run(&conf, &paths, try_open, probes, why, sizeof(why));
	ATF_REQUIRE_MSG(r != NULL, "%s", why);
	ATF_CHECK_EQ(result(r, in), 0);
	ATF_CHECK_EQ(result(r, secret), EACCES);
	ATF_CHECK_EQ(result(r, "/etc/shadow"), EACCES);
	ATF_CHECK_EQ(result(r, "/root"), EACCES);
	ATF_CHECK_EQ(result(r, "/etc/passwd"), EACCES);
	json_decref(r);
}

/* A child that dies answers nothing, and the caller hears why. */
static json_t *
die(void *arg)
{
	(void)arg;
	_exit(3);
}

ATF_TC_WITHOUT_HEAD(child_dies);
ATF_TC_BODY(child_dies, tc)
{
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	char why[256];

	(void)tc;
	setup();
	ATF_CHECK(confined_run(&conf, &paths, die, NULL, why,
	    sizeof(why)) == NULL);
	ATF_CHECK(strstr(why, "ended abnormally") != NULL);
}

static int
cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* What the tree copies do with a big directory: glibc asks sysinfo(2). */
static json_t *
sort_many(void *arg)
{
	int v[1000];
	size_t i;

	(void)arg;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		v[i] = (int)(sizeof(v) / sizeof(v[0]) - i);
	qsort(v, sizeof(v) / sizeof(v[0]), sizeof(v[0]), cmp_int);
	return json_pack("{s:i, s:i}", "first", v[0], "last", v[999]);
}

ATF_TC_WITHOUT_HEAD(sorts_many);
ATF_TC_BODY(sorts_many, tc)
{
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	char why[256];
	json_t *r;

	(void)tc;
	setup();
	r = confined_run(&conf, &paths, sort_many, NULL, why, sizeof(why));
	ATF_REQUIRE_MSG(r != NULL, "%s", why);
	ATF_CHECK_EQ(json_integer_value(json_object_get(r, "first")), 1);
	ATF_CHECK_EQ(json_integer_value(json_object_get(r, "last")), 1000);
	json_decref(r);
}

/* The launcher's collection, through that child, still gets its files. */
ATF_TC_WITHOUT_HEAD(collect);
ATF_TC_BODY(collect, tc)
{
	char work[PATH_MAX];
	json_t *req, *r;

	(void)tc;
	setup();
	ATF_REQUIRE(pathf(work, sizeof(work), "%s/work", base) == 0);
	ATF_REQUIRE(symlink("../outside/secret", "work/link") == 0);
	req = json_pack("{s:[s, s, s]}", "files_out", "out.txt", "link",
	    "missing");
	r = json_object();
	workspace_collect_confined(&conf, work, req, r, 1, NULL);
	ATF_CHECK(json_object_get(r, "error") == NULL);
	ATF_CHECK_STREQ(json_string_value(json_object_get(json_object_get(r,
	    "files"), "out.txt")), "from the sandbox\n");
	ATF_CHECK(json_object_get(json_object_get(r, "files"), "link") ==
	    NULL);
	ATF_CHECK_EQ(json_object_size(json_object_get(r, "files")), 1);
	json_decref(req);
	json_decref(r);
}

/*
 * A plan's collect keeps the plan and puts a copy, read-only and the
 * sandbox user's, in its render's workspace, the one other place it
 * may write; a link planted there is not followed.
 */
ATF_TC_WITHOUT_HEAD(plan_to_render);
ATF_TC_BODY(plan_to_render, tc)
{
	char work[PATH_MAX], state[PATH_MAX], render[PATH_MAX], path[PATH_MAX];
	struct stat st;
	json_t *req, *r;
	FILE *f;

	(void)tc;
	setup();
	ATF_REQUIRE(pathf(work, sizeof(work), "%s/work", base) == 0);
	ATF_REQUIRE(pathf(state, sizeof(state), "%s/state/terraform/m",
	    base) == 0);
	ATF_REQUIRE(pathf(render, sizeof(render), "%s/render", base) == 0);
	ATF_REQUIRE(mkdir(state, 0700) == 0);
	ATF_REQUIRE(mkdir("state/terraform/m/plans", 0700) == 0);
	ATF_REQUIRE(mkdir(render, 0700) == 0);
	ATF_REQUIRE((f = fopen("work/plan.tfplan", "w")) != NULL);
	fputs("a saved plan\n", f);
	fclose(f);
	req = json_pack("{s:s, s:s}", "state", state, "plan_save",
	    "plan.tfplan");
	r = json_object();
	workspace_collect_confined(&conf, work, req, r, 1, render);
	ATF_CHECK_MSG(json_object_get(r, "error") == NULL, "%s",
	    json_string_value(json_object_get(r, "error")));
	ATF_REQUIRE(json_is_string(json_object_get(r, "plan_digest")));
	ATF_REQUIRE(pathf(path, sizeof(path), "%s/plan.tfplan", render) == 0);
	ATF_REQUIRE(lstat(path, &st) == 0);
	ATF_CHECK(S_ISREG(st.st_mode));
	/* Root's: the render's uid 65534 reads it and cannot change it. */
	ATF_CHECK_EQ(st.st_mode & 07777, 0444);
	ATF_CHECK_EQ(st.st_uid, 0);
	ATF_CHECK_EQ(st.st_size, (off_t)strlen("a saved plan\n"));
	json_decref(r);

	/* Planted before the copy: the render's plan is a link out. */
	ATF_REQUIRE(unlink(path) == 0);
	ATF_REQUIRE(symlink("../outside/secret", path) == 0);
	r = json_object();
	workspace_collect_confined(&conf, work, req, r, 1, render);
	ATF_CHECK(strstr(json_string_value(json_object_get(r, "error")) ?
	    json_string_value(json_object_get(r, "error")) : "",
	    "render: ") != NULL);
	ATF_REQUIRE((f = fopen("outside/secret", "r")) != NULL);
	ATF_REQUIRE(fgets(path, sizeof(path), f) != NULL);
	fclose(f);
	ATF_CHECK_STREQ(path, "host secret\n");
	json_decref(req);
	json_decref(r);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, plan_to_render);
	ATF_TP_ADD_TC(tp, reads_outside_denied);
	ATF_TP_ADD_TC(tp, child_dies);
	ATF_TP_ADD_TC(tp, collect);
	ATF_TP_ADD_TC(tp, sorts_many);
	return atf_no_error();
}
