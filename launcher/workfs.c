/* SPDX-License-Identifier: ISC */
/*
 * A sandbox's /work is a tmpfs of its own, mounted by the launcher on
 * the bundle's work/ before anything is put there, at most
 * runnerd.work_max bytes: past it a write inside fails with ENOSPC and
 * the call ends as it would otherwise.  The state directory (audit
 * spool, journal, saved plans, snapshots) is then never where a
 * sandbox's writes land: what is copied back from /work (terraform
 * state, a plan) is at most work_max.
 *
 * Its pages are charged to the memory cgroup of whoever first touches
 * them: runsc's gofer and sandbox, which write /work, run in the
 * sandbox's cgroup (measured: 100 MiB written there is 100 MiB of that
 * cgroup's shmem, and nothing more), so that /work counts against that
 * sandbox and no one else, and its limit has work_max on top
 * (helperlib/cgroup.c).  A loop-mounted image would put the bytes back
 * on the state file system, and a project quota needs a file system
 * mounted for it.
 *
 * The mount is detached at teardown, and by the start-up sweep after a
 * crash: a lazy unmount, so that a gofer still closing its files does
 * not keep it in the mount table.
 */
#include <sys/types.h>
#include <sys/mount.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "launcher.h"

int
work_mount(const struct as_config *conf, const char *work)
{
	char opts[128];

	snprintf(opts, sizeof(opts), "size=%ld,mode=0700,uid=%d,gid=%d",
	    conf->runnerd.work_max, SANDBOX_UID, SANDBOX_GID);
	return mount("tmpfs", work, "tmpfs", MS_NOSUID | MS_NODEV, opts);
}

/* rm -rf of a bundle, /work's mount first: 0 when it is gone. */
int
bundle_remove(const char *dir)
{
	char work[PATH_MAX];

	/* Never the launcher's own /work. */
	if (dir[0] == '\0') {
		errno = EINVAL;
		return -1;
	}
	if (pathf(work, sizeof(work), "%s/work", dir) == -1)
		return -1;
	/* EINVAL: not a mount point (a bundle that failed before it). */
	if (umount2(work, MNT_DETACH | UMOUNT_NOFOLLOW) == -1 &&
	    errno != EINVAL && errno != ENOENT)
		return -1;
	return rm_tree(dir);
}
