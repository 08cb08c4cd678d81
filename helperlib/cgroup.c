/* SPDX-License-Identifier: ISC */
/*
 * The cgroup of each call, made before runsc starts: its limits hold
 * the whole sandbox (runsc's own threads included), killing everything
 * in it ends the sandbox, and it outlives runsc so that the launcher can
 * tell afterwards whether the memory limit was what ended it.  runsc
 * puts the sandbox in a leaf "sandbox" below it.  cgroup v1 (hybrid)
 * and v2 layouts.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher.h"
#include "log.h"

#define CGROUP_ROOT	"/sys/fs/cgroup"
#define CGROUP_PARENT	"agent-sandbox"
/*
 * The cgroup is the outer bound, above the limits gVisor enforces inside
 * (RLIMIT_AS and RLIMIT_NPROC, launcher/bundle.c), which end one
 * allocation or fork rather than the sandbox.  Memory: it is what holds
 * the sandbox to memory (and /work's tmpfs to work_max), with room for
 * the sentry, the gofer and the session agent (measured: 20 MiB for an
 * idle sentry).  Pids:
 * the ptrace platform backs each address space inside with a host stub
 * process and a thread in it per sentry thread that ran it (measured on
 * 2 cores: 7 host pids a task for 64 busy Python tasks, 23 for 32
 * tasks of a shell's fork loop); the sentry's own threads, the egress
 * proxy and its relays (at most pids) come on top.
 */
#define MEMORY_RUNTIME	(128L * 1024 * 1024)
#define PIDS_PER_TASK	64
#define PIDS_RUNTIME	256

/* The cgroupsPath runsc gets: a leaf below the call's own cgroup. */
int
cgroup_runsc_path(const char *cid, char *buf, size_t len)
{
	return pathf(buf, len, "/" CGROUP_PARENT "/%s/sandbox", cid);
}

static int
cgroup_v2(void)
{
	return access(CGROUP_ROOT "/cgroup.controllers", F_OK) == 0;
}

