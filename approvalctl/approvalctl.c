/* SPDX-License-Identifier: ISC */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "approvalctl.h"
#include "ctl.h"
#include "daemon.h"
#include "log.h"
#include "sandbox.h"

static const struct ctl_command commands[] = {
	{ "ping",	A_PING,		MSG_PING,	0 },
	{ "list",	A_LIST,		MSG_CTL_LIST,	0 },
	{ "show",	A_SHOW,		MSG_CTL_SHOW,	1 },
	{ "approve",	A_APPROVE,	MSG_CTL_APPROVE, 1 },
	{ "deny",	A_DENY,		MSG_CTL_DENY,	1 },
	{ "watch",	A_WATCH,	MSG_CTL_WATCH,	0 },
	{ NULL }
};

static __attribute__((noreturn)) void
usage(void)
{
	fprintf(stderr, "usage: approvalctl [-j] [-f file] command\n"
	    "commands: ping | list [--all] | show ID |\n"
	    "          approve ID [--any-client] [--reason text] |\n"
	    "          deny ID [--reason text] |\n"
	    "          watch [--exec command]\n");
	exit(1);
}

static const struct ctl_command *
parse(int argc, char **argv, struct parse_result *res)
{
	const struct ctl_command *t;
	int i = 1;

	memset(res, 0, sizeof(*res));
	if ((t = ctl_command(commands, argc, argv)) == NULL)
		usage();
	res->action = t->action;
	if (t->nargs == 1)
		res->id = argv[i++];
	for (; i < argc; i++) {
		if (t->action == A_LIST && strcmp(argv[i], "--all") == 0)
			res->all = 1;
		else if (t->action == A_APPROVE && strcmp(argv[i],
		    "--any-client") == 0)
			res->any_client = 1;
		else if ((t->action == A_DENY || t->action == A_APPROVE) &&
		    strcmp(argv[i], "--reason") == 0 && i + 1 < argc)
			res->reason = argv[++i];
		else if (t->action == A_WATCH && strcmp(argv[i], "--exec") ==
		    0 && i + 1 < argc)
			res->exec = argv[++i];
		else
			usage();
	}
	return t;
}

static char *
request_payload(const struct parse_result *res)
{
	json_t *j;
	char *s;

	switch (res->action) {
	case A_LIST:
		j = json_pack("{s:b}", "all", res->all);
		break;
	case A_SHOW:
	case A_DENY:
		j = json_pack("{s:s, s:s?}", "approval_id", res->id, "reason",
		    res->reason);
		break;
	case A_APPROVE:
		j = json_pack("{s:s, s:b, s:s?}", "approval_id", res->id,
		    "any_client", res->any_client, "reason", res->reason);
		break;
	default:
		return NULL;
	}
	if (j == NULL || (s = json_dumps(j, JSON_COMPACT)) == NULL)
		fatalx("out of memory");
	json_decref(j);
	return s;
}

int
main(int argc, char *argv[])
{
	struct sandbox_paths none = { .rw = { NULL }, .ro = { NULL } };
	const struct output *out;
	const char *conffile = CONF_DEFAULT;
	const struct ctl_command *t;
	struct parse_result res;
	struct as_config conf;
	struct channel ch;
	struct msg m;
	json_t *entries;
	char *payload;
	int json = 0, first, r;

	log_procinit("approvalctl");
	log_init(1, LOG_USER);
	if ((first = ctl_options(argc, argv, &conffile, &json)) == -1)
		usage();
	out = json ? &output_json : &output_text;
	t = parse(argc - first, argv + first, &res);
	if (res.exec != NULL)
		watch_exec_start(res.exec);
	ctl_open(&ch, conffile, "control.sock", &conf);
	/* jansson reads its hash seed from /dev/urandom on first use. */
	json_object_seed(0);
	sandbox_enter(ROLE_CTL, &none, daemon_trap(&conf));
	if (res.action == A_PING)
		return ctl_ping(&ch);
	if (res.action == A_WATCH)
		return watch(&ch, out);
	payload = request_payload(&res);
	r = ctl_request(&ch, t->msg, payload, strlen(payload), &m);
	free(payload);
	if (r == -1)
		return 1;
	if ((entries = ctl_collect(&ch, &m, MSG_CTL_ENTRY, MSG_CTL_END)) == NULL)
		return 1;
	out->result(res.action, entries);
	json_decref(entries);
	return 0;
}
