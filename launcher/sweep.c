/* SPDX-License-Identifier: ISC */
/*
 * runsc invocations that finish at once (kill, delete, list), and the
 * start-up sweep: a runnerd killed mid-call leaves a container, a
 * bundle with the call's workspace (a mount) and credential, and a
 * cgroup; the next start removes them and reports each to the audit
 * log.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "launcher.h"
#include "log.h"

#define RUNSC_ARGS	16

/*
 * Runs `runsc --root <state>/runsc ARGS...` and waits for it: its exit
 * status, or -1.  Up to outlen-1 bytes of its stdout land in out.
 */
int
runsc_cmd(const struct as_config *conf, char *out, size_t outlen, ...)
{
	const char *argv[RUNSC_ARGS + 4];
	char root[PATH_MAX], sink[512];
	sigset_t none;
	size_t n = 0, got = 0;
	ssize_t r;
	va_list ap;
	pid_t pid;
	int p[2], devnull, st, keep;

	if (pathf(root, sizeof(root), "%s/runsc", conf->runnerd.state_dir) ==
	    -1)
		return -1;
	argv[n++] = "runsc";
	argv[n++] = "--root";
	argv[n++] = root;
	va_start(ap, outlen);
	while (n < RUNSC_ARGS && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if ((devnull = open("/dev/null", O_RDWR)) == -1 ||
		    dup2(devnull, 0) == -1 || dup2(p[1], 1) == -1 ||
		    dup2(devnull, 2) == -1)
			_exit(126);
		closefrom(3);
		execv(conf->runnerd.runsc, (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	/* What does not fit in out is read and dropped. */
	for (;;) {
		keep = out != NULL && got < outlen - 1;
		if ((r = read(p[0], keep ? out + got : sink, keep ?
		    outlen - 1 - got : sizeof(sink))) <= 0)
			break;
		if (keep)
			got += r;
	}
	close(p[0]);
	if (out != NULL)
		out[got] = '\0';
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The call whose sandbox cid was, once, to ids; a pooled one had none. */
static void
swept_add(const struct as_config *conf, json_t *ids, const char *cid)
{
	char rid[REQID_STR_LEN], dir[PATH_MAX];
	json_t *v;
	uint64_t id;
	size_t i;

	if (pathf(dir, sizeof(dir), "%s/bundles/%s", conf->runnerd.state_dir,
	    cid) == -1 || bundle_call(dir, &id) == -1)
		return;
	reqid_format(id, rid);
	json_array_foreach(ids, i, v)
		if (strcmp(json_string_value(v), rid) == 0)
			return;
	json_array_append_new(ids, json_string(rid));
}

/* Containers first (their processes killed), then files and cgroups. */
json_t *
sweep(const struct as_config *conf)
{
	char list[65536], pat[PATH_MAX], *line, *save;
	const char *cid;
	json_t *ids;
	glob_t g;
	size_t i;

	if ((ids = json_array()) == NULL)
		return NULL;
	if (runsc_cmd(conf, list, sizeof(list), "list", "-quiet", NULL) == 0) {
		for (line = strtok_r(list, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save)) {
			if (strncmp(line, CONTAINER_PREFIX,
			    strlen(CONTAINER_PREFIX)) != 0)
				continue;
			cgroup_kill(line);
			(void)runsc_cmd(conf, NULL, 0, "delete", "--force",
			    line, NULL);
			swept_add(conf, ids, line);
		}
	}
	memset(&g, 0, sizeof(g));
	if (pathf(pat, sizeof(pat), "%s/bundles/" CONTAINER_PREFIX "*",
	    conf->runnerd.state_dir) == 0 && glob(pat, 0, NULL, &g) == 0) {
		for (i = 0; i < g.gl_pathc; i++) {
			cid = strrchr(g.gl_pathv[i], '/') + 1;
			swept_add(conf, ids, cid);
			cgroup_remove(cid);
			if (bundle_remove(g.gl_pathv[i]) == -1)
				log_warn("sweep: %s", g.gl_pathv[i]);
		}
		globfree(&g);
	}
	if (json_array_size(ids) == 0) {
		json_decref(ids);
		return NULL;
	}
	log_info("sweep: removed %zu leftover sandboxes",
	    json_array_size(ids));
	return json_pack("{s:o}", "sandboxes", ids);
}
