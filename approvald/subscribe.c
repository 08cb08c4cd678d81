/* SPDX-License-Identifier: ISC */
/*
 * runnerd's waits for a person's decision (await.c there), pushed: an
 * APPROVAL_STATUS with "subscribe" that finds the approval pending
 * leaves a subscription, and the approval's next change of state is
 * sent as APPROVAL_STATE under that request's id, once.  A pending
 * approval costs nothing while it waits.  One subscription per
 * approval (a new one replaces it), at most SUBS_PER_CONN per
 * connection; past that the answer says "subscribed": false and
 * runnerd asks again later.  The state is read and the subscription
 * made in one turn of the event loop, and every change notifies after
 * its commit, so no change falls between the two.
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "approvald.h"
#include "log.h"

#define SUBS_BUCKETS	4096
#define SUBS_PER_CONN	65536

struct sub {
	TAILQ_ENTRY(sub)	 entry;
	uint32_t		 conn;
	uint64_t		 reqid;
	char			 id[APPROVAL_ID_LEN];
};

TAILQ_HEAD(subs_head, sub);

static struct subs_head	 buckets[SUBS_BUCKETS];
static int		 ready;

static struct subs_head *
bucket(const char *id)
{
	unsigned long h = 5381;
	size_t i;

	if (!ready) {
		for (i = 0; i < SUBS_BUCKETS; i++)
			TAILQ_INIT(&buckets[i]);
		ready = 1;
	}
	for (; *id != '\0'; id++)
		h = h * 33 + (unsigned char)*id;
	return &buckets[h % SUBS_BUCKETS];
}

static struct sub *
sub_find(const char *id)
{
	struct sub *s;

	TAILQ_FOREACH(s, bucket(id), entry)
		if (strcmp(s->id, id) == 0)
			return s;
	return NULL;
}

static void
sub_free(struct sub *s)
{
	struct conn *c;

	TAILQ_REMOVE(bucket(s->id), s, entry);
	if ((c = conn_find(s->conn)) != NULL && c->data != NULL)
		(*(size_t *)c->data)--;
	free(s);
}

/* The connection's count of subscriptions, kept in its conn. */
static size_t *
conn_count(struct conn *c)
{
	if (c->data == NULL && (c->data = calloc(1, sizeof(size_t))) == NULL)
		fatal("subscription");
	return c->data;
}

/* 1 when c now hears of id's next change under reqid, 0 when full. */
int
subs_add(struct conn *c, uint64_t reqid, const char *id)
{
	struct sub *s;
	size_t *n = conn_count(c);

	if ((s = sub_find(id)) != NULL)
		sub_free(s);
	if (*n >= SUBS_PER_CONN) {
		log_warnx("peer %u: %zu subscriptions: %s is asked about again "
		    "instead", c->id, *n, id);
		return 0;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL)
		fatal("subscription");
	s->conn = c->id;
	s->reqid = reqid;
	strlcpy(s->id, id, sizeof(s->id));
	TAILQ_INSERT_TAIL(bucket(id), s, entry);
	(*n)++;
	return 1;
}

/* Nobody hears of id any more (its withdrawal answers for itself). */
void
subs_drop(const char *id)
{
	struct sub *s;

	if ((s = sub_find(id)) != NULL)
		sub_free(s);
}

/* id changed state (committed): its subscriber hears where it is now. */
void
subs_notify(const char *id)
{
	struct conn *c;
	struct sub *s;
	json_t *reply;

	if ((s = sub_find(id)) == NULL)
		return;
	if ((reply = approval_state(id)) == NULL)
		return;
	if (strcmp(json_string_value(json_object_get(reply, "state")),
	    "pending") == 0) {
		json_decref(reply);
		return;
	}
	if ((c = conn_find(s->conn)) == NULL)
		json_decref(reply);
	else if (conn_send_json(c, MSG_APPROVAL_STATE, s->reqid, -1,
	    reply) == -1)
		log_warn("peer %u: %s", s->conn, id);
	sub_free(s);
}

/* runnerd went away: its subscriptions go with it. */
void
subs_conn_closed(struct conn *c)
{
	struct sub *s, *next;
	size_t i;

	for (i = 0; ready && i < SUBS_BUCKETS; i++)
		TAILQ_FOREACH_SAFE(s, &buckets[i], entry, next)
			if (s->conn == c->id) {
				TAILQ_REMOVE(&buckets[i], s, entry);
				free(s);
			}
	free(c->data);
	c->data = NULL;
}
