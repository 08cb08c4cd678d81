/* SPDX-License-Identifier: ISC */
/*
 * The privileged launcher (see launcher.h).  One sandbox per LMSG_RUN:
 * a bundle and a cgroup, then `runsc run` with the output on pipes that
 * are read here up to the cap; a deadline timer; every process of its
 * cgroup killed on deadline, cap or LMSG_KILL; and the bundle, cgroup
 * and container removed before the result goes back.  No retries.
 *
 * With runnerd.terraform_pool, terraform's sandboxes are started ahead,
 * each waiting for the one call that claims it (launcher/tfpool.c,
 * counted by helperlib/pool.c); a claimed one is then a one-shot
 * sandbox like any other, and the pool is refilled when a call ends,
 * so that a start does not compete with a call for the CPU.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "event.h"
#include "frame.h"
#include "io.h"
#include "launcher.h"
#include "sessbox.h"
#include "log.h"
#include "output.h"
#include "pool.h"

/* After a kill, how long runsc gets before it is killed itself. */
#define KILL_GRACE_MS	10000

struct capture {
	int		 fd;
	char		*buf;
	size_t		 len;
	int		 truncated;
};

struct sbx {
	TAILQ_ENTRY(sbx)	 entry;
	uint64_t		 id;
	char			 cid[CONTAINER_ID_LEN];
	char			 dir[PATH_MAX];
	pid_t			 runsc;
	pid_t			 proxy;
	int			 wstatus;
	struct capture		 out, err;
	int64_t			 started;
	uint64_t		 timer;
	const char		*killed;	/* the status a kill gives */
	json_t			*req;
	json_t			*planned;	/* the plan's result, rendering */
	json_t			*early;		/* the plan, taken at "render" */
	struct phase		 phase;
	struct render		 render;	/* a plan's, from its start */
	int			 waiting;	/* started for the pool, unclaimed */
	struct pool_entry	 pooled;	/* in it: waiting, not killed */
	int			 script_fd;	/* a waiting one's stdin */
};

static const struct as_config	*conf;
static char			 rootfs[PATH_MAX];
static TAILQ_HEAD(, sbx)	 sbxs = TAILQ_HEAD_INITIALIZER(sbxs);
static struct pool		 terraform_pool;

static void	 sbx_finish(struct sbx *);

static void
done_failed(uint64_t id, const char *why)
{
	log_warnx("sandbox %016llx: %s", (unsigned long long)id, why);
	engine_send(LMSG_DONE, id, json_pack("{s:s, s:s}", "status", "failed",
	    "error", why));
}

static void
capture_close(struct capture *c)
{
	if (c->fd == -1)
		return;
	ev_del(c->fd);
	close(c->fd);
	c->fd = -1;
}

static void
sbx_grace_over(void *arg)
{
	struct sbx *s = arg;

	s->timer = 0;
	if (s->runsc > 0) {
		log_warnx("sandbox %s: runsc outlived its kill", s->cid);
		kill(s->runsc, SIGKILL);
	}
}

/* Ends the whole sandbox; why becomes the result's status. */
static void
sbx_kill(struct sbx *s, const char *why)
{
	if (s->killed != NULL)
		return;
	s->killed = why;
	pool_leave(&s->pooled);
	log_debug("sandbox %s: killing (%s)", s->cid, why);
	if (s->timer)
		ev_timer_cancel(s->timer);
	s->timer = ev_timer(KILL_GRACE_MS, sbx_grace_over, s);
	if (s->runsc > 0)
		cgroup_kill(s->cid);
	render_kill(&s->render);
}

static void
sbx_deadline(void *arg)
{
	struct sbx *s = arg;

	s->timer = 0;
	sbx_kill(s, "deadline");
}

/* Reads what is there; past the cap the sandbox is ended. */
static void
capture_read(struct sbx *s, struct capture *c)
{
	char chunk[65536];
	size_t room, max = conf->runnerd.output_max;
	ssize_t n;

	while ((n = read(c->fd, chunk, sizeof(chunk))) > 0) {
		room = max - c->len;
		if ((size_t)n > room) {
			c->truncated = 1;
			sbx_kill(s, "output_limit");
		}
		memcpy(c->buf + c->len, chunk, (size_t)n > room ? room :
		    (size_t)n);
		c->len += (size_t)n > room ? room : (size_t)n;
	}
	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR))
		capture_close(c);
}

