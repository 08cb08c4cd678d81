/* SPDX-License-Identifier: ISC */
/*
 * The plan renderer: what a person approves on the kubernetes backend is
 * rendered where no module code ran, as on gvisor, by the launcher's own
 * render (helperlib/render.c): a bubblewrap sandbox on runnerd's host
 * with no credential, no network and no module file, that sees only the
 * saved plan (checked against its digest), the mirror's allowed
 * providers read-only and a lock file from the plan itself.  Only its
 * plan.json and plan.txt reach the destructive flags, the approval and
 * approvalctl show; the planning Job's files never come back.
 *
 * Why here and not in a render Job (issue 33 item 3): this host already
 * sees the claim the saved plans are kept on (kubernetes.pvc_path); the
 * render is then the same code, script and sandbox on both backends,
 * tested once; a second Job would cost a pod's start (1.7 to 2.1 s on a
 * real node) against bwrap's 25 ms, and would need the cluster to carry
 * the provider mirror and terraform.  The price: runnerd's host needs
 * bubblewrap and terraform, as the gvisor backend does.
 *
 * bwrap mounts the render's root, which Landlock refuses to any process
 * in a domain, so this process keeps root and no filter, like the
 * launcher.  The helper forks it before it reads the kubeconfig or drops
 * root (rootchild.c); it holds nothing of the cluster's, takes one
 * request at a time from the helper and reads the claim only in
 * confined children
 * (helperlib/confine.c).  A render gets the call's limits (its own
 * cgroup, helperlib/cgroup.c) and runnerd.timeout.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cjson.h"
#include "frame.h"
#include "kube.h"
#include "launcher.h"
#include "log.h"

static struct channel	 renderer = { .fd = -1 };	/* the helper's end */

/* -- the renderer ---------------------------------------------------------- */

/* Every child that ended; 1 when one of them was r's bwrap. */
static int
reap(struct render *r)
{
	pid_t pid;
	int st, mine = 0;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		mine |= r != NULL && render_reaped(r, pid, st);
	return mine;
}

/* Until r's bwrap has ended: 0, or -1 when it outlived runnerd.timeout. */
static int
render_wait(const struct as_config *c, struct render *r)
{
	struct timespec end, now, left;
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += c->runnerd.timeout;
	while (render_running(r)) {
		if (reap(r))
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec &&
		    now.tv_nsec >= end.tv_nsec)) {
			render_kill(r);
			while (render_running(r) && !reap(r))
				(void)sigtimedwait(&chld, NULL, NULL);
			return -1;
		}
		left.tv_sec = end.tv_sec - now.tv_sec;
		left.tv_nsec = end.tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0) {
			left.tv_sec--;
			left.tv_nsec += 1000000000L;
		}
		(void)sigtimedwait(&chld, NULL, &left);
	}
	return 0;
}

/*
 * The run request of call id's clean plan, with "plan_digest": its
 * render's files, or {"error"} (render_collect's words).
 */
