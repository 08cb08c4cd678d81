/* SPDX-License-Identifier: ISC */
/*
 * What a person approves is rendered where no agent code ran.  The
 * planning sandbox ran the module's code (its providers, its data
 * sources), so whatever it wrote could be forged; after it exits, the
 * saved plan is shown by `terraform show`, from the plan's module
 * snapshot, in a second sandbox with the mirror's allowed providers, no
 * credential and no network.  Its plan.json and plan.txt are the only
 * ones the destructive flag, the approval and approvalctl show are
 * made from.
 *
 * The second sandbox runs only terraform itself on the plan file, not
 * module code, so it is a namespace sandbox (bubblewrap(1): new mount,
 * pid, network, ipc and uts namespaces, a read-only host /usr, then
 * uid 65534 with no capabilities and no_new_privs) rather than a second
 * gVisor start, which alone would cost more than the plan.  A plan that
 * needs no provider is shown without `terraform init`.
 *
 * The second sandbox is started beside the plan, its shell waiting on
 * a pipe: bwrap's namespaces and the shell cost about 25 ms here, off
 * the plan's path that way.  Its workspace gets the plan's module
 * snapshot, state and .terraform when the plan's does, and the saved
 * plan, checked against its digest, from the plan's collect; then the
 * launcher writes go.  On the kubernetes backend the plan renderer
 * (kube/renderer.c) runs the same sandbox after the planning Job, on
 * runnerd's host, with the saved plan from the claim.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "launcher.h"

#define RENDER_PROVIDERS	32
#define RENDER_ARGS_MAX	(128 + 9 * RENDER_PROVIDERS)
/*
 * What the render says on stderr, at most: less than a pipe holds, so
 * that it ends whether or not the launcher reads yet.
 */
#define RENDER_WHY_MAX	"16384"
/*
 * Host tasks for terraform and each provider it starts, in each of the
 * two shows: a Go program at GOMAXPROCS=1 (measured: one show with the
 * aws provider peaked at 36 tasks for both).  The render's leaf of the
 * call's cgroup has this bound of its own, below the call's.
 */
#define RENDER_PIDS_EACH	48

/*
 * The two renderings at once, each on a core of its own, on a machine
 * with more than one: the render is the largest part of a plan's time
 * after the sandbox's own.  But one after the other when the plan has
 * providers: each show starts them, and two of a large one at once
 * (aws: 260 MiB of heap and 330 MiB of its binary each, measured) do
 * not fit the call's memory.  Go's collector waits until the heap nears
 * GOMEMLIMIT (GOGC=off, https://go.dev/doc/gc-guide#Memory_limit): a
 * show allocates less, and its start is mostly allocation (about 15 %
 * of it here).
 *
 * A saved plan holds the configuration and the lock file it was made
 * with, so the render shows it from an empty directory and never reads
 * the module: with the .terraform of the init cache and the lock file
 * it was keyed by when the launcher gave them (launcher/tfinit.c), else
 * (or when that fails: the plan's init added to the lock) from an init
 * on the plan's own lock file alone, as the cache's builder makes one.
 */
