/* SPDX-License-Identifier: ISC */
#include <limits.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "notifyd.h"
#include "sandbox.h"

struct as_config	 notifyd_conf;

/*
 * Each webhook's signing key: its Ed25519 key, and the HMAC secret
 * once for those with none.  0, or -1 with why in err.
 */
static int
keys_load(const struct as_config *conf, char *err, size_t errlen)
{
	const struct webhook *w;
	size_t i;
	int hmac = 0;

	for (i = 0; i < conf->notifyd.nwebhooks; i++) {
		w = &conf->notifyd.webhooks[i];
		if (w->ed25519_key_file[0] == '\0')
			hmac = 1;
		else if (ed25519_load(i, w->ed25519_key_file, err, errlen) ==
		    -1)
			return -1;
	}
	if (hmac)
		return secret_load(conf->notifyd.secret_file, err, errlen);
	return 0;
}

int
main(int argc, char *argv[])
{
	struct daemon_opts opts;
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	char err[1024];

	/* notifyd -n: the keys must load too. */
	daemon_check(keys_load);
	daemon_start(argc, argv, "notifyd", &opts, &notifyd_conf);
	if (notifyd_conf.notifyd.nwebhooks == 0) {
		log_info("notifyd.webhooks: none configured, nothing to send");
		return 0;
	}
	if (keys_load(&notifyd_conf, err, sizeof(err)) == -1)
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
