/*
 * sandbox-init: the first program of every gVisor sandbox (runnerd
 * binds it read-only at /run/sandbox-init and puts it before the
 * command).  It installs a seccomp filter that refuses user namespaces
 * and execs the command, which inherits the filter with all it starts.
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
 * Static, so that it runs in any root file system.
 */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int
filter_load(void)
{
	scmp_filter_ctx f;
	int r;

	if ((f = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		return -ENOMEM;
	if ((r = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS),
	    SCMP_SYS(clone3), 0)) == 0 &&
	    (r = seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER))) == 0 &&
	    (r = seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare),
	    0)) == 0 &&
	    (r = seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setns),
	    0)) == 0)
		r = seccomp_load(f);
	seccomp_release(f);
	return r;
}

int
main(int argc, char *argv[])
{
	int r;

	if (argc < 2) {
		fprintf(stderr, "usage: sandbox-init command [arg ...]\n");
		return 126;
	}
	if ((r = filter_load()) != 0) {
		fprintf(stderr, "sandbox-init: seccomp: %s\n", strerror(-r));
		return 126;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "sandbox-init: %s: %s\n", argv[1], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
