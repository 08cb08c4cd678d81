/* SPDX-License-Identifier: ISC */
/*
 * The gvisor backend, engine side: checks that runsc is there, starts
 * the privileged launcher (launcher/) before runnerd drops anything,
 * and turns start and sessions into messages to it (helper.c).  No
 * fallback: without runsc runnerd does not start.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "backend.h"
#include "launcher.h"
#include "log.h"

static void
mkdirs(const char *dir)
{
	char path[PATH_MAX], *p;

	if (strlcpy(path, dir, sizeof(path)) >= sizeof(path))
		fatalx("%s: path too long", dir);
	for (p = path + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(path, 0755) == -1 && errno != EEXIST)
			fatal("mkdir %s", path);
		*p = '/';
	}
	if (mkdir(path, 0700) == -1 && errno != EEXIST)
		fatal("mkdir %s", path);
}

void
gvisor_init(const struct as_config *conf, sbx_done_cb done,
    sbx_swept_cb swept, sbx_session_cb session, sbx_progress_cb progress)
{
	char runsc_root[PATH_MAX];
	struct stat st;

	if (stat(conf->runnerd.runsc, &st) == -1 || !S_ISREG(st.st_mode) ||
	    access(conf->runnerd.runsc, X_OK) == -1)
		fatalx("gvisor backend: no runsc at %s: install the Debian "
		    "package runsc (apt-get install runsc), or set "
		    "runnerd.runsc; runnerd never runs tools without gVisor",
		    conf->runnerd.runsc);
	if (geteuid() != 0)
		fatalx("gvisor backend: runsc needs root; start runnerd as "
		    "root (it drops to runnerd.user itself)");
	if (access(RENDER_BWRAP, X_OK) == -1)
		fatalx("gvisor backend: no %s: install the Debian package "
		    "bubblewrap (apt-get install bubblewrap); plans are shown "
		    "for approval in a sandbox of it", RENDER_BWRAP);
	if (sandbox_init_find(NULL) == -1)
		fatalx("gvisor backend: no %s, or no sandbox-stat.so beside "
		    "it: make builds them beside runnerd and make install "
		    "installs them there; every sandbox's command runs under "
		    "them", sandbox_init_path());
	mkdirs(conf->runnerd.state_dir);
	if (pathf(runsc_root, sizeof(runsc_root), "%s/runsc",
	    conf->runnerd.state_dir) == -1)
		fatalx("state_dir too long");
	mkdirs(runsc_root);
	helper_start("sandbox launcher", conf, "-L", done, swept, session,
	    progress);
}
