/* SPDX-License-Identifier: ISC */
/*
 * terraform_plan and terraform_apply.  The working directory is the one
 * approvald resolved under the policy's Terraform root; the sandbox gets
 * a copy of it and of the state runnerd keeps for it, never a host path.
 *
 *   terraform_plan             init, plan -out, show -json; the plan is
 *                              saved under its SHA-256 and summarised
 *   terraform_apply            the same, then a pending approval bound to
 *                              the parameters and that digest; nothing
 *                              is applied
 *   terraform_apply + approval the approval is spent (approvald checks the
 *                              binding and returns the plan's digest), the
 *                              launcher loads the saved plan only if its
 *                              bytes still have that digest, and terraform
 *                              applies exactly it; a stale plan fails as
 *                              terraform says, nothing is re-planned
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "cjson.h"
#include "launcher.h"
#include "log.h"
#include "runnerd.h"
#include "tfplan.h"
#include "tools.h"

/*
 * No update check, no prompt: nothing but the module (and no CLI
 * configuration: the environment's, sandbox_env.c).  Go's collector, which terraform and its providers run on,
 * waits until a heap nears half the sandbox's memory (GOGC=off with
 * GOMEMLIMIT, https://go.dev/doc/gc-guide#Memory_limit): a collection
 * costs far more under gVisor than outside it, and a plan's start is
 * mostly allocation.  GOMAXPROCS is the CPUs the sandbox's cgroup
 * gives, where Go would take the host's.  Together about 150 ms of a
 * 750 ms `runsc do terraform plan`, measured here.
 */
#define TF_ENV	"export TF_IN_AUTOMATION=1 TF_INPUT=0 CHECKPOINT_DISABLE=1 " \
		"GOGC=off GOMEMLIMIT=%ldMiB GOMAXPROCS=%ld; "
/*
 * A phase is announced on the shell's stdin, which the launcher reads
 * (launcher/phase.c); terraform, and the module code it runs, gets
 * /dev/null instead, so that it cannot announce one.  Where stdin is
 * no socket (the kubernetes backend) the announcement goes nowhere.
 */
#define TF_PHASE_FN	"phase() { echo $1 2>/dev/null >&0; }; "

/*
 * -plugin-dir makes the mounted mirror the only place providers come
 * from: not the registry, not the module's terraform.d/plugins, not a
 * CLI configuration ("Plugin Installation" in
 * https://developer.hashicorp.com/terraform/cli/commands/init).  A
 * provider missing there fails init, which names it, before any module
 * code runs.
 */
#define TF_INIT_FN "tf_init() { terraform init -input=false -no-color " \
		"-plugin-dir=" PROVIDER_MOUNT " </dev/null >/tmp/init.log 2>&1 " \
		"|| { cat /tmp/init.log >&2; exit 3; }; }; "

/*
 * tf PHASE COMMAND...: COMMAND after init, unless the launcher put
 * .terraform in place from its init cache (launcher/tfinit.c; a module
 * cannot bring one, treecopy.c refuses the name).  That holds the lock
 * file's providers and nothing else: when the module needs more
 * (modules, a backend, a lock file still to be made), terraform stops
 * before it runs anything with one of the errors below as its first,
 * and the command runs again after init.  Module code that fails with
 * such words later comes after an error of its own, so it cannot make
 * anything run twice.
 */
#define TF_RUN TF_PHASE_FN "tf() { p=$1; shift; if [ -d .terraform ]; then " \
		"phase $p; \"$@\" </dev/null 2>/tmp/tf.err; " \
		"r=$?; if [ $r -ne 0 ] && sed -n '/^Error: /{p;q;}' " \
		"/tmp/tf.err | grep -q -e '^Error: Inconsistent dependency " \
		"lock file$' -e '^Error: Required plugins are not installed$' " \
		"-e '^Error: Module not installed$' -e '^Error: Backend " \
		"initialization required'; then tf_init; \"$@\" </dev/null; " \
		"return; fi; [ ! -s /tmp/tf.err ] || cat /tmp/tf.err >&2; " \
		"return $r; fi; " \
		"phase init; tf_init; phase $p; " \
		"\"$@\" </dev/null; }; "

#define TF_PLAN	"tf plan terraform plan -input=false -no-color " \
		"-out=plan.tfplan"

