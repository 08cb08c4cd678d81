/* SPDX-License-Identifier: ISC */
/*
 * notifyd: delivers approvald's outbox to the configured webhooks.  It
 * holds no approval capability (notify.sock serves it outbox rows and
 * takes acks, nothing else) and cannot write the database; it alone
 * reads the signing secret and alone has the network.
 */
#ifndef NOTIFYD_H
#define NOTIFYD_H

#include <stddef.h>
#include <jansson.h>

#include "config.h"

#define EVENT_ID_MAX	64

extern struct as_config	 notifyd_conf;

/* approvald.c: the connection to approvald's notify.sock */
void	 approvald_connect(void *);
void	 approvald_ack(const char *, const char *);

/* deliver.c: each event to each webhook until it answers 2xx */
void	 deliver_init(void);
void	 deliver_event(const char *, const char *, const json_t *);

/* sign.c: Standard Webhooks signatures, v1 or v1a by webhook */
int	 secret_load(const char *, char *, size_t);
int	 ed25519_load(size_t, const char *, char *, size_t);
char	*sign_event(size_t, const char *, long long, const char *);

/* slack.c: the same row as a Slack incoming webhook's blocks */
char	*slack_render(const char *);

#endif
