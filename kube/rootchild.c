/* SPDX-License-Identifier: ISC */
/*
 * The kubernetes helper's root children, the claim keeper (claim.c) and
 * the plan renderer (renderer.c): each forked before the helper reads
 * the kubeconfig or drops root, each answering one JSON request at a
 * time on its channel, in order, and each ended by the helper's end
 * closing, after the request in hand.
 */
#include <sys/types.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cjson.h"
#include "frame.h"
#include "kube.h"
#include "launcher.h"
#include "log.h"

/* Forks a root child that runs child_main(c, its end of a socketpair). */
void
rootchild_start(const struct as_config *c, struct channel *ch,
    void (*child_main)(const struct as_config *, int), const char *what)
{
	pid_t pid;
	int fd;

	if ((pid = fork_paired(&fd)) == -1)
		fatal("%s", what);
	if (pid == 0) {
		child_main(c, fd);
		_exit(0);
	}
	channel_init(ch, fd);
}

/*
 * In the child, first: its channel on descriptor 3 and nothing else of
 * the helper's but stdio (not the engine's channel), no signal but KILL
 * that ends it.  Returns the descriptor.
 */
int
rootchild_enter(int fd, const char *name)
{
	log_procinit(name);
	if (dup2(fd, 3) == -1)
		fatal("%s: dup2", name);
	closefrom(4);
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	return 3;
}

/*
 * The child's loop: each request (NULL when garbled) to handle, which
 * answers with an object; the answer goes back as reply_type.
 */
void
rootchild_serve(int fd, uint32_t reply_type,
    json_t *(*handle)(uint32_t, uint64_t, json_t *))
{
	struct channel ch;
	struct msg m;
	json_t *msg, *reply;
	char *text;

	channel_init(&ch, fd);
	while (channel_recv_sync(&ch, &m, -1) == 0) {
		/* A call's result may hold NULs in its output. */
		msg = cjson_parse_nul(m.data, m.len, NULL, 0);
		if (m.fd != -1)
			close_received(m.fd);
		reply = msg != NULL ? handle(m.hdr.type, m.hdr.reqid, msg) :
		    json_pack("{s:s}", "error", "garbled request");
		json_decref(msg);
		if (reply == NULL || (text = json_dumps(reply,
		    JSON_COMPACT)) == NULL)
			fatalx("out of memory");
		json_decref(reply);
		if (channel_send_sync(&ch, reply_type, m.hdr.reqid, -1, text,
		    strlen(text), -1) == -1)
			fatal("reply");
		free(text);
	}
}

/* In a worker: the child is not its to ask. */
void
rootchild_close(struct channel *ch)
{
	if (ch->fd != -1)
		close(ch->fd);
	ch->fd = -1;
}

/*
 * The helper's side: one request (payload, taken), its answer; NULL
 * and why when the child (what) is gone.
 */
json_t *
rootchild_ask(struct channel *ch, uint32_t type, uint32_t reply_type,
    uint64_t id, json_t *payload, const char *what, char *why, size_t whylen)
{
	struct msg m;
	json_t *reply = NULL;
	char *text;

	text = payload != NULL ? json_dumps(payload, JSON_COMPACT) : NULL;
	json_decref(payload);
	if (ch->fd == -1 || text == NULL ||
	    channel_send_sync(ch, type, id, -1, text, strlen(text),
	    -1) == -1 || channel_recv_sync(ch, &m, -1) == -1 ||
	    m.hdr.type != reply_type || m.hdr.reqid != id ||
	    (reply = cjson_parse_nul(m.data, m.len, NULL, 0)) == NULL) {
		log_warnx("%s: no answer", what);
		snprintf(why, whylen, "the %s did not answer", what);
	}
	free(text);
	return reply;
}
