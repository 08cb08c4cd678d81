/* SPDX-License-Identifier: ISC */
/* What every daemon's main() does the same way: flags, config, signals. */
#ifndef AS_DAEMON_H
#define AS_DAEMON_H

#include "config.h"

struct daemon_opts {
	int		 debug;		/* -d: foreground, log to stderr */
	int		 verbose;	/* -v */
	int		 noaction;	/* -n: check the config and exit */
	const char	*conffile;	/* -f */
	const char	*keyfile;	/* -k: mcpd's kept client key */
};

void	daemon_start(int, char **, const char *, struct daemon_opts *,
	    struct as_config *);
void	daemon_check(int (*)(const struct as_config *, char *, size_t));
void	daemon_signals(void (*)(void));
void	daemon_run(void);
int	daemon_trap(const struct as_config *);

#endif
