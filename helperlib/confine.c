/* SPDX-License-Identifier: ISC */
/*
 * The launcher's reads of trees an agent can write, and the kubernetes
 * plan renderer's (kube/renderer.c), each in a child held by Landlock
 * to the paths it needs (issue 14).
 *
 * The launcher itself stays outside Landlock, because what it runs
 * cannot work in a Landlock domain: the kernel refuses mount(2),
 * umount(2) and pivot_root(2) to any process whose domain handles
 * filesystem access, in every mount namespace (Landlock's "filesystem
 * topology modification" rule), and a domain is inherited by every
 * child and exec.  runsc's gofer and sandbox pivot_root into their own
 * roots and bwrap (helperlib/render.c) mounts the render's root; both
 * fail with EPERM under any ruleset.  So the launcher process reads no agent
 * tree itself: seeding a workspace, and collecting files, state and
 * plans from it, run here, in a child whose Landlock domain reads only
 * the tree in hand and runnerd's terraform state, and whose seccomp
 * filter (the claim keeper's) allows file calls only: no socket, no
 * exec.  /etc/shadow, /root and other homes are out of its reach, even
 * were a path followed where it must not be.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "launcher.h"
#include "sandbox.h"

/* json_loadfd reads a byte a call; this, as much as the pipe holds. */
static size_t
reply_read(void *buf, size_t len, void *arg)
{
	ssize_t n;

	while ((n = read(*(int *)arg, buf, len)) == -1 && errno == EINTR)
		;
	return n < 0 ? (size_t)-1 : (size_t)n;
}

/*
 * fn(arg) in a child confined to paths; its object comes back (NULL
 * when the child ended without one, status in why).  The object is the
 * child's last act, so the caller goes on once it is whole: a process's
 * exit costs about 8 ms on this kind of machine, and a terraform plan
 * waits for four of these children.  The launcher's SIGCHLD handler
 * reaps the child then (launcher_reap passes over pids it does not own).
 */
json_t *
confined_run(const struct as_config *c, const struct sandbox_paths *paths,
    json_t *(*fn)(void *), void *arg, char *why, size_t whylen)
{
	json_t *reply;
	pid_t pid;
	int p[2], status;

	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(why, whylen, "confined child: %s", strerror(errno));
		return NULL;
	}
	if ((pid = fork()) == -1) {
		snprintf(why, whylen, "confined child: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return NULL;
	}
	if (pid == 0) {
		close(p[0]);
		sandbox_enter(ROLE_CLAIM, paths, daemon_trap(c));
		reply = fn(arg);
		_exit(reply == NULL || json_dumpfd(reply, p[1],
		    JSON_COMPACT) == -1);
	}
	close(p[1]);
	reply = json_load_callback(reply_read, &p[0], JSON_DISABLE_EOF_CHECK,
	    NULL);
	close(p[0]);
	if (json_is_object(reply))
		return reply;
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	json_decref(reply);
	snprintf(why, whylen, "the confined child ended abnormally "
	    "(status %#x)", status);
	return NULL;
}

/* A child's {"ok", "why"}: 0, or -1 and its why (else what). */
static int
reply_ok(const json_t *reply, const char *what, char *why, size_t whylen)
{
	const char *w;

	if (json_is_true(json_object_get(reply, "ok")))
		return 0;
	w = json_string_value(json_object_get(reply, "why"));
	snprintf(why, whylen, "%s", w != NULL && *w != '\0' ? w : what);
	return -1;
}

struct seed_job {
	const struct as_config	*c;
	const char		*work;
	const char		*plandir;	/* the bundle's PLAN_DIR */
	int			 render;	/* a plan's render's */
	json_t			*req;
};

static json_t *
seed_child(void *arg)
{
	struct seed_job *j = arg;
	char why[1024] = "";
	int r;

	/* A render shows the plan file alone: no module, no state. */
	r = j->render ? 0 : workspace_seed(j->c, j->work, j->plandir, j->req,
	    why, sizeof(why));
	return json_pack("{s:b, s:s, s:O?, s:O?, s:o?}", "ok", r == 0, "why",
	    why, "snapshot", json_object_get(j->req, "snapshot"),
	    "module_provisioners", json_object_get(j->req,
	    "module_provisioners"), "init",
	    r == 0 && json_is_true(json_object_get(j->req, "init_cache")) ?
	    tfinit_seed(j->c, j->plandir != NULL ? j->plandir : j->work,
	    j->plandir != NULL ? TFINIT_ROOT : j->render ? TFINIT_LOCK : 0,
	    j->req) : NULL);
}

/*
 * workspace_seed in a child that can read nothing but the working
 * directory and the init cache and write nothing but runnerd's
 * terraform state and the workspace (confined_run).  The
 * snapshot's digest comes back into req, and with "init_cache" what
 * tfinit_seed found ("init").  With render, work is the render's of the
 * plan req was seeded for: it gets the .terraform the plan got, nothing
 * of the module, and req stays as it is.
 */