static const char render_script[] =
    "read -r go && [ \"$go\" = go ] || exit 0; exec </dev/null; "
    "export TF_IN_AUTOMATION=1 TF_INPUT=0 CHECKPOINT_DISABLE=1 "
    "GOGC=off GOMEMLIMIT=256MiB GOMAXPROCS=1; "
    "mkdir /tmp/show && cd /tmp/show || exit 3; "
    "json() { terraform show -json /work/plan.tfplan >/work/plan.json "
    "2>/tmp/json.err; }; "
    "text() { terraform show -no-color /work/plan.tfplan >/work/plan.txt "
    "2>/tmp/text.err; }; "
    "show() { if [ -s .terraform.lock.hcl ]; then json && text; else "
    "json & text; t=$?; wait $! && [ $t -eq 0 ]; fi; }; "
    "if [ -d /work/.terraform ]; then "
    "[ ! -f /work/.terraform.lock.hcl ] || "
    "cp /work/.terraform.lock.hcl . || exit 3; "
    "(export TF_DATA_DIR=/work/.terraform; show) && exit 0; fi; "
    "rm -f .terraform.lock.hcl; "
    "python3 -c 'import sys, zipfile\n"
    "z = zipfile.ZipFile(\"/work/plan.tfplan\")\n"
    "e = [i for i in z.infolist() if i.filename == \".terraform.lock.hcl\"]\n"
    "if e and e[0].file_size > 65536:\n"
    "    sys.exit(\"the lock file of the saved plan is too large\")\n"
    "sys.stdout.buffer.write(z.read(e[0]) if e else b\"\")' "
    ">.terraform.lock.hcl 2>/tmp/lock.err || { head -c " RENDER_WHY_MAX
    " /tmp/lock.err >&2; exit 3; }; "
    "if [ -s .terraform.lock.hcl ]; then " TF_LOCK_PROVIDERS " || { echo "
    "'the lock file of the saved plan is not as terraform writes it' >&2; "
    "exit 3; }; " TF_LOCK_INIT " >/tmp/init.log 2>&1 || { head -c "
    RENDER_WHY_MAX " /tmp/init.log >&2; exit 3; }; fi; "
    "show || { cat /tmp/json.err /tmp/text.err | head -c " RENDER_WHY_MAX
    " >&2; exit 5; }";

struct argv_buf {
	const char	*v[RENDER_ARGS_MAX];
	char		 src[RENDER_PROVIDERS][PATH_MAX]; /* providers_each
							     reuses its own */
	char		 dst[RENDER_PROVIDERS][PATH_MAX];
	char		 dirs[2 * RENDER_PROVIDERS][PATH_MAX];
	size_t		 n, ndst;
};

static int
arg(struct argv_buf *a, const char *s)
{
	if (a->n + 1 >= RENDER_ARGS_MAX)
		return -1;
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
	return 0;
}

static int
provider_bind(const char *name, const char *src, void *p)
{
	struct argv_buf *a = p;
	char *s, *d;

	char *host, *ns, *slash;

	if (a->ndst == RENDER_PROVIDERS)
		return -1;
	s = a->src[a->ndst];
	host = a->dirs[2 * a->ndst];
	ns = a->dirs[2 * a->ndst + 1];
	d = a->dst[a->ndst++];
	if (strlcpy(s, src, PATH_MAX) >= PATH_MAX ||
	    pathf(d, PATH_MAX, PROVIDER_MOUNT "/%s", name) == -1 ||
	    strlcpy(host, d, PATH_MAX) >= PATH_MAX ||
	    strlcpy(ns, d, PATH_MAX) >= PATH_MAX)
		return -1;
	/* HOST/NAMESPACE/TYPE: bwrap would make the first two 0700. */
	if ((slash = strrchr(ns, '/')) == NULL)
		return -1;
	*slash = '\0';
	if ((slash = strrchr(ns, '/')) == NULL)
		return -1;
	host[slash - ns] = '\0';
	return arg(a, "--perms") == -1 || arg(a, "0755") == -1 ||
	    arg(a, "--dir") == -1 || arg(a, host) == -1 ||
	    arg(a, "--perms") == -1 || arg(a, "0755") == -1 ||
	    arg(a, "--dir") == -1 || arg(a, ns) == -1 ||
	    arg(a, "--ro-bind") == -1 || arg(a, s) == -1 ||
	    arg(a, d) == -1 ? -1 : 0;
}

/*
 * The child: script in a namespace sandbox with work at /work, the
 * allowed providers at PROVIDER_MOUNT and the environment of
 * sandbox_env, HOME_MOUNT a new empty directory uid 65534 cannot
 * write; the render's and the init cache's builder's
 * (launcher/tfinit.c).  stdin is in and stdout out,
 * each /dev/null when -1.  bwrap runs as root, so that it can bind what
 * uid 65534 could not reach by path (runnerd's state, the operator's
 * mirror); inside, setpriv drops to 65534 with no capability, no
 * bounding set and no_new_privs before the shell starts.
 */
