/* SPDX-License-Identifier: ISC */
/*
 * runnerctl: lists runnerd's code-execution sessions and copies files
 * into and out of them for an operator.  runnerd's engine touches no
 * host file, so the local file is this program's: opened before the
 * sandbox, its bytes sent and received in the frames (base64).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "ctl.h"
#include "daemon.h"
#include "io.h"
#include "log.h"
#include "runnerctl.h"
#include "sandbox.h"

/* What one frame can carry once in base64, with room for the rest. */
#define PUT_MAX		((MSG_MAX_PAYLOAD - 8192) / 4 * 3)

static const struct ctl_command commands[] = {
	{ "ping",	A_PING,		MSG_PING,		0 },
	{ "sessions",	A_SESSIONS,	MSG_RCTL_SESSIONS,	0 },
	{ "put",	A_PUT,		MSG_RCTL_PUT,		3 },
	{ "get",	A_GET,		MSG_RCTL_GET,		3 },
	{ NULL }
};

static __attribute__((noreturn)) void
usage(void)
{
	fprintf(stderr, "usage: runnerctl [-j] [-f file] command\n"
	    "commands: ping | sessions | put SESSION LOCALFILE PATH |\n"
	    "          get SESSION PATH LOCALFILE\n");
	exit(1);
}

static const struct ctl_command *
parse(int argc, char **argv, struct parse_result *res)
{
	const struct ctl_command *t;

	memset(res, 0, sizeof(*res));
	if ((t = ctl_command(commands, argc, argv)) == NULL ||
	    argc != t->nargs + 1)
		usage();
	res->action = t->action;
	if (t->action == A_PUT || t->action == A_GET) {
		res->session = argv[1];
		res->path = argv[t->action == A_PUT ? 3 : 2];
		res->local = argv[t->action == A_PUT ? 2 : 3];
	}
	return t;
}

/* The local file of a put (read) or a get (written); "-": stdio. */
static int
local_open(const char *name, int out)
{
	int fd;

	if (strcmp(name, "-") == 0)
		return out ? STDOUT_FILENO : STDIN_FILENO;
	fd = out ? open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666) :
	    open(name, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		fatal("%s", name);
	return fd;
}

/* All of fd in base64, at most PUT_MAX bytes of it. */
static char *
local_base64(int fd, const char *name)
{
	unsigned char *buf;
	char *b64;
	size_t len;
	ssize_t n;

	if ((buf = malloc(PUT_MAX + 1)) == NULL)
		fatal("%s", name);
	if ((n = read_full(fd, buf, PUT_MAX + 1)) == -1)
		fatal("%s", name);
	len = (size_t)n;
	if (len > PUT_MAX)
		fatalx("%s: larger than %zu bytes", name, (size_t)PUT_MAX);
	if ((b64 = malloc(len / 3 * 4 + 5)) == NULL)
		fatal("%s", name);
	EVP_EncodeBlock((unsigned char *)b64, buf, (int)len);
	free(buf);
	return b64;
}

static char *
request_payload(const struct parse_result *res, int fd)
{
	json_t *j;
	char *s, *content = NULL;

	if (res->action == A_SESSIONS)
		return NULL;
	if (res->action == A_PUT)
		content = local_base64(fd, res->local);
	j = json_pack("{s:s, s:s, s:s*}", "session_id", res->session, "path",
	    res->path, "content", content);
	free(content);
	if (j == NULL || (s = json_dumps(j, JSON_COMPACT)) == NULL)
		fatalx("out of memory");
	json_decref(j);
	return s;
}

/* A get's content, decoded into fd; drops it from the entry. */
static void
save(int fd, const char *name, json_t *e)
{
	const char *b64 = json_string_value(json_object_get(e, "content"));
	unsigned char *buf;
	size_t n;
	int len;

	if (b64 == NULL)
		fatalx("no content in the reply");
	n = strlen(b64);
	if ((buf = malloc(n / 4 * 3 + 3)) == NULL)
		fatal("%s", name);
	if ((len = EVP_DecodeBlock(buf, (const unsigned char *)b64,
	    (int)n)) < 0)
		fatalx("bad base64 in the reply");
	/* EVP_DecodeBlock counts the padding as zero bytes. */
	len -= (n > 0 && b64[n - 1] == '=') + (n > 1 && b64[n - 2] == '=');
	if (len != json_integer_value(json_object_get(e, "bytes")))
		fatalx("the reply's content is not its length");
	if (write_full(fd, buf, len) == -1)
		fatal("%s", name);
	free(buf);
	json_object_del(e, "content");
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
	int json = 0, first, fd = -1, r;

	log_procinit("runnerctl");
	log_init(1, LOG_USER);
	if ((first = ctl_options(argc, argv, &conffile, &json)) == -1)
		usage();
	out = json ? &output_json : &output_text;
	t = parse(argc - first, argv + first, &res);
	ctl_open(&ch, conffile, "runner-control.sock", &conf);
	/* jansson reads its hash seed from /dev/urandom on first use. */
	json_object_seed(0);
	if (res.action == A_PUT)
		fd = local_open(res.local, 0);
	/* A get opens (and empties) its file only once runnerd agreed. */
	if (res.action != A_GET)
		sandbox_enter(ROLE_CTL, &none, daemon_trap(&conf));
	if (res.action == A_PING)
		return ctl_ping(&ch);
	payload = request_payload(&res, fd);
	r = ctl_request(&ch, t->msg, payload, payload != NULL ?
	    strlen(payload) : 0, &m);
	free(payload);
	if (r == -1)
		return 1;
	if (res.action == A_GET) {
		fd = local_open(res.local, 1);
		sandbox_enter(ROLE_CTL, &none, daemon_trap(&conf));
	}
	if ((entries = ctl_collect(&ch, &m, MSG_RCTL_ENTRY, MSG_RCTL_END)) == NULL)
		return 1;
	if (res.action == A_GET)
		save(fd, res.local, json_array_get(entries, 0));
	if (fd > STDERR_FILENO && close(fd) == -1)
		fatal("%s", res.local);
	/* What a get wrote to stdout is the file, not a report. */
	if (res.action != A_GET || strcmp(res.local, "-") != 0)
		out->result(res.action, entries);
	json_decref(entries);
	return 0;
}
