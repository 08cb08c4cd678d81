/* SPDX-License-Identifier: ISC */
/*
 * What the ctl tools share: their options, finding and greeting their
 * daemon, reading its streamed replies, and printing what they hold
 * with every control character made visible (escape.h).
 */
#ifndef AS_CTL_H
#define AS_CTL_H

#include <jansson.h>

#include "config.h"
#include "frame.h"

#define CTL_TIMEOUT_MS	10000

/* A command word of a ctl tool, the words after it it needs at least. */
struct ctl_command {
	const char	*word;
	int		 action;	/* the tool's enum action */
	uint32_t	 msg;		/* what it sends */
	int		 nargs;
};


void	 ctl_open(struct channel *, const char *, const char *,
	    struct as_config *);
int	 ctl_error(const struct msg *);
int	 ctl_request(struct channel *, uint32_t, const void *, size_t,
	    struct msg *);
int	 ctl_ping(struct channel *);
int	 ctl_options(int, char **, const char **, int *);
const struct ctl_command *ctl_command(const struct ctl_command *, int,
	    char **);
json_t	*ctl_entry(const struct msg *, uint32_t);
const char *ctl_str(const json_t *, const char *);
json_t	*ctl_collect(struct channel *, struct msg *, uint32_t, uint32_t);
void	 ctl_put(const char *, int);
void	 ctl_put_lines(const char *, const char *);
void	 ctl_put_json(const json_t *);

#endif
