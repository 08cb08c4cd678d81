/* SPDX-License-Identifier: ISC */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"

struct mcpd	 mcpd;

/*
 * mcpd serves two eras of MCP at once.  Legacy clients open with
 * initialize and negotiate one version for the session.  A 2026-07-28
 * request instead names its version and capabilities in params._meta,
 * needs no handshake, and gets resultType and the server's identity
 * (_meta META_SERVER) on its result.  An initialize that carries that
 * _meta is a 2026-07-28 request, and initialize is no method of that
 * revision: -32601 (2026-07-28 basic/versioning, "Compatibility Matrix").
 */
#define META_VERSION	"io.modelcontextprotocol/protocolVersion"
#define META_CAPS	"io.modelcontextprotocol/clientCapabilities"
#define META_INFO	"io.modelcontextprotocol/clientInfo"
#define META_SERVER	"io.modelcontextprotocol/serverInfo"

#define INSTRUCTIONS \
	"Tools run in sandboxes through agent-sandbox. Calls that change " \
	"infrastructure (terraform_apply) first return a pending approval: " \
	"a person approves it out of band with approvalctl, then call again " \
	"with its approval_id."

/* Newest first: initialize answers with the first when it must choose. */
static const char *const legacy_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

#define ERA_LEGACY	0x01
#define ERA_MODERN	0x02
#define BEFORE_INIT	0x04	/* legacy: allowed before initialize */

static void	h_initialize(const struct mcp_req *);
static void	h_ping(const struct mcp_req *);
static void	h_discover(const struct mcp_req *);

static const struct {
	const char	*name;
	void		(*serve)(const struct mcp_req *);
	int		 flags;
} methods[] = {
	{ "initialize",		h_initialize,	ERA_LEGACY | BEFORE_INIT },
	{ "ping",		h_ping,		ERA_LEGACY | BEFORE_INIT },
	{ "server/discover",	h_discover,	ERA_MODERN },
	{ "tools/list",		tools_list,	ERA_LEGACY | ERA_MODERN },
	{ "tools/call",		tools_call,	ERA_LEGACY | ERA_MODERN },
	/* 2026-07-28 dropped it for _meta's logLevel (logging.c). */
	{ "logging/setLevel",	logging_set_level, ERA_LEGACY },
	/* The extension has no tasks/result or tasks/list (tasks.c). */
	{ "tasks/get",		tasks_get,	ERA_LEGACY | ERA_MODERN },
	{ "tasks/result",	tasks_payload,	ERA_LEGACY },
	{ "tasks/cancel",	tasks_cancel,	ERA_LEGACY | ERA_MODERN },
	{ "tasks/list",		tasks_list,	ERA_LEGACY },
	{ "tasks/update",	tasks_update,	ERA_MODERN },
	{ "resources/list",	resources_list,	ERA_LEGACY | ERA_MODERN },
	{ "resources/read",	resources_read,	ERA_LEGACY | ERA_MODERN },
};

static void	n_initialized(const json_t *);
static void	n_cancelled(const json_t *);

static const struct {
	const char	*name;
	void		(*serve)(const json_t *);
} notifications[] = {
	{ "notifications/initialized",	n_initialized },
	{ "notifications/cancelled",	n_cancelled },
};

static json_t *
server_info(void)
{
	return json_pack("{s:s, s:s, s:s}", "name", MCPD_NAME, "title",
	    "agent-sandbox", "version", MCPD_VERSION);
}

/*
 * What mcpd offers, the same in initialize and server/discover: one
 * entry a capability, its object as JSON text.
 */
static const struct {
	const char	*name;
	const char	*json;
} server_capabilities[] = {
	{ "tools",	"{\"listChanged\": false}" },
	{ "logging",	"{}" },
	{ "resources",	"{\"subscribe\": false, \"listChanged\": false}" },
};

static json_t *
capabilities(int modern)
{
	json_t *caps, *v;
	size_t i;

	if ((caps = json_object()) == NULL)
		fatal("capabilities");
	for (i = 0; i < sizeof(server_capabilities) /
	    sizeof(server_capabilities[0]); i++) {
		if ((v = json_loads(server_capabilities[i].json, 0, NULL)) ==
		    NULL)
			fatalx("capability %s", server_capabilities[i].name);
		json_object_set_new(caps, server_capabilities[i].name, v);
	}
	/* 2025-11-25's tasks, or the extension that followed (tasks.c). */
	if (tasks_offered(modern))
		json_object_set_new(caps, "tasks", json_pack("{s:{}, s:{},"
		    " s:{s:{s:{}}}}", "list", "cancel", "requests", "tools",
		    "call"));
	if (modern)
		json_object_set_new(caps, "extensions", json_pack("{s:{}}",
		    EXT_TASKS));
	return caps;
}