static json_t *
render_plan(const struct as_config *c, uint64_t id, json_t *req)
{
	struct render r;
	char cid[CONTAINER_ID_LEN], dir[PATH_MAX], why[512] = "";
	const char *digest, *state;
	json_t *out;
	int ok = 0;

	digest = json_string_value(json_object_get(req, "plan_digest"));
	state = json_string_value(json_object_get(req, "state"));
	if (!request_ok(req) || !workspace_request_ok(c, req) ||
	    digest == NULL || !sha256_hex_ok(digest) || state == NULL)
		return json_pack("{s:s}", "error", "bad render request");
	/* Not the planning Job's: the render seeds its own. */
	json_object_del(req, "init_cache");
	if (container_id_new(cid) == -1)
		return json_pack("{s:s}", "error", "render: no randomness");
	log_debug("render %s runs %016llx", cid, (unsigned long long)id);
	if ((out = json_object()) == NULL ||
	    pathf(dir, sizeof(dir), "%s/render/%s", c->runnerd.state_dir,
	    cid) == -1)
		fatalx("renderer: out of memory");
	(void)reap(NULL);
	(void)rm_tree(dir);
	render_init(&r);
	if (mkdir(dir, 0700) == -1)
		snprintf(why, sizeof(why), "render: %.300s: %s", dir,
		    strerror(errno));
	else if (cgroup_create(c, cid) == -1)
		snprintf(why, sizeof(why), "render: cgroup %s: %s", cid,
		    strerror(errno));
	else {
		render_start(c, dir, cid, req, &r);
		/* No inbox: render_go says why it did not start. */
		if ((render_inbox(&r) == NULL || plan_seed_confined(c, state,
		    digest, render_inbox(&r), why, sizeof(why)) == 0) &&
		    render_go(&r, why, sizeof(why)) == 0) {
			if (render_wait(c, &r) == -1)
				snprintf(why, sizeof(why), "terraform show "
				    "took longer than runnerd.timeout");
			else
				ok = render_ended_ok(&r, why, sizeof(why));
		}
	}
	render_collect(c, r.work, ok, out, why);
	render_stop(&r);
	cgroup_remove(cid);
	if (rm_tree(dir) == -1)
		log_warn("renderer: remove %s", dir);
	return out;
}

static const struct as_config	*renderer_conf;	/* in the renderer */

static json_t *
renderer_handle(uint32_t type, uint64_t id, json_t *msg)
{
	if (type != RENDER_PLAN)
		return json_pack("{s:s}", "error", "unknown request");
	return render_plan(renderer_conf, id, msg);
}

static void
renderer_main(const struct as_config *c, int fd)
{
	char dir[PATH_MAX];
	sigset_t chld;

	fd = rootchild_enter(fd, "runnerd-render");
	renderer_conf = c;
	/* Waited for with sigtimedwait: blocked, not ignored. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	if (sandbox_init_find(NULL) == -1)
		fatalx("renderer: no %s", sandbox_init_path());
	if (pathf(dir, sizeof(dir), "%s/render", c->runnerd.state_dir) == -1 ||
	    (mkdir(dir, 0700) == -1 && errno != EEXIST))
		fatal("renderer: %s", dir);
	rootchild_serve(fd, RENDER_REPLY, renderer_handle);
}

/* -- the helper's end ------------------------------------------------------ */

/* Forks the renderer; the helper calls this before it reads anything. */
void
renderer_start(const struct as_config *c)
{
	rootchild_start(c, &renderer, renderer_main, "plan renderer");
}

/* A worker has no business with the renderer. */
void
renderer_close(void)
{
	rootchild_close(&renderer);
}

/*
 * After a plan's Job and its collect: when it saved a plan (result has
 * its digest and no error), the render's plan.json and plan.txt replace
 * whatever files result has, or result gets the render's error and no
 * files, as the launcher's render_collect does on gvisor.
 */
void
renderer_render(uint64_t id, json_t *req, json_t *result)
{
	const char *digest, *error;
	json_t *ask;
	json_t *reply;
	char why[256];

	digest = json_string_value(json_object_get(result, "plan_digest"));
	if (!json_is_true(json_object_get(req, "render")) || digest == NULL ||
	    json_object_get(result, "error") != NULL)
		return;
	ask = json_deep_copy(req);
	if (ask != NULL)
		json_object_set_new(ask, "plan_digest", json_string(digest));
	reply = rootchild_ask(&renderer, RENDER_PLAN, RENDER_REPLY, id, ask,
	    "plan renderer", why, sizeof(why));
	json_object_del(result, "files");
	if (reply == NULL) {
		json_object_set_new(result, "error", json_sprintf("the plan "
		    "could not be rendered outside the planning sandbox: %s",
		    why));
		return;
	}
	error = json_string_value(json_object_get(reply, "error"));
	if (error != NULL)
		json_object_set_new(result, "error", json_string(error));
	else
		json_object_set(result, "files", json_is_object(json_object_get(
		    reply, "files")) ? json_object_get(reply, "files") :
		    json_object());
	json_decref(reply);
}
