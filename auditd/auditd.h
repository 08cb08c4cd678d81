/* auditd: owns the append-only, hash-chained audit log. */
#ifndef AUDITD_H
#define AUDITD_H

#include "config.h"
#include "server.h"

extern struct as_config	 auditd_conf;

int	auditd_dispatch_peer(struct conn *, struct msg *);

#endif