/*
 * The gvisor backend's launcher shows the saved plan itself, where no
 * module code runs (launcher/render.c): this sandbox's output goes back to the
 * agent only.  Its last phase, render, says the plan is made, so that
 * the render starts while gVisor ends the sandbox (launcher.c).
 */
static const char plan_script[] = TF_ENV TF_INIT_FN TF_RUN TF_PLAN
    " || exit 4; phase render";

/*
 * The kubernetes backend has no render yet: the Job shows its plan, so
 * that plan goes to the agent only and no approval is asked (tf_kind).
 * The plan runs in a subshell: init's exit there (a provider not in the
 * plugin directory) ends only it, and its words, in plan.err, are shown.
 */
static const char plan_show_script[] = TF_ENV TF_INIT_FN TF_RUN "(" TF_PLAN
    ") >plan.txt 2>/tmp/plan.err || { r=$?; cat plan.txt /tmp/plan.err "
    ">&2; [ $r -ne 3 ] || exit 3; exit 4; }; "
    "terraform show -json plan.tfplan </dev/null"
    " >plan.json 2>/tmp/show.err || "
    "{ cat /tmp/show.err >&2; exit 5; }";

/*
 * The approved plan is root's on a read-only mount (launcher/bundle.c),
 * checked before the sandbox started, and so is the .terraform of the
 * init cache beside it when the launcher had one (TF_DATA_DIR).  init,
 * when it had none, runs before terraform reads the plan, never after:
 * from the plan's reading to its end, the apply is one command.
 */
static const char apply_script[] = TF_ENV TF_PHASE_FN TF_INIT_FN
    "if [ -d " PLAN_MOUNT "/.terraform ]; then "
    "export TF_DATA_DIR=" PLAN_MOUNT "/.terraform; else phase init; "
    "tf_init; fi; phase apply; "
    "terraform apply -input=false -no-color " PLAN_MOUNT "/plan.tfplan "
    "</dev/null";

static const char *
working_dir(const struct call *k)
{
	return json_string_value(json_object_get(k->args, "working_dir"));
}

/*
 * Whether the backend renders a saved plan outside its sandbox
 * (launcher/render.c).
 */
static int
tf_renders(void)
{
	return strcmp(runnerd_conf.runnerd.backend, "gvisor") == 0;
}

/*
 * Which of the three a call is; -1 and why when approvald gave no path
 * or the backend cannot show a plan for approval.
 */
int
tf_kind(struct call *k, char *why, size_t whylen)
{
	const char *id;

	if (json_string_value(json_object_get(k->decision,
	    "working_dir_path")) == NULL) {
		snprintf(why, whylen, "%s: no resolved working directory",
		    k->tool);
		return -1;
	}
	/* A tool that cannot apply only plans (its phases: tools.c). */
	if (!(tool_phases(k->tool) & PHASE_APPLY)) {
		k->kind = CALL_TF_PLAN;
		return 0;
	}
	/* brokerd picks the credential by the same rule. */
	k->kind = call_phase(k->tool, k->args) == PHASE_APPLY ?
	    CALL_TF_APPLY : CALL_TF_REQUEST;
	/*
	 * No render outside the module's code there: a person would
	 * approve what the planning Job said its plan was.
	 */
	if (k->kind == CALL_TF_REQUEST && !tf_renders()) {
		snprintf(why, whylen, "%s: the %s backend cannot show a plan "
		    "where no module code ran, so none can be approved there; "
		    "plan with terraform_plan, apply on the gvisor backend",
		    k->tool, runnerd_conf.runnerd.backend);
		return -1;
	}
	id = json_string_value(json_object_get(k->args, "approval_id"));
	if (id != NULL && (k->approval_id = strdup(id)) == NULL)
		fatal("approval id");
	return 0;
}

/* The approval's arguments: the call's, less the approval itself. */
static json_t *
bound_arguments(const struct call *k)
{
	json_t *a;

	if ((a = json_deep_copy(k->args)) != NULL)
		json_object_del(a, "approval_id");
	return a;
}

/* The approval to spend, bound to the call's parameters. */
json_t *
tf_spend_request(const struct call *k)
{
	return json_pack("{s:s, s:s, s:o}", "approval_id", k->approval_id,
	    "tool", k->tool, "arguments", bound_arguments(k));
}

