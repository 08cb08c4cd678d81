/* runnerd: orchestrates each tool call and alone starts sandboxes. */
#ifndef RUNNERD_H
#define RUNNERD_H

#include "backend.h"
#include "config.h"
#include "server.h"

extern struct as_config		 runnerd_conf;
extern const struct backend	*runnerd_backend;

int	runnerd_dispatch_mcpd(struct conn *, struct msg *);
void	runnerd_closed_mcpd(struct conn *);

/* call.c */
void	call_start(struct conn *, struct msg *);
void	call_cancel(struct conn *, uint64_t);
void	call_conn_closed(struct conn *);
void	call_done(uint64_t, json_t *);
void	call_swept(json_t *);

#endif
