/* SPDX-License-Identifier: ISC */
/*
 * The claim keeper: the kubernetes backend's hands on terraform's
 * PersistentVolumeClaim, which this host sees at kubernetes.pvc_path
 * and each Job with files mounts at /work, sub-path calls/<Job name>/work
 * (and an apply's at PLAN_MOUNT, read-only, sub-path calls/<Job name>/plan:
 * the approved plan, root's, beside its work/ as in a gvisor bundle).
 * A sandbox runs as uid 65534, so its directory must be made over to
 * it, and what it leaves there removed: that takes root, which the
 * helper (libcurl, the cluster's answers) gives up.  So the helper
 * forks this process first.  It keeps root, is held to the claim by
 * Landlock and to file calls by seccomp, trusts the helper no further
 * than the shape of a request, and answers one request at a time with
 * the gvisor launcher's own workspace code (workspace.c):
 *
 *   CLAIM_SEED      the run request: calls/<name>/work made for the
 *                   sandbox user, files_in, the working directory, the
 *                   state and, in calls/<name>/plan, a saved plan (only
 *                   if it still has its digest)
 *   CLAIM_COLLECT   the run request and the call's result: files_out
 *                   read; after a clean exit the state and the new plan
 *                   kept; the call's directory removed
 *
 * Each answer is a CLAIM_REPLY: {"files", "plan_digest", "error"}, as
 * they apply.  Call directories that a crash left are removed at start.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cjson.h"
#include "daemon.h"
#include "frame.h"
#include "kube.h"
#include "launcher.h"
#include "log.h"
#include "sandbox.h"

static struct channel	 keeper = { .fd = -1 };	/* the helper's end */

/* Whether a run request has files, so that it needs the claim. */
int
claim_needed(json_t *req)
{
	return json_object_get(req, "files_in") != NULL ||
	    json_object_get(req, "files_out") != NULL ||
	    json_object_get(req, "workdir") != NULL ||
	    json_object_get(req, "state") != NULL;
}

/*
 * The call's directory on the claim, or its sub-path there (root NULL),
 * or with sub ("work", PLAN_DIR) that directory of it.
 */
int
claim_call_path(const char *root, uint64_t id, const char *sub, char *buf,
    size_t len)
{
	char name[KUBE_NAME_LEN];

	kube_name(id, name);
	return pathf(buf, len, "%s%s" KUBE_CLAIM_CALLS "/%s%s%s",
	    root != NULL ? root : "", root != NULL ? "/" : "", name,
	    sub != NULL ? "/" : "", sub != NULL ? sub : "");
}

/* -- the keeper ------------------------------------------------------------ */

static json_t *
error_reply(const char *why)
{
	return json_pack("{s:s}", "error", why);
}

static int
beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* A module on the claim, not in runnerd's own part of it. */
static int
workdir_ok(const struct as_config *c, const char *workdir, char *why,
    size_t whylen)
{
	char calls[PATH_MAX], state[PATH_MAX];

	if (!beneath(workdir, c->kubernetes.pvc_path)) {
		snprintf(why, whylen, "working directory %.160s is not on the "
		    "claim (kubernetes.pvc_path %.160s): the policy's "
		    "terraform_root must be there", workdir,
		    c->kubernetes.pvc_path);
		return 0;
	}
	if (pathf(calls, sizeof(calls), "%s/" KUBE_CLAIM_CALLS,
	    c->kubernetes.pvc_path) == -1 || pathf(state, sizeof(state),
	    "%s/terraform", c->kubernetes.pvc_path) == -1 ||
	    beneath(workdir, calls) || beneath(workdir, state) ||
	    strcmp(workdir, calls) == 0 || strcmp(workdir, state) == 0) {
		snprintf(why, whylen, "working directory %.160s is runnerd's "
		    "own on the claim (" KUBE_CLAIM_CALLS "/, terraform/): "
		    "keep modules elsewhere on it", workdir);
		return 0;
	}
	return 1;
}

static json_t *
seed(const struct as_config *c, uint64_t id, json_t *req)
{
	const char *workdir;
	char dir[PATH_MAX], work[PATH_MAX], plan[PATH_MAX], why[512];

	if (!request_ok(req) || !workspace_request_ok(c, req))
		return error_reply("bad run request");
	workdir = json_string_value(json_object_get(req, "workdir"));
	if (workdir != NULL && !workdir_ok(c, workdir, why, sizeof(why)))
		return error_reply(why);
	if (claim_call_path(c->kubernetes.pvc_path, id, NULL, dir,
	    sizeof(dir)) == -1 || claim_call_path(c->kubernetes.pvc_path, id,
	    "work", work, sizeof(work)) == -1 ||
	    claim_call_path(c->kubernetes.pvc_path, id, PLAN_DIR, plan,
	    sizeof(plan)) == -1)
		return error_reply("call directory: path too long");
	(void)rm_tree(dir);
	if (mkdir(dir, 0700) == -1 || mkdir(work, 0700) == -1 ||
	    chown(work, SANDBOX_UID, SANDBOX_GID) == -1 ||
	    (json_object_get(req, "plan_load") != NULL &&
	    mkdir(plan, 0755) == -1)) {
		snprintf(why, sizeof(why), "%.300s: %s", dir, strerror(errno));
		(void)rm_tree(dir);
		return error_reply(why);
	}
	if (files_write(work, json_object_get(req, "files_in")) == -1) {
		snprintf(why, sizeof(why), "files in: %s", strerror(errno));
		(void)rm_tree(dir);
		return error_reply(why);
	}
	if (workspace_seed(c, work, json_object_get(req, "plan_load") !=
	    NULL ? plan : NULL, req, why, sizeof(why)) == -1) {
		(void)rm_tree(dir);
		return error_reply(why);
	}
	/* The collect request brings them back for workspace_keep. */
	return json_pack("{s:O?, s:O?}", "snapshot", json_object_get(req,
	    "snapshot"), "module_provisioners", json_object_get(req,
	    "module_provisioners"));
}

