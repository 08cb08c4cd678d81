#include "approvald.h"
#include "daemon.h"
#include "log.h"
#include "sandbox.h"

struct as_config	 approvald_conf;

/* runnerd asks for decisions here; nothing on this socket approves. */
static struct listener	 approval_listener = {
	.name = "approval.sock",
	.acl = &approvald_conf.approvald.peers,
	.dispatch = approvald_dispatch_runnerd,
};

/* Operators, through approvalctl: the only way to approve. */
static struct listener	 control_listener = {
	.name = "control.sock",
	.acl = &approvald_conf.approvald.operators,
	.mode = 0666,
	.maxconns = 32,
	.dispatch = approvald_dispatch_control,
};

int
approvald_dispatch_runnerd(struct conn *c, struct msg *m)
{
	(void)c;
	log_warnx("approval.sock: unexpected %s", msg_type_name(m->hdr.type));
	return -1;
}

int
approvald_dispatch_control(struct conn *c, struct msg *m)
{
	conn_error(c, m->hdr.reqid, ERR_DENIED, "%s: denied",
	    msg_type_name(m->hdr.type));
	return 0;
}

int
main(int argc, char *argv[])
{
	struct daemon_opts opts;
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };

	daemon_start(argc, argv, "approvald", &opts, &approvald_conf);
	if (server_listen(&approvald_conf, &approval_listener) == -1)
		fatal("%s", approval_listener.name);
	if (server_listen(&approvald_conf, &control_listener) == -1)
		fatal("%s", control_listener.name);
	daemon_signals(NULL);
	paths.rw[0] = approvald_conf.runtime_dir;
	priv_drop(approvald_conf.approvald.user);
	sandbox_enter(ROLE_APPROVALD, &paths, daemon_trap(&approvald_conf));
	daemon_run();
	return 0;
}
