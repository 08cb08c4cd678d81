/* SPDX-License-Identifier: ISC */
/*
 * Session sandboxes in a backend's helper (sessbox.c): the agent's
 * protocol, timers and warm pool (pool.c), shared by the gvisor
 * launcher (launcher/session.c) and the kubernetes helper
 * (kube/session.c), which each say how a session's child process
 * starts, stops and is cleaned up after.
 */
#ifndef RUNNERD_SESSBOX_H
#define RUNNERD_SESSBOX_H

#include <sys/types.h>
#include <sys/queue.h>
#include <limits.h>
#include <stdint.h>
#include <jansson.h>

#include "backend.h"
#include "frame.h"
#include "launcher.h"
#include "pool.h"

struct sess {
	TAILQ_ENTRY(sess)	 entry;
	uint64_t		 key;		/* 0: started for the pool */
	struct pool_entry	 pooled;	/* in it: unclaimed, not ending */
	uint64_t		 origin;	/* the request that opened it */
	char			 session[SESSION_ID_LEN]; /* for the journal */
	char			 cid[CONTAINER_ID_LEN];
	char			 dir[PATH_MAX];	/* gvisor: its bundle */
	pid_t			 pid;		/* runsc, or the kube worker */
	struct channel		 agent;
	int			 ready;
	int			 busy;		/* a request is with the agent */
	uint64_t		 call;		/* its id, counted per session */
	const char		*ending;	/* why it is being ended */
	int			 eof;		/* its agent's socket closed */
	int64_t			 claimed;
	uint64_t		 timer;
};

struct sessbox_ops {
	/* s->pid and the agent's socket (*fd), or -1 with errno. */
	int		(*spawn)(struct sess *, int *);
	/* Ends s's child; it is reaped later. */
	void		(*stop)(struct sess *);
	/* Why s's child exited as it did (status from waitpid), or NULL. */
	const char	*(*exit_why)(struct sess *, int);
	/* Once the child is reaped: what it left (NULL: nothing). */
	void		(*cleanup)(struct sess *);
	/* runnerd is going: s's child is to exit at once, noted if open. */
	void		(*shutdown)(struct sess *);
	long		 start_ms;	/* the agent says ready by then */
	long		 pool;		/* warm sandboxes kept here */
	int		 warm_here;	/* READY says "warm": the pool is here */
};

void	 sessbox_init(const struct as_config *, const struct sessbox_ops *);
void	 sessbox_message(uint32_t, uint64_t, const uint8_t *, size_t);
int	 sessbox_reaped(pid_t, int);
void	 sessbox_shutdown(void);
json_t	*sessbox_agent_argv(const struct as_config *, const char *,
	    const char *);

/* launcher/session.c: runsc's ops */
void	 launcher_sessions(const struct as_config *, const char *);

#endif
