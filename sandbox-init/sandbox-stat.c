/* SPDX-License-Identifier: ISC */
/*
 * sandbox-stat.so: preloaded into every dynamically linked program of a
 * gVisor sandbox (the shared root's /etc/ld.so.preload, which runnerd
 * writes; the agent cannot).  This runsc (20221219) answers EINVAL to
 * statx and fstatat given AT_NO_AUTOMOUNT, and coreutils passes that
 * flag to statx for every file ls and stat look at (since 9.1, so that
 * listing a directory does not trigger an automount).  The flag only
 * keeps an automount point from being triggered; a gVisor sandbox has
 * none, and Linux's fstatat implies it since 4.11: clearing it changes
 * nothing else.  A program that makes the system call itself, or a
 * static one, is not helped; none of those measured passes the flag.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <fcntl.h>
#include <unistd.h>

int
statx(int dirfd, const char *path, int flags, unsigned int mask,
    struct statx *buf)
{
	return syscall(SYS_statx, dirfd, path, flags & ~AT_NO_AUTOMOUNT,
	    mask, buf);
}

int
fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return syscall(SYS_newfstatat, dirfd, path, st,
	    flags & ~AT_NO_AUTOMOUNT);
}

/* The same function on a 64-bit system, where struct stat64 is stat. */
int
fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	return syscall(SYS_newfstatat, dirfd, path, st,
	    flags & ~AT_NO_AUTOMOUNT);
}
