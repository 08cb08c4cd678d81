#include "brokerd.h"
#include "daemon.h"
#include "log.h"
#include "sandbox.h"

struct as_config	 brokerd_conf;

static struct listener	 broker_listener = {
	.name = "broker.sock",
	.acl = &brokerd_conf.brokerd.peers,
	.dispatch = brokerd_dispatch_runnerd,
};

int
brokerd_dispatch_runnerd(struct conn *c, struct msg *m)
{
	(void)c;
	log_warnx("broker.sock: unexpected %s", msg_type_name(m->hdr.type));
	return -1;
}

int
main(int argc, char *argv[])
{
	struct daemon_opts opts;
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };

	daemon_start(argc, argv, "brokerd", &opts, &brokerd_conf);
	if (server_listen(&brokerd_conf, &broker_listener) == -1)
		fatal("%s", broker_listener.name);
	daemon_signals(NULL);
	paths.rw[0] = brokerd_conf.runtime_dir;
	priv_drop(brokerd_conf.brokerd.user);
	sandbox_enter(ROLE_BROKERD, &paths, daemon_trap(&brokerd_conf));
	daemon_run();
	return 0;
}
