#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>

#include "auditd.h"
#include "daemon.h"
#include "log.h"
#include "sandbox.h"

/* Enough for every daemon's writers plus operators' readers. */
#define AUDIT_MAXCONNS	512

static struct peer_acl	 audit_acl;

static int	auditd_dispatch_peer(struct conn *, struct msg *);
static void	auditd_closed(struct conn *);

/*
 * Writers (the daemons) and readers (auditctl) share audit.sock; the
 * listener admits either, each message is then checked for its role.
 */
static struct listener	 audit_listener = {
	.name = "audit.sock",
	.acl = &audit_acl,
	.mode = 0666,
	.maxconns = AUDIT_MAXCONNS,
	.dispatch = auditd_dispatch_peer,
	.closed = auditd_closed,
};

static int
peer_is(const struct conn *c, const struct peer_acl *acl)
{
	return acl_allows(acl, c->cred.uid, c->cred.groups, c->cred.ngroups);
}

static int
auditd_dispatch_peer(struct conn *c, struct msg *m)
{
	const struct auditd_conf *ac = &auditd_conf.auditd;

	switch (m->hdr.type) {
	case MSG_AUDIT_EVENT:
		if (!peer_is(c, &ac->peers))
			break;
		return writer_dispatch(c, m);
	case MSG_AUDIT_TAIL:
	case MSG_AUDIT_SHOW:
	case MSG_AUDIT_STATS:
	case MSG_AUDIT_ROTATE:
		if (!peer_is(c, &ac->readers))
			break;
		return control_dispatch(c, m);
	}
	log_warnx("audit.sock: peer %u uid %u: %s denied", c->id,
	    (unsigned)c->cred.uid, msg_type_name(m->hdr.type));
	return conn_error(c, m->hdr.reqid, ERR_DENIED, "%s: not allowed for "
	    "uid %u", msg_type_name(m->hdr.type), (unsigned)c->cred.uid);
}

static void
auditd_closed(struct conn *c)
{
	control_closed(c);
}

static void
auditd_sighup(void)
{
	char old[PATH_MAX];

	(void)writer_rotate("SIGHUP", old, sizeof(old));
}

int
main(int argc, char *argv[])
{
	struct daemon_opts opts;
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	char logdir[PATH_MAX];
	json_t *note;

	daemon_start(argc, argv, "auditd", &opts, &auditd_conf);
	audit_acl = auditd_conf.auditd.peers;
	acl_merge(&audit_acl, &auditd_conf.auditd.readers);
	if (server_listen(&auditd_conf, &audit_listener) == -1)
		fatal("%s", audit_listener.name);
	daemon_signals(auditd_sighup);
	priv_drop(auditd_conf.auditd.user);
	/* As our own user: rotation makes files in this directory. */
	if (alog_open(&auditd_log, auditd_conf.auditd.log, &note) == -1)
		fatal("%s", auditd_conf.auditd.log);
	if (note != NULL) {
		if (writer_own_event("audit.recovered", note) == -1)
			fatalx("cannot record the recovery");
		writer_commit();
		if (auditd_log.failures > 0)
			fatal("%s: cannot record the recovery",
			    auditd_log.path);
	}
	strlcpy(logdir, auditd_conf.auditd.log, sizeof(logdir));
	paths.rw[0] = auditd_conf.runtime_dir;
	paths.rw[1] = dirname(logdir);
	sandbox_enter(ROLE_AUDITD, &paths, daemon_trap(&auditd_conf));
	log_info("%s: seq %llu", auditd_log.path,
	    (unsigned long long)auditd_log.seq);
	daemon_run();
	writer_commit();
	return 0;
}
