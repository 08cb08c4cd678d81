#include <stddef.h>
#include <stdio.h>

#include "proto.h"

const char *
msg_type_name(uint32_t type)
{
	static char unknown[32];

	switch (type) {
	case MSG_PING: return "PING";
	case MSG_PONG: return "PONG";
	case MSG_ERROR: return "ERROR";
	case MSG_TOOL_CALL: return "TOOL_CALL";
	case MSG_TOOL_CANCEL: return "TOOL_CANCEL";
	case MSG_TOOL_PROGRESS: return "TOOL_PROGRESS";
	case MSG_TOOL_RESULT: return "TOOL_RESULT";
	case MSG_DECIDE: return "DECIDE";
	case MSG_DECISION: return "DECISION";
	case MSG_APPROVAL_REQUEST: return "APPROVAL_REQUEST";
	case MSG_APPROVAL_CREATED: return "APPROVAL_CREATED";
	case MSG_APPROVAL_SPEND: return "APPROVAL_SPEND";
	case MSG_APPROVAL_SPENT: return "APPROVAL_SPENT";
	case MSG_CTL_LIST: return "CTL_LIST";
	case MSG_CTL_SHOW: return "CTL_SHOW";
	case MSG_CTL_APPROVE: return "CTL_APPROVE";
	case MSG_CTL_DENY: return "CTL_DENY";
	case MSG_CTL_WATCH: return "CTL_WATCH";
	case MSG_CTL_ENTRY: return "CTL_ENTRY";
	case MSG_CTL_END: return "CTL_END";
	case MSG_CRED_ISSUE: return "CRED_ISSUE";
	case MSG_CRED_ISSUED: return "CRED_ISSUED";
	case MSG_CRED_REVOKE: return "CRED_REVOKE";
	case MSG_CRED_REVOKED: return "CRED_REVOKED";
	case MSG_AUDIT_EVENT: return "AUDIT_EVENT";
	case MSG_AUDIT_ACK: return "AUDIT_ACK";
	case MSG_AUDIT_TAIL: return "AUDIT_TAIL";
	case MSG_AUDIT_SHOW: return "AUDIT_SHOW";
	case MSG_AUDIT_RECORD: return "AUDIT_RECORD";
	case MSG_AUDIT_END: return "AUDIT_END";
	case MSG_AUDIT_ROTATE: return "AUDIT_ROTATE";
	case MSG_AUDIT_STATS: return "AUDIT_STATS";
	case MSG_RCTL_SESSIONS: return "RCTL_SESSIONS";
	case MSG_RCTL_PUT: return "RCTL_PUT";
	case MSG_RCTL_GET: return "RCTL_GET";
	case MSG_RCTL_ENTRY: return "RCTL_ENTRY";
	case MSG_RCTL_END: return "RCTL_END";
	case LMSG_RUN: return "LMSG_RUN";
	case LMSG_KILL: return "LMSG_KILL";
	case LMSG_DONE: return "LMSG_DONE";
	case LMSG_SWEPT: return "LMSG_SWEPT";
	case LMSG_EGRESS_SOCKET: return "LMSG_EGRESS_SOCKET";
	case LMSG_SESSION_OPEN: return "LMSG_SESSION_OPEN";
	case LMSG_SESSION_CALL: return "LMSG_SESSION_CALL";
	case LMSG_SESSION_CANCEL: return "LMSG_SESSION_CANCEL";
	case LMSG_SESSION_CLOSE: return "LMSG_SESSION_CLOSE";
	case LMSG_SESSION_READY: return "LMSG_SESSION_READY";
	case LMSG_SESSION_REPLY: return "LMSG_SESSION_REPLY";
	case LMSG_SESSION_ENDED: return "LMSG_SESSION_ENDED";
	case LMSG_JOURNAL_DONE: return "LMSG_JOURNAL_DONE";
	case AGENT_READY: return "AGENT_READY";
	case AGENT_REQUEST: return "AGENT_REQUEST";
	case AGENT_REPLY: return "AGENT_REPLY";
	case AGENT_CANCEL: return "AGENT_CANCEL";
	case CLAIM_SEED: return "CLAIM_SEED";
	case CLAIM_COLLECT: return "CLAIM_COLLECT";
	case CLAIM_REPLY: return "CLAIM_REPLY";
	}
	snprintf(unknown, sizeof(unknown), "type %u", type);
	return unknown;
}

/*
 * The only frames that may carry a descriptor.  The frame layer refuses
 * one on any other type, so that no peer can fill a receiver's
 * descriptor table with frames it never looks at.
 */
static const uint32_t fd_types[] = {
	MSG_CRED_ISSUED,	/* brokerd -> runnerd: the sealed credential */
	LMSG_RUN,		/* engine -> launcher or helper: the same */
	LMSG_EGRESS_SOCKET,	/* runsc's child -> egress proxy: a listener */
};

int
msg_carries_fd(uint32_t type)
{
	size_t i;

	for (i = 0; i < sizeof(fd_types) / sizeof(fd_types[0]); i++)
		if (fd_types[i] == type)
			return 1;
	return 0;
}