void
bwrap_terraform(const struct as_config *c, const char *work,
    const json_t *providers, const char *script, int in, int out, int err)
{
	static const char *const head[] = {
		"bwrap", "--unshare-ipc", "--unshare-pid", "--unshare-net",
		"--unshare-uts", "--unshare-cgroup-try", "--die-with-parent",
		"--new-session", "--clearenv",
		"--ro-bind", "/usr", "/usr", "--ro-bind", "/bin", "/bin",
		"--ro-bind", "/lib", "/lib", "--ro-bind-try", "/lib64", "/lib64",
		"--perms", "0755", "--dir", "/etc",
		"--ro-bind", "/etc/ssl", "/etc/ssl",
		"--ro-bind-try", "/etc/alternatives", "/etc/alternatives",
		"--proc", "/proc",
		"--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp",
		"--perms", "0555", "--dir", PROVIDER_MOUNT,
		"--perms", "0555", "--dir", HOME_MOUNT, NULL
	};
	/*
	 * The shell runs under sandbox-init's filter, as every gVisor
	 * sandbox's command does: no user namespace, here on the host's
	 * own kernel.
	 */
	static const char *const tail[] = {
		"--chdir", "/work", "/usr/bin/setpriv", "--reuid=65534",
		"--regid=65534", "--clear-groups", "--inh-caps=-all",
		"--bounding-set=-all", "--no-new-privs", INIT_MOUNT,
		"/bin/sh", "-c", NULL
	};
	struct argv_buf a;
	size_t i;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
	    (in == -1 && (in = open("/dev/null", O_RDONLY)) == -1) ||
	    (out == -1 && (out = open("/dev/null", O_WRONLY)) == -1) ||
	    dup2(in, 0) == -1 || dup2(out, 1) == -1 || dup2(err, 2) == -1)
		_exit(126);
	closefrom(3);
	memset(&a, 0, sizeof(a));
	for (i = 0; head[i] != NULL; i++)
		if (arg(&a, head[i]) == -1)
			_exit(126);
	for (i = 0; sandbox_env[i].name != NULL; i++)
		if (arg(&a, "--setenv") == -1 ||
		    arg(&a, sandbox_env[i].name) == -1 ||
		    arg(&a, sandbox_env[i].value) == -1)
			_exit(126);
	if (providers_each(c, providers, provider_bind, &a) == -1 ||
	    arg(&a, "--ro-bind") == -1 || arg(&a, sandbox_init_path()) == -1 ||
	    arg(&a, INIT_MOUNT) == -1 ||
	    arg(&a, "--bind") == -1 || arg(&a, work) == -1 ||
	    arg(&a, "/work") == -1)
		_exit(126);
	for (i = 0; tail[i] != NULL; i++)
		if (arg(&a, tail[i]) == -1)
			_exit(126);
	if (arg(&a, script) == -1)
		_exit(126);
	execv(RENDER_BWRAP, (char *const *)a.v);
	_exit(127);
}

/*
 * bwrap_terraform for a call's render: in the leaf "render" of the
 * call's cgroup cid, under the call's memory and a pids bound of its
 * own for terraform and the providers it starts.
 */
void
render_exec(const struct as_config *c, const char *cid, const char *work,
    const json_t *providers, const char *script, int in, int out, int err)
{
	long pids = 2 * RENDER_PIDS_EACH * (1 + json_array_size(providers));

	if (cgroup_enter(cid, "render", pids) == -1) {
		dprintf(err, "render: cgroup: %s\n", strerror(errno));
		_exit(126);
	}
	bwrap_terraform(c, work, providers, script, in, out, err);
}

void
render_init(struct render *r)
{
	memset(r, 0, sizeof(*r));
	r->pid = -1;
	r->go = r->err = -1;
}