static void
capture_event(int fd, short revents, void *arg)
{
	struct sbx *s = arg;

	(void)revents;
	capture_read(s, fd == s->out.fd ? &s->out : &s->err);
}

static json_t *
sbx_result(struct sbx *s)
{
	const char *status = "exited";
	char work[PATH_MAX];
	json_t *r, *code = json_null();
	int ec, clean;

	if (pathf(work, sizeof(work), "%s/work", s->dir) == -1)
		return NULL;
	if (WIFSIGNALED(s->wstatus) && s->killed == NULL)
		status = "failed";
	else if (s->killed != NULL)
		status = s->killed;
	else {
		ec = WEXITSTATUS(s->wstatus);
		/* runsc reports a container killed by a signal as 128+n. */
		if (ec >= 128 && cgroup_hit_memory_limit(s->cid))
			status = "memory_limit";
		code = json_integer(ec);
	}
	r = json_pack("{s:s, s:o, s:b, s:b, s:I}",
	    "status", status, "exit_code", code,
	    "stdout_truncated", s->out.truncated,
	    "stderr_truncated", s->err.truncated,
	    "duration_ms", (json_int_t)(ev_now_ms() - s->started));
	if (r != NULL && (output_set(r, "stdout", s->out.buf, s->out.len) ==
	    -1 || output_set(r, "stderr", s->err.buf, s->err.len) == -1)) {
		json_decref(r);
		r = NULL;
	}
	if (r != NULL && strcmp(status, "failed") == 0)
		json_object_set_new(r, "error",
		    json_string("runsc ended abnormally"));
	clean = strcmp(status, "exited") == 0 && json_integer_value(code) == 0;
	/* What was taken at "render" counts if the sandbox ended well. */
	if (r != NULL && s->early != NULL && clean)
		json_object_update(r, s->early);
	else if (r != NULL)
		workspace_collect_confined(conf, work, s->req, r, clean,
		    render_inbox(&s->render));
	json_decref(s->early);
	s->early = NULL;
	return r;
}

/*
 * The output caps count bytes, and JSON escapes can make them six times
 * as many: a result whose encoding would not fit its frame loses the
 * second half of its longer stream, flagged truncated, until it fits.
 */
#define DONE_MAX	(MSG_MAX_PAYLOAD - 4096)

static void
result_fit(struct sbx *s, json_t *r)
{
	struct capture *c;
	const char *key;
	char *enc, flag[32];
	size_t len;
	int pass;

	for (pass = 0; pass < 64; pass++) {
		if ((enc = json_dumps(r, JSON_COMPACT)) == NULL)
			return;
		len = strlen(enc);
		free(enc);
		if (len <= DONE_MAX)
			return;
		c = s->out.len >= s->err.len ? &s->out : &s->err;
		key = c == &s->out ? "stdout" : "stderr";
		if (c->len == 0)
			return;
		c->len = output_cut(c->buf, c->len / 2);
		if (output_set(r, key, c->buf, c->len) == -1)
			return;
		snprintf(flag, sizeof(flag), "%s_truncated", key);
		json_object_set_new(r, flag, json_true());
	}
}

/* Removes everything the call made; 0 when nothing is left. */
static int
sbx_cleanup(struct sbx *s)
{
	int r = 0;

	render_stop(&s->render);
	if (s->proxy > 0) {
		kill(s->proxy, SIGKILL);
		(void)waitpid(s->proxy, NULL, 0);
		s->proxy = -1;
	}
	if (s->killed != NULL)
		(void)runsc_cmd(conf, NULL, 0, "delete", "--force", s->cid,
		    NULL);
	cgroup_remove(s->cid);
	if (bundle_remove(s->dir) == -1) {
		log_warn("sandbox %s: remove %s", s->cid, s->dir);
		r = -1;
	}
	return r;
}

