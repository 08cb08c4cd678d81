/* runnerd: orchestrates each tool call and alone starts sandboxes. */
#ifndef RUNNERD_H
#define RUNNERD_H

#include "config.h"
#include "server.h"

extern struct as_config	 runnerd_conf;

int	runnerd_dispatch_mcpd(struct conn *, struct msg *);

#endif
