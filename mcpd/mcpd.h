/* SPDX-License-Identifier: ISC */
/*
 * mcpd: the MCP server on stdio.  It parses untrusted input, holds
 * nothing, and forwards validated calls to runnerd.
 *
 *   jsonrpc.c	lines in (bounded), JSON-RPC classification, replies out
 *   lifecycle.c	initialize / server/discover / ping, eras, method table
 *   batch.c	JSON-RPC batches, for sessions on 2025-03-26
 *   logging.c	logging/setLevel, notifications/message of the calls' events
 *   tools.c	tools/list, tools/call and the calls in flight
 *   tasks.c	tasks/get, result, cancel, list, update: calls run as
 *		tasks, 2025-11-25's and the 2026-07-28 extension's
 *   resources.c	resources/list, read: the plans this client made
 *   runner.c	runner.sock, reconnected when runnerd restarts
 */
#ifndef MCPD_H
#define MCPD_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "config.h"
#include "frame.h"

#define MCPD_NAME		"agent-sandbox-mcpd"
#define MCPD_VERSION		"0.1.0"
#define MCP_MODERN_VERSION	"2026-07-28"

/* JSON-RPC 2.0 error codes, and the 2026-07-28 codes mcpd sends. */
#define RPC_PARSE_ERROR		(-32700)
#define RPC_INVALID_REQUEST	(-32600)
#define RPC_METHOD_NOT_FOUND	(-32601)
#define RPC_INVALID_PARAMS	(-32602)
#define RPC_INTERNAL_ERROR	(-32603)
#define MCP_MISSING_CAPABILITY	(-32021)
#define MCP_UNSUPPORTED_VERSION	(-32022)

/* The 2026-07-28 tasks extension (SEP-2663), as capabilities name it. */
#define EXT_TASKS		"io.modelcontextprotocol/tasks"

/* Splits stdin into lines of at most max bytes. */
struct linereader {
	char		*buf;
	size_t		 len;
	size_t		 cap;
	size_t		 max;
	int		 discarding;	/* inside a line already refused */
};

typedef void	(*lr_line_cb)(const char *, size_t, void *);
typedef void	(*lr_long_cb)(void *);

enum rpc_kind {
	RPC_EMPTY,		/* blank line: ignored */
	RPC_REQUEST,
	RPC_NOTIFICATION,
	RPC_RESPONSE,		/* mcpd sends no requests: ignored */
	RPC_BATCH,		/* an array: root holds it (batch.c) */
	RPC_INVALID		/* answer code/why to id (null if unusable) */
};

struct rpc_msg {
	enum rpc_kind	 kind;
	json_t		*root;
	json_t		*id;		/* borrowed from root, or NULL */
	const char	*method;
	json_t		*params;	/* object, array or NULL */
	int		 code;
	char		 why[256];
};

/* One request being answered. */
struct mcp_req {
	json_t		*id;
	json_t		*params;	/* object or NULL */
	int		 modern;	/* carried 2026-07-28 _meta */
	int		 ext_tasks;	/* and listed EXT_TASKS in it */
	int		 log_level;	/* its own (2026-07-28), or LOGLEVEL_* */
	int		 looked_up;	/* runnerd's task store was asked */
};

/* A call's log level when it names none: nothing, or the session's. */
#define LOGLEVEL_NONE		(-1)
#define LOGLEVEL_SESSION	(-2)

struct mcpd {
	struct as_config	 conf;
	struct channel		 runner;	/* runner.sock */
	int			 out_fd;	/* stdout */
	int			 initialized;	/* legacy handshake done */
	char			 version[16];	/* negotiated by initialize */
	char			 client_key[CLIENT_KEY_HEX + 1]; /* runner.c */
	int			 key_kept;	/* from a file (-k) */
};

extern struct mcpd	 mcpd;

/* jsonrpc.c */
void	 lr_init(struct linereader *, size_t);
void	 lr_free(struct linereader *);
void	 lr_feed(struct linereader *, const char *, size_t, lr_line_cb,
	    lr_long_cb, void *);
void	 rpc_parse(const char *, size_t, struct rpc_msg *);
void	 rpc_classify(json_t *, struct rpc_msg *);
void	 rpc_clear(struct rpc_msg *);
void	 rpc_write(json_t *);
void	 rpc_result(const json_t *, json_t *);
void	 rpc_error(const json_t *, int, const char *, json_t *);
void	 rpc_notify(const char *, json_t *);

/* lifecycle.c */
void	 mcp_line(const char *, size_t, void *);
void	 mcp_line_too_long(void *);
void	 mcp_reply(const struct mcp_req *, json_t *);
void	 mcp_reply_cacheable(const struct mcp_req *, json_t *);
void	 mcp_serve(struct rpc_msg *);

/* batch.c */
void	 batch_serve_line(struct rpc_msg *);
void	 batch_serve(json_t *);
int	 batch_collect(json_t *);
void	 batch_forget(const json_t *);

/* logging.c */
void	 logging_set_level(const struct mcp_req *);
int	 logging_request_level(struct mcp_req *);
int	 logging_wanted(int);
void	 logging_relay(int, const char *, json_t *);

/* tools.c */
void	 tools_list(const struct mcp_req *);
void	 tools_call(const struct mcp_req *);
void	 tools_cancelled(const json_t *);
void	 tools_progress(uint64_t, const void *, size_t);
void	 tools_result(uint64_t, const void *, size_t);
void	 tools_log(uint64_t, const void *, size_t);
void	 tools_failed(uint64_t, const char *);
void	 tools_fail_all(const char *);
void	 tools_cancel_all(void);
size_t	 tools_inflight(void);

/* tasks.c */
void	 tasks_start(const struct mcp_req *, const char *, const json_t *,
	    const json_t *);
int	 tasks_result(uint64_t, json_t *);
int	 tasks_failed(uint64_t, const char *);
void	 tasks_runner_lost(const char *);
void	 tasks_runner_back(void);
void	 tasks_cancel_all(void);
void	 tasks_get(const struct mcp_req *);
void	 tasks_payload(const struct mcp_req *);
void	 tasks_cancel(const struct mcp_req *);
void	 tasks_update(const struct mcp_req *);
void	 tasks_cancelled(uint64_t, const void *, size_t);
void	 tasks_loaded(uint64_t, const void *, size_t);
void	 tasks_list(const struct mcp_req *);
int	 tasks_offered(int);
int	 tasks_wanted(const struct mcp_req *);
size_t	 tasks_unfinished(void);

/* resources.c */
void	 resources_note(json_t *, int);
void	 resources_list(const struct mcp_req *);
void	 resources_read(const struct mcp_req *);
void	 resources_plan(uint64_t, const void *, size_t);
int	 resources_failed(uint64_t, const char *);
void	 resources_fail_all(void);

/* runner.c */
void	 runner_connect(const char *);
int	 runner_ready(void);
int	 runner_send(uint32_t, uint64_t, const void *, size_t);
int	 runner_send_json(uint32_t, uint64_t, json_t *);
void	 runner_drain(int);

#endif
