/* SPDX-License-Identifier: ISC */
#include <libgen.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "brokerd.h"
#include "daemon.h"
#include "event.h"
#include "log.h"
#include "sandbox.h"

struct as_config	 brokerd_conf;

static struct listener	 broker_listener = {
	.name = "broker.sock",
	.owner = brokerd_conf.brokerd.user,
	.acl = &brokerd_conf.brokerd.peers,
	.rules = brokerd_runnerd_rules,
};

/* SIGHUP: a rotated Vault token; the configuration itself stays. */
static void
brokerd_reload(void)
{
	char err[256];

	if (vault_token_load(err, sizeof(err)) == -1)
		log_warnx("vault token not reloaded: %s", err);
	else if (vault_configured())
		log_info("vault token reloaded");
}

static const char *
dir_of(const char *path, char *buf, size_t len)
{
	strlcpy(buf, path, len);
	return dirname(buf);
}

int
main(int argc, char *argv[])
{
	struct daemon_opts opts;
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	const struct brokerd_vault *v = &brokerd_conf.brokerd.vault;
	char journal_dir[PATH_MAX], token_dir[PATH_MAX], err[256];
	int fd;

	/* Before any JSON exists: every block jansson frees gets wiped. */
	cred_init();
	daemon_start(argc, argv, "brokerd", &opts, &brokerd_conf);
	if (server_listen(&brokerd_conf, &broker_listener) == -1)
		fatal("%s", broker_listener.name);
	daemon_signals(brokerd_reload);
	if (audit_init(&brokerd_conf, "brokerd") == -1)
		fatal("audit socket path");
	dir_of(brokerd_conf.brokerd.journal, journal_dir, sizeof(journal_dir));
	if ((fd = priv_state_dir(journal_dir, brokerd_conf.brokerd.user)) ==
	    -1)
		fatal("%s", journal_dir);
	close(fd);
	if (broker_init(&brokerd_conf, err, sizeof(err)) == -1)
		fatalx("%s", err);
	/* Also loads what name resolution and TLS need, while we still can. */
	if (vault_configured()) {
		if (vault_health(err, sizeof(err)) == -1)
			log_warnx("%s", err);
		else
			log_info("vault at %s is ready", v->addr);
	}
	paths.rw[0] = brokerd_conf.runtime_dir;
	paths.rw[1] = journal_dir;
	paths.ro[0] = v->ca_file[0] != '\0' ? v->ca_file : "/etc/ssl";
	/* The directory: token rotation usually renames a new file in. */
	paths.ro[1] = dir_of(v->token_file, token_dir, sizeof(token_dir));
	paths.ro[2] = "/etc/hosts";
	paths.ro[3] = "/etc/resolv.conf";
	paths.ro[4] = "/etc/nsswitch.conf";
	priv_drop(brokerd_conf.brokerd.user);
	sandbox_enter(ROLE_BROKERD, &paths, daemon_trap(&brokerd_conf));
	ev_timer(0, broker_sweep, NULL);
	daemon_run();
	return 0;
}
