/* SPDX-License-Identifier: ISC */
/*
 * How sandboxes are kept from making user namespaces, in which gVisor
 * gives a process raw sockets on the sandbox's network stack (runnerd(8)
 * "sandbox_init").  runsc's --oci-seccomp refuses unshare, setns and
 * clone with CLONE_NEWUSER at no cost, but it answers EPERM whatever a
 * rule's errnoRet (google/gvisor#14688), so it cannot refuse clone3 with
 * the ENOSYS on which glibc falls back to clone.  A runsc that has no
 * clone3 needs no rule for it, and its own system call table says so.
 * Otherwise, or with sandbox_init: always, each sandbox's command runs
 * under sandbox-init's filter, one more exec at every start.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "launcher.h"
#include "log.h"

#if defined(__x86_64__)
#define TABLE_ARCH	"linux/amd64:"
#elif defined(__aarch64__)
#define TABLE_ARCH	"linux/arm64:"
#else
#define TABLE_ARCH	NULL
#endif

/* runsc help syscalls prints about 100 KB. */
#define TABLE_MAX	(1024 * 1024)

static int by_runsc;

/* What `runsc help syscalls` prints, NUL-terminated; NULL if it fails. */
static char *
syscall_table(const char *runsc)
{
	char *buf;
	ssize_t n;
	pid_t pid;
	int p[2], null, status;

	if (pipe2(p, O_CLOEXEC) == -1)
		return NULL;
	if ((pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return NULL;
	}
	if (pid == 0) {
		if ((null = open("/dev/null", O_RDWR)) == -1 ||
		    dup2(null, 0) == -1 || dup2(p[1], 1) == -1 ||
		    dup2(null, 2) == -1)
			_exit(126);
		closefrom(3);
		execl(runsc, "runsc", "help", "syscalls", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	buf = malloc(TABLE_MAX + 1);
	n = buf == NULL ? -1 : read_full(p[0], buf, TABLE_MAX);
	close(p[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (n == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/*
 * 1 if table's section for this machine lists clone3 as unimplemented:
 * its line there is "435  clone3  Unimplemented  ...".
 */
int
table_lacks_clone3(const char *table)
{
	const char *line, *next;
	char name[32], support[32];
	int in_arch = 0, nr;

	if (TABLE_ARCH == NULL)
		return 0;
	for (line = table; *line != '\0'; line = next) {
		next = strchr(line, '\n');
		next = next == NULL ? line + strlen(line) : next + 1;
		if (strncmp(line, "linux/", 6) == 0) {
			in_arch = strncmp(line, TABLE_ARCH,
			    strlen(TABLE_ARCH)) == 0;
			continue;
		}
		if (in_arch && sscanf(line, "%d %31s %31s", &nr, name,
		    support) == 3 && strcmp(name, "clone3") == 0)
			return strcmp(support, "Unimplemented") == 0;
	}
	return 0;
}

/* Decided once, at the launcher's start, and logged. */
void
userns_init(const struct as_config *conf)
{
	char *table = NULL;

	by_runsc = strcmp(conf->runnerd.sandbox_init, "auto") == 0 &&
	    (table = syscall_table(conf->runnerd.runsc)) != NULL &&
	    table_lacks_clone3(table);
	free(table);
	log_info("user namespaces refused by %s",
	    by_runsc ? "runsc's --oci-seccomp (its clone3 is unimplemented)" :
	    "sandbox-init's seccomp filter");
}

int
userns_by_runsc(void)
{
	return by_runsc;
}

/* The OCI profile runsc --oci-seccomp enforces, when it is the one. */
json_t *
userns_seccomp(void)
{
	return json_pack("{s:s, s:[{s:[s, s], s:s},"
	    " {s:[s], s:s, s:[{s:i, s:I, s:I, s:s}]}]}",
	    "defaultAction", "SCMP_ACT_ALLOW", "syscalls",
	    "names", "unshare", "setns", "action", "SCMP_ACT_ERRNO",
	    "names", "clone", "action", "SCMP_ACT_ERRNO",
	    "args", "index", 0, "value", (json_int_t)CLONE_NEWUSER,
	    "valueTwo", (json_int_t)CLONE_NEWUSER, "op", "SCMP_CMP_MASKED_EQ");
}
