/* SPDX-License-Identifier: ISC */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/landlock.h>

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sandbox.h"
#include "sock.h"

#define SC(name)	SCMP_SYS(name)
#define SC_END		(-1)

/* What every daemon needs to serve its sockets and log. */
static const int base_syscalls[] = {
	SC(read), SC(write), SC(readv), SC(writev), SC(close), SC(poll),
	SC(ppoll), SC(recvmsg), SC(sendmsg), SC(sendto), SC(recvfrom),
	SC(mmap), SC(munmap), SC(mremap), SC(brk), SC(madvise), SC(mprotect),
	SC(rt_sigreturn), SC(rt_sigprocmask), SC(rt_sigaction),
	SC(clock_gettime), SC(clock_nanosleep), SC(nanosleep),
	SC(gettimeofday), SC(getpid), SC(gettid), SC(exit), SC(exit_group),
	SC(futex), SC(getrandom), SC(fstat), SC(newfstatat), SC(lseek),
	SC(restart_syscall), SC(tgkill), SC(sched_yield), SC(sigaltstack),
	SC(prlimit64), SC(getrlimit),
	SC_END
};

/*
 * mcpd: stdio and its connection to runnerd; no open.  connect(2) and
 * one exact kind of socket, a non-blocking Unix stream (below), let it
 * reconnect to a restarted runnerd.  That gives a subverted mcpd no
 * network and no new peer: it runs as the agent's user (or _asmcp),
 * who may connect to the same sockets without it, and every socket of
 * the suite but runner.sock refuses that user by its file mode and its
 * SO_PEERCRED check.
 */
static const int mcpd_syscalls[] = {
	SC(fcntl), SC(connect),
	SC_END
};

/* Servers: accept peers, check them, remove the socket on exit. */
static const int server_syscalls[] = {
	SC(accept4), SC(getsockopt), SC(fcntl), SC(unlink), SC(shutdown),
	SC(connect), SC(getuid), SC(geteuid), SC(getgid), SC(getegid),
	SC_END
};

/* approvald: SQLite in WAL mode. */
static const int approvald_syscalls[] = {
	SC(openat), SC(pread64), SC(pwrite64), SC(fsync), SC(fdatasync),
	SC(ftruncate), SC(unlink), SC(fchown), SC(fchmod), SC(access),
	SC(getcwd), SC(readlink), SC(stat), SC(lstat), SC(statx),
	SC(getdents64),
	SC_END
};

/* auditd: the append-only log, its rotation, its checkpoint file. */
static const int auditd_syscalls[] = {
	SC(openat), SC(pread64), SC(fsync), SC(fdatasync), SC(ftruncate),
	SC(rename), SC(renameat), SC(renameat2), SC(statx), SC(lstat),
	SC(stat), SC(fchmod), SC(unlink),
	SC_END
};

/* brokerd: libcurl to Vault, a lease journal, sealed memfds. */
static const int brokerd_syscalls[] = {
	SC(openat), SC(fsync), SC(fdatasync), SC(ftruncate), SC(rename),
	SC(memfd_create), SC(getsockname), SC(getpeername), SC(setsockopt),
	SC(bind), SC(pipe2), SC(socketpair), SC(eventfd2), SC(clone),
	SC(clone3), SC(set_robust_list), SC(rseq), SC(uname), SC(statx),
	SC(stat), SC(lstat), SC(access),
	SC_END
};

/*
 * notifyd: libcurl to the webhooks (its resolver thread, its wakeup
 * pipe, the CA bundle) and notify.sock; no file is written.
 */
static const int notifyd_syscalls[] = {
	SC(openat), SC(getsockname), SC(getpeername), SC(setsockopt),
	SC(pipe2), SC(socketpair), SC(eventfd2), SC(clone), SC(clone3),
	SC(set_robust_list), SC(rseq), SC(uname), SC(statx), SC(stat),
	SC(lstat), SC(access), SC(fcntl), SC(connect), SC(getsockopt),
	SC(bind), SC(sysinfo),
	SC_END
};

/*
 * runnerd's engine: sockets, and the trail of open calls and the audit
 * spool it opened before (trail.c, spool.c); pread of brokerd's memfd,
 * the credential redact.c cuts from results.  Bundles, runsc and files
 * are the launcher's, started before this filter and never under it.
 */