static void
sbx_free(struct sbx *s)
{
	if (s->timer)
		ev_timer_cancel(s->timer);
	capture_close(&s->out);
	capture_close(&s->err);
	phase_close(&s->phase);
	if (s->script_fd != -1)
		close(s->script_fd);
	pool_leave(&s->pooled);
	TAILQ_REMOVE(&sbxs, s, entry);
	free(s->out.buf);
	free(s->err.buf);
	json_decref(s->req);
	json_decref(s->planned);
	json_decref(s->early);
	free(s);
}

/* The call's time, from now: runsc's, then the render's. */
static void
sbx_deadline_start(struct sbx *s)
{
	if (s->timer)
		ev_timer_cancel(s->timer);
	s->timer = s->waiting ? 0 :
	    ev_timer(conf->runnerd.timeout * 1000, sbx_deadline, s);
}

/* Output pipes and a deadline for the sandbox's process, pid. */
static int
sbx_watch(struct sbx *s, pid_t pid, int out, int err)
{
	s->runsc = pid;
	s->out.fd = out;
	s->err.fd = err;
	s->out.len = s->err.len = 0;
	s->out.truncated = s->err.truncated = 0;
	fcntl(out, F_SETFL, O_NONBLOCK);
	fcntl(err, F_SETFL, O_NONBLOCK);
	if (ev_add(out, POLLIN, capture_event, s) == -1 ||
	    ev_add(err, POLLIN, capture_event, s) == -1)
		fatal("launcher: ev_add");
	sbx_deadline_start(s);
	return 0;
}

/* A plan's render, its sandbox started beside the planning one. */
static void
sbx_render_start(struct sbx *s)
{
	if (json_is_true(json_object_get(s->req, "render")))
		render_start(conf, s->dir, s->cid, s->req, &s->render);
}

/*
 * After a clean plan: the plan shown where no module code ran
 * (helperlib/render.c), unless it went at "render" (sbx_phase); 0 when
 * r is to wait for it.
 */
static int
sbx_render(struct sbx *s, json_t *r)
{
	char why[512];

	if (!json_is_true(json_object_get(s->req, "render")) ||
	    json_object_get(r, "plan_digest") == NULL ||
	    json_object_get(r, "error") != NULL)
		return -1;
	if (!render_went(&s->render) &&
	    render_go(&s->render, why, sizeof(why)) == -1) {
		json_object_set_new(r, "error", json_string(why));
		return -1;
	}
	phase_report(&s->phase, "render");
	return 0;
}

/*
 * The plan's shell said "render": terraform plan has exited 0.  Its
 * plan is taken and rendered now, while gVisor ends the sandbox (30 to
 * 40 ms here); sbx_result uses what was taken only if the sandbox then
 * exits 0.  A plan kept then and not used is pruned with the old ones
 * (workspace_keep).
 */
static void
sbx_phase(void *arg, const char *name)
{
	struct sbx *s = arg;
	char work[PATH_MAX];

	if (strcmp(name, "render") != 0 || s->runsc <= 0 ||
	    s->killed != NULL || s->early != NULL ||
	    pathf(work, sizeof(work), "%s/work", s->dir) == -1 ||
	    (s->early = json_object()) == NULL)
		return;
	log_debug("sandbox %s: the plan is made; rendering it while the "
	    "sandbox ends", s->cid);
	workspace_collect_confined(conf, work, s->req, s->early, 1,
	    render_inbox(&s->render));
	(void)sbx_render(s, s->early);
}

static void
sbx_phases(struct sbx *s)
{
	s->phase.hook = sbx_phase;
	s->phase.hook_arg = s;
}

/*
 * When runsc has exited: the result, or the render's start; when the
 * render has too, its result.  Then the call's end.
 */
static void
sbx_finish(struct sbx *s)
{
	char why[512] = "";
	json_t *r;
	int ok;

	if (s->runsc > 0)
		return;		/* a render that ended first waits for it */
	if ((r = s->planned) == NULL) {
		/* It has exited: what is left in the pipes is all there is. */
		if (s->out.fd != -1)
			capture_read(s, &s->out);
		if (s->err.fd != -1)
			capture_read(s, &s->err);
		phase_read(&s->phase);
		if (s->waiting) {
			log_warnx("terraform pool: sandbox %s exited "
			    "unclaimed", s->cid);
			(void)sbx_cleanup(s);
			sbx_free(s);
			return;
		}
		if ((r = sbx_result(s)) != NULL && sbx_render(s, r) == 0) {
			s->planned = r;
			sbx_deadline_start(s);
		}
	}
	if (s->planned != NULL) {
		if (render_running(&s->render))
			return;
		s->planned = NULL;
		ok = s->killed == NULL && render_ended_ok(&s->render, why,
		    sizeof(why));
		render_collect(conf, s->render.work, ok, r,
		    s->killed != NULL ? s->killed : why);
	}
	if (sbx_cleanup(s) == -1 && r != NULL)
		json_object_set_new(r, "cleanup_failed", json_true());
	if (r != NULL)
		result_fit(s, r);
	engine_done(s->id, r);
	sbx_free(s);
	pool_refill(&terraform_pool);
}

