/* SPDX-License-Identifier: ISC */
/*
 * The suite's wire: every message type of every channel, in one place.
 * Each frame is a struct msg_hdr followed by len bytes of payload.
 * Fixed-size payloads are structs with no pointers (zeroed, then filled,
 * exact length checked on receive); payloads that carry JSON say so.
 */
#ifndef AS_PROTO_H
#define AS_PROTO_H

#include <stdint.h>

#define PROTO_VERSION		1
#define MSG_HDR_SIZE		24
/* Tool parameters and outputs ride in frames: room for 4 MiB of MCP input. */
#define MSG_MAX_PAYLOAD		(16u * 1024 * 1024)
/* mcpd's client key on runner.sock: 128 bits, lowercase hex. */
#define CLIENT_KEY_HEX		32
/* A task's record in runnerd's store (MSG_TASK_SAVE), encoded. */
#define TASK_RECORD_MAX		(1024 * 1024)
/* A task's id, mcpd's and the store's: "task-" and 128 bits in hex. */
#define TASK_ID_PREFIX		"task-"
#define TASK_ID_LEN		(sizeof(TASK_ID_PREFIX) + 32)	/* with NUL */

/*
 * Every message type of every channel, once: X(symbol, number, fd, name).
 * The enum, msg_type_name() and msg_carries_fd() are made from it, and
 * regress/lib/asframe.py is checked against it (regress/common).  fd 1
 * marks the only types a descriptor may ride with: the frame layer
 * refuses one on any other, so that no peer can fill a receiver's
 * descriptor table with frames it never looks at.  Groups by channel,
 * each saying who sends what; payloads in the comments.
 */