static const int runnerd_syscalls[] = {
	SC(wait4), SC(ftruncate), SC(fdatasync), SC(pread64),
	SC_END
};

/*
 * runnerd's claim keeper: copies and removes files on terraform's claim
 * (Landlock holds it there); no sockets of its own, no exec.  The
 * launcher's confined children (helperlib/confine.c) share it.  glibc's
 * qsort asks sysinfo(2) for the memory size before it sorts more than
 * 1 KiB of entries: 128 names of a directory, 64 files of a module.
 */
static const int claim_syscalls[] = {
	SC(openat), SC(mkdir), SC(mkdirat), SC(unlink), SC(unlinkat),
	SC(rmdir), SC(fchown), SC(chown), SC(fchownat), SC(rename),
	SC(renameat), SC(renameat2), SC(getdents64), SC(statx), SC(stat),
	SC(lstat), SC(fsync), SC(access), SC(faccessat), SC(faccessat2),
	SC(fcntl), SC(dup), SC(openat2), SC(utimensat), SC(link),
	SC(readlinkat), SC(symlinkat), SC(sysinfo),
	SC_END
};

/* ctl tools: a socket to their daemon and the terminal. */
static const int ctl_syscalls[] = {
	SC(fcntl), SC(ioctl),
	SC_END
};

static const char *const role_names[] = {
	"mcpd", "runnerd", "approvald", "brokerd", "auditd", "ctl", "claim",
	"notifyd"
};

const char *
sandbox_role_name(enum sandbox_role role)
{
	return role_names[role];
}

static const int *
role_syscalls(enum sandbox_role role)
{
	switch (role) {
	case ROLE_MCPD:
		return mcpd_syscalls;
	case ROLE_RUNNERD:
		return runnerd_syscalls;
	case ROLE_APPROVALD:
		return approvald_syscalls;
	case ROLE_BROKERD:
		return brokerd_syscalls;
	case ROLE_AUDITD:
		return auditd_syscalls;
	case ROLE_CTL:
		return ctl_syscalls;
	case ROLE_CLAIM:
		return claim_syscalls;
	case ROLE_NOTIFYD:
		return notifyd_syscalls;
	}
	return NULL;
}

static void
allow_list(scmp_filter_ctx ctx, const int *list)
{
	for (; *list != SC_END; list++) {
		/* A name this architecture lacks resolves to a negative. */
		if (*list < 0)
			continue;
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, *list, 0) < 0)
			fatalx("seccomp_rule_add %d", *list);
	}
}

/* Debug mode (seccomp: trap): name the offending call, then die. */
static void
sigsys_handler(int sig, siginfo_t *si, void *ctx)
{
	char buf[128];
	char *name;
	int len;

	(void)sig;
	(void)ctx;
	name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE,
	    si->si_syscall);
	len = snprintf(buf, sizeof(buf), "seccomp: forbidden syscall %s (%d)\n",
	    name != NULL ? name : "?", si->si_syscall);
	if (len > 0)
		(void)!write(STDERR_FILENO, buf, (size_t)len);
	_exit(159);
}

