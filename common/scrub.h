/* SPDX-License-Identifier: ISC */
/*
 * The audit log's redaction (scrub.c), shared: auditd applies it to
 * every record, runnerd to the events it shows a client as MCP log
 * messages, so that neither path ever carries a secret.
 */
#ifndef AS_SCRUB_H
#define AS_SCRUB_H

#include <stddef.h>
#include <jansson.h>

/* What a secret's value becomes. */
#define AUDIT_REDACTED	"<redacted>"

json_t	*scrub_value(const json_t *);
char	*scrub_text(const char *, size_t, size_t *);
int	 scrub_key_is_secret(const char *);

#endif