/* approvald spent the approval and names the digest it is bound to. */
int
tf_spent(struct call *k, json_t *reply, char *why, size_t whylen)
{
	const char *digest;

	digest = json_string_value(json_object_get(reply, "plan_digest"));
	if (digest == NULL || strlen(digest) != SHA256_HEX_LEN) {
		snprintf(why, whylen, "approval %s is bound to no plan",
		    k->approval_id);
		return -1;
	}
	if ((k->plan_digest = strdup(digest)) == NULL)
		fatal("digest");
	return 0;
}

/* runnerd's own directory for one working directory's state and plans. */
static json_t *
state_dir(const char *path)
{
	char digest[SHA256_HEX_LEN + 1], *dir;
	json_t *j;

	sha256_hex(path, strlen(path), digest);
	if (asprintf(&dir, "%s/terraform/%.16s",
	    workspace_state_root(&runnerd_conf), digest) == -1)
		return NULL;
	j = json_string(dir);
	free(dir);
	return j;
}

int
tf_prepare(struct call *k, struct sbx_request *req)
{
	const char *path;
	int apply = k->kind == CALL_TF_APPLY;
	int render = tf_renders();

	path = json_string_value(json_object_get(k->decision,
	    "working_dir_path"));
	req->argv = json_pack("[s, s, o]", "/bin/sh", "-c", json_sprintf(
	    apply ? apply_script : render ? plan_script : plan_show_script,
	    runnerd_conf.runnerd.memory / 2 / (1024 * 1024),
	    (runnerd_conf.runnerd.cpu_percent + 99) / 100));
	req->workspace = json_pack("{s:o, s:[s, s, s*]}", "state",
	    state_dir(path), "phases", "init", apply ? "apply" : "plan",
	    !apply && render ? "render" : NULL);
	if (req->argv == NULL || req->workspace == NULL)
		return -1;
	/* An apply runs from the approved plan's snapshot, never the live dir. */
	if (!apply)
		json_object_set_new(req->workspace, "workdir",
		    json_string(path));
	/*
	 * A started sandbox of the pool may run it (launcher/tfpool.c),
	 * with .terraform from the init cache (launcher/tfinit.c).
	 */
	if (render) {
		json_object_set_new(req->workspace, "poolable", json_true());
		json_object_set_new(req->workspace, "init_cache", json_true());
	}
	/* The launcher mounts these of the mirror, and nothing else. */
	json_object_set(req->workspace, "providers", json_object_get(
	    k->decision, "terraform_providers"));
	if (apply) {
		json_object_set_new(req->workspace, "plan_load",
		    json_string(k->plan_digest));
		json_object_set_new(req->workspace, "keep_state", json_true());
	} else {
		json_object_set_new(req->workspace, "plan_save",
		    json_string("plan.tfplan"));
		json_object_set_new(req->workspace, "plans_kept_for",
		    json_integer(runnerd_conf.runnerd.plan_retention));
		if (render)
			json_object_set_new(req->workspace, "render",
			    json_true());
		else
			req->files_out = json_pack("[s, s]", "plan.json",
			    "plan.txt");
	}
	return 0;
}

static long long
count(const json_t *summary, const char *action)
{
	return json_integer_value(json_object_get(json_object_get(summary,
	    "counts"), action));
}

