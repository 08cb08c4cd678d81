/* SPDX-License-Identifier: ISC */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cjson.h"
#include "ctl.h"
#include "escape.h"
#include "log.h"
#include "sock.h"

/* Loads the configuration and connects to sockname under its runtime dir. */
void
ctl_open(struct channel *ch, const char *conffile, const char *sockname,
    struct as_config *conf)
{
	char path[PATH_MAX], err[1024];
	int fd;

	if (config_load(conffile, conf, err, sizeof(err)) == -1)
		fatalx("%s", err);
	if (config_socket_path(conf, sockname, path, sizeof(path)) == -1)
		fatal("%s", sockname);
	if ((fd = sock_connect(path)) == -1)
		fatal("connect %s", path);
	channel_init(ch, fd);
}

static char *
escaped(const char *s, size_t len, int flags)
{
	char *e;

	if ((e = esc_text(s, len, flags)) == NULL)
		fatalx("out of memory");
	return e;
}

/* A MSG_ERROR reply: prints the daemon's reason and returns 1. */
int
ctl_error(const struct msg *m)
{
	const struct msg_error *e;
	char *text;

	if (m->hdr.type != MSG_ERROR)
		return 0;
	if (m->len != sizeof(*e)) {
		log_warnx("malformed error reply");
		return 1;
	}
	e = (const struct msg_error *)m->data;
	/* A reason may quote what the agent sent. */
	text = escaped(e->text, strnlen(e->text, sizeof(e->text)), 0);
	log_warnx("%s", text);
	free(text);
	return 1;
}

/*
 * Sends one request and waits for the first reply frame.  A refused
 * peer may find the socket closed while sending: the daemon's reason
 * is still there to read.
 */
int
ctl_request(struct channel *ch, uint32_t type, const void *data, size_t len,
    struct msg *m)
{
	int sent;

	sent = channel_send_sync(ch, type, 0, -1, data, len, CTL_TIMEOUT_MS);
	if (channel_recv_sync(ch, m, CTL_TIMEOUT_MS) == -1) {
		log_warn("%s", msg_type_name(type));
		return -1;
	}
	if (ctl_error(m))
		return -1;
	if (sent == -1) {
		log_warn("%s", msg_type_name(type));
		return -1;
	}
	return 0;
}

int
ctl_ping(struct channel *ch)
{
	const struct msg_pong *p;
	struct msg m;

	if (ctl_request(ch, MSG_PING, NULL, 0, &m) == -1)
		return 1;
	if (m.hdr.type != MSG_PONG || m.len != sizeof(*p)) {
		log_warnx("unexpected %s reply", msg_type_name(m.hdr.type));
		return 1;
	}
	p = (const struct msg_pong *)m.data;
	printf("%.*s pid %u protocol %u: alive\n", (int)sizeof(p->proc),
	    p->proc, p->pid, p->version);
	return 0;
}

/*
 * The options before the command, the same for every ctl tool: -f file
 * and -j (--json).  The index of the command, or -1 on a bad option.
 */
int
ctl_options(int argc, char **argv, const char **conffile, int *json)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "+f:j", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			*conffile = optarg;
			break;
		case 'j':
			*json = 1;
			break;
		default:
			return -1;
		}
	}
	return optind;
}

/*
 * The entry of table (ended by a NULL word) that argv[0] names, if it
 * has the words it needs after it; NULL, for the tool's usage, if not.
 */
const struct ctl_command *
ctl_command(const struct ctl_command *table, int argc, char **argv)
{
	const struct ctl_command *t;

	if (argc < 1)
		return NULL;
	for (t = table; t->word != NULL; t++)
		if (strcmp(t->word, argv[0]) == 0)
			return argc > t->nargs ? t : NULL;
	return NULL;
}

/* One entry of a streamed reply: a JSON frame of the given type. */
json_t *
ctl_entry(const struct msg *m, uint32_t type)
{
	json_t *e;

	if (m->hdr.type != type ||
	    (e = json_loadb((const char *)m->data, m->len, 0, NULL)) == NULL)
		fatalx("unexpected %s reply", msg_type_name(m->hdr.type));
	return e;
}

/*
 * The entries until the end frame, starting with the reply in m, as an
 * array; NULL when the daemon refused on the way.
 */
json_t *
ctl_collect(struct channel *ch, struct msg *m, uint32_t entry, uint32_t end)
{
	json_t *entries;

	if ((entries = json_array()) == NULL)
		fatalx("out of memory");
	for (;;) {
		if (m->hdr.type == end)
			return entries;
		json_array_append_new(entries, ctl_entry(m, entry));
		if (channel_recv_sync(ch, m, CTL_TIMEOUT_MS) == -1)
			fatal("reply");
		if (ctl_error(m)) {
			json_decref(entries);
			return NULL;
		}
	}
}

/* A string member for a person to read; "-" when there is none. */
const char *
ctl_str(const json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));

	return s != NULL ? s : "-";
}


/* Text from a reply on stdout, escaped, padded to width columns. */
void
ctl_put(const char *s, int width)
{
	char *e = escaped(s, strlen(s), 0);

	printf("%-*s", width, e);
	free(e);
}

/*
 * Multi-line text (a plan's), escaped, each line after prefix: no line
 * of it can pass for one of the tool's own.
 */
void
ctl_put_lines(const char *text, const char *prefix)
{
	char *e = escaped(text, strlen(text), ESC_LINES), *line;
	size_t len;

	for (line = e; *line != '\0'; line += len + (line[len] == '\n')) {
		len = strcspn(line, "\n");
		printf("%s%.*s\n", prefix, (int)len, line);
	}
	free(e);
}

/*
 * j as compact JSON on stdout; jansson escapes C0 controls, this DEL,
 * C1 and the bidi controls too.  Nothing for no j.
 */
void
ctl_put_json(const json_t *j)
{
	char *s, *e;

	if ((s = cjson_dump(j)) == NULL)
		return;
	e = escaped(s, strlen(s), ESC_JSON);
	fputs(e, stdout);
	free(e);
	free(s);
}
