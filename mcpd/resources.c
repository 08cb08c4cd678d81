/* SPDX-License-Identifier: ISC */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "cjson.h"
#include "log.h"
#include "mcpd.h"

/*
 * Saved plans as resources (MCP 2025-06-18 and later, server/resources):
 * a terraform_plan result, and a terraform_apply stopped at its pending
 * approval, name their plan's digest; mcpd adds a resource_link to
 * plan://<digest> and remembers the plan as this connection's.
 * resources/list lists those, newest first; resources/read asks
 * runnerd, which keeps the text and JSON its clean render made and
 * gives them only to the same user (SO_PEERCRED), for the plan text
 * and JSON.  mcpd itself answers only for its own client's plans, so
 * another client's plan is as unknown here as one never made.
 */
#define PLANS_MAX		64	/* remembered per connection */
#define RESOURCES_PAGE		8	/* resources/list, per page */
#define PLAN_SCHEME		"plan://"
#define RESOURCE_NOT_FOUND	(-32002) /* server/resources, Error Handling */

struct plan_ref {
	char	 digest[SHA256_HEX_LEN + 1];
	char	 working_dir[256];
};

static struct plan_ref	 plans[PLANS_MAX];	/* oldest first */
static size_t		 nplans;

struct read {
	struct read	*next;
	uint64_t	 reqid;
	json_t		*id;
	int		 modern;
	char		 digest[SHA256_HEX_LEN + 1];
};

static struct read	*reads;

static struct plan_ref *
plan_find(const char *digest)
{
	size_t i;

	for (i = 0; i < nplans; i++)
		if (strcmp(plans[i].digest, digest) == 0)
			return &plans[i];
	return NULL;
}

/* resource_link content came in 2025-06-18. */
static int
links_allowed(int modern)
{
	return modern || (mcpd.version[0] != '\0' &&
	    strcmp(mcpd.version, "2025-06-18") >= 0);
}

static json_t *
resource_json(const struct plan_ref *p, const char *type)
{
	char uri[sizeof(PLAN_SCHEME) + SHA256_HEX_LEN], name[32];
	char desc[384];

	snprintf(uri, sizeof(uri), PLAN_SCHEME "%s", p->digest);
	snprintf(name, sizeof(name), "plan-%.12s", p->digest);
	snprintf(desc, sizeof(desc), "Terraform plan of %s, as rendered where "
	    "no module code ran (text and JSON)", p->working_dir);
	return json_pack("{s:s*, s:s, s:s, s:s, s:s}", "type", type, "uri",
	    uri, "name", name, "description", desc, "mimeType", "text/plain");
}

/*
 * A tool result on its way to the client: a plan in it becomes this
 * connection's, and a resource_link to it is added where the revision
 * has them.  An applied plan is not linked: whoever made it may not
 * be this client.
 */
void
resources_note(json_t *result, int modern)
{
	const char *digest, *status, *wd;
	json_t *sc;
	struct plan_ref *p;

	sc = json_object_get(result, "structuredContent");
	digest = json_string_value(json_object_get(sc, "plan_digest"));
	status = json_string_value(json_object_get(sc, "status"));
	if (!sha256_hex_ok(digest) || (status != NULL &&
	    strcmp(status, "pending_approval") != 0))
		return;
	if ((p = plan_find(digest)) == NULL) {
		if (nplans == PLANS_MAX)
			memmove(&plans[0], &plans[1], --nplans *
			    sizeof(plans[0]));
		p = &plans[nplans++];
		strlcpy(p->digest, digest, sizeof(p->digest));
	}
	wd = json_string_value(json_object_get(sc, "working_dir"));
	strlcpy(p->working_dir, wd != NULL ? wd : "?", sizeof(p->working_dir));
	if (links_allowed(modern))
		json_array_append_new(json_object_get(result, "content"),
		    resource_json(p, "resource_link"));
}

/* Newest first; the cursor is the digest of the last one sent. */
void
resources_list(const struct mcp_req *req)
{
	json_t *cursor, *list, *result;
	size_t i, n = 0;
	struct plan_ref *from;

	i = nplans;
	if ((cursor = json_object_get(req->params, "cursor")) != NULL) {
		if (!json_is_string(cursor) || !sha256_hex_ok(json_string_value(
		    cursor)) || (from = plan_find(json_string_value(cursor)))
		    == NULL) {
			rpc_error(req->id, RPC_INVALID_PARAMS,
			    "Invalid params: unknown cursor", NULL);
			return;
		}
		i = (size_t)(from - plans);
	}
	if ((list = json_array()) == NULL)
		fatal("resources/list");
	for (; i > 0 && n < RESOURCES_PAGE; i--, n++)
		json_array_append_new(list, resource_json(&plans[i - 1], NULL));
	result = json_pack("{s:o}", "resources", list);
	if (i > 0)
		json_object_set_new(result, "nextCursor",
		    json_string(plans[i].digest));
	mcp_reply_cacheable(req, result);
}