/* The summary a person reads first: counts, then each change. */
static char *
summary_text(const char *wd, const json_t *s, const char *digest)
{
	const json_t *r, *f, *why;
	char *text = NULL;
	size_t i, j;
	FILE *mem;
	size_t len;

	if ((mem = open_memstream(&text, &len)) == NULL)
		return NULL;
	fprintf(mem, "Plan for %s: %lld to add, %lld to change, %lld to "
	    "destroy, %lld to replace.\n", wd, count(s, "create"),
	    count(s, "update"), count(s, "delete"), count(s, "replace"));
	json_array_foreach(json_object_get(s, "resources"), i, r) {
		if (strcmp(json_string_value(json_object_get(r, "action")),
		    "no-op") == 0)
			continue;
		fprintf(mem, "  %s %s: %s", json_is_true(json_object_get(r,
		    "destructive")) ? "!" : " ",
		    json_string_value(json_object_get(r, "address")),
		    json_string_value(json_object_get(r, "action")));
		json_array_foreach(json_object_get(r, "forced_by"), j, f)
			fprintf(mem, "%s%s", j ? ", " : " (forced by ",
			    json_string_value(f));
		fprintf(mem, "%s\n", json_array_size(json_object_get(r,
		    "forced_by")) ? ")" : "");
	}
	json_array_foreach(json_object_get(s, "code"), i, r)
		fprintf(mem, "  runs at apply time: %s in %s: %s\n",
		    json_string_value(json_object_get(r, "type")),
		    json_string_value(json_object_get(r, "address")),
		    json_string_value(json_object_get(r, "command")));
	json_array_foreach(json_object_get(s, "destructive_reasons"), i, why)
		fprintf(mem, "DESTRUCTIVE: %s\n", json_string_value(why));
	if (digest != NULL)
		fprintf(mem, "Plan digest: %s\n", digest);
	if (fclose(mem) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/*
 * A failed call, with terraform's own words (its output as is), or the
 * launcher's (what kept the sandbox from running), or ours (what).
 */
static json_t *
tf_failed(const struct call *k, json_t *r, const char *what)
{
	const char *status, *err, *out, *error;
	char *text;
	json_t *res;
	int sandboxed, kept;

	status = json_string_value(json_object_get(r, "status"));
	err = json_string_value(json_object_get(r, "stderr"));
	out = json_string_value(json_object_get(r, "stdout"));
	error = json_string_value(json_object_get(r, "error"));
	kept = json_is_true(json_object_get(r, "state_kept"));
	sandboxed = status != NULL && strcmp(status, "exited") != 0 &&
	    strcmp(status, "failed") != 0;
	if (asprintf(&text, "%s failed in %s%s%s\n%s%s%s%s%s", k->tool,
	    working_dir(k), sandboxed ? ": " : "",
	    sandboxed ? status_text(status) : "", out != NULL ? out : "",
	    err != NULL ? err : "", error != NULL ? error : "",
	    what != NULL ? what : "", kept ? "\nThe state terraform wrote "
	    "before it stopped was kept: what it applied stays known, and "
	    "the next plan starts from it.\n" : "") == -1)
		return NULL;
	res = text_result(1, text, json_pack("{s:s, s:s, s:b, s:b}", "status",
	    "failed", "working_dir", working_dir(k), "destructive", 0,
	    "state_kept", kept));
	free(text);
	return res;
}

/*
 * terraform.provisioners: approve lets a person approve code that runs
 * at apply time; anything else (deny, or an approvald that does not say)
 * refuses a plan that has any.
 */
static int
code_approvable(const struct call *k)
{
	const char *v;

	v = json_string_value(json_object_get(k->decision,
	    "terraform_provisioners"));
	return v != NULL && strcmp(v, "approve") == 0;
}

/* The plan's summary from the sandbox's files, or NULL and why. */
static json_t *
plan_summary(const struct call *k, json_t *r, char *why, size_t whylen)
{
	struct tfplan_signals sig;
	const char *pj, *pt;
	json_t *files;

	files = json_object_get(r, "files");
	pj = json_string_value(json_object_get(files, "plan.json"));
	pt = json_string_value(json_object_get(files, "plan.txt"));
	if (pj == NULL || json_string_value(json_object_get(r,
	    "plan_digest")) == NULL) {
		snprintf(why, whylen, "the plan was not saved");
		return NULL;
	}
	sig.patterns = json_object_get(k->decision, "destructive_patterns");
	sig.delete_actions = json_is_true(json_object_get(k->decision,
	    "destructive_actions"));
	sig.code = code_approvable(k);
	return tfplan_summary(pj, strlen(pj), pt, &sig, why, whylen);
}

/*
 * Provisioner blocks in the module's files beyond those the plan lists
 * (terraform leaves a removed block's out of its plan JSON and text)
 * are code nobody would be shown.  They join the plan's code, at the
 * first block's file and line: deny refuses the plan, approve shows
 * them to the person and marks the plan destructive.  -1: no memory.
 */
static int
code_unlisted(json_t *summary, const json_t *r)
{
	const json_t *mp = json_object_get(r, "module_provisioners"), *c;
	json_t *code = json_object_get(summary, "code"), *entry;
	json_int_t in_files, listed = 0;
	const char *type;
	size_t i;

	if (!json_is_object(mp) || !json_is_array(code))
		return 0;
	in_files = json_integer_value(json_object_get(mp, "count"));
	json_array_foreach(code, i, c)
		if ((type = json_string_value(json_object_get(c, "type"))) !=
		    NULL && strcmp(type, "external") != 0)
			listed++;
	if (in_files <= listed)
		return 0;
	entry = json_pack("{s:O, s:s, s:s}", "address", json_object_get(mp,
	    "first"), "type", "provisioner", "command", "a provisioner block "
	    "the plan does not list: terraform would run it unshown");
	if (entry == NULL || json_array_append_new(code, entry) == -1 ||
	    json_object_set_new(summary, "destructive", json_true()) == -1 ||
	    json_array_append_new(json_object_get(summary,
	    "destructive_reasons"), json_sprintf("runs code at apply time "
	    "that the plan does not show: %" JSON_INTEGER_FORMAT
	    " provisioner blocks in the module's files, %" JSON_INTEGER_FORMAT
	    " in the plan, the first at %s", in_files, listed,
	    json_string_value(json_object_get(mp, "first")))) == -1)
		return -1;
	return 0;
}

/* Why a plan with code the policy does not let run is refused. */
static json_t *
code_refused(const struct call *k, json_t *r, const json_t *summary)
{
	const json_t *c;
	char *text = NULL;
	size_t i, len;
	json_t *res;
	FILE *mem;

	if ((mem = open_memstream(&text, &len)) == NULL)
		return NULL;
	fprintf(mem, "refused: the plan runs code at apply time and the "
	    "policy's terraform.provisioners is deny:\n");
	json_array_foreach(json_object_get(summary, "code"), i, c)
		fprintf(mem, "  %s in %s: %s\n",
		    json_string_value(json_object_get(c, "type")),
		    json_string_value(json_object_get(c, "address")),
		    json_string_value(json_object_get(c, "command")));
	if (fclose(mem) != 0) {
		free(text);
		return NULL;
	}
	res = tf_failed(k, r, text);
	free(text);
	return res;
}

static json_t *
plan_result(const struct call *k, json_t *r, json_t *summary)
{
	const char *digest, *pt;
	char *head, *text;
	json_t *sc, *res;

	digest = json_string_value(json_object_get(r, "plan_digest"));
	pt = json_string_value(json_object_get(json_object_get(r, "files"),
	    "plan.txt"));
	if ((head = summary_text(working_dir(k), summary, digest)) == NULL)
		return NULL;
	sc = json_pack("{s:s, s:s, s:s?, s:I, s:I, s:I, s:I, s:O, s:O, s:s,"
	    " s:O, s:O, s:s}", "working_dir", working_dir(k), "plan_digest",
	    digest, "snapshot_digest", json_string_value(json_object_get(r,
	    "snapshot_digest")),
	    "add", (json_int_t)count(summary, "create"),
	    "change", (json_int_t)count(summary, "update"),
	    "destroy", (json_int_t)count(summary, "delete"),
	    "replace", (json_int_t)count(summary, "replace"),
	    "destructive", json_object_get(summary, "destructive"),
	    "destructive_changes", json_object_get(summary,
	    "destructive_reasons"), "summary", head,
	    "changes", json_object_get(summary, "resources"),
	    "code", json_object_get(summary, "code"),
	    "plan_text", pt != NULL ? pt : "");
	if (asprintf(&text, "%s\n%s", head, pt != NULL ? pt : "") == -1)
		text = NULL;
	res = text != NULL ? text_result(0, text, sc) : NULL;
	free(head);
	free(text);
	return res;
}

/* The pending approval to ask for the plan just made (k->summary). */
json_t *
tf_approval_request(const struct call *k)
{
	json_t *r = k->outcome;

	return json_pack("{s:s, s:o, s:O, s:O, s:s}", "tool", k->tool,
	    "arguments", bound_arguments(k), "plan_digest",
	    json_object_get(r, "plan_digest"), "summary", k->summary,
	    "plan_text", json_string_value(json_object_get(
	    json_object_get(r, "files"), "plan.txt")));
}

/*
 * approvald's pending approval (reply), or why there is none: nothing
 * is applied either way.
 */
json_t *
tf_pending_result(struct call *k, json_t *reply, const char *why)
{
	const char *digest, *id, *expires;
	char *head, *text;
	json_t *r = k->outcome, *summary = k->summary, *res;

	if (why != NULL)
		return tf_failed(k, r, why);
	digest = json_string_value(json_object_get(r, "plan_digest"));
	id = json_string_value(json_object_get(reply, "approval_id"));
	expires = json_string_value(json_object_get(reply, "expires_at"));
	head = summary_text(working_dir(k), summary, digest);
	if (id == NULL || head == NULL || asprintf(&text, "Nothing was "
	    "applied: this change waits for a person's approval.\n\n%s\n"
	    "An operator reviews it and approves it out of band:\n"
	    "  approvalctl show %s\n  approvalctl approve %s\n"
	    "Then call terraform_apply again with approval_id \"%s\"; the "
	    "approval expires at %s and works once.\n", head, id, id, id,
	    expires != NULL ? expires : "?") == -1) {
		free(head);
		return tf_failed(k, r, "approvald gave no approval id");
	}
	res = text_result(0, text, json_pack("{s:s, s:s, s:s, s:s?, s:s,"
	    " s:s?, s:O, s:O, s:s, s:s+}", "status", "pending_approval",
	    "working_dir", working_dir(k), "approval_id", id, "expires_at",
	    expires, "plan_digest", digest, "snapshot_digest",
	    json_string_value(json_object_get(r, "snapshot_digest")),
	    "destructive", json_object_get(summary, "destructive"), "code",
	    json_object_get(summary, "code"), "summary", head,
	    "approve_command",
	    "approvalctl approve ", id));
	free(head);
	free(text);
	return res;
}

static json_t *
apply_result(const struct call *k, json_t *r)
{
	const char *out;
	char *text;
	json_t *res;

	out = json_string_value(json_object_get(r, "stdout"));
	if (json_object_get(r, "error") != NULL)
		return tf_failed(k, r, NULL);
	if (asprintf(&text, "Applied the approved plan %.12s… in %s.\n%s",
	    k->plan_digest, working_dir(k), out != NULL ? out : "") == -1)
		return NULL;
	res = text_result(0, text, json_pack("{s:s, s:s, s:s, s:s, s:s}",
	    "status", "applied", "working_dir", working_dir(k), "approval_id",
	    k->approval_id, "plan_digest", k->plan_digest, "summary",
	    out != NULL ? out : ""));
	free(text);
	return res;
}

/*
 * The MCP result of a terraform call from the backend's result; for
 * terraform_apply's plan, NULL with k->summary set: the caller asks
 * approvald for its approval (tf_approval_request).
 */
json_t *
tf_result(struct call *k, json_t *r)
{
	const char *status;
	char why[512];
	json_t *summary, *res;

	status = json_string_value(json_object_get(r, "status"));
	if (status == NULL || strcmp(status, "exited") != 0 ||
	    json_integer_value(json_object_get(r, "exit_code")) != 0)
		return tf_failed(k, r, NULL);
	if (k->kind == CALL_TF_APPLY)
		return apply_result(k, r);
	if ((summary = plan_summary(k, r, why, sizeof(why))) == NULL)
		return tf_failed(k, r, why);
	if (code_unlisted(summary, r) == -1) {
		json_decref(summary);
		return tf_failed(k, r, "out of memory");
	}
	plans_keep(k, r);
	/* Shown with the approval: the files the apply will run from. */
	if (json_is_string(json_object_get(r, "snapshot_digest")))
		json_object_set(summary, "snapshot_digest",
		    json_object_get(r, "snapshot_digest"));
	/* And which of them changed since the last apply of this dir. */
	if (json_is_array(json_object_get(r, "files_changed")))
		json_object_set(summary, "files_changed",
		    json_object_get(r, "files_changed"));
	if (json_array_size(json_object_get(summary, "code")) > 0 &&
	    !code_approvable(k))
		res = code_refused(k, r, summary);
	else if (k->kind == CALL_TF_PLAN)
		res = plan_result(k, r, summary);
	else {
		/* The caller asks approvald for the approval of it. */
		k->summary = summary;
		return NULL;
	}
	json_decref(summary);
	return res;
}
