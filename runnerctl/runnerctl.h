/* SPDX-License-Identifier: ISC */
/* runnerctl: the operator's side of the code-execution sessions. */
#ifndef RUNNERCTL_H
#define RUNNERCTL_H

#include <jansson.h>

enum action { A_PING, A_SESSIONS, A_PUT, A_GET };

struct parse_result {
	enum action	 action;
	const char	*session;	/* put, get */
	const char	*path;		/* put, get: inside the session */
	const char	*local;		/* put, get: "-" is stdin or stdout */
};

/* How replies are printed: for a person, or as JSON for scripts. */
struct output {
	/* The entries of a finished reply to action, content removed. */
	void	(*result)(enum action, const json_t *);
};

extern const struct output	output_text;
extern const struct output	output_json;

#endif
