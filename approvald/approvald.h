/* SPDX-License-Identifier: ISC */
/* approvald: the policy and the approvals database; the only gate. */
#ifndef APPROVALD_H
#define APPROVALD_H

#include <sys/types.h>
#include <limits.h>
#include <stdint.h>
#include <time.h>
#include <jansson.h>

#include "cjson.h"
#include "config.h"
#include "server.h"

#define APPROVAL_ID_LEN	37	/* "apr-" + 32 hex digits + NUL */
#define TTL_DEFAULT	(30 * 60)
#define REUSE_DEFAULT	30		/* decision_reuse, seconds */

enum tier { TIER_DENY, TIER_LOW, TIER_HIGH };

struct strlist {
	char		**v;
	size_t		  n;
};

#define RULES_MAX	8
#define REVIEWERS_MAX	16	/* approvals one rule may require */

/*
 * required approvals from operators in any of the groups of from (no
 * groups: any operator).  A tool's rules are alternatives, as
 * Teleport's thresholds are: the first one met grants the approval.
 */
struct approval_rule {
	long		 required;
	struct peer_acl	 from;
	char		 names[ACL_MAX][NAME_MAX_LEN];	/* as written */
};

struct policy_tool {
	char		 name[64];
	enum tier	 tier;
	struct strlist	 namespaces;	/* empty: namespace not constrained */
	struct strlist	 working_dirs;	/* relative to terraform_root */
	struct strlist	 egress;	/* host:port */
	struct approval_rule rules[RULES_MAX];	/* none: 1 of any operator */
	size_t		 nrules;
	int		 require_reason;	/* approve needs --reason */
};

struct policy {
	char			 file[PATH_MAX];
	long			 approval_ttl;		/* seconds */
	long			 decision_reuse;	/* seconds; 0: never */
	char			 terraform_root[PATH_MAX];
	int			 delete_actions;	/* delete/replace destroys */
	struct strlist		 patterns;		/* text signals */
	struct strlist		 providers;	/* HOSTNAME/NAMESPACE/TYPE */
	char			 provisioners[8];	/* deny | approve */
	struct policy_tool	*tools;
	size_t			 ntools;
};

/* policy.c */
struct policy	*policy_load(const char *, char *, size_t);
void		 policy_free(struct policy *);
const struct policy_tool *policy_tool(const struct policy *, const char *);
const char	*tier_name(enum tier);
const char	*check_dns_label(const char *);
const char	*check_relpath(const char *);
int		 provisioners_approved(const struct policy *);
json_t		*policy_requirement(const struct policy_tool *);

/* threshold.c: whether a pending approval's approvals meet its rules. */
int	 threshold_met(const json_t *, const json_t *, char *, size_t);
int	 threshold_counts(const json_t *, const gid_t *, size_t);

/* decide.c: what the policy says about one call. */
enum verdict { VERDICT_DENY, VERDICT_ALLOW, VERDICT_APPROVAL };

struct decision {
	enum verdict	 verdict;
	enum tier	 tier;
	char		 reason[256];
	char		 path[PATH_MAX];	/* resolved working_dir, if any */
	long		 reuse_ms;	/* runnerd may reuse it; 0: not */
};

int	 decide(const struct policy *, const char *, const json_t *,
	    struct decision *);
json_t	*decision_json(const struct policy *, const char *,
	    const struct decision *);
int	 params_digest(const char *, const json_t *,
	    char [SHA256_HEX_LEN + 1], char **);
json_t	*mark_destructive(const struct policy *, const json_t *,
	    const char *);

/* db.c: the approvals, in SQLite; every change is audited or undone. */
enum spend_result { SPEND_OK, SPEND_REFUSED, SPEND_ERROR };

/* The MCP client of a call, as runnerd knows it: its uid and its own id. */
#define CLIENT_ID_LEN	64

struct requester {
	uid_t		 uid;
	char		 client[CLIENT_ID_LEN];
};

struct approval_req {
	const char	*tool;
	const char	*arguments;	/* canonical JSON */
	const char	*params_digest;
	const char	*plan_digest;	/* NULL when no plan is bound */
	const char	*summary;	/* JSON */
	const char	*plan_text;
	const char	*requirement;	/* JSON: the tool's rules */
	uint64_t	 reqid;
	long		 ttl;
	struct requester by;
};

struct operator {
	uid_t		 uid;
	char		 user[64];
	const gid_t	*groups;	/* SO_PEERCRED's, at the decision */
	size_t		 ngroups;
	int		 self_approves;	/* may approve its own requests */
};

int	 db_open(const char *);
void	 db_close(void);
int	 db_create(const struct approval_req *, char [APPROVAL_ID_LEN],
	    time_t *);
enum spend_result db_spend(const char *, const struct requester *,
	    const char *, const char *, int, uint64_t,
	    char [SHA256_HEX_LEN + 1], char *, size_t);
int	 db_review(const char *, int, int, const struct operator *,
	    const char *, char *, size_t);
int	 db_withdraw(const char *, const struct operator *, char *, size_t);
int	 db_expire(void);
json_t	*db_get(const char *, int);
json_t	*db_list(int);
void	 db_set_notify(void (*)(const char *));
void	 db_set_outbox(int (*)(const char *, const char *));
int	 db_outbox_insert(const char *, const char *, const char *,
	    const char *);
json_t	*db_outbox_since(int64_t, int, int64_t *);
int	 db_outbox_ack(const char *);
int	 db_outbox_delivered(const char *, const char *);
void	 format_time(time_t, char *, size_t);

/* control.c */
extern const struct msg_rule approvald_control_rules[];
void	 control_closed(struct conn *);
void	 control_notify(const char *);

/* outbox.c: notifications for notifyd, written with each change */
extern const struct msg_rule approvald_notify_rules[];
int	 outbox_write(const char *, const char *);
void	 outbox_flush(void);
void	 outbox_closed(struct conn *);

/* runner.c */
extern const struct msg_rule approvald_runnerd_rules[];
json_t	*approval_state(const char *);

/* subscribe.c: runnerd's waits, pushed */
int	 subs_add(struct conn *, uint64_t, const char *);
void	 subs_drop(const char *);
void	 subs_notify(const char *);
void	 subs_conn_closed(struct conn *);

/* approvald.c */
extern struct as_config	 approvald_conf;
extern struct policy	*approvald_policy;

#endif