#define MSG_TYPES(X)							\
	X(MSG_NONE,		0,	0, "NONE")			\
	/* Any peer to any daemon socket; answered by the daemon. */	\
	X(MSG_PING,		1,	0, "PING")	/* none */	\
	X(MSG_PONG,		2,	0, "PONG")	/* msg_pong */	\
	X(MSG_ERROR,		3,	0, "ERROR")	/* msg_error */	\
	/* mcpd -> runnerd over runner.sock.  mcpd holds nothing. */	\
	/* {"tool","arguments","progress","log"}; a task's call has no	\
	   "log".  The client is runnerd's to name (SO_PEERCRED and	\
	   the connection), never mcpd's to say. */			\
	X(MSG_TOOL_CALL,	100,	0, "TOOL_CALL")			\
	/* none, or {"answer":true}: a task's cancel, answered	\
	   TOOL_CANCELLED; reqid names the call */			\
	X(MSG_TOOL_CANCEL,	101,	0, "TOOL_CANCEL")		\
	/* runnerd -> mcpd: {"progress","message"}; mcpd would relay	\
	   a "total", which runnerd does not send */			\
	X(MSG_TOOL_PROGRESS,	102,	0, "TOOL_PROGRESS")		\
	/* {"isError","content","structuredContent"?} */		\
	X(MSG_TOOL_RESULT,	103,	0, "TOOL_RESULT")		\
	/* runnerd -> mcpd, for a call that asked ("log"): one of its	\
	   audit events, scrubbed: {"level","event","request_id","fields"} */ \
	X(MSG_TOOL_LOG,		104,	0, "TOOL_LOG")			\
	/* mcpd: a TOOL_CALL run once approval_id is approved; a	\
	   denial, expiry or TOOL_CANCEL (withdraws it) ends it.	\
	   {"tool","arguments","progress","approval_id"}; answered as	\
	   TOOL_CALL */							\
	X(MSG_TOOL_AWAIT,	105,	0, "TOOL_AWAIT")		\
	/* mcpd: {"plan_digest"}; runnerd: {"plan_digest","plan_text",	\
	   "plan_json","working_dir"?} or MSG_ERROR */			\
	X(MSG_PLAN_READ,	106,	0, "PLAN_READ")			\
	X(MSG_PLAN,		107,	0, "PLAN")			\
	/* runnerd -> mcpd: what a TOOL_CANCEL that asked did:		\
	   {"outcome": "withdrawn" | "stopped" | "running", "reason"} */ \
	X(MSG_TOOL_CANCELLED,	108,	0, "TOOL_CANCELLED")		\
	/* mcpd started with a kept client key (mcpd -k): a task's	\
	   record, stored under the key's digest; unanswered.		\
	   {"client_key","task":{"taskId","modern","status","message",	\
	   "created","updated","ttl","tool","arguments","approval_id"?,	\
	   "result"?}}, at most TASK_RECORD_MAX bytes */		\
	X(MSG_TASK_SAVE,	109,	0, "TASK_SAVE")			\
	/* {"client_key","taskId"}: answered TASK_RECORD {the task} or	\
	   MSG_ERROR, the same for another client's as for none */	\
	X(MSG_TASK_LOAD,	110,	0, "TASK_LOAD")			\
	X(MSG_TASK_RECORD,	111,	0, "TASK_RECORD")		\
	/* runnerd -> approvald over approval.sock; nothing approves.	\
	   "client" is {"uid","id"}: the MCP client runnerd calls for. */ \
	X(MSG_DECIDE,		200,	0, "DECIDE")	/* {"tool","arguments"} */ \
	/* {"decision","tier","reason","egress","destructive_patterns",	\
	   "destructive_actions","reuse_ms"?}, and for terraform	\
	   "working_dir_path","terraform_providers",			\
	   "terraform_provisioners" */					\
	X(MSG_DECISION,		201,	0, "DECISION")			\
	/* {"tool","arguments","plan_digest","client"}, and for		\
	   terraform_apply "summary","plan_text" */			\
	X(MSG_APPROVAL_REQUEST,	202,	0, "APPROVAL_REQUEST")		\
	/* {"approval_id","expires_at"} */				\
	X(MSG_APPROVAL_CREATED,	203,	0, "APPROVAL_CREATED")		\
	/* {"approval_id","tool","arguments","client"}; approvald	\
	   would also check a "plan_digest", which runnerd does not	\
	   send: the answer names the plan the approval binds */	\
	X(MSG_APPROVAL_SPEND,	204,	0, "APPROVAL_SPEND")		\
	/* {"approval_id","plan_digest"?} */				\
	X(MSG_APPROVAL_SPENT,	205,	0, "APPROVAL_SPENT")		\
	/* {"approval_id","subscribe"}: where it stands, never	\
	   changing it; subscribed, a pending one's next change comes	\
	   as APPROVAL_STATE under the same reqid */			\
	X(MSG_APPROVAL_STATUS,	206,	0, "APPROVAL_STATUS")		\
	/* {"approval_id","state","reason","subscribed"?} */		\
	X(MSG_APPROVAL_STATE,	207,	0, "APPROVAL_STATE")		\
	/* {"approval_id"}: its client gave up; answered APPROVAL_STATE */ \
	X(MSG_APPROVAL_WITHDRAW, 208,	0, "APPROVAL_WITHDRAW")		\
	/* approvalctl -> approvald over control.sock (operators). */	\
	X(MSG_CTL_LIST,		300,	0, "CTL_LIST")	/* {"all"} or none */ \
	X(MSG_CTL_SHOW,		301,	0, "CTL_SHOW")	/* {"approval_id"} */ \
	/* {"approval_id","any_client"}; answered CTL_ENTRY */		\
	X(MSG_CTL_APPROVE,	302,	0, "CTL_APPROVE")		\
	/* {"approval_id","reason"?}; answered CTL_ENTRY */		\
	X(MSG_CTL_DENY,		303,	0, "CTL_DENY")			\
	/* none; the live approvals, then each change, as entries	\
	   until close */						\
	X(MSG_CTL_WATCH,	304,	0, "CTL_WATCH")			\
	X(MSG_CTL_ENTRY,	305,	0, "CTL_ENTRY")	/* an approval */ \
	X(MSG_CTL_END,		306,	0, "CTL_END")	/* none; ends a stream */ \
	/* runnerd -> brokerd over broker.sock; brokerd picks the scope. */ \
	X(MSG_CRED_ISSUE,	400,	0, "CRED_ISSUE") /* {"tool","arguments"} */ \
	/* {"scope","engine","lease_id","ttl","namespace","tool"},	\
	   lease_id null for engine none; fd: the sealed memfd, when	\
	   there is a lease */						\
	X(MSG_CRED_ISSUED,	401,	1, "CRED_ISSUED")		\
	X(MSG_CRED_REVOKE,	402,	0, "CRED_REVOKE") /* {"lease_id"} */ \
	X(MSG_CRED_REVOKED,	403,	0, "CRED_REVOKED") /* {"lease_id"} */ \
	/* Every daemon -> auditd over audit.sock; waits for the ack. */ \
	/* {"event","request_id","daemon","fields","writer","seq"}:	\
	   a resend keeps writer and seq */				\
	X(MSG_AUDIT_EVENT,	500,	0, "AUDIT_EVENT")		\
	/* {"seq"}, or {"seq","duplicate"} for a resend */		\
	X(MSG_AUDIT_ACK,	501,	0, "AUDIT_ACK")			\
	/* auditctl -> auditd (readers) */				\
	/* {"count","follow"} or none */				\
	X(MSG_AUDIT_TAIL,	502,	0, "AUDIT_TAIL")		\
	X(MSG_AUDIT_SHOW,	503,	0, "AUDIT_SHOW") /* {"request_id"} */ \
	X(MSG_AUDIT_RECORD,	504,	0, "AUDIT_RECORD") /* a record */ \
	X(MSG_AUDIT_END,	505,	0, "AUDIT_END")	/* none; ends a stream */ \
	/* none; answered with one MSG_AUDIT_RECORD:			\
	   {"log","previous_file","seq","head"} */			\
	X(MSG_AUDIT_ROTATE,	506,	0, "AUDIT_ROTATE")		\
	/* none; answered with one MSG_AUDIT_RECORD: the log's		\
	   counters */							\
	X(MSG_AUDIT_STATS,	507,	0, "AUDIT_STATS")		\
	/*								\
	 * runnerctl -> runnerd over runner-control.sock (operators).	\
	 * An operator reaches any session; each put and get is audited.	\
	 */								\
	X(MSG_RCTL_SESSIONS,	600,	0, "RCTL_SESSIONS") /* none */	\
	/* {"session_id","path","content"} (base64); answered		\
	   RCTL_ENTRY, RCTL_END */					\
	X(MSG_RCTL_PUT,		601,	0, "RCTL_PUT")			\
	X(MSG_RCTL_GET,		602,	0, "RCTL_GET")	/* {"session_id","path"} */ \
	/* runnerd -> runnerctl: a session, or a put's or get's outcome */ \
	X(MSG_RCTL_ENTRY,	603,	0, "RCTL_ENTRY")		\
	X(MSG_RCTL_END,		604,	0, "RCTL_END")	/* none; ends a stream */ \
	/*								\
	 * notifyd <-> approvald over notify.sock (approvald.notifiers).	\
	 * Outbox rows, out; acks, in.  Nothing here reads or changes	\
	 * an approval.							\
	 */								\
	/* none: every unacked row, then each new one, as NOTIFY_EVENT */ \
	X(MSG_NOTIFY_HELLO,	700,	0, "NOTIFY_HELLO")		\
	/* {"event_id","event","payload","delivered"}: payload is the	\
	   JSON body, as a string, to send as it is; delivered, the	\
	   webhooks (SHA-256 of the URL) that acked it already */	\
	X(MSG_NOTIFY_EVENT,	701,	0, "NOTIFY_EVENT")		\
	/* {"event_id"}: delivered to every webhook, the row goes; or	\
	   {"event_id","webhook"}: to that one, which the row keeps */	\
	X(MSG_NOTIFY_ACK,	702,	0, "NOTIFY_ACK")		\
	/*								\
	 * Internal to runnerd: the engine <-> the launcher, or the	\
	 * kubernetes helper, over their socketpair.  "helper" below	\
	 * is either.							\
	 */								\
	/* engine: {"argv","files_in"?,"files_out"?,"egress"?,		\
	   "agent_code"} and, for terraform, the workspace's keys	\
	   (helperlib/workspace.c) and "phases"; fd: the credential */	\
	X(LMSG_RUN,		900,	1, "LMSG_RUN")			\
	X(LMSG_KILL,		901,	0, "LMSG_KILL")	/* engine: none */ \
	/* helper: the result (backend.h), with workspace_keep's keys	\
	   for terraform */						\
	X(LMSG_DONE,		902,	0, "LMSG_DONE")			\
	/* helper, once, at start: {"sandboxes", "journal"?} */		\
	X(LMSG_SWEPT,		903,	0, "LMSG_SWEPT")		\
	/* runsc's child -> proxy: fd, the listener in the netns */	\
	X(LMSG_EGRESS_SOCKET,	904,	1, "LMSG_EGRESS_SOCKET")	\
	/* Sessions: reqid is the session's key, payloads JSON. */	\
	/* engine: {"origin", "session_id"} */				\
	X(LMSG_SESSION_OPEN,	905,	0, "LMSG_SESSION_OPEN")		\
	/* engine: the agent's request */				\
	X(LMSG_SESSION_CALL,	906,	0, "LMSG_SESSION_CALL")		\
	X(LMSG_SESSION_CANCEL,	907,	0, "LMSG_SESSION_CANCEL") /* engine */ \
	X(LMSG_SESSION_CLOSE,	908,	0, "LMSG_SESSION_CLOSE") /* engine */ \
	/* helper: {"container", "start_ms", "warm"?}: "warm" from	\
	   the launcher, whose pool it is */				\
	X(LMSG_SESSION_READY,	909,	0, "LMSG_SESSION_READY")	\
	/* helper: the agent's reply, an object, or {"error"} */	\
	X(LMSG_SESSION_REPLY,	910,	0, "LMSG_SESSION_REPLY")	\
	/* helper: {"reason"}; the key is free */			\
	X(LMSG_SESSION_ENDED,	911,	0, "LMSG_SESSION_ENDED")	\
	/* engine: none; LMSG_SWEPT's journal is recorded: remove it */	\
	X(LMSG_JOURNAL_DONE,	912,	0, "LMSG_JOURNAL_DONE")		\
	/* launcher: {"phase"}, the call's sandbox reached it */	\
	X(LMSG_PROGRESS,	913,	0, "LMSG_PROGRESS")		\
	/* engine, the first frame after it has re-executed itself as	\
	   the helper: its struct as_config (config.h), whole; the	\
	   same binary reads it, so the size is the check */		\
	X(LMSG_CONFIG,		914,	0, "LMSG_CONFIG")		\
	/* launcher <-> the session agent (session-agent.py), whose	\
	   own copy of these numbers regress/common checks too. */	\
	X(AGENT_READY,		950,	0, "AGENT_READY") /* agent: {"pid"} */ \
	X(AGENT_REQUEST,	951,	0, "AGENT_REQUEST") /* {"op", ...} */ \
	X(AGENT_REPLY,		952,	0, "AGENT_REPLY") /* one a request */ \
	/* launcher: end the request in progress */			\
	X(AGENT_CANCEL,		953,	0, "AGENT_CANCEL")		\
	/* The kubernetes helper <-> its claim keeper (kube/claim.c). */ \
	X(CLAIM_SEED,		980,	0, "CLAIM_SEED") /* the run request */ \
	/* helper: {"request", "result"} */				\
	X(CLAIM_COLLECT,	981,	0, "CLAIM_COLLECT")		\
	/* keeper: {"error"}, or to a seed {"snapshot"?,		\
	   "module_provisioners"?}, to a collect {"files"} and		\
	   workspace_keep's keys */					\
	X(CLAIM_REPLY,		982,	0, "CLAIM_REPLY")			\
	/* The kubernetes helper <-> its plan renderer			\
	   (kube/renderer.c): the run request of a clean plan, with	\
	   the "plan_digest" the keeper kept it under */		\
	X(RENDER_PLAN,		985,	0, "RENDER_PLAN")		\
	/* renderer: {"files": {"plan.json", "plan.txt"}} or {"error"} */ \
	X(RENDER_REPLY,		986,	0, "RENDER_REPLY")

enum msg_type {
#define MSG_ENUM(sym, num, fd, name)	sym = num,
	MSG_TYPES(MSG_ENUM)
#undef MSG_ENUM
};

struct msg_hdr {
	uint32_t	type;
	uint32_t	len;		/* payload bytes after the header */
	uint32_t	peerid;		/* sender's channel-local id (e.g. client) */
	uint16_t	version;	/* PROTO_VERSION */
	uint16_t	flags;
	uint64_t	reqid;		/* the call this frame belongs to */
};
#define MSGF_FD		0x0001		/* one descriptor rides with this frame */

struct msg_pong {
	char		proc[16];
	uint32_t	pid;
	uint32_t	version;
};

struct msg_error {
	int32_t		code;
	char		text[256];
};

/* msg_error codes */
#define ERR_DENIED	1	/* peer or request not allowed */
#define ERR_BADMSG	2	/* unknown or malformed message */
#define ERR_INTERNAL	3
#define ERR_UNAVAIL	4	/* a required peer (e.g. auditd) is down */
#define ERR_NOSPACE	5	/* auditd's file system is full */

const char	*msg_type_name(uint32_t);
int		 msg_carries_fd(uint32_t);
int		 task_id_valid(const char *);

#endif