/* runsc for s, with stdin in (-1: /dev/null), which it closes. */
static int
sbx_spawn(struct sbx *s, json_t *egress, int in)
{
	int out[2], err[2], egressfd = -1;

	if (pipe2(out, O_CLOEXEC) == -1)
		goto fail_in;
	if (pipe2(err, O_CLOEXEC) == -1) {
		close(out[0]);
		close(out[1]);
		goto fail_in;
	}
	if (json_array_size(egress) > 0 &&
	    (s->proxy = egress_start(s->cid, egress, &egressfd)) == -1)
		goto fail;
	if ((s->runsc = fork()) == -1)
		goto fail;
	if (s->runsc == 0)
		runsc_exec(conf, s->dir, s->cid, in, out[1], err[1], egressfd);
	if (egressfd != -1)
		close(egressfd);
	if (in != -1)
		close(in);
	close(out[1]);
	close(err[1]);
	return sbx_watch(s, s->runsc, out[0], err[0]);
fail:
	if (egressfd != -1)
		close(egressfd);
	close(out[0]);
	close(out[1]);
	close(err[0]);
	close(err[1]);
fail_in:
	if (in != -1)
		close(in);
	return -1;
}

/*
 * A new sandbox's record, for call id (0: a pooled one), in the list;
 * NULL and why when it cannot be had.  Its container id is random, not
 * the call's: request ids are the client's, and two runnerds on one
 * machine share the cgroup tree.
 */
static struct sbx *
sbx_new(uint64_t id, char *why, size_t whylen)
{
	struct sbx *s;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	if (container_id_new(s->cid) == -1) {
		snprintf(why, whylen, "getrandom: %s", strerror(errno));
		free(s);
		return NULL;
	}
	s->id = id;
	s->out.fd = s->err.fd = s->phase.fd = s->script_fd = -1;
	s->proxy = -1;
	s->pooled.member = s;
	render_init(&s->render);
	s->started = ev_now_ms();
	if (id != 0)
		log_debug("sandbox %s runs %016llx", s->cid,
		    (unsigned long long)id);
	TAILQ_INSERT_TAIL(&sbxs, s, entry);
	if (pathf(s->dir, sizeof(s->dir), "%s/bundles/%s",
	    conf->runnerd.state_dir, s->cid) == -1)
		snprintf(why, whylen, "state_dir: %s", strerror(errno));
	else if ((s->out.buf = malloc(conf->runnerd.output_max)) == NULL ||
	    (s->err.buf = malloc(conf->runnerd.output_max)) == NULL)
		snprintf(why, whylen, "out of memory");
	else if (cgroup_create(conf, s->cid) == -1)
		snprintf(why, whylen, "cgroup: %s", strerror(errno));
	else
		return s;
	(void)sbx_cleanup(s);
	sbx_free(s);
	return NULL;
}

/* A pooled sandbox, started; its shell waits on s->script_fd. */
static struct pool_entry *
terraform_pool_start(char *why, size_t whylen)
{
	struct sbx *s;
	json_t *req;
	int sp[2];

	if ((s = sbx_new(0, why, whylen)) == NULL)
		return NULL;
	s->waiting = 1;
	req = tfpool_box_request();
	if (req == NULL || bundle_create(conf, s->dir, s->cid, rootfs, req,
	    -1) == -1 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sp) == -1) {
		snprintf(why, whylen, "bundle: %s", strerror(errno));
		json_decref(req);
		(void)sbx_cleanup(s);
		sbx_free(s);
		return NULL;
	}
	json_decref(req);
	s->script_fd = sp[0];
	if (sbx_spawn(s, NULL, sp[1]) == -1) {
		snprintf(why, whylen, "runsc: %s", strerror(errno));
		(void)sbx_cleanup(s);
		sbx_free(s);
		return NULL;
	}
	return &s->pooled;
}