static void
not_found(const json_t *id, const char *uri)
{
	rpc_error(id, RESOURCE_NOT_FOUND, "Resource not found", json_pack(
	    "{s:s}", "uri", uri));
}

void
resources_read(const struct mcp_req *req)
{
	const char *uri, *digest;
	struct read *r;
	json_t *msg;

	if ((uri = json_string_value(json_object_get(req->params, "uri"))) ==
	    NULL) {
		rpc_error(req->id, RPC_INVALID_PARAMS,
		    "Invalid params: uri must be a string", NULL);
		return;
	}
	digest = uri + strlen(PLAN_SCHEME);
	if (strncmp(uri, PLAN_SCHEME, strlen(PLAN_SCHEME)) != 0 ||
	    !sha256_hex_ok(digest) || plan_find(digest) == NULL) {
		not_found(req->id, uri);
		return;
	}
	if (!runner_ready()) {
		rpc_error(req->id, RPC_INTERNAL_ERROR, "runnerd is not "
		    "reachable: try again shortly", NULL);
		return;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("resources/read");
	r->reqid = reqid_new();
	r->id = json_incref(req->id);
	r->modern = req->modern;
	strlcpy(r->digest, digest, sizeof(r->digest));
	msg = json_pack("{s:s}", "plan_digest", digest);
	if (runner_send_json(MSG_PLAN_READ, r->reqid, msg) == -1)
		fatal("resources/read");
	r->next = reads;
	reads = r;
}

/* The read reqid was for, taken off the list; NULL if none. */
static struct read *
read_take(uint64_t reqid)
{
	struct read **rp, *r;

	for (rp = &reads; (r = *rp) != NULL; rp = &r->next)
		if (r->reqid == reqid) {
			*rp = r->next;
			return r;
		}
	return NULL;
}

static void
read_free(struct read *r)
{
	json_decref(r->id);
	free(r);
}

/* MSG_PLAN: the plan's text, then its JSON. */
void
resources_plan(uint64_t reqid, const void *data, size_t len)
{
	struct mcp_req req;
	struct read *r;
	char uri[sizeof(PLAN_SCHEME) + SHA256_HEX_LEN], *js;
	json_t *p, *text, *pj;

	if ((r = read_take(reqid)) == NULL)
		return;
	snprintf(uri, sizeof(uri), PLAN_SCHEME "%s", r->digest);
	p = json_loadb(data, len, 0, NULL);
	text = json_object_get(p, "plan_text");
	pj = json_object_get(p, "plan_json");
	if (!json_is_string(text) || !json_is_object(pj) ||
	    (js = json_dumps(pj, JSON_COMPACT)) == NULL) {
		rpc_error(r->id, RPC_INTERNAL_ERROR, "runnerd sent a malformed "
		    "plan", NULL);
		json_decref(p);
		read_free(r);
		return;
	}
	memset(&req, 0, sizeof(req));
	req.id = r->id;
	req.modern = r->modern;
	mcp_reply(&req, json_pack("{s:[{s:s, s:s, s:O}, {s:s, s:s, s:s}]}",
	    "contents", "uri", uri, "mimeType", "text/plain", "text", text,
	    "uri", uri, "mimeType", "application/json", "text", js));
	free(js);
	json_decref(p);
	read_free(r);
}

/* runnerd refused a read (MSG_ERROR): 1 if reqid was one. */
int
resources_failed(uint64_t reqid, const char *why)
{
	char uri[sizeof(PLAN_SCHEME) + SHA256_HEX_LEN];
	struct read *r;

	if ((r = read_take(reqid)) == NULL)
		return 0;
	log_info("plan %.12s: %s", r->digest, why);
	snprintf(uri, sizeof(uri), PLAN_SCHEME "%s", r->digest);
	not_found(r->id, uri);
	read_free(r);
	return 1;
}

/* runnerd went away: reads in flight get an error. */
void
resources_fail_all(void)
{
	struct read *r;

	while ((r = reads) != NULL) {
		reads = r->next;
		rpc_error(r->id, RPC_INTERNAL_ERROR, "runnerd went away "
		    "before answering: try again", NULL);
		read_free(r);
	}
}
