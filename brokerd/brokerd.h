/* brokerd: alone talks to Vault and holds its token. */
#ifndef BROKERD_H
#define BROKERD_H

#include "config.h"
#include "server.h"

extern struct as_config	 brokerd_conf;

int	brokerd_dispatch_runnerd(struct conn *, struct msg *);

#endif
