/* SPDX-License-Identifier: ISC */
/*
 * The audit client every daemon uses.  audit_emit() waits for auditd's
 * acknowledgement: when it fails the caller must not go on (fail closed).
 * audit_payload() and audit_ack_check() are its two halves, for a client
 * that sends and waits on its own channel.
 *
 * Each event names its writer (process name, pid, 64 random bits) and
 * the writer's sequence number; a resend carries the same pair, and
 * auditd records it once.
 */
#ifndef AS_AUDIT_H
#define AS_AUDIT_H

#include <sys/types.h>

#include <stdint.h>
#include <jansson.h>

#include "config.h"

#define REQID_STR_LEN	21	/* "req-" + 16 hex digits + NUL */

struct msg;

int	 audit_init(const struct as_config *, const char *);
int	 audit_emit(const char *, uint64_t, json_t *);
/* One writer: its events reach auditd in order, on one channel. */
struct audit_writer {
	char		 name[96];	/* process:pid:random */
	pid_t		 pid;
	uint64_t	 seq;		/* its last event's */
};

char	*audit_payload(const char *, uint64_t, json_t *);
char	*audit_payload_by(struct audit_writer *, const char *, uint64_t,
	    json_t *);
int	 audit_ack_check(const struct msg *, uint64_t);
void	 reqid_format(uint64_t, char [REQID_STR_LEN]);
int	 reqid_parse(const char *, uint64_t *);
uint64_t reqid_new(void);

#endif
