/* SPDX-License-Identifier: ISC */
/*
 * What of this host the sandboxes of both helpers get: sandbox-init and
 * sandbox-stat.so, and the allowed providers of the operator's mirror
 * (a gVisor sandbox's bundle, launcher/bundle.c; the render's bwrap
 * sandbox, render.c).
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "launcher.h"

/*
 * sandbox-init and sandbox-stat.so in dir, else beside runnerd's own
 * program (the same build or the same installation); runnerd does not
 * start without them.
 */
static char init_path[PATH_MAX], stat_path[PATH_MAX];

int
sandbox_init_find(const char *dir)
{
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (dir == NULL) {
		if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) ==
		    -1)
			return -1;
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL)
			*slash = '\0';
		dir = self;
	}
	if (pathf(init_path, sizeof(init_path), "%s/sandbox-init", dir) ==
	    -1 || pathf(stat_path, sizeof(stat_path), "%s/sandbox-stat.so",
	    dir) == -1)
		return -1;
	return access(init_path, X_OK) == -1 ? -1 : access(stat_path, R_OK);
}

const char *
sandbox_init_path(void)
{
	return init_path;
}

const char *
sandbox_stat_path(void)
{
	return stat_path;
}

/*
 * Each allowed provider that the operator's mirror has
 * (runnerd.terraform_mirror): fn(name, its directory in the mirror).  A
 * provider that is not allowed is simply not there, so terraform init
 * fails naming it.
 */
int
providers_each(const struct as_config *conf, const json_t *providers,
    int (*fn)(const char *, const char *, void *), void *arg)
{
	const char *mirror = conf->runnerd.terraform_mirror, *name;
	char src[PATH_MAX];
	struct stat st;
	json_t *v;
	size_t i;

	if (mirror[0] == '\0')
		return 0;
	json_array_foreach(providers, i, v) {
		name = json_string_value(v);
		if (pathf(src, sizeof(src), "%s/%s", mirror, name) == -1)
			return -1;
		if (stat(src, &st) == -1 || !S_ISDIR(st.st_mode))
			continue;
		if (fn(name, src, arg) == -1)
			return -1;
	}
	return 0;
}
