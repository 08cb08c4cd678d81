/* SPDX-License-Identifier: ISC */
/* runnerd: orchestrates each tool call and alone starts sandboxes. */
#ifndef RUNNERD_H
#define RUNNERD_H

#include <sys/queue.h>

#include "backend.h"
#include "config.h"
#include "server.h"

extern struct as_config		 runnerd_conf;

/* What a call runs; terraform_apply is two calls, before and after a person. */
enum call_kind {
	CALL_ONESHOT,		/* a command in a fresh sandbox */
	CALL_TF_PLAN,		/* terraform_plan */
	CALL_TF_REQUEST,	/* terraform_apply: plan, then ask approval */
	CALL_TF_APPLY,		/* terraform_apply with an approval spent */
	CALL_SESSION,		/* a session tool (session.c) */
};

struct call;

/*
 * What runnerd does for a tool of common/tools.c: one entry each, in
 * tool_table.c.  The kind says which members an entry must have
 * (regress/runnerd/t_tooltable.c checks them):
 *   argv	the sandbox's command, from the checked arguments
 *   prepare	the sandbox's whole request: argv, workspace, files
 *   shape	the MCP result from the backend's; NULL when out of memory,
 *		or with call->summary set: terraform_apply's approval is
 *		asked for
 *   agent_op	the session agent's op, and agent_args the arguments it
 *		takes (session-agent.py's OPS)
 *   reply	the MCP result from the agent's reply (call, reply, the
 *		structured content so far, the audit fields to add to)
 */
enum tool_kind {
	TOOL_ONESHOT,		/* a fresh sandbox: argv, shape */
	TOOL_TERRAFORM,		/* a fresh sandbox: prepare, shape */
	TOOL_SESSION,		/* its session's agent: agent_op, reply */
	TOOL_SESSION_END,	/* closes its session: nothing more */
	TOOL_SHELL,		/* a session's, or a one-shot (call.c): all */
};

#define AGENT_ARGS_MAX	2

struct runner_tool {
	const char	*name;
	enum tool_kind	 kind;
	json_t		*(*argv)(const json_t *);
	int		 (*prepare)(struct call *, struct sbx_request *);
	json_t		*(*shape)(struct call *, json_t *);
	const char	*agent_op;
	const char	*agent_args[AGENT_ARGS_MAX];
	json_t		*(*reply)(const struct call *, json_t *, json_t *,
			    json_t *);
};

/*
 * Where a call is.  Each state waits on one thing, with its own
 * deadline: a peer's answer (runnerd.peer_timeout), a free sandbox
 * (runnerd.queue_wait) or the sandbox itself (runnerd.timeout).
 */
enum call_state {
	CALL_RECORDING,		/* tool.request on its way to auditd */
	CALL_WAITING,		/* for a free sandbox */
	CALL_DECIDING,		/* approvald's decision, then its record */
	CALL_APPROVING,		/* approvald spends or makes an approval */
	CALL_CREDENTIALING,	/* brokerd's credential */
	CALL_STARTING,		/* sandbox.started on its way */
	CALL_RUNNING,		/* in its sandbox or its session */
	CALL_COMPLETING,	/* sandbox.completed on its way */
	CALL_REVOKING,		/* brokerd revokes the credential */
	CALL_ENDING,		/* its end event on its way; then freed */
};

struct line;

struct call {
	TAILQ_ENTRY(call)	 entry;
	TAILQ_ENTRY(call)	 wentry;	/* in its line, CALL_WAITING */
	struct line		*line;
	uint64_t		 id;
	enum call_state		 state;
	uint32_t		 conn;		/* 0 once mcpd has gone */
	uid_t			 uid;		/* mcpd's, SO_PEERCRED */
	char			 client[40];	/* for approvald (call.c) */
	char			*tool;
	const struct runner_tool *rt;		/* once tool.request is recorded */
	char			*lease;		/* NULL: nothing to revoke */
	enum call_kind		 kind;
	json_t			*args;
	json_t			*decision;	/* approvald's MSG_DECISION */
	char			*approval_id;	/* CALL_TF_APPLY */
	char			*plan_digest;	/* CALL_TF_APPLY: approved plan */
	struct sbx_request	 req;		/* until the sandbox starts */
	json_t			*outcome;	/* the backend's result */
	json_t			*summary;	/* terraform's plan, to approve */
	struct secret		*secret;	/* the credential's forms */
	uint64_t		 timer;		/* queue_wait */
	int			 admitted;	/* counts against max_calls */
	int			 cancelled;	/* before it ran */
	int			 ran;		/* a sandbox was asked for */
	int			 approved;	/* it spent an approval */
	int			 revoke_failed;
	int			 progress;	/* the client wants progress */
	int			 log;		/* and its events (calllog.c) */
	uint32_t		 steps;		/* progress reports sent */
	uint64_t		 beat;		/* a session call's heartbeat */
	int64_t			 beat_from;
	const char		*end_event;	/* CALL_ENDING: what is recorded */
	json_t			*end_fields;
	char			*end_text;	/* the encoded result */
	char			 end_why[256];	/* end_event NULL: why not */
};

/* call.c */
struct call *call_find(uint64_t);
void	call_start(struct conn *, uint64_t, json_t *);
int	call_client_key(const json_t *);
void	call_free(struct call *);
void	call_refuse(struct call *, const char *, const char *);
void	call_oneshot(struct call *);
void	call_finish(struct call *, json_t *, json_t *);
void	call_cancel(struct conn *, uint64_t, int);
void	cancel_answer(uint32_t, uint64_t, const char *, const char *);
void	call_conn_closed(struct conn *);
void	call_done(uint64_t, json_t *);
void	call_swept(json_t *);

