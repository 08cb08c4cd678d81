/*
 * The audit client every daemon uses.  audit_emit() waits for auditd's
 * acknowledgement: when it fails the caller must not go on (fail closed).
 */
#ifndef AS_AUDIT_H
#define AS_AUDIT_H

#include <stdint.h>
#include <jansson.h>

#include "config.h"

#define REQID_STR_LEN	21	/* "req-" + 16 hex digits + NUL */

int	 audit_init(const struct as_config *, const char *);
int	 audit_emit(const char *, uint64_t, json_t *);
char	*audit_payload(const char *, uint64_t, json_t *);
void	 reqid_format(uint64_t, char [REQID_STR_LEN]);
int	 reqid_parse(const char *, uint64_t *);
uint64_t reqid_new(void);

#endif
