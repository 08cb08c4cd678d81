#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "ctl.h"
#include "log.h"

static __attribute__((noreturn)) void
usage(void)
{
	fprintf(stderr, "usage: auditctl [-f file] ping\n");
	exit(1);
}

int
main(int argc, char *argv[])
{
	struct as_config conf;
	struct channel ch;
	const char *conffile = CONF_DEFAULT;
	int c;

	log_procinit("auditctl");
	log_init(1, LOG_USER);
	while ((c = getopt(argc, argv, "f:")) != -1) {
		switch (c) {
		case 'f':
			conffile = optarg;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1 || strcmp(argv[0], "ping") != 0)
		usage();
	ctl_open(&ch, conffile, "audit.sock", &conf);
	return ctl_ping(&ch);
}