/* result.c: how a call's MCP result reads, and its encoding */
json_t	*text_result(int, const char *, json_t *);
json_t	*text_result_json(int, json_t *, json_t *);
void	 result_stamp(const struct call *, json_t *);
const char *status_text(const char *);
json_t	*run_text(const json_t *, const json_t *, const char *);
char	*result_encode(json_t *, const char **);

/* redact.c: the call's credential cut out of what it returns */
struct secret;
struct secret *secret_load(int);
void	secret_free(struct secret *);
void	secret_redact(json_t *, const struct secret *);

/* argrecord.c: what tool.request keeps of the arguments */
#define ARG_RECORD_MAX	(64 * 1024)
json_t	*args_recorded(const json_t *);

/* await.c: a call that waits for a person's approval (MSG_TOOL_AWAIT) */
void	await_offer(uint32_t, const char *);
void	await_start(struct conn *, uint64_t, json_t *);
int	await_cancel(struct conn *, uint64_t, int);
void	await_conn_closed(struct conn *);
int	await_pushed(const struct msg *, json_t *);
void	await_peer_lost(void);

/* taskstore.c: mcpd's tasks, kept for a client key (mcpd -k) */
int	taskstore_open(int);
int	taskstore_save(struct conn *, struct msg *, json_t *);
int	taskstore_load(struct conn *, struct msg *, json_t *);

/* plans.c: the plans made, as MCP resources */
void	plans_keep(const struct call *, const json_t *);
int	plans_read(struct conn *, struct msg *, json_t *);

/* progress.c: MSG_TOOL_PROGRESS, when the client asked for it */
void	progress_send(struct call *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	progress_phase(uint64_t, json_t *);
void	progress_beat(struct call *);
void	progress_stop(struct call *);

/* calllog.c: MSG_TOOL_LOG, when the client asked for it */
void	call_log(uint64_t, const char *, const json_t *);

/* trail.c: every call gets an end, also across a crash */
int	trail_open(int);
void	trail_begin(uint64_t, const char *);
void	trail_end(uint64_t);
void	trail_restart(json_t *);

/* decision_cache.c: approvald's decisions that it lets runnerd reuse */
void	deccache_store(const char *, const json_t *);
json_t	*deccache_lookup(const char *, int64_t *);

/* peer.c: approvald, brokerd and auditd, never waited for */
enum peer_id {
	PEER_APPROVALD,
	PEER_BROKERD,
	PEER_AUDITD,
};
/* reply (taken) and fd (taken), or NULL, -1 and why */
typedef void	(*peer_cb)(void *, json_t *, int, const char *);
/* What the peers say unasked, to the layers above (peer_init). */
struct peer_hooks {
	/* approvald's message without an asker: 1 if it was a push */
	int	(*approvald_push)(const struct msg *, json_t *);
	/* approvald's connection is gone, and what it pushed with it */
	void	(*approvald_lost)(void);
	/* every event audit_post takes, before it goes (fields borrowed) */
	void	(*audit_posted)(uint64_t, const char *, const json_t *);
};
void	peer_init(const struct peer_hooks *);
void	peer_ask(enum peer_id, uint32_t, uint64_t, json_t *, uint32_t, peer_cb,
	    void *);
/* why, or NULL once the event is recorded */
typedef void	(*audit_cb)(void *, const char *);
void	audit_post(const char *, uint64_t, json_t *, audit_cb, void *);
int	audit_resend(const char *);

/* spool.c: auditd's unacknowledged events, on runnerd's disk */
int	spool_open(int);
int	spool_busy(void);
int	spool_append(const char *);
void	spool_acked(void);

/* tool_terraform.c */
int	tf_kind(struct call *, char *, size_t);
json_t	*tf_spend_request(const struct call *);
int	tf_spent(struct call *, json_t *, char *, size_t);
int	tf_prepare(struct call *, struct sbx_request *);
json_t	*tf_result(struct call *, json_t *);
json_t	*tf_approval_request(const struct call *);
json_t	*tf_pending_result(struct call *, json_t *, const char *);

/* tool_table.c */
extern const struct runner_tool	runner_tools[];
const struct runner_tool *runner_tool(const char *);
int	runner_tools_check(const struct runner_tool *, char *, size_t);

/* run_limits.c: the limits a run_python or run_shell ran into */
const char *run_limits(json_t *, const json_t *, int, int);

/* tool_shell.c: run_shell without a session */
json_t	*shell_argv(const json_t *);
json_t	*shell_result(struct call *, json_t *);

/* tool_session.c: a session tool's reply as its MCP result */
json_t	*session_run_reply(const struct call *, json_t *, json_t *, json_t *);
json_t	*session_write_reply(const struct call *, json_t *, json_t *,
	    json_t *);
json_t	*session_read_reply(const struct call *, json_t *, json_t *, json_t *);
json_t	*session_reset_reply(const struct call *, json_t *, json_t *,
	    json_t *);

/* tool_k8s.c */
json_t	*k8s_argv(const json_t *);
json_t	*k8s_result(struct call *, json_t *);

/* session.c */
int	sessions_on(void);
void	session_call(struct call *);
void	session_cancel(struct call *);
void	session_conn_closed(uint32_t);
void	session_event(enum sbx_session_event, uint64_t, json_t *);
int	session_operator(uint32_t, uint64_t, uid_t, const char *, json_t *,
	    char *, size_t);
json_t	*session_list(void);

/* control.c: runner-control.sock, the operators' runnerctl */
extern const struct msg_rule runnerd_control_rules[];
void	control_reply(uint32_t, uint64_t, json_t *, const char *);

#endif
