/* SPDX-License-Identifier: ISC */
/*
 * Dropping privileges: each daemon opens what it needs, then calls
 * priv_drop() and sandbox_enter() before it reads a byte of input.
 * Platform code lives in sandbox-<platform>.c.
 */
#ifndef AS_SANDBOX_H
#define AS_SANDBOX_H

enum sandbox_role {
	ROLE_MCPD,
	ROLE_RUNNERD,
	ROLE_APPROVALD,
	ROLE_BROKERD,
	ROLE_AUDITD,
	ROLE_CTL,
	ROLE_CLAIM,	/* runnerd's claim keeper: files on the claim only */
	ROLE_NOTIFYD,	/* libcurl to the webhooks, notify.sock */
};

#define SANDBOX_MAXPATHS	8

/* Files and directories the process may still reach once sandboxed. */
struct sandbox_paths {
	const char	*rw[SANDBOX_MAXPATHS];
	const char	*ro[SANDBOX_MAXPATHS];
};

void	 priv_drop(const char *);
int	 priv_give(const char *, const char *);
int	 priv_state_dir(const char *, const char *);
void	 sandbox_enter(enum sandbox_role, const struct sandbox_paths *, int);
int	 sandbox_landlock_abi(void);
const char *sandbox_role_name(enum sandbox_role);

#endif
