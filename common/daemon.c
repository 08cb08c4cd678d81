/* SPDX-License-Identifier: ISC */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "cjson.h"
#include "daemon.h"
#include "event.h"
#include "log.h"
#include "server.h"

static void	(*reload_cb)(void);
static int	  notify_fd = -1;
static int	(*check_cb)(const struct as_config *, char *, size_t);

/* What -n checks beyond the configuration (approvald: its policy). */
void
daemon_check(int (*check)(const struct as_config *, char *, size_t))
{
	check_cb = check;
}

static __attribute__((noreturn)) void
usage(const char *name)
{
	fprintf(stderr, "usage: %s [-dnv] [-f file]%s\n", name,
	    strcmp(name, "mcpd") == 0 ? " [-k keyfile]" : "");
	exit(1);
}

/*
 * systemd's Type=notify (sd_notify(3)): the datagram socket named by
 * $NOTIFY_SOCKET is connected now, while any call is allowed, so that
 * "READY=1" is a write(2) once the daemon serves.  A leading '@' names
 * an abstract socket.  Children do not inherit the variable.
 */
static void
notify_open(void)
{
	struct sockaddr_un sun;
	const char *path;
	socklen_t len;

	if ((path = getenv("NOTIFY_SOCKET")) == NULL || *path == '\0')
		return;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		fatalx("NOTIFY_SOCKET too long");
	memcpy(sun.sun_path, path, strlen(path));
	if (sun.sun_path[0] == '@')
		sun.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    strlen(path));
	if ((notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) ==
	    -1 || connect(notify_fd, (struct sockaddr *)&sun, len) == -1)
		fatal("NOTIFY_SOCKET %s", path);
	unsetenv("NOTIFY_SOCKET");
}

static void
notify(const char *state)
{
	if (notify_fd != -1 && write(notify_fd, state, strlen(state)) == -1)
		log_warn("NOTIFY_SOCKET: %s", state);
}

/*
 * Closes what the parent left open, parses -d -n -v -f -k, loads the
 * configuration and, for -n, reports on it and exits: "configuration
 * OK" (and the normalized file with -v).
 */
void
daemon_start(int argc, char **argv, const char *name, struct daemon_opts *o,
    struct as_config *conf)
{
	char err[1024];
	int ch;

	/* A descriptor our parent left open is none of ours: stdio is all. */
	closefrom(3);
	memset(o, 0, sizeof(*o));
	o->conffile = CONF_DEFAULT;
	log_procinit(name);
	log_init(1, LOG_DAEMON);
	while ((ch = getopt(argc, argv, "df:k:nv")) != -1) {
		switch (ch) {
		case 'd':
			o->debug = 1;
			break;
		case 'f':
			o->conffile = optarg;
			break;
		case 'k':
			o->keyfile = optarg;
			break;
		case 'n':
			o->noaction = 1;
			break;
		case 'v':
			o->verbose++;
			break;
		default:
			usage(name);
		}
	}
	/* Only mcpd is a client of another daemon's with a key to keep. */
	if (optind != argc || (o->keyfile != NULL && strcmp(name, "mcpd") != 0))
		usage(name);
	log_setverbose(o->verbose);
	if (config_load(o->conffile, conf, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	if (o->noaction) {
		if (check_cb != NULL && check_cb(conf, err, sizeof(err)) == -1) {
			fprintf(stderr, "%s\n", err);
			exit(1);
		}
		if (o->verbose)
			config_print(conf);
		fprintf(stderr, "configuration OK\n");
		exit(0);
	}
	if (!o->debug)
		log_init(0, LOG_DAEMON);
	if (mkdir(conf->runtime_dir, 0755) == -1 && errno != EEXIST)
		fatal("mkdir %s", conf->runtime_dir);
	notify_open();
	signal(SIGPIPE, SIG_IGN);
	sha256_preload();
	ev_init();
	server_init(name);
}

int
daemon_trap(const struct as_config *conf)
{
	return strcmp(conf->seccomp, "trap") == 0;
}

static void
daemon_signal(int sig, void *arg)
{
	(void)arg;
	switch (sig) {
	case SIGTERM:
	case SIGINT:
		log_info("exiting on signal %d", sig);
		ev_break();
		break;
	case SIGHUP:
		if (reload_cb != NULL) {
			log_info("reloading on SIGHUP");
			reload_cb();
		}
		break;
	}
}

/* Before the sandbox: signalfd is not among the allowed calls. */
void
daemon_signals(void (*reload)(void))
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, 0 };

	reload_cb = reload;
	if (ev_signals(sigs, daemon_signal, NULL) == -1)
		fatal("signalfd");
}

/* Serves until SIGTERM/SIGINT, then removes the sockets. */
void
daemon_run(void)
{
	log_info("ready");
	notify("READY=1");
	if (ev_loop() == -1)
		fatal("event loop");
	notify("STOPPING=1");
	server_close_all();
}
