/* SPDX-License-Identifier: ISC */
#include <limits.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "notifyd.h"
#include "sandbox.h"

struct as_config	 notifyd_conf;

/* notifyd -n: the secret must load too. */
static int
secret_check(const struct as_config *conf, char *err, size_t errlen)
{
	if (conf->notifyd.nwebhooks == 0)
		return 0;
	return secret_load(conf->notifyd.secret_file, err, errlen);
}

int
main(int argc, char *argv[])
{
	struct daemon_opts opts;
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	char err[1024];

	daemon_check(secret_check);
	daemon_start(argc, argv, "notifyd", &opts, &notifyd_conf);
	if (notifyd_conf.notifyd.nwebhooks == 0) {
		log_info("notifyd.webhooks: none configured, nothing to send");
		return 0;
	}
	if (secret_load(notifyd_conf.notifyd.secret_file, err,
	    sizeof(err)) == -1)
		fatalx("%s", err);
	daemon_signals(NULL);
	deliver_init();
	paths.rw[0] = notifyd_conf.runtime_dir;
	/* libcurl: names, and the CAs for https. */
	paths.ro[0] = "/etc/ssl";
	paths.ro[1] = "/etc/hosts";
	paths.ro[2] = "/etc/resolv.conf";
	paths.ro[3] = "/etc/nsswitch.conf";
	paths.ro[4] = "/etc/gai.conf";
	paths.ro[5] = "/usr/share/ca-certificates";
	priv_drop(notifyd_conf.notifyd.user);
	sandbox_enter(ROLE_NOTIFYD, &paths, daemon_trap(&notifyd_conf));
	approvald_connect(NULL);
	daemon_run();
	return 0;
}