/* No readiness: the oldest waiting sandbox is the likeliest to be up. */
static const struct pool_ops terraform_pool_ops = {
	.name = "terraform pool",
	.start = terraform_pool_start,
};

/*
 * Call id takes the pooled sandbox s: its workspace, providers and
 * credential are put in place, then its script is the line the shell
 * waits for, and the deadline starts.  Why it failed, or "".
 */
static void
pool_use(struct sbx *s, uint64_t id, json_t *req, int credfd,
    const char *script, char *why, size_t whylen)
{
	char work[PATH_MAX];
	int fd = s->script_fd;

	log_debug("terraform pool: sandbox %s runs %016llx", s->cid,
	    (unsigned long long)id);
	s->waiting = 0;
	s->id = id;
	s->started = ev_now_ms();
	s->req = json_incref(req);
	s->timer = ev_timer(conf->runnerd.timeout * 1000, sbx_deadline, s);
	if (bundle_tag(s->dir, id) == -1) {
		if (credfd != -1)
			close(credfd);
		snprintf(why, whylen, "bundle: %s", strerror(errno));
		return;
	}
	if (tfpool_claim(conf, s->dir, req, credfd, why, whylen) == -1 ||
	    pathf(work, sizeof(work), "%s/work", s->dir) == -1 ||
	    workspace_seed_confined(conf, work, 0, req, why, whylen) == -1)
		return;
	s->script_fd = -1;
	if (write_full(fd, script, strlen(script)) == -1 ||
	    write_full(fd, "\n", 1) == -1 ||
	    phase_adopt(&s->phase, id, json_object_get(req, "phases"), fd) ==
	    -1) {
		close(fd);
		snprintf(why, whylen, "terraform pool: %s", strerror(errno));
		return;
	}
	sbx_phases(s);
	why[0] = '\0';
	tfinit_build(conf, json_object_get(req, "init"),
	    json_object_get(req, "providers"));
	sbx_render_start(s);
}

/*
 * Killed and waited for here, not by the reaper, so that it reports
 * nothing: a pooled sandbox that cannot run the call that claimed it
 * (else it would report as that call's), or any at shutdown.
 */
static void
sbx_destroy(struct sbx *s)
{
	sbx_kill(s, "killed");
	if (s->runsc > 0) {
		kill(s->runsc, SIGKILL);
		(void)waitpid(s->runsc, NULL, 0);
	}
	(void)sbx_cleanup(s);
	sbx_free(s);
}

static void
sbx_start(uint64_t id, const uint8_t *data, size_t len, int credfd)
{
	const char *script;
	json_t *req;
	struct sbx *s;
	char why[256], work[PATH_MAX];
	int in;

	if ((req = json_loadb((const char *)data, len, 0, NULL)) == NULL ||
	    !request_ok(req) || !workspace_request_ok(conf, req) ||
	    !phase_request_ok(json_object_get(req, "phases"))) {
		json_decref(req);
		if (credfd != -1)
			close(credfd);
		done_failed(id, "bad request");
		return;
	}
	if ((script = tfpool_script(req)) != NULL &&
	    (s = pool_claim(&terraform_pool)) != NULL) {
		pool_use(s, id, req, credfd, script, why, sizeof(why));
		if (why[0] != '\0') {
			sbx_destroy(s);
			s = NULL;
		}
	} else if ((s = sbx_new(id, why, sizeof(why))) == NULL)
		;	/* why says it */
	else if ((s->req = json_incref(req)) == NULL ||
	    bundle_create(conf, s->dir, s->cid, rootfs, req, credfd) == -1 ||
	    bundle_tag(s->dir, id) == -1)
		snprintf(why, sizeof(why), "bundle: %s", strerror(errno));
	else if (pathf(work, sizeof(work), "%s/work", s->dir) == -1 ||
	    workspace_seed_confined(conf, work, 0, req, why, sizeof(why)) ==
	    -1)
		;	/* why says it */
	else if (phase_open(&s->phase, s->id, json_object_get(req, "phases"),
	    &in) == -1 || sbx_spawn(s, json_object_get(req, "egress"), in) ==
	    -1)
		snprintf(why, sizeof(why), "runsc: %s", strerror(errno));
	else {
		why[0] = '\0';
		sbx_phases(s);
		/* After the start: the call's sandbox comes first. */
		tfinit_build(conf, json_object_get(req, "init"),
		    json_object_get(req, "providers"));
		sbx_render_start(s);
	}
	if (credfd != -1)
		close(credfd);
	json_decref(req);
	if (why[0] != '\0') {
		if (s != NULL) {
			(void)sbx_cleanup(s);
			sbx_free(s);
		}
		done_failed(id, why);
	}
}