static json_t *
keeper_collect(const struct as_config *c, uint64_t id, json_t *msg)
{
	json_t *req, *result, *reply;
	const char *status;
	char dir[PATH_MAX], work[PATH_MAX];

	if (claim_call_path(c->kubernetes.pvc_path, id, NULL, dir,
	    sizeof(dir)) == -1 || claim_call_path(c->kubernetes.pvc_path, id,
	    "work", work, sizeof(work)) == -1)
		return error_reply("call directory: path too long");
	req = json_object_get(msg, "request");
	result = json_object_get(msg, "result");
	if (!request_ok(req) || !workspace_request_ok(c, req) ||
	    !json_is_object(result))
		reply = error_reply("bad collect request");
	else
		reply = json_pack("{s:o}", "files", files_collect(work,
		    json_object_get(req, "files_out"), c->runnerd.output_max));
	status = json_string_value(json_object_get(result, "status"));
	if (reply != NULL && json_object_get(reply, "error") == NULL)
		workspace_keep(work, req, reply, status != NULL &&
		    strcmp(status, "exited") == 0 &&
		    json_integer_value(json_object_get(result, "exit_code")) ==
		    0 && json_object_get(result, "error") == NULL);
	if (rm_tree(dir) == -1)
		log_warn("claim: remove %s", dir);
	return reply;
}

/* Before the keeper takes requests: what a crash left, gone. */
static void
sweep_calls(const struct as_config *c)
{
	char calls[PATH_MAX];

	if (pathf(calls, sizeof(calls), "%s/" KUBE_CLAIM_CALLS,
	    c->kubernetes.pvc_path) == -1)
		fatalx("claim: path too long");
	if (rm_tree(calls) == -1)
		log_warn("claim: remove %s", calls);
	if (mkdir(calls, 0711) == -1)
		fatal("claim: %s", calls);
}

static const struct as_config	*keeper_conf;	/* in the keeper */

static json_t *
keeper_handle(uint32_t type, uint64_t id, json_t *msg)
{
	if (type == CLAIM_SEED)
		return seed(keeper_conf, id, msg);
	if (type == CLAIM_COLLECT)
		return keeper_collect(keeper_conf, id, msg);
	return error_reply("unknown request");
}

static void
keeper_main(const struct as_config *c, int fd)
{
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };

	fd = rootchild_enter(fd, "runnerd-claim");
	keeper_conf = c;
	sweep_calls(c);
	paths.rw[0] = c->kubernetes.pvc_path;
	sandbox_enter(ROLE_CLAIM, &paths, daemon_trap(c));
	rootchild_serve(fd, CLAIM_REPLY, keeper_handle);
}

/* -- the helper's end ------------------------------------------------------ */

/* Forks the keeper; the helper calls this before it drops root. */
void
claim_start(const struct as_config *c)
{
	rootchild_start(c, &keeper, keeper_main, "claim keeper");
}

/* A worker has no business with the keeper. */
void
claim_close(void)
{
	rootchild_close(&keeper);
}

static json_t *
ask(uint32_t type, uint64_t id, json_t *payload, char *why, size_t whylen)
{
	return rootchild_ask(&keeper, type, CLAIM_REPLY, id, payload,
	    "claim keeper", why, whylen);
}

/* Fills the call's directory on the claim: 0, or -1 and why. */
int
claim_seed(uint64_t id, json_t *req, char *why, size_t whylen)
{
	const char *error;
	json_t *reply;

	if ((reply = ask(CLAIM_SEED, id, json_incref(req), why,
	    whylen)) == NULL)
		return -1;
	if ((error = json_string_value(json_object_get(reply, "error"))) !=
	    NULL) {
		snprintf(why, whylen, "%s", error);
		json_decref(reply);
		return -1;
	}
	if (json_object_get(reply, "snapshot") != NULL)
		json_object_set(req, "snapshot", json_object_get(reply,
		    "snapshot"));
	if (json_is_object(json_object_get(reply, "module_provisioners")))
		json_object_set(req, "module_provisioners", json_object_get(
		    reply, "module_provisioners"));
	json_decref(reply);
	return 0;
}

/* After the Job: files, plan digest or error into result, directory gone. */
void
claim_collect(uint64_t id, json_t *req, json_t *result)
{
	char why[256];
	json_t *reply;
	const char *k;
	json_t *v;

	reply = ask(CLAIM_COLLECT, id, json_pack("{s:O, s:O}", "request",
	    req, "result", result), why, sizeof(why));
	if (reply == NULL) {
		json_object_set_new(result, "error", json_string(why));
		return;
	}
	json_object_foreach(reply, k, v)
		json_object_set(result, k, v);
	json_decref(reply);
}
