#include "daemon.h"
#include "log.h"
#include "runnerd.h"
#include "sandbox.h"

struct as_config	 runnerd_conf;

static struct listener	 runner_listener = {
	.name = "runner.sock",
	.acl = &runnerd_conf.runnerd.peers,
	.mode = 0666,
	.dispatch = runnerd_dispatch_mcpd,
};

int
runnerd_dispatch_mcpd(struct conn *c, struct msg *m)
{
	(void)c;
	log_warnx("runner.sock: unexpected %s", msg_type_name(m->hdr.type));
	return -1;
}

int
main(int argc, char *argv[])
{
	struct daemon_opts opts;
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };

	daemon_start(argc, argv, "runnerd", &opts, &runnerd_conf);
	if (server_listen(&runnerd_conf, &runner_listener) == -1)
		fatal("%s", runner_listener.name);
	daemon_signals(NULL);
	paths.rw[0] = runnerd_conf.runtime_dir;
	priv_drop(runnerd_conf.runnerd.user);
	sandbox_enter(ROLE_RUNNERD, &paths, daemon_trap(&runnerd_conf));
	daemon_run();
	return 0;
}