static struct sbx *
sbx_find(uint64_t id)
{
	struct sbx *s;

	TAILQ_FOREACH(s, &sbxs, entry)
		if (s->id == id && !s->waiting)
			return s;
	return NULL;
}

/* LMSG_RUN */
static void
launcher_run(uint64_t id, const uint8_t *data, size_t len, int credfd)
{
	if (sbx_find(id) == NULL) {
		sbx_start(id, data, len, credfd);
		return;
	}
	if (credfd != -1)
		close_received(credfd);
	done_failed(id, "request id already running");
}

static void
launcher_kill(uint64_t id)
{
	struct sbx *s;

	if ((s = sbx_find(id)) != NULL)
		sbx_kill(s, "killed");
}

static void
launcher_reap(void)
{
	struct sbx *s;
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		TAILQ_FOREACH(s, &sbxs, entry)
			if (s->runsc == pid || render_reaped(&s->render, pid,
			    st))
				break;
		if (s == NULL) {
			if (!tfinit_reaped(pid, st))
				sessbox_reaped(pid, st);
			continue;
		}
		if (s->runsc == pid) {
			s->wstatus = st;
			s->runsc = -1;
		}
		sbx_finish(s);
	}
}

static void
launcher_signal(int sig, void *arg)
{
	(void)arg;
	if (sig == SIGCHLD)
		launcher_reap();
	else if (sig == SIGTERM || sig == SIGINT)
		ev_break();
}

/*
 * On the way out: kill what runs, wait for it, remove its traces.  Its
 * calls get no result: the journal tells the next runnerd.
 */
static void
launcher_shutdown(void)
{
	struct sbx *s;

	sessbox_shutdown();
	tfinit_shutdown();
	while ((s = TAILQ_FIRST(&sbxs)) != NULL) {
		if (!s->waiting)
			journal_note(s->id, NULL);
		sbx_destroy(s);
	}
	journal_sync();
}

static const struct engine_role launcher_role = {
	.name = "launcher",
	.run = launcher_run,
	.kill = launcher_kill,
	.session = sessbox_message,
	.journal_done = journal_remove,
	/* launcher_main ends every sandbox once its loop is left. */
	.gone = ev_break,
};

void
launcher_main(const struct as_config *c, int fd)
{
	static const int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP, 0 };
	char path[PATH_MAX];

	conf = c;
	if (sandbox_init_find(NULL) == -1)
		fatalx("launcher: no %s", sandbox_init_path());
	egress_init(conf);
	journal_lock(conf);
	ev_init();
	engine_start(&launcher_role, fd);
	if (ev_signals(sigs, launcher_signal, NULL) == -1)
		fatal("launcher: signals");
	if (pathf(path, sizeof(path), "%s/bundles", conf->runnerd.state_dir) ==
	    -1 || (mkdir(path, 0700) == -1 && errno != EEXIST))
		fatal("mkdir %s", path);
	if (rootfs_prepare(conf, rootfs, sizeof(rootfs)) == -1)
		fatal("rootfs %s", rootfs);
	userns_init(conf);
	tfinit_init(conf);
	engine_swept(sweep(conf), journal_read());
	launcher_sessions(conf, rootfs);
	pool_init(&terraform_pool, &terraform_pool_ops,
	    (size_t)conf->runnerd.terraform_pool);
	pool_refill(&terraform_pool);
	if (ev_loop() == -1)
		fatal("launcher: event loop");
	launcher_shutdown();
	_exit(0);
}