/* Stamps what a 2026-07-28 result carries, then answers. */
void
mcp_reply(const struct mcp_req *req, json_t *result)
{
	json_t *meta;

	if (req->modern && result != NULL) {
		/* A CreateTaskResult says "task" itself (tasks.c). */
		if (json_object_get(result, "resultType") == NULL)
			json_object_set_new(result, "resultType",
			    json_string("complete"));
		if ((meta = json_object_get(result, "_meta")) == NULL) {
			meta = json_object();
			json_object_set_new(result, "_meta", meta);
		}
		json_object_set_new(meta, META_SERVER, server_info());
	}
	rpc_result(req->id, result);
}

/*
 * A list or discovery result: 2026-07-28 lets a client cache it, and
 * ttlMs 0 with a private scope says not to, since what this
 * connection may see can change at any call.
 */
void
mcp_reply_cacheable(const struct mcp_req *req, json_t *result)
{
	if (req->modern && result != NULL) {
		json_object_set_new(result, "ttlMs", json_integer(0));
		json_object_set_new(result, "cacheScope",
		    json_string("private"));
	}
	mcp_reply(req, result);
}

static void
h_initialize(const struct mcp_req *req)
{
	const char *asked, *chosen;
	json_t *v, *info;
	size_t i;

	if (mcpd.initialized) {
		rpc_error(req->id, RPC_INVALID_REQUEST,
		    "Invalid Request: already initialized", NULL);
		return;
	}
	v = json_object_get(req->params, "protocolVersion");
	if (!json_is_string(v)) {
		rpc_error(req->id, RPC_INVALID_PARAMS,
		    "Invalid params: protocolVersion must be a string", NULL);
		return;
	}
	asked = json_string_value(v);
	chosen = legacy_versions[0];
	for (i = 0; legacy_versions[i] != NULL; i++)
		if (strcmp(asked, legacy_versions[i]) == 0)
			chosen = legacy_versions[i];
	strlcpy(mcpd.version, chosen, sizeof(mcpd.version));
	mcpd.initialized = 1;
	info = json_object_get(req->params, "clientInfo");
	log_info("client %.64s %.32s asked for %.32s, speaking %s",
	    json_string_value(json_object_get(info, "name")) ?: "?",
	    json_string_value(json_object_get(info, "version")) ?: "?",
	    asked, chosen);
	rpc_result(req->id, json_pack("{s:s, s:o, s:o, s:s}",
	    "protocolVersion", chosen, "capabilities", capabilities(0),
	    "serverInfo", server_info(), "instructions", INSTRUCTIONS));
}

static void
h_ping(const struct mcp_req *req)
{
	rpc_result(req->id, json_object());
}

static void
h_discover(const struct mcp_req *req)
{
	mcp_reply_cacheable(req, json_pack("{s:[s], s:o, s:s}",
	    "supportedVersions", MCP_MODERN_VERSION,
	    "capabilities", capabilities(1), "instructions", INSTRUCTIONS));
}

static void
n_initialized(const json_t *params)
{
	(void)params;
	log_debug("client confirmed initialization");
}

/* A cancelled request gets no answer, also in a batch. */
static void
n_cancelled(const json_t *params)
{
	batch_forget(json_object_get(params, "requestId"));
	tools_cancelled(params);
}

/*
 * 1 for a 2026-07-28 request, 0 for a legacy one, -1 when the _meta
 * it carries is unusable (the error is sent).  Extensions are the
 * request's own: a 2026-07-28 client lists them on every request.
 */
