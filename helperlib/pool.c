/* SPDX-License-Identifier: ISC */
/*
 * A warm pool's bookkeeping, the same for every kind of member (see
 * pool.h).  A member is in the pool from its start until it is claimed
 * or its owner ends it, so that a dying one is never handed out and a
 * refill replaces it.  When to refill is the owner's choice: sessions
 * at once after a claim, terraform after the claiming call, so that a
 * start does not compete with the call for the CPU.
 */
#include "log.h"
#include "pool.h"

void
pool_init(struct pool *p, const struct pool_ops *ops, size_t want)
{
	p->ops = ops;
	p->want = want;
	p->count = 0;
	TAILQ_INIT(&p->warm);
}

/* Starts members up to the number; the first failure stops it. */
void
pool_refill(struct pool *p)
{
	struct pool_entry *e;
	char why[256];

	while (p->count < p->want) {
		if ((e = p->ops->start(why, sizeof(why))) == NULL) {
			log_warnx("%s: %s", p->ops->name, why);
			return;
		}
		e->pool = p;
		TAILQ_INSERT_TAIL(&p->warm, e, entry);
		p->count++;
	}
}

/* Out of the pool, if it is in one: claimed, or ending. */
void
pool_leave(struct pool_entry *e)
{
	if (e->pool == NULL)
		return;
	TAILQ_REMOVE(&e->pool->warm, e, entry);
	e->pool->count--;
	e->pool = NULL;
}

/*
 * The oldest member that is up, else the oldest starting one, taken
 * out of the pool; NULL when it is empty.
 */
void *
pool_claim(struct pool *p)
{
	struct pool_entry *e;

	TAILQ_FOREACH(e, &p->warm, entry)
		if (p->ops->ready == NULL || p->ops->ready(e->member))
			break;
	if (e == NULL)
		e = TAILQ_FIRST(&p->warm);
	if (e == NULL)
		return NULL;
	pool_leave(e);
	return e->member;
}
