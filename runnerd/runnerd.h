/* runnerd: orchestrates each tool call and alone starts sandboxes. */
#ifndef RUNNERD_H
#define RUNNERD_H

#include <sys/queue.h>

#include "backend.h"
#include "config.h"
#include "server.h"

extern struct as_config		 runnerd_conf;
extern const struct backend	*runnerd_backend;

int	runnerd_dispatch_mcpd(struct conn *, struct msg *);
void	runnerd_closed_mcpd(struct conn *);

/* What a call runs; terraform_apply is two calls, before and after a person. */
enum call_kind {
	CALL_SHELL,		/* run_shell */
	CALL_TF_PLAN,		/* terraform_plan */
	CALL_TF_REQUEST,	/* terraform_apply: plan, then ask approval */
	CALL_TF_APPLY,		/* terraform_apply with an approval spent */
	CALL_SESSION,		/* a session tool (session.c) */
	CALL_K8S,		/* k8s_get_pod_status (k8s_tool.c) */
};

struct call {
	TAILQ_ENTRY(call)	 entry;
	uint64_t		 id;
	uint32_t		 conn;		/* 0 once mcpd has gone */
	uid_t			 uid;		/* mcpd's, SO_PEERCRED */
	char			*tool;
	char			*lease;		/* NULL: nothing to revoke */
	enum call_kind		 kind;
	json_t			*args;
	json_t			*decision;	/* approvald's MSG_DECISION */
	char			*approval_id;	/* CALL_TF_APPLY */
	char			*plan_digest;	/* CALL_TF_APPLY: approved plan */
};

/* call.c */
void	call_start(struct conn *, struct msg *);
void	call_free(struct call *);
void	call_refuse(struct call *, const char *, const char *);
void	call_finish(struct call *, json_t *, json_t *);
char	*run_text(const char *, const char *, const char *);
int	peer_request(const char *, uint32_t, uint64_t, json_t *, uint32_t,
	    json_t **, int *, char *, size_t);
json_t	*text_result(int, const char *, json_t *);
const char *status_text(const char *);

/* terraform.c */
int	tf_kind(struct call *, char *, size_t);
int	tf_spend(struct call *, char *, size_t);
int	tf_prepare(struct call *, struct sbx_request *);
json_t	*tf_result(struct call *, json_t *);
void	call_cancel(struct conn *, uint64_t);
void	call_conn_closed(struct conn *);
void	call_done(uint64_t, json_t *);
int	call_swept(json_t *);

/* trail.c: every call gets an end, also across a crash */
int	trail_open(int);
void	trail_begin(uint64_t, const char *);
void	trail_end(uint64_t);
int	trail_restart(json_t *);

/* k8s_tool.c */
json_t	*k8s_argv(const json_t *);
json_t	*k8s_result(struct call *, json_t *);

/* session.c */
int	session_tool(const char *, json_t *);
void	session_call(struct call *);
void	session_cancel(struct call *);
void	session_conn_closed(uint32_t);
void	session_event(enum sbx_session_event, uint64_t, json_t *);
int	session_operator(uint32_t, uint64_t, uid_t, const char *, json_t *,
	    char *, size_t);
json_t	*session_list(void);

/* control.c: runner-control.sock, the operators' runnerctl */
int	runnerd_dispatch_control(struct conn *, struct msg *);
void	control_reply(uint32_t, uint64_t, json_t *, const char *);

#endif