static int
request_era(struct mcp_req *req, const json_t *params)
{
	json_t *meta, *v, *info, *ext;
	const json_t *id = req->id;
	const char *asked;

	meta = json_object_get(params, "_meta");
	if (!json_is_object(meta) ||
	    (v = json_object_get(meta, META_VERSION)) == NULL)
		return 0;
	if ((asked = json_string_value(v)) == NULL) {
		rpc_error(id, RPC_INVALID_PARAMS, "Invalid params: _meta "
		    META_VERSION " must be a string", NULL);
		return -1;
	}
	if (strcmp(asked, MCP_MODERN_VERSION) != 0) {
		rpc_error(id, MCP_UNSUPPORTED_VERSION,
		    "Unsupported protocol version", json_pack("{s:[s], s:s}",
		    "supported", MCP_MODERN_VERSION, "requested", asked));
		return -1;
	}
	info = json_object_get(meta, META_INFO);
	ext = json_object_get(json_object_get(meta, META_CAPS), "extensions");
	if (!json_is_object(json_object_get(meta, META_CAPS)) ||
	    (info != NULL && !json_is_object(info)) ||
	    (ext != NULL && !json_is_object(ext))) {
		rpc_error(id, RPC_INVALID_PARAMS, "Invalid params: _meta needs "
		    "an object " META_CAPS " (its extensions, and " META_INFO
		    ", if given, objects)", NULL);
		return -1;
	}
	req->ext_tasks = json_object_get(ext, EXT_TASKS) != NULL;
	return 1;
}

static void
serve_request(const char *method, const json_t *id, json_t *params)
{
	struct mcp_req req;
	size_t i;
	int flags;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strcmp(methods[i].name, method) == 0)
			break;
	if (i == sizeof(methods) / sizeof(methods[0])) {
		rpc_error(id, RPC_METHOD_NOT_FOUND, "Method not found", NULL);
		return;
	}
	flags = methods[i].flags;
	if (params != NULL && !json_is_object(params)) {
		rpc_error(id, RPC_INVALID_PARAMS,
		    "Invalid params: params must be an object", NULL);
		return;
	}
	memset(&req, 0, sizeof(req));
	req.id = (json_t *)id;
	req.params = params;
	if ((req.modern = request_era(&req, params)) == -1 ||
	    logging_request_level(&req) == -1)
		return;
	if (req.modern && !(flags & ERA_MODERN)) {
		/* initialize, ping and the like left in 2026-07-28. */
		rpc_error(id, RPC_METHOD_NOT_FOUND, "Method not found", NULL);
		return;
	}
	if (!req.modern && !(flags & ERA_LEGACY)) {
		rpc_error(id, RPC_INVALID_PARAMS, "Invalid params: this "
		    "method of revision " MCP_MODERN_VERSION " needs _meta "
		    META_VERSION, NULL);
		return;
	}
	if (!req.modern && !mcpd.initialized && !(flags & BEFORE_INIT)) {
		rpc_error(id, RPC_INVALID_REQUEST, "Invalid Request: send "
		    "initialize first, or _meta " META_VERSION, NULL);
		return;
	}
	methods[i].serve(&req);
}

static void
serve_notification(const char *method, const json_t *params)
{
	size_t i;

	for (i = 0; i < sizeof(notifications) / sizeof(notifications[0]); i++)
		if (strcmp(notifications[i].name, method) == 0) {
			notifications[i].serve(params);
			return;
		}
	log_debug("ignoring notification %.64s", method);
}

/* One message from the client, on its own or in a batch. */
void
mcp_serve(struct rpc_msg *m)
{
	switch (m->kind) {
	case RPC_EMPTY:
		break;
	case RPC_BATCH:
		batch_serve(m->root);
		break;
	case RPC_INVALID:
		log_debug("refused a message: %s", m->why);
		rpc_error(m->id, m->code, m->why, NULL);
		break;
	case RPC_RESPONSE:
		log_debug("ignoring a response: mcpd sends no requests");
		break;
	case RPC_NOTIFICATION:
		serve_notification(m->method, m->params);
		break;
	case RPC_REQUEST:
		serve_request(m->method, m->id, m->params);
		break;
	}
}

/* One line from the client (lr_line_cb). */
void
mcp_line(const char *line, size_t len, void *arg)
{
	struct rpc_msg m;

	(void)arg;
	rpc_parse(line, len, &m);
	batch_serve_line(&m);
	rpc_clear(&m);
}

void
mcp_line_too_long(void *arg)
{
	char why[128];

	(void)arg;
	snprintf(why, sizeof(why), "Invalid Request: message longer than "
	    "%ld bytes, discarded", mcpd.conf.mcpd.max_line);
	log_warnx("%s", why);
	rpc_error(NULL, RPC_INVALID_REQUEST, why, NULL);
}
