/* SPDX-License-Identifier: ISC */
/* approvalctl: the operator's side of the approval gate. */
#ifndef APPROVALCTL_H
#define APPROVALCTL_H

#include <jansson.h>

enum action { A_PING, A_LIST, A_SHOW, A_APPROVE, A_DENY, A_WATCH };

struct parse_result {
	enum action	 action;
	int		 all;		/* list --all */
	const char	*id;		/* show, approve, deny */
	const char	*reason;	/* approve, deny --reason */
	int		 any_client;	/* approve --any-client */
	const char	*exec;		/* watch --exec */
};

/* How replies are printed: for a person, or as JSON for scripts. */
struct output {
	/* The entries of a finished reply to action. */
	void	(*result)(enum action, const json_t *);
	/* One change, as watch receives it. */
	void	(*event)(const json_t *);
};

extern const struct output	output_text;
extern const struct output	output_json;

/* watch.c */
struct channel;
void	 watch_exec_start(const char *);
int	 watch(struct channel *, const struct output *);

#endif