static void
seccomp_load_role(enum sandbox_role role, int trap)
{
	scmp_filter_ctx ctx;
	struct sigaction sa;

	if (trap) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = sigsys_handler;
		sa.sa_flags = SA_SIGINFO;
		if (sigaction(SIGSYS, &sa, NULL) == -1)
			fatal("sigaction SIGSYS");
	}
	ctx = seccomp_init(trap ? SCMP_ACT_TRAP : SCMP_ACT_KILL_PROCESS);
	if (ctx == NULL)
		fatalx("seccomp_init");
	allow_list(ctx, base_syscalls);
	allow_list(ctx, role_syscalls(role));
	/* close_received's reset and a listener's refusal of descriptors. */
	if (role != ROLE_BROKERD && role != ROLE_NOTIFYD &&
	    (seccomp_rule_add(ctx, SCMP_ACT_ALLOW,
	    SCMP_SYS(setsockopt), 2, SCMP_A1(SCMP_CMP_EQ, SOL_SOCKET),
	    SCMP_A2(SCMP_CMP_EQ, SO_LINGER)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setsockopt), 2,
	    SCMP_A1(SCMP_CMP_EQ, SOL_SOCKET),
	    SCMP_A2(SCMP_CMP_EQ, SO_PASSRIGHTS)) < 0))
		fatalx("seccomp_rule_add setsockopt");
	if (role == ROLE_MCPD && seccomp_rule_add(ctx, SCMP_ACT_ALLOW,
	    SCMP_SYS(socket), 3, SCMP_A0(SCMP_CMP_EQ, AF_UNIX),
	    SCMP_A1(SCMP_CMP_EQ, SOCK_CONNECT_NONBLOCK),
	    SCMP_A2(SCMP_CMP_EQ, 0)) < 0)
		fatalx("seccomp_rule_add socket");
	if (role != ROLE_MCPD && role != ROLE_CLAIM) {
		if (role != ROLE_CTL && role != ROLE_NOTIFYD)
			allow_list(ctx, server_syscalls);
		/* Clients of other daemons open Unix sockets only. */
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
		    SCMP_A0(SCMP_CMP_EQ, AF_UNIX)) < 0)
			fatalx("seccomp_rule_add socket");
		if ((role == ROLE_BROKERD || role == ROLE_NOTIFYD) &&
		    (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
		    SCMP_A0(SCMP_CMP_EQ, AF_INET)) < 0 ||
		    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
		    SCMP_A0(SCMP_CMP_EQ, AF_INET6)) < 0))
			fatalx("seccomp_rule_add socket inet");
	}
	if (seccomp_load(ctx) < 0)
		fatalx("seccomp_load");
	seccomp_release(ctx);
}

/* Debian 12's headers predate ABI 3; the bit is fixed by the kernel ABI. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION	(1U << 0)
#endif

int
sandbox_landlock_abi(void)
{
	long abi;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : (int)abi;
}

/* Every filesystem right the running kernel's ABI knows. */
static __u64
landlock_handled(int abi)
{
	__u64 fs = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
	    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
	    LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
	    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
	    LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
	    LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
	    LANDLOCK_ACCESS_FS_MAKE_SYM;

	if (abi >= 2)
		fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	return fs;
}

static void
landlock_add(int ruleset, const char *path, __u64 access)
{
	struct landlock_path_beneath_attr pb;
	struct stat st;
	const __u64 file_rights = LANDLOCK_ACCESS_FS_EXECUTE |
	    LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
	    LANDLOCK_ACCESS_FS_TRUNCATE;
	int fd;

	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1) {
		/* A file that does not exist yet cannot be reached anyway. */
		log_debug("landlock: %s: %s", path, strerror(errno));
		return;
	}
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		access &= file_rights;
	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = access;
	pb.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH,
	    &pb, 0) == -1)
		fatal("landlock_add_rule %s", path);
	close(fd);
}

static void
landlock_restrict(const struct sandbox_paths *paths)
{
	struct landlock_ruleset_attr attr;
	__u64 handled, ro;
	int abi, ruleset, i;

	/* Missing Landlock is not an error: seccomp and the user still hold. */
	if ((abi = sandbox_landlock_abi()) < 1) {
		log_debug("landlock not available");
		return;
	}
	handled = landlock_handled(abi);
	ro = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = handled;
	ruleset = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset == -1)
		fatal("landlock_create_ruleset");
	for (i = 0; paths != NULL && i < SANDBOX_MAXPATHS; i++) {
		if (paths->rw[i] != NULL)
			landlock_add(ruleset, paths->rw[i], handled);
		if (paths->ro[i] != NULL)
			landlock_add(ruleset, paths->ro[i], ro);
	}
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) == -1)
		fatal("landlock_restrict_self");
	close(ruleset);
	log_debug("landlock ABI %d in force", abi);
}

/* no_new_privs, then Landlock, then seccomp; any failure is fatal. */
void
sandbox_enter(enum sandbox_role role, const struct sandbox_paths *paths,
    int trap)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("prctl no_new_privs");
	landlock_restrict(paths);
	seccomp_load_role(role, trap);
}
