/* SPDX-License-Identifier: ISC */
/*
 * sandbox-init: the first program of a gVisor sandbox where runsc's own
 * seccomp cannot refuse user namespaces (launcher/userns.c), and of the
 * render's bubblewrap sandbox; runnerd puts it at /run/sandbox-init,
 * read-only, before the command.  It installs a seccomp filter that
 * refuses user namespaces and execs the command, which inherits the
 * filter with all it starts.
 *
 * The filter is ours and not runsc's --oci-seccomp because Debian's
 * runsc (20221219) ignores a profile's errnoRet and answers EPERM, as
 * runsc upstream still does (google/gvisor#14688): glibc then gives up
 * on clone3 and starts no thread and no posix_spawn, where on ENOSYS it
 * falls back to clone.  gVisor runs a sandboxed process's own filter
 * with its errno.  clone3 passes its flags in memory, which a filter
 * cannot read: all of it is ENOSYS (this runsc has no clone3 anyway; a
 * newer one has, google/gvisor#8585).  A user namespace would give its
 * process raw sockets on the sandbox's network stack.
 *
 * Static, so that it runs in any root file system, and without a C
 * library: it makes four system calls, and a static glibc's start-up
 * and its larger image cost each sandbox's start about 9 ms more in
 * gVisor here (15 ms against 6 over a bare `runsc do`, medians of 60).
 * So the command is a path, run as given (every caller's is absolute),
 * not looked up in PATH.  The filter is written out rather than built
 * with libseccomp, whose set-up (it probes the kernel first) cost about
 * 8 ms of each sandbox's start in gVisor here, the filter itself about
 * nothing.
 */
#include <sys/syscall.h>

#include <linux/audit.h>
#include <linux/errno.h>
#include <linux/filter.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

#include <stddef.h>

#if defined(__x86_64__)
#define FILTER_ARCH	AUDIT_ARCH_X86_64

static long
sys5(long nr, long a, long b, long c, long d, long e)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	long ret;

	__asm__ volatile ("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b),
	    "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
	return ret;
}

/* The kernel's stack: argc, argv..., NULL, envp..., NULL. */
__asm__(".text\n.global _start\n_start:\n"
    "\txor %ebp, %ebp\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n"
    "\tcall start\n\thlt\n");
#elif defined(__aarch64__)
#define FILTER_ARCH	AUDIT_ARCH_AARCH64

static long
sys5(long nr, long a, long b, long c, long d, long e)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;

	__asm__ volatile ("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2),
	    "r"(x3), "r"(x4) : "memory");
	return x0;
}

__asm__(".text\n.global _start\n_start:\n"
    "\tmov x29, #0\n\tmov x30, #0\n\tmov x0, sp\n\tbl start\n");
#else
#error "sandbox-init: no seccomp architecture for this machine"
#endif

/* x32 system calls on x86_64 have this bit; none is for us. */
#define X32_BIT		0x40000000

#define LOAD(field)	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, \
			    offsetof(struct seccomp_data, field))
#define RET(action)	BPF_STMT(BPF_RET | BPF_K, (action))
#define ERRNO(e)	RET(SECCOMP_RET_ERRNO | (e))

/* const and static: built by the compiler, never copied at run time */
static const struct sock_filter filter[] = {
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

static void
say(const char *s1, const char *s2, const char *s3)
{
	const char *parts[] = { "sandbox-init: ", s1, s2, s3, "\n" };
	size_t i, n;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		for (n = 0; parts[i][n] != '\0'; n++)
			;
		(void)sys5(__NR_write, 2, (long)parts[i], (long)n, 0, 0);
	}
}

static const char *
errno_text(long e)
{
	switch (e) {
	case ENOENT:	return "No such file or directory";
	case EACCES:	return "Permission denied";
	case ENOEXEC:	return "Exec format error";
	case ENOTDIR:	return "Not a directory";
	case ENOMEM:	return "Cannot allocate memory";
	case E2BIG:	return "Argument list too long";
	case EPERM:	return "Operation not permitted";
	case EINVAL:	return "Invalid argument";
	default:	return "error";
	}
}

__attribute__((noreturn)) static void
leave(int status)
{
	for (;;)
		(void)sys5(__NR_exit_group, status, 0, 0, 0, 0);
}

__attribute__((noreturn, used)) void
start(long *sp)
{
	struct sock_fprog prog = {
		sizeof(filter) / sizeof(filter[0]),
		(struct sock_filter *)filter
	};
	char **argv = (char **)(sp + 1), **envp = argv + sp[0] + 1;
	long r;

	if (sp[0] < 2) {
		say("usage: sandbox-init /path/of/command [arg ...]", "", "");
		leave(126);
	}
	if ((r = sys5(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) < 0 ||
	    (r = sys5(__NR_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
	    (long)&prog, 0, 0)) < 0) {
		say("seccomp: ", errno_text(-r), "");
		leave(126);
	}
	r = sys5(__NR_execve, (long)argv[1], (long)(argv + 1), (long)envp,
	    0, 0);
	say(argv[1], ": ", errno_text(-r));
	leave(-r == ENOENT ? 127 : 126);
}
