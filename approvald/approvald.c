/* SPDX-License-Identifier: ISC */
#include <libgen.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "approvald.h"
#include "audit.h"
#include "daemon.h"
#include "event.h"
#include "log.h"
#include "sandbox.h"

#define SWEEP_MS	1000	/* how late an expiry may be recorded */

struct as_config	 approvald_conf;
struct policy		*approvald_policy;

/* runnerd asks for decisions here; nothing on this socket approves. */
static struct listener	 approval_listener = {
	.name = "approval.sock",
	.owner = approvald_conf.approvald.user,
	.acl = &approvald_conf.approvald.peers,
	.rules = approvald_runnerd_rules,
	.closed = subs_conn_closed,
};

/* Operators, through approvalctl: the only way to approve. */
static struct listener	 control_listener = {
	.name = "control.sock",
	.owner = approvald_conf.approvald.user,
	.acl = &approvald_conf.approvald.operators,
	.maxconns = 32,
	.rules = approvald_control_rules,
	.closed = control_closed,
};

/* notifyd fetches the outbox here: it reads rows, it decides nothing. */
static struct listener	 notify_listener = {
	.name = "notify.sock",
	.owner = approvald_conf.approvald.user,
	.acl = &approvald_conf.approvald.notifiers,
	.maxconns = 2,
	.rules = approvald_notify_rules,
	.closed = outbox_closed,
};

/*
 * A committed change: watching operators, waiting runnerds and
 * notifyd hear.
 */
static void
changed(const char *id)
{
	control_notify(id);
	subs_notify(id);
	outbox_flush();
}

/* SIGHUP: a policy that does not load leaves the old one in force. */
static void
policy_reload(void)
{
	struct policy *p;
	char err[1024];

	if ((p = policy_load(approvald_conf.approvald.policy, err,
	    sizeof(err))) == NULL) {
		log_warnx("%s; keeping the policy in force", err);
		return;
	}
	policy_free(approvald_policy);
	approvald_policy = p;
	log_info("policy %s loaded: %zu tools", p->file, p->ntools);
}

/* approvald -n: the policy too must load. */
static int
policy_check(const struct as_config *conf, char *err, size_t errlen)
{
	struct policy *p;

	if ((p = policy_load(conf->approvald.policy, err, errlen)) == NULL)
		return -1;
	policy_free(p);
	return 0;
}

static void
expiry_sweep(void *arg)
{
	int n;

	(void)arg;
	if ((n = db_expire()) > 0)
		log_info("%d approvals expired", n);
	if (ev_timer(SWEEP_MS, expiry_sweep, NULL) == 0)
		fatal("expiry timer");
}

/* The directory holding path: the database makes its WAL files there. */
static const char *
dir_of(const char *path, char *buf)
{
	strlcpy(buf, path, PATH_MAX);
	return dirname(buf);
}

int
main(int argc, char *argv[])
{
	struct daemon_opts opts;
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	char err[1024], dbdir[PATH_MAX], policydir[PATH_MAX];
	const struct approvald_conf *ac = &approvald_conf.approvald;
	int fd;

	daemon_check(policy_check);
	daemon_start(argc, argv, "approvald", &opts, &approvald_conf);
	if ((approvald_policy = policy_load(ac->policy, err,
	    sizeof(err))) == NULL)
		fatalx("%s", err);
	if (audit_init(&approvald_conf, "approvald") == -1)
		fatal("audit.sock");
	if (server_listen(&approvald_conf, &approval_listener) == -1)
		fatal("%s", approval_listener.name);
	if (server_listen(&approvald_conf, &control_listener) == -1)
		fatal("%s", control_listener.name);
	if (approvald_conf.notifyd.nwebhooks > 0 &&
	    server_listen(&approvald_conf, &notify_listener) == -1)
		fatal("%s", notify_listener.name);
	daemon_signals(policy_reload);
	paths.rw[0] = approvald_conf.runtime_dir;
	paths.rw[1] = dir_of(ac->database, dbdir);
	/* Its own: SQLite makes the WAL files beside the database. */
	if ((fd = priv_state_dir(dbdir, ac->user)) == -1)
		fatal("%s", dbdir);
	close(fd);
	paths.ro[0] = dir_of(ac->policy, policydir);
	/* Working directories are resolved under the root at start-up. */
	paths.ro[1] = approvald_policy->terraform_root[0] != '\0' ?
	    approvald_policy->terraform_root : NULL;
	/* Operator names for the audit record; reviewer groups, on reload. */
	paths.ro[2] = "/etc/passwd";
	paths.ro[3] = "/etc/nsswitch.conf";
	paths.ro[4] = "/etc/group";
	priv_drop(ac->user);
	if (db_open(ac->database) == -1)
		fatalx("cannot open %s", ac->database);
	db_set_notify(changed);
	db_set_outbox(outbox_write);
	/* jansson reads its hash seed from /dev/urandom on first use. */
	json_object_seed(0);
	sandbox_enter(ROLE_APPROVALD, &paths, daemon_trap(&approvald_conf));
	if (strcmp(ac->self_approval, "root") == 0)
		log_warnx("self_approval root: root may approve what its own "
		    "MCP clients asked for (a one-person machine only)");
	expiry_sweep(NULL);
	daemon_run();
	db_close();
	policy_free(approvald_policy);
	return 0;
}