static int
cg_write(const char *dir, const char *file, const char *value)
{
	char path[PATH_MAX];
	int fd, r;

	if (pathf(path, sizeof(path), "%s/%s", dir, file) == -1 ||
	    (fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	r = write(fd, value, strlen(value)) == (ssize_t)strlen(value) ? 0 : -1;
	close(fd);
	return r;
}

static int
cg_mkdir(char *dir, size_t len, const char *controller, const char *cid)
{
	char parent[PATH_MAX];

	if (pathf(parent, sizeof(parent), CGROUP_ROOT "%s/" CGROUP_PARENT,
	    controller) == -1 ||
	    pathf(dir, len, "%s/%s", parent, cid) == -1)
		return -1;
	if ((mkdir(parent, 0755) == -1 && errno != EEXIST) ||
	    mkdir(dir, 0755) == -1)
		return -1;
	return 0;
}

/*
 * /work's tmpfs is charged here too (launcher/workfs.c): a full /work
 * then ends in ENOSPC, not in this limit.
 */
long
cgroup_memory_max(const struct as_config *conf)
{
	return conf->runnerd.memory + conf->runnerd.work_max + MEMORY_RUNTIME;
}

/*
 * The call's own cgroup, made before runsc starts: its limits hold the
 * sandbox as a whole, and it outlives runsc so that the launcher can
 * tell afterwards whether the memory limit was what ended it.
 */
int
cgroup_create(const struct as_config *conf, const char *cid)
{
	char dir[PATH_MAX], mem[32], pids[32], cpu[48];

	snprintf(mem, sizeof(mem), "%ld", cgroup_memory_max(conf));
	snprintf(pids, sizeof(pids), "%ld", conf->runnerd.pids * PIDS_PER_TASK +
	    PIDS_RUNTIME);
	if (cgroup_v2()) {
		snprintf(cpu, sizeof(cpu), "%ld 100000",
		    conf->runnerd.cpu_percent * 1000);
		(void)cg_write(CGROUP_ROOT, "cgroup.subtree_control",
		    "+memory +pids +cpu");
		if (cg_mkdir(dir, sizeof(dir), "", cid) == -1 ||
		    cg_write(CGROUP_ROOT "/" CGROUP_PARENT,
		    "cgroup.subtree_control", "+memory +pids +cpu") == -1 ||
		    cg_write(dir, "memory.max", mem) == -1 ||
		    cg_write(dir, "pids.max", pids) == -1 ||
		    cg_write(dir, "cpu.max", cpu) == -1)
			return -1;
		(void)cg_write(dir, "memory.swap.max", "0");
		return 0;
	}
	snprintf(cpu, sizeof(cpu), "%ld", conf->runnerd.cpu_percent * 1000);
	if (cg_mkdir(dir, sizeof(dir), "/memory", cid) == -1 ||
	    cg_write(dir, "memory.limit_in_bytes", mem) == -1)
		return -1;
	(void)cg_write(dir, "memory.memsw.limit_in_bytes", mem);
	if (cg_mkdir(dir, sizeof(dir), "/pids", cid) == -1 ||
	    cg_write(dir, "pids.max", pids) == -1 ||
	    cg_mkdir(dir, sizeof(dir), "/cpu", cid) == -1 ||
	    cg_write(dir, "cpu.cfs_period_us", "100000") == -1 ||
	    cg_write(dir, "cpu.cfs_quota_us", cpu) == -1)
		return -1;
	return 0;
}

static long long
cg_read_counter(const char *path, const char *key)
{
	char line[256];
	long long v = 0, n;
	size_t klen = key != NULL ? strlen(key) : 0;
	FILE *f;

	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (key == NULL)
			v = strtoll(line, NULL, 10);
		else if (strncmp(line, key, klen) == 0 && line[klen] == ' ' &&
		    (n = strtoll(line + klen + 1, NULL, 10)) > v)
			v = n;
	}
	fclose(f);
	return v;
}

/* Whether the sandbox ever reached its memory limit. */
int
cgroup_hit_memory_limit(const char *cid)
{
	char path[PATH_MAX], limit[PATH_MAX];

	if (cgroup_v2()) {
		if (pathf(path, sizeof(path), CGROUP_ROOT "/" CGROUP_PARENT
		    "/%s/memory.events", cid) == -1)
			return 0;
		return cg_read_counter(path, "max") > 0 ||
		    cg_read_counter(path, "oom_kill") > 0;
	}
	/*
	 * The failure counters stay at 0 when the memsw limit is what the
	 * kernel enforced; the peak against the limit tells either way.
	 */
	if (pathf(path, sizeof(path), CGROUP_ROOT "/memory/" CGROUP_PARENT
	    "/%s/memory.max_usage_in_bytes", cid) == -1 ||
	    pathf(limit, sizeof(limit), CGROUP_ROOT "/memory/" CGROUP_PARENT
	    "/%s/memory.limit_in_bytes", cid) == -1)
		return 0;
	return cg_read_counter(path, NULL) >= cg_read_counter(limit, NULL);
}

static void
cg_kill(const char *dir)
{
	char path[PATH_MAX], line[32];
	FILE *f;

	if (pathf(path, sizeof(path), "%s/cgroup.procs", dir) == -1 ||
	    (f = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		kill((pid_t)strtol(line, NULL, 10), SIGKILL);
	fclose(f);
}

/*
 * Removes a cgroup, killing what is still in it when it is busy (EBUSY
 * also while those die); one empty after a clean exit goes at once.
 */
static void
cg_rmdir(const char *dir)
{
	int tries;

	for (tries = 0; tries < 100; tries++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return;
		if (errno != EBUSY)
			break;
		cg_kill(dir);
		usleep(10000);
	}
	log_warn("rmdir %s", dir);
}

/*
 * Moves the calling process into a leaf of cid's cgroup beside runsc's
 * "sandbox" (cgroup v2 allows processes only in leaves), so that it and
 * its children count against the sandbox's limits and die with it;
 * with pids > 0 the leaf has that bound of its own too.
 */
int
cgroup_enter(const char *cid, const char *leaf, long pids)
{
	static const char *v1[] = { "/memory", "/pids", "/cpu" };
	static const char *v2[] = { "" };
	const char **ctl = cgroup_v2() ? v2 : v1;
	char dir[PATH_MAX], max[32];
	size_t i, n = cgroup_v2() ? 1 : sizeof(v1) / sizeof(v1[0]);

	snprintf(max, sizeof(max), "%ld", pids);
	for (i = 0; i < n; i++) {
		if (pathf(dir, sizeof(dir), CGROUP_ROOT "%s/" CGROUP_PARENT
		    "/%s", ctl[i], cid) == -1)
			return -1;
		if (pids > 0 && cgroup_v2())
			(void)cg_write(dir, "cgroup.subtree_control", "+pids");
		if (pathf(dir, sizeof(dir), CGROUP_ROOT "%s/" CGROUP_PARENT
		    "/%s/%s", ctl[i], cid, leaf) == -1 ||
		    (mkdir(dir, 0755) == -1 && errno != EEXIST) ||
		    (pids > 0 && (cgroup_v2() || strcmp(ctl[i], "/pids") ==
		    0) && cg_write(dir, "pids.max", max) == -1) ||
		    cg_write(dir, "cgroup.procs", "0") == -1)
			return -1;
	}
	return 0;
}

/* Each controller's directory for cid (and its leaves) to fn. */
static void
cg_foreach(const char *cid, void (*fn)(const char *))
{
	static const char *leaves[] = { "sandbox", "egress", "render" };
	char pat[PATH_MAX], leaf[PATH_MAX];
	glob_t g;
	size_t i, j;

	if (pathf(pat, sizeof(pat), CGROUP_ROOT "/{*/,}" CGROUP_PARENT "/%s",
	    cid) == -1)
		return;
	memset(&g, 0, sizeof(g));
	if (glob(pat, GLOB_BRACE | GLOB_ONLYDIR, NULL, &g) != 0)
		return;
	for (i = 0; i < g.gl_pathc; i++) {
		for (j = 0; j < sizeof(leaves) / sizeof(leaves[0]); j++)
			if (pathf(leaf, sizeof(leaf), "%s/%s", g.gl_pathv[i],
			    leaves[j]) == 0)
				fn(leaf);
		fn(g.gl_pathv[i]);
	}
	globfree(&g);
}

/*
 * Kills every process of the sandbox: the sentry and the gofer live in
 * its cgroup.  (runsc kill cannot reach a sandbox in a network
 * namespace of its own: its control socket is bound in there.)
 */
void
cgroup_kill(const char *cid)
{
	cg_foreach(cid, cg_kill);
}

void
cgroup_remove(const char *cid)
{
	cg_foreach(cid, cg_rmdir);
}
