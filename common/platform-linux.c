/* SPDX-License-Identifier: ISC */
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "platform.h"

/* A memfd whose seals stop whoever receives it from changing or growing it. */
int
plat_sealed_fd(const char *name, const void *buf, size_t len)
{
	int fd, saved;

	if ((fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING)) == -1)
		return -1;
	if (write_full(fd, buf, len) == -1)
		goto fail;
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE | F_SEAL_SEAL) == -1 ||
	    lseek(fd, 0, SEEK_SET) == -1)
		goto fail;
	return fd;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

static int
openat2_how(int dirfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC);
	how.resolve = resolve | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* openat2(2) where the kernel has it, else O_NOFOLLOW on the one name. */
int
plat_open_beneath(int dirfd, const char *name, int flags)
{
	int fd;

	fd = openat2_how(dirfd, name, flags, RESOLVE_BENEATH);
	if (fd != -1 || errno != ENOSYS)
		return fd;
	return openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC);
}

int
plat_open_nolinks(const char *path, int flags)
{
	return openat2_how(AT_FDCWD, path, flags, 0);
}

int
plat_signal_fd(const sigset_t *set)
{
	return signalfd(-1, set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int
plat_signal_next(int fd)
{
	struct signalfd_siginfo si;

	if (read(fd, &si, sizeof(si)) != sizeof(si))
		return 0;
	return (int)si.ssi_signo;
}
