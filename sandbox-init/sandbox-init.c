/* SPDX-License-Identifier: ISC */
/*
 * sandbox-init: the first program of every gVisor sandbox (runnerd puts
 * it at /run/sandbox-init, read-only, and before the command).  It
 * installs a seccomp filter that refuses user namespaces and execs the
 * command, which inherits the filter with all it starts.
 *
 * The filter is ours and not runsc's --oci-seccomp because Debian's
 * runsc (20221219) ignores a profile's errnoRet and answers EPERM:
 * glibc then gives up on clone3 and starts no thread and no
 * posix_spawn, where on ENOSYS it falls back to clone.  gVisor runs a
 * sandboxed process's own filter with its errno.  clone3 passes its
 * flags in memory, which a filter cannot read: all of it is ENOSYS
 * (this runsc has no clone3 anyway; a newer one may).  A user namespace
 * would give its process raw sockets on the sandbox's network stack.
 *
 * Static, so that it runs in any root file system.  The filter is
 * written out rather than built with libseccomp, whose set-up (it
 * probes the kernel first) cost about 8 ms of each sandbox's start in
 * gVisor here, the filter itself about nothing.
 */
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#define FILTER_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FILTER_ARCH	AUDIT_ARCH_AARCH64
#else
#error "sandbox-init: no seccomp architecture for this machine"
#endif

/* x32 system calls on x86_64 have this bit; none is for us. */
#define X32_BIT		0x40000000

#define LOAD(field)	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, \
			    offsetof(struct seccomp_data, field))
#define RET(action)	BPF_STMT(BPF_RET | BPF_K, (action))
#define ERRNO(e)	RET(SECCOMP_RET_ERRNO | (e))

static int
filter_load(void)
{
	struct sock_filter f[] = {
		LOAD(arch),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 1, 0),
		RET(SECCOMP_RET_KILL_PROCESS),
		LOAD(nr),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 0, 1),
		ERRNO(ENOSYS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
		ERRNO(ENOSYS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setns, 0, 1),
		ERRNO(EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 3),
		/* clone's flags, the low half of its first argument */
		LOAD(args[0]),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
		ERRNO(EPERM),
		RET(SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int
main(int argc, char *argv[])
{
	if (argc < 2) {
		fprintf(stderr, "usage: sandbox-init command [arg ...]\n");
		return 126;
	}
	if (filter_load() == -1) {
		fprintf(stderr, "sandbox-init: seccomp: %s\n", strerror(errno));
		return 126;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "sandbox-init: %s: %s\n", argv[1], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