int
workspace_seed_confined(const struct as_config *c, const char *work,
    int render, json_t *req, char *why, size_t whylen)
{
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	struct seed_job job = { c, work, NULL, render, req };
	char terraform[PATH_MAX], tfinit[PATH_MAX], plandir[PATH_MAX];
	json_t *reply;
	int r;

	if (pathf(terraform, sizeof(terraform), "%s/terraform",
	    workspace_state_root(c)) == -1 || mkdir_owned(terraform) == -1 ||
	    tfinit_dir(c, tfinit, sizeof(tfinit)) == -1 ||
	    plan_dir_of(work, plandir, sizeof(plandir)) == -1) {
		snprintf(why, whylen, "workspace: %s", strerror(errno));
		return -1;
	}
	if (!render)
		json_object_del(req, "init");
	/* Nothing to copy in: no child (one-shot tools' calls). */
	if (json_object_get(req, "state") == NULL) {
		json_object_del(req, "snapshot");
		return 0;
	}
	if (!render)
		paths.ro[0] = json_string_value(json_object_get(req,
		    "workdir"));
	if (json_is_true(json_object_get(req, "init_cache")))
		paths.ro[paths.ro[0] != NULL] = tfinit;
	paths.rw[0] = terraform;
	paths.rw[1] = work;
	if (!render && json_object_get(req, "plan_load") != NULL) {
		job.plandir = plandir;
		paths.rw[2] = plandir;
	}
	if ((reply = confined_run(c, &paths, seed_child, &job, why,
	    whylen)) == NULL)
		return -1;
	r = reply_ok(reply, "the workspace copy failed", why, whylen);
	if (render) {
		json_decref(reply);
		return r;
	}
	json_object_del(req, "snapshot");
	json_object_del(req, "module_provisioners");
	if (r == 0 && json_is_string(json_object_get(reply, "snapshot")))
		json_object_set(req, "snapshot", json_object_get(reply,
		    "snapshot"));
	if (r == 0 && json_is_object(json_object_get(reply,
	    "module_provisioners")))
		json_object_set(req, "module_provisioners", json_object_get(
		    reply, "module_provisioners"));
	if (r == 0 && json_is_object(json_object_get(reply, "init")))
		json_object_set(req, "init", json_object_get(reply, "init"));
	json_decref(reply);
	return r;
}

struct collect_job {
	const struct as_config	*c;
	const char		*work;
	const char		*plan_to;
	json_t			*req;
	int			 clean;
};

static json_t *
collect_child(void *arg)
{
	struct collect_job *j = arg;
	const char *plan;
	char why[1024];
	json_t *r;

	if ((r = json_object()) == NULL)
		return NULL;
	json_object_set_new(r, "files", files_collect(j->work,
	    json_object_get(j->req, "files_out"), j->c->runnerd.output_max));
	workspace_keep(j->work, j->req, r, j->clean);
	if (j->plan_to != NULL && (plan = json_string_value(
	    json_object_get(r, "plan_digest"))) != NULL &&
	    plan_seed(json_string_value(json_object_get(j->req, "state")),
	    plan, j->plan_to, why, sizeof(why)) == -1)
		json_object_set_new(r, "error", json_sprintf("render: %s",
		    why));
	return r;
}

/*
 * After the sandbox, files_collect and workspace_keep in a child that
 * reads nothing but the workspace and writes nothing but runnerd's
 * terraform state and plan_to (confined_run); what they give goes
 * into r.  With plan_to, the plan kept goes there too, checked, for its
 * render.
 */
void
workspace_collect_confined(const struct as_config *c, const char *work,
    json_t *req, json_t *r, int clean, const char *plan_to)
{
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	struct collect_job job = { c, work, plan_to, req, clean };
	char terraform[PATH_MAX], plandir[PATH_MAX], why[256];
	json_t *reply;

	/* Nothing to collect: no child (one-shot tools' calls). */
	if (json_object_get(req, "state") == NULL &&
	    json_array_size(json_object_get(req, "files_out")) == 0) {
		json_object_set_new(r, "files", json_object());
		return;
	}
	if (pathf(terraform, sizeof(terraform), "%s/terraform",
	    workspace_state_root(c)) == -1 ||
	    plan_dir_of(work, plandir, sizeof(plandir)) == -1) {
		json_object_set_new(r, "error", json_string("workspace: "
		    "path too long"));
		return;
	}
	paths.ro[0] = work;
	/* An apply's plan, checked again (workspace_keep). */
	if (json_object_get(req, "plan_load") != NULL)
		paths.ro[1] = plandir;
	paths.rw[0] = terraform;
	paths.rw[1] = plan_to;
	if ((reply = confined_run(c, &paths, collect_child, &job, why,
	    sizeof(why))) == NULL) {
		json_object_set_new(r, "error", json_sprintf("collect: %s",
		    why));
		return;
	}
	json_object_update(r, reply);
	json_decref(reply);
}

struct plan_job {
	const char	*state;
	const char	*digest;
	const char	*dir;
};

static json_t *
plan_child(void *arg)
{
	struct plan_job *j = arg;
	char why[512] = "";
	int r;

	r = plan_seed(j->state, j->digest, j->dir, why, sizeof(why));
	return json_pack("{s:b, s:s}", "ok", r == 0, "why", why);
}

/*
 * plan_seed in a child that reads nothing but the state directory and
 * writes nothing but dir (confined_run): a render's saved plan, on the
 * kubernetes backend, where no collect brings it (kube/renderer.c).
 */
int
plan_seed_confined(const struct as_config *c, const char *state,
    const char *digest, const char *dir, char *why, size_t whylen)
{
	struct sandbox_paths paths = { .rw = { dir }, .ro = { state } };
	struct plan_job job = { state, digest, dir };
	json_t *reply;
	int r;

	if ((reply = confined_run(c, &paths, plan_child, &job, why,
	    whylen)) == NULL)
		return -1;
	r = reply_ok(reply, "the saved plan could not be copied", why, whylen);
	json_decref(reply);
	return r;
}
