/* SPDX-License-Identifier: ISC */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"

/*
 * JSON-RPC batches: an array of requests and notifications on one line.
 * MCP 2025-03-26 says implementations MUST accept them (basic/index,
 * "Batching"); 2025-06-18 removed them (its changelog, item 1) and
 * 2024-11-05 had none in its schema, so only a session that negotiated
 * 2025-03-26 is served one.  The answer is one array holding a response
 * for each request, written when the last is ready (tools/call answers
 * later); notifications get none, and a batch of notifications only
 * gets no answer at all (JSON-RPC 2.0, section 6).
 */
struct batch {
	TAILQ_ENTRY(batch)	 entry;
	json_t			*replies;	/* the responses so far */
	json_t			*waiting;	/* ids still to answer */
};

static TAILQ_HEAD(, batch) open_batches = TAILQ_HEAD_INITIALIZER(open_batches);
static struct batch	*serving;	/* the batch being gone through */
static int		 alone;		/* serving a message on its own */

#define BATCH_VERSION	"2025-03-26"

static void
batch_free(struct batch *b)
{
	json_decref(b->replies);
	json_decref(b->waiting);
	free(b);
}

/* Everything is answered: the array goes out, and the batch is done. */
static void
batch_flush(struct batch *b)
{
	json_t *replies = b->replies;

	b->replies = NULL;
	if (json_array_size(replies) > 0)
		rpc_write(replies);
	else
		json_decref(replies);
	batch_free(b);
}

static size_t
waiting_index(const struct batch *b, const json_t *id)
{
	size_t i;

	for (i = 0; i < json_array_size(b->waiting); i++)
		if (json_equal(json_array_get(b->waiting, i), (json_t *)id))
			return i;
	return (size_t)-1;
}

/* The batch waiting for id, and where in its list; NULL if none. */
static struct batch *
batch_waiting(const json_t *id, size_t *at)
{
	struct batch *b;

	if (serving != NULL && (*at = waiting_index(serving, id)) != (size_t)-1)
		return serving;
	TAILQ_FOREACH(b, &open_batches, entry)
		if ((*at = waiting_index(b, id)) != (size_t)-1)
			return b;
	return NULL;
}

/*
 * A response on its way out (msg, a reference): 1 when it belongs to a
 * batch, which keeps it; 0 when it goes out on its own.
 */
int
batch_collect(json_t *msg)
{
	struct batch *b;
	json_t *id;
	size_t at;

	if (json_object_get(msg, "method") != NULL)
		return 0;
	if (serving != NULL) {
		json_array_append_new(serving->replies, msg);
		return 1;
	}
	if (alone)
		return 0;
	if ((id = json_object_get(msg, "id")) == NULL ||
	    (b = batch_waiting(id, &at)) == NULL)
		return 0;
	json_array_remove(b->waiting, at);
	json_array_append_new(b->replies, msg);
	if (json_array_size(b->waiting) == 0) {
		TAILQ_REMOVE(&open_batches, b, entry);
		batch_flush(b);
	}
	return 1;
}

/*
 * A cancelled request is never answered: its batch stops waiting, also
 * when the cancellation is in the same batch (which is then still being
 * gone through, and goes out at its end).
 */
void
batch_forget(const json_t *id)
{
	struct batch *b;
	size_t at;

	if (id == NULL || (b = batch_waiting(id, &at)) == NULL)
		return;
	json_array_remove(b->waiting, at);
	if (b != serving && json_array_size(b->waiting) == 0) {
		TAILQ_REMOVE(&open_batches, b, entry);
		batch_flush(b);
	}
}

static void
serve_member(struct batch *b, json_t *v)
{
	struct rpc_msg m;
	size_t before;

	before = json_array_size(b->replies);
	rpc_classify(json_incref(v), &m);
	mcp_serve(&m);
	if (m.kind == RPC_REQUEST && json_array_size(b->replies) == before)
		json_array_append(b->waiting, m.id);
	rpc_clear(&m);
}

/*
 * One line from the client.  What a message on its own draws at once
 * is its answer, never a waiting batch's, even when it reuses the id
 * of a batch's call in flight.
 */
void
batch_serve_line(struct rpc_msg *m)
{
	alone = 1;
	mcp_serve(m);
	alone = 0;
}

/* A batch from the client (an array, borrowed). */
void
batch_serve(json_t *batch)
{
	struct batch *b;
	json_t *v;
	size_t i;

	if (!mcpd.initialized || strcmp(mcpd.version, BATCH_VERSION) != 0) {
		rpc_error(NULL, RPC_INVALID_REQUEST, "Invalid Request: "
		    "batches are served under MCP " BATCH_VERSION " only",
		    NULL);
		return;
	}
	if (json_array_size(batch) == 0) {
		rpc_error(NULL, RPC_INVALID_REQUEST,
		    "Invalid Request: empty batch", NULL);
		return;
	}
	if ((b = calloc(1, sizeof(*b))) == NULL ||
	    (b->replies = json_array()) == NULL ||
	    (b->waiting = json_array()) == NULL)
		fatal("batch");
	serving = b;
	json_array_foreach(batch, i, v)
		serve_member(b, v);
	serving = NULL;
	if (json_array_size(b->waiting) == 0)
		batch_flush(b);
	else
		TAILQ_INSERT_TAIL(&open_batches, b, entry);
}
