#include "auditd.h"
#include "daemon.h"
#include "log.h"
#include "sandbox.h"

struct as_config	 auditd_conf;
static struct peer_acl	 audit_acl;

/* Writers (the daemons) and readers (auditctl) share audit.sock. */
static struct listener	 audit_listener = {
	.name = "audit.sock",
	.acl = &audit_acl,
	.mode = 0666,
	.dispatch = auditd_dispatch_peer,
};

int
auditd_dispatch_peer(struct conn *c, struct msg *m)
{
	(void)c;
	log_warnx("unexpected %s", msg_type_name(m->hdr.type));
	return -1;
}

int
main(int argc, char *argv[])
{
	struct daemon_opts opts;
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };

	daemon_start(argc, argv, "auditd", &opts, &auditd_conf);
	audit_acl = auditd_conf.auditd.peers;
	acl_merge(&audit_acl, &auditd_conf.auditd.readers);
	if (server_listen(&auditd_conf, &audit_listener) == -1)
		fatal("%s", audit_listener.name);
	daemon_signals(NULL);
	paths.rw[0] = auditd_conf.runtime_dir;
	priv_drop(auditd_conf.auditd.user);
	sandbox_enter(ROLE_AUDITD, &paths, daemon_trap(&auditd_conf));
	daemon_run();
	return 0;
}
