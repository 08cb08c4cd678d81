/* SPDX-License-Identifier: ISC */
/*
 * The terraform pool's sandboxes (runnerd.terraform_pool): started
 * ahead of any call, each used by exactly one call, then removed like
 * any one-shot sandbox (launcher.c starts and claims them, and
 * helperlib/pool.c counts them).
 *
 * A pooled sandbox starts with nothing of any call's: an empty /work,
 * an empty plugin directory, an empty /run/secrets and an empty
 * PLAN_MOUNT, each a directory of its bundle, and the operator's whole mirror read-only
 * at MIRROR_MOUNT.  Its shell waits for one line on its stdin.  A call
 * that claims it gets its module snapshot copied into /work (by
 * descriptors, workspace_seed_confined), its credential into
 * /run/secrets and, into the plugin directory, a link to each file of
 * each provider the policy allows; then its script is written as that
 * line.  runsc shares the bundle's directories with the sandbox
 * (--file-access-mounts=shared is its default), so the sandbox sees
 * what the launcher put there after it started.
 *
 * Terraform installs from -plugin-dir only what it finds there, and it
 * does not follow a linked directory (only linked files), so the links
 * are made file by file under real directories.  A provider the policy
 * does not allow is in the mirror, readable, but not in the plugin
 * directory: init fails naming it, as with a cold sandbox.  Code in the
 * sandbox that reads a provider binary gets nothing it could not bring
 * itself: the mirror holds no secret.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "launcher.h"

#define MIRROR_MOUNT	"/run/mirror"	/* the operator's, read-only */

/* Runs the one line it is given; until then, nothing. */
static const char pool_wait[] = "IFS= read -r script && eval \"$script\"";

json_t *
tfpool_box_request(void)
{
	return json_pack("{s:[s, s, s], s:b}", "argv", "/bin/sh", "-c",
	    pool_wait, "pooled", 1);
}

/* A pooled bundle's mounts beyond a one-shot's. */
int
tfpool_mounts(const struct as_config *conf, const char *dir, json_t *mounts)
{
	const char *mirror = conf->runnerd.terraform_mirror;

	if (bundle_dir_mount(dir, "providers", PROVIDER_MOUNT, mounts) == -1 ||
	    bundle_dir_mount(dir, "secrets", "/run/secrets", mounts) == -1 ||
	    bundle_dir_mount(dir, PLAN_DIR, PLAN_MOUNT, mounts) == -1)
		return -1;
	if (mirror[0] != '\0' &&
	    json_array_append_new(mounts, bind_mount(MIRROR_MOUNT, mirror, 1)) ==
	    -1)
		return -1;
	return 0;
}

/*
 * The script of a request a pooled sandbox can run: terraform's (it
 * asks for the pool), ["/bin/sh", "-c", one line], with no egress
 * (a pooled sandbox has no network), no files_in and not the agent's
 * own code (whose limits differ, launcher/bundle.c); else NULL.
 */
const char *
tfpool_script(const json_t *req)
{
	const json_t *argv = json_object_get(req, "argv");
	const char *shell, *flag, *script;

	shell = json_string_value(json_array_get(argv, 0));
	flag = json_string_value(json_array_get(argv, 1));
	script = json_string_value(json_array_get(argv, 2));
	if (!json_is_true(json_object_get(req, "poolable")) ||
	    json_is_true(json_object_get(req, "agent_code")) ||
	    json_array_size(json_object_get(req, "egress")) > 0 ||
	    json_object_get(req, "files_in") != NULL ||
	    json_array_size(argv) != 3 || shell == NULL || flag == NULL ||
	    script == NULL || strcmp(shell, "/bin/sh") != 0 ||
	    strcmp(flag, "-c") != 0 || strchr(script, '\n') != NULL)
		return NULL;
	return script;
}

/* Runs fn on each visible entry of path: a version, a platform, a file. */
static int
entries_each(const char *path, int (*fn)(const char *, const char *, void *),
    void *arg)
{
	struct dirent *e;
	DIR *d;
	int r = 0;

	if ((d = opendir(path)) == NULL)
		return -1;
	while (r == 0 && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			r = fn(path, e->d_name, arg);
	closedir(d);
	return r;
}

struct links {
	const char	*top;		/* the bundle's plugin directory */
	const char	*name;		/* the provider */
	const char	*version;
	const char	*platform;
};

static int
link_file(const char *path, const char *file, void *arg)
{
	struct links *l = arg;
	char dir[PATH_MAX], dst[PATH_MAX], target[PATH_MAX];

	(void)path;
	if (pathf(dir, sizeof(dir), "%s/%s/%s/%s", l->top, l->name,
	    l->version, l->platform) == -1 ||
	    pathf(dst, sizeof(dst), "%s/%s", dir, file) == -1 ||
	    pathf(target, sizeof(target), MIRROR_MOUNT "/%s/%s/%s/%s",
	    l->name, l->version, l->platform, file) == -1)
		return -1;
	return symlink(target, dst);
}

static int
link_platform(const char *path, const char *platform, void *arg)
{
	struct links *l = arg;
	char rel[PATH_MAX], sub[PATH_MAX];

	l->platform = platform;
	if (pathf(rel, sizeof(rel), "%s/%s/%s", l->name, l->version,
	    platform) == -1 || pathf(sub, sizeof(sub), "%s/%s", path,
	    platform) == -1 || plugin_dir_make(l->top, rel) == -1)
		return -1;
	return entries_each(sub, link_file, l);
}

static int
link_version(const char *path, const char *version, void *arg)
{
	struct links *l = arg;
	char sub[PATH_MAX];

	l->version = version;
	if (pathf(sub, sizeof(sub), "%s/%s", path, version) == -1)
		return -1;
	return entries_each(sub, link_platform, l);
}

/* An allowed provider of the mirror: its files linked, file by file. */
static int
link_provider(const char *name, const char *src, void *arg)
{
	struct links *l = arg;

	l->name = name;
	return entries_each(src, link_version, l);
}

/*
 * What the claiming call needs besides its workspace: its allowed
 * providers in the plugin directory and its credential (credfd, or -1).
 */
int
tfpool_claim(const struct as_config *conf, const char *dir, const json_t *req,
    int credfd, char *why, size_t whylen)
{
	char top[PATH_MAX], cred[PATH_MAX];
	struct links l;

	memset(&l, 0, sizeof(l));
	l.top = top;
	if (pathf(top, sizeof(top), "%s/providers", dir) == -1 ||
	    providers_each(conf, json_object_get(req, "providers"),
	    link_provider, &l) == -1) {
		snprintf(why, whylen, "providers: %s", strerror(errno));
		return -1;
	}
	if (credfd != -1 && (pathf(cred, sizeof(cred), "%s/secrets/credential",
	    dir) == -1 || credential_write(cred, credfd) == -1)) {
		snprintf(why, whylen, "credential: %s", strerror(errno));
		return -1;
	}
	return 0;
}
