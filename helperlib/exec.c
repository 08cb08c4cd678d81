/* SPDX-License-Identifier: ISC */
/*
 * What a helper does first, once the engine has re-executed runnerd
 * for it (runnerd/helper.c): `runnerd -L` is the launcher, `runnerd -K`
 * the kubernetes helper.  The exec gives it an image and a layout of
 * its own and nothing open but stdio and the channel; the configuration
 * is the engine's, sent as the channel's first frame, so that the two
 * never disagree over a file that changed in between.
 */
#include <sys/prctl.h>

#include <signal.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "cjson.h"
#include "io.h"
#include "launcher.h"
#include "log.h"

static __attribute__((noreturn)) void
helper_usage(void)
{
	fatalx("-L and -K are runnerd's own, for the processes it starts");
}

/*
 * The first frame exactly, nothing after it: what follows is the
 * role's loop's to read.
 */
static void
config_receive(struct as_config *conf)
{
	struct msg_hdr h;

	if (read_full(HELPER_CHANNEL_FD, &h, sizeof(h)) != sizeof(h))
		fatalx("helper: no configuration from the engine");
	if (h.type != LMSG_CONFIG || h.version != PROTO_VERSION ||
	    h.flags != 0 || h.len != sizeof(*conf))
		fatalx("helper: first frame %u of %u bytes is not the "
		    "configuration", h.type, h.len);
	if (read_full(HELPER_CHANNEL_FD, conf, sizeof(*conf)) !=
	    sizeof(*conf))
		fatalx("helper: configuration cut short");
}

/*
 * 0 when argv is not a helper's.  Otherwise 'L' or 'K', with logging
 * as the engine's (-d, -v) and conf the engine's.
 */
int
helper_begin(int argc, char **argv, struct as_config *conf)
{
	int ch, role = 0, debug = 0, verbose = 0;

	if (argc < 2 || (strcmp(argv[1], "-L") != 0 &&
	    strcmp(argv[1], "-K") != 0))
		return 0;
	/* /proc/self/exe would name it "exe". */
	(void)prctl(PR_SET_NAME, "runnerd");
	log_procinit(argv[1][1] == 'L' ? "runnerd-launcher" : "runnerd-kube");
	while ((ch = getopt(argc, argv, "dKLv")) != -1) {
		switch (ch) {
		case 'd':
			debug = 1;
			break;
		case 'K':
		case 'L':
			if (role != 0)
				helper_usage();
			role = ch;
			break;
		case 'v':
			verbose++;
			break;
		default:
			helper_usage();
		}
	}
	if (optind != argc)
		helper_usage();
	log_init(debug, LOG_DAEMON);
	log_setverbose(verbose);
	config_receive(conf);
	signal(SIGPIPE, SIG_IGN);
	/* Its children hash after their sandbox forbids opening files. */
	sha256_preload();
	return role;
}
