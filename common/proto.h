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

enum msg_type {
	MSG_NONE = 0,

	/* Any peer to any daemon socket; answered by the daemon itself. */
	MSG_PING = 1,		/* payload: none */
	MSG_PONG,		/* payload: struct msg_pong */
	MSG_ERROR,		/* payload: struct msg_error; reply to any request */

	/* mcpd -> runnerd over runner.sock.  mcpd holds nothing. */
	MSG_TOOL_CALL = 100,	/* JSON {"tool","arguments","client","progress"} */
	MSG_TOOL_CANCEL,	/* payload: none; reqid names the call */
	/* runnerd -> mcpd */
	MSG_TOOL_PROGRESS,	/* JSON {"progress","total","message"} */
	MSG_TOOL_RESULT,	/* JSON {"isError","content","structuredContent"} */

	/* runnerd -> approvald over approval.sock.  Nothing here approves. */
	MSG_DECIDE = 200,	/* JSON {"tool","arguments"} */
	MSG_DECISION,		/* JSON {"decision","reason",...} */
	MSG_APPROVAL_REQUEST,	/* JSON {"tool","arguments","plan_digest",...} */
	MSG_APPROVAL_CREATED,	/* JSON {"approval_id","expires"} */
	MSG_APPROVAL_SPEND,	/* JSON {"approval_id","tool","arguments","plan_digest"} */
	MSG_APPROVAL_SPENT,	/* JSON {"approval_id","plan_digest"} */

	/* approvalctl -> approvald over control.sock (operator group only). */
	MSG_CTL_LIST = 300,	/* JSON {"all"} */
	MSG_CTL_SHOW,		/* JSON {"approval_id"} */
	MSG_CTL_APPROVE,	/* JSON {"approval_id"} */
	MSG_CTL_DENY,		/* JSON {"approval_id","reason"} */
	MSG_CTL_WATCH,		/* payload: none; entries stream until close */
	MSG_CTL_ENTRY,		/* JSON: one approval record */
	MSG_CTL_END,		/* payload: none; ends a streamed reply */

	/* runnerd -> brokerd over broker.sock.  The scope is brokerd's choice. */
	MSG_CRED_ISSUE = 400,	/* JSON {"tool","arguments"} */
	MSG_CRED_ISSUED,	/* JSON {"scope","lease_id","ttl",...}; fd: sealed memfd */
	MSG_CRED_REVOKE,	/* JSON {"lease_id"} */
	MSG_CRED_REVOKED,	/* JSON {"lease_id"} */

	/* Every daemon -> auditd over audit.sock; the sender waits for the ack. */
	MSG_AUDIT_EVENT = 500,	/* JSON {"event","request_id","fields"} */
	MSG_AUDIT_ACK,		/* JSON {"seq"} */
	/* auditctl -> auditd (readers) */
	MSG_AUDIT_TAIL,		/* JSON {"count","follow"} */
	MSG_AUDIT_SHOW,		/* JSON {"request_id"} */
	MSG_AUDIT_RECORD,	/* JSON: one log record */
	MSG_AUDIT_END,		/* payload: none; ends a streamed reply */
	MSG_AUDIT_ROTATE,	/* payload: none */
	MSG_AUDIT_STATS,	/* payload: none; answered with one MSG_AUDIT_RECORD */

	/*
	 * runnerctl -> runnerd over runner-control.sock (operators only).
	 * An operator reaches any session; each put and get is audited.
	 */
	MSG_RCTL_SESSIONS = 600,	/* payload: none */
	MSG_RCTL_PUT,		/* JSON {"session_id","path","content"} (base64) */
	MSG_RCTL_GET,		/* JSON {"session_id","path"} */
	/* runnerd -> runnerctl */
	MSG_RCTL_ENTRY,		/* JSON: a session, or a put's or get's outcome */
	MSG_RCTL_END,		/* payload: none; ends a streamed reply */

	/*
	 * Internal to runnerd: the engine <-> the launcher, or the
	 * kubernetes helper, over their socketpair.
	 */
	LMSG_RUN = 900,		/* engine: JSON sbx_request; fd: credential */
	LMSG_KILL,		/* engine: payload none; reqid names it */
	LMSG_DONE,		/* launcher: JSON result (see backend.h) */
	LMSG_SWEPT,		/* launcher: JSON {"sandboxes": [...],
				   "journal"?: [...]}, once, at start */
	LMSG_EGRESS_SOCKET,	/* runsc's child -> proxy: fd, the listener
				   in the sandbox's network namespace */
	/* Sessions: reqid is the session's key, payloads JSON. */
	LMSG_SESSION_OPEN,	/* engine: {"origin", "session_id"} */
	LMSG_SESSION_CALL,	/* engine: the agent's request */
	LMSG_SESSION_CANCEL,	/* engine: none */
	LMSG_SESSION_CLOSE,	/* engine: none */
	LMSG_SESSION_READY,	/* launcher: {"container", "warm", "start_ms"} */
	LMSG_SESSION_REPLY,	/* launcher: the agent's reply, an object */
	LMSG_SESSION_ENDED,	/* launcher: {"reason"}; the key is free */
	LMSG_JOURNAL_DONE,	/* engine: none; LMSG_SWEPT's journal is
				   recorded, the launcher removes it */

	/* launcher <-> the session agent (session-agent.py) in the sandbox. */
	AGENT_READY = 950,	/* agent: started, its worker too */
	AGENT_REQUEST,		/* launcher: {"op", ...} */
	AGENT_REPLY,		/* agent: one per request */
	AGENT_CANCEL,		/* launcher: end the request in progress */

	/* The kubernetes helper <-> its claim keeper (runnerd/claim.c). */
	CLAIM_SEED = 980,	/* helper: the run request */
	CLAIM_COLLECT,		/* helper: {"request", "result"} */
	CLAIM_REPLY,		/* keeper: see runnerd/claim.c */
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

#endif
