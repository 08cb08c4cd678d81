/* approvald: the policy and the approvals database; the only gate. */
#ifndef APPROVALD_H
#define APPROVALD_H

#include "config.h"
#include "server.h"

extern struct as_config	 approvald_conf;

int	approvald_dispatch_runnerd(struct conn *, struct msg *);
int	approvald_dispatch_control(struct conn *, struct msg *);

#endif