static void
fd_close(int *fd)
{
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

/*
 * The render's sandbox for the plan in dir that req was seeded for,
 * waiting for go, its workspace dir/render/work with the plan's module
 * snapshot, state and .terraform; the saved plan comes with the plan's
 * collect (render_inbox), in the call's cgroup cid (render_exec).  Why
 * it could not start is said by render_go, where the call learns of it.
 */
void
render_start(const struct as_config *c, const char *dir, const char *cid,
    json_t *req, struct render *r)
{
	char rdir[PATH_MAX];
	int go[2] = { -1, -1 }, err[2] = { -1, -1 };

	if (pathf(rdir, sizeof(rdir), "%s/render", dir) == -1 ||
	    pathf(r->work, sizeof(r->work), "%s/work", rdir) == -1 ||
	    mkdir(rdir, 0700) == -1 || mkdir(r->work, 0700) == -1 ||
	    chown(r->work, SANDBOX_UID, SANDBOX_GID) == -1) {
		snprintf(r->why, sizeof(r->why), "render: %s",
		    strerror(errno));
		return;
	}
	if (workspace_seed_confined(c, r->work, 1, req, r->why,
	    sizeof(r->why)) == -1)
		return;
	if (pipe2(go, O_CLOEXEC) == -1 || pipe2(err, O_CLOEXEC) == -1 ||
	    (r->pid = fork()) == -1) {
		snprintf(r->why, sizeof(r->why), "render: %s",
		    strerror(errno));
		fd_close(&go[1]);
		fd_close(&err[0]);
	} else if (r->pid == 0)
		render_exec(c, cid, r->work, json_object_get(req, "providers"),
		    render_script, go[0], -1, err[1]);
	else {
		r->go = go[1];
		r->err = err[0];
	}
	fd_close(&go[0]);
	fd_close(&err[1]);
}

/* Where the plan goes for the render: its workspace while it waits. */
const char *
render_inbox(const struct render *r)
{
	return r->pid != -1 && r->go != -1 ? r->work : NULL;
}

/* The render runs: 0, or -1 and why. */
int
render_go(struct render *r, char *why, size_t whylen)
{
	if (r->go == -1 || r->pid == -1) {
		if (r->why[0] != '\0')
			snprintf(why, whylen, "%s", r->why);
		else
			snprintf(why, whylen, "render: bwrap ended before the "
			    "plan did (status %#x)", r->status);
		return -1;
	}
	if (write_full(r->go, "go\n", 3) == -1) {
		snprintf(why, whylen, "render: %s", strerror(errno));
		return -1;
	}
	fd_close(&r->go);
	return 0;
}

int
render_went(const struct render *r)
{
	return r->pid != -1 ? r->go == -1 : r->ended;
}

int
render_running(const struct render *r)
{
	return r->pid != -1;
}

/* 1 when pid was r's; it has ended, as status says. */
int
render_reaped(struct render *r, pid_t pid, int status)
{
	if (r->pid == -1 || r->pid != pid)
		return 0;
	r->pid = -1;
	r->ended = r->go == -1;
	r->status = status;
	fd_close(&r->go);
	return 1;
}

/* Asks for the end of a render, waiting or gone; the reaper sees it. */
void
render_kill(struct render *r)
{
	if (r->pid != -1)
		kill(r->pid, SIGKILL);	/* bwrap: its pid namespace goes */
}

/*
 * After it ended: 1 when it exited 0, else 0 and, in why, what it said
 * (at most RENDER_WHY_MAX bytes, so all of it is in the pipe).
 */
int
render_ended_ok(struct render *r, char *why, size_t whylen)
{
	ssize_t n = -1;

	if (WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0)
		return 1;
	if (r->err != -1 && whylen > 0) {
		fcntl(r->err, F_SETFL, O_NONBLOCK);
		n = read(r->err, why, whylen - 1);
	}
	if (n > 0)
		why[n] = '\0';
	else
		snprintf(why, whylen, "terraform show ended with status %#x",
		    r->status);
	return 0;
}

/* A render still there is ended and waited for. */
void
render_stop(struct render *r)
{
	fd_close(&r->go);
	fd_close(&r->err);
	if (r->pid != -1) {
		kill(r->pid, SIGKILL);
		while (waitpid(r->pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
	r->pid = -1;
}

/*
 * The rendered files replace whatever the planning sandbox wrote; ok
 * when the render exited 0, else why says what stopped it.
 */
void
render_collect(const struct as_config *c, const char *work, int ok,
    json_t *planned, const char *why)
{
	json_t *req;

	if (!ok) {
		json_object_set_new(planned, "error", json_sprintf("the plan "
		    "could not be rendered outside the planning sandbox: %s",
		    why != NULL && *why != '\0' ? why : "terraform show "
		    "failed"));
		json_object_del(planned, "files");
		return;
	}
	req = json_pack("{s:[s, s]}", "files_out", "plan.json", "plan.txt");
	if (req != NULL)
		workspace_collect_confined(c, work, req, planned, 0, NULL);
	json_decref(req);
}
