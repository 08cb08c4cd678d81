/* SPDX-License-Identifier: ISC */
/*
 * What the suite asks of the kernel beyond POSIX, one function each, so
 * that a port is this header's one file per platform (platform-linux.c
 * here).  Sandboxing is sandbox.h's (sandbox-linux.c) and the peer's
 * credentials sock.h's; the launcher and sandbox-init drive gVisor,
 * which runs on Linux alone.
 */
#ifndef AS_PLATFORM_H
#define AS_PLATFORM_H

#include <signal.h>
#include <stddef.h>

/* A read-only in-memory file holding buf, sealed against any change. */
int	 plat_sealed_fd(const char *, const void *, size_t);
/* One name in a directory, never through a link of any kind. */
int	 plat_open_beneath(int, const char *, int);
/* An absolute path with no link on the way; ENOSYS where not offered. */
int	 plat_open_nolinks(const char *, int);
/* A descriptor that turns readable when a signal of set is pending. */
int	 plat_signal_fd(const sigset_t *);
/* The next pending signal from that descriptor, or 0 when none is. */
int	 plat_signal_next(int);

#endif
