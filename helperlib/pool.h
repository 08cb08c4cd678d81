/* SPDX-License-Identifier: ISC */
/*
 * A warm pool (pool.c): members started ahead of the calls that claim
 * them, kept at a number, oldest first.  Its owner starts and ends the
 * members; the pool only counts them, hands one out and asks for more.
 * The launcher keeps one of terraform sandboxes (launcher/launcher.c),
 * sessbox.c one of session sandboxes.
 */
#ifndef AS_POOL_H
#define AS_POOL_H

#include <sys/queue.h>
#include <stddef.h>

struct pool;

/* In each member; zeroed, it is in no pool. */
struct pool_entry {
	TAILQ_ENTRY(pool_entry)	 entry;
	struct pool		*pool;	/* NULL: claimed, ended or never warm */
	void			*member;
};

struct pool_ops {
	const char		*name;	/* for the log */
	/* A new member, starting, its entry's member set; NULL and why. */
	struct pool_entry	*(*start)(char *, size_t);
	/* Whether it is up; NULL: the oldest is the likeliest to be. */
	int			 (*ready)(void *);
};

struct pool {
	const struct pool_ops	*ops;
	size_t			 want;
	size_t			 count;
	TAILQ_HEAD(, pool_entry) warm;
};

void	 pool_init(struct pool *, const struct pool_ops *, size_t);
void	 pool_refill(struct pool *);
void	*pool_claim(struct pool *);
void	 pool_leave(struct pool_entry *);

#endif
