/* SPDX-License-Identifier: ISC */
/*
 * How the launcher runs a sandbox: one `runsc run` per bundle, in a
 * child of the launcher, for its one-shot sandboxes (launcher.c) and
 * its sessions (session.c) alike.
 */
#include <sys/prctl.h>

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include "launcher.h"

/*
 * The child that becomes `runsc run` for a bundle: stdin (or /dev/null
 * when -1), stdout and stderr as given; with egressfd, the sandbox's
 * network namespace with the proxy's listener in it.
 */
void
runsc_exec(const struct as_config *c, const char *bundle, const char *cid,
    int in, int out, int err, int egressfd)
{
	char root[PATH_MAX];
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* runsc --attached: if the launcher dies, so does the sandbox. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		_exit(126);
	if (egressfd != -1 && egress_listen_here(egressfd) == -1)
		_exit(126);
	if (in == -1 && (in = open("/dev/null", O_RDONLY)) == -1)
		_exit(126);
	if (dup2(in, 0) == -1 || dup2(out, 1) == -1 || dup2(err, 2) == -1)
		_exit(126);
	closefrom(3);
	if (pathf(root, sizeof(root), "%s/runsc", c->runnerd.state_dir) == -1)
		_exit(126);
	/* --oci-seccomp: the bundle's profile, when it has one (userns.c) */
	execl(c->runnerd.runsc, "runsc", "--root", root,
	    egressfd != -1 ? "--network=host" : "--network=none",
	    "--oci-seccomp", "run", "--bundle", bundle, cid, (char *)NULL);
	_exit(127);
}
