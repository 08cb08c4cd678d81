/* SPDX-License-Identifier: ISC */
/*
 * A daemon's listening sockets and their connections.  Each listener
 * names the peers it admits (SO_PEERCRED against an ACL) and a rule per
 * message type it accepts; PING is answered here for all.  The server
 * enforces the rules, so a handler sees only what its rule allows: a
 * message breaking one, or of a type the listener does not list, is
 * answered ERR_BADMSG and the connection stays.  A garbled or oversized
 * frame drops that connection only.
 */
#ifndef AS_SERVER_H
#define AS_SERVER_H

#include <sys/queue.h>
#include <limits.h>
#include <stdint.h>
#include <jansson.h>

#include "config.h"
#include "frame.h"
#include "sock.h"

struct conn;

enum msg_payload {
	PAYLOAD_NONE,		/* empty */
	PAYLOAD_JSON,		/* a JSON object */
	PAYLOAD_JSON_OPT,	/* a JSON object, or empty (handler gets NULL) */
	PAYLOAD_FIXED,		/* exactly size bytes */
	PAYLOAD_JSON_NUL,	/* a JSON object whose strings may hold NUL */
};

struct msg_rule {
	uint32_t		 type;
	enum msg_payload	 payload;
	size_t			 size;		/* PAYLOAD_FIXED */
	int			 fd;		/* a descriptor may come along */
	const struct peer_acl	*acl;		/* NULL: all the listener admits */
	/*
	 * The parsed payload is borrowed (NULL unless JSON); a descriptor
	 * is the handler's.  0 to go on, -1 to drop the connection.
	 */
	int			(*handler)(struct conn *, struct msg *,
				    json_t *);
};

struct listener {
	const char		*name;		/* e.g. "runner.sock" */
	const char		*owner;		/* the daemon's user: owns it */
	const struct peer_acl	*acl;
	size_t			 maxconns;
	const struct msg_rule	*rules;		/* ends with a NULL handler */
	void			(*closed)(struct conn *);
	int			 fd;
	char			 path[PATH_MAX];
	size_t			 nconns;
};

struct conn {
	TAILQ_ENTRY(conn)	 entry;
	struct channel		 ch;
	struct listener		*l;
	struct peer_cred	 cred;
	uint32_t		 id;
	void			*data;		/* the daemon's per-peer state */
	uint64_t		 frame_timer;	/* a frame is half here */
	int			 doomed;	/* dropped on the next turn */
};

void	 server_init(const char *);
int	 server_listen(const struct as_config *, struct listener *);
void	 server_close_all(void);
int	 conn_send(struct conn *, uint32_t, uint64_t, int, const void *,
	    size_t);
int	 conn_send_json(struct conn *, uint32_t, uint64_t, int, json_t *);
int	 conn_send_stream(struct conn *, uint32_t, uint32_t, uint64_t,
	    json_t *);
int	 conn_error(struct conn *, uint64_t, int, const char *, ...)
	    __attribute__((format(printf, 4, 5)));
void	 conn_drop(struct conn *);
struct conn *conn_find(uint32_t);
size_t	 server_nconns(void);

#endif
