/* SPDX-License-Identifier: ISC */
/* brokerd: alone talks to Vault and holds its token. */
#ifndef BROKERD_H
#define BROKERD_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "config.h"
#include "server.h"

#define LEASE_ID_MAX	256

extern struct as_config	 brokerd_conf;

/*
 * cred.c: a secret in memory.  It is never formatted but through
 * secret_fmt(), which says "<redacted>", and every copy is wiped.
 */
struct secret {
	char		*buf;
	size_t		 len;
};

void		 cred_init(void);
void		 json_text_free(char *);
int		 secret_set(struct secret *, const void *, size_t);
void		 secret_clear(struct secret *);
const char	*secret_fmt(const struct secret *);
int		 cred_file(const struct brokerd_scope *, const char *,
		    const char *, long, const json_t *, const char *,
		    struct secret *);
int		 cred_memfd(const struct secret *);

/* scope.c: which scope and namespace an action gets, or why none. */
struct cred_target {
	const struct brokerd_scope *scope;
	char		 tool[NAME_MAX_LEN];
	char		 ns[NAME_MAX_LEN];	/* "" for engine none */
};

int		 scope_resolve(const struct scope_table *, const json_t *,
		    struct cred_target *, char *, size_t);
int		 namespace_valid(const char *);

/*
 * vault.c: the only Vault client.  Requests run side by side in the
 * event loop; each calls back once.  A lease given to a callback, and
 * the JSON it holds, live until the callback returns.
 */
struct vault_lease {
	char		 lease_id[LEASE_ID_MAX];
	long		 ttl;
	json_t		*data;		/* Vault's "data": holds the secret */
};

typedef void	(*vault_issue_cb)(void *, const struct vault_lease *,
		    const char *);
typedef void	(*vault_revoke_cb)(void *, const char *);

int		 vault_init(const struct brokerd_vault *, char *, size_t);
int		 vault_configured(void);
int		 vault_token_load(char *, size_t);
int		 vault_health(char *, size_t);
int		 vault_issue(const struct brokerd_scope *, const char *,
		    vault_issue_cb, void *, char *, size_t);
int		 vault_revoke(const char *, vault_revoke_cb, void *, char *,
		    size_t);
int		 lease_id_valid(const char *);

/* journal.c: lease ids outstanding, on disk, for after a crash. */
int		 journal_open(const char *, void (*)(const char *, void *),
		    void *, char *, size_t);
int		 journal_add(const char *);
int		 journal_remove(const char *, int);

/* issue.c: CRED_ISSUE and CRED_REVOKE, and leases left behind. */
int		 broker_init(const struct as_config *, char *, size_t);
extern const struct msg_rule brokerd_runnerd_rules[];
void		 broker_sweep(void *);

#endif
