/* SPDX-License-Identifier: ISC */
/*
 * Framed messages over Unix stream sockets, in the spirit of OpenBSD's
 * imsg: a fixed header, a bounded payload, at most one descriptor per
 * frame (SCM_RIGHTS), and only on the types msg_carries_fd() names.  A
 * short, oversized or garbled frame is reported to the caller, who drops
 * the connection; the reader never trusts len.
 */
#ifndef AS_FRAME_H
#define AS_FRAME_H

#include <sys/queue.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define CHANNEL_MAXFDS	2	/* a frame's still arriving, one read's more */

struct msg {
	struct msg_hdr	 hdr;
	uint8_t		*data;	/* valid until the next channel_get/read */
	size_t		 len;
	int		 fd;	/* -1, or a descriptor the receiver now owns */
};

struct wframe {
	TAILQ_ENTRY(wframe) entry;
	uint8_t		*buf;
	size_t		 len;
	size_t		 off;
	int		 fd;
};

struct channel {
	int		 fd;
	uint8_t		*rbuf;
	size_t		 rlen;		/* bytes held */
	size_t		 rcap;
	size_t		 rconsumed;	/* bytes of the frame handed out last */
	int		 rfds[CHANNEL_MAXFDS];
	int		 nrfds;
	TAILQ_HEAD(, wframe) wq;
	size_t		 wqueued;
};

void	 channel_init(struct channel *, int);
void	 channel_clear(struct channel *);
void	 close_received(int);
ssize_t	 channel_read(struct channel *);
int	 channel_get(struct channel *, struct msg *);
int	 channel_compose(struct channel *, uint32_t, uint32_t, uint64_t, int,
	    const void *, size_t);
int	 channel_flush(struct channel *);
int	 channel_pending(const struct channel *);

/* Blocking helpers for clients (ctl tools, synchronous calls). */
int	 channel_send_sync(struct channel *, uint32_t, uint64_t, int,
	    const void *, size_t, int);
int	 channel_recv_sync(struct channel *, struct msg *, int);
int	 channel_compose_error(struct channel *, uint64_t, int, const char *,
	    ...) __attribute__((format(printf, 4, 5)));

#endif
