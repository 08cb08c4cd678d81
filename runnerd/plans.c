/* SPDX-License-Identifier: ISC */
/*
 * Saved plans as MCP resources (plan://<digest>): the plan text and
 * JSON a terraform call's clean render made, kept in memory for the
 * PLANS_KEPT newest plans, with who made them.  Only the connection
 * that made a plan, or another of the same user (SO_PEERCRED), reads
 * it; mcpd narrows that to its own client's plans.  A restart forgets
 * them all: the plan files on disk are for applying, not for reading.
 */
#include <stdlib.h>
#include <string.h>

#include "cjson.h"
#include "runnerd.h"

#define PLANS_KEPT	32

struct plan {
	char		 digest[SHA256_HEX_LEN + 1];
	uint32_t	 conn;
	uid_t		 uid;
	json_t		*body;		/* MSG_PLAN's payload */
};

static struct plan	 plans[PLANS_KEPT];
static size_t		 next_slot;

/* The call's plan, just rendered (r: the backend's result). */
void
plans_keep(const struct call *k, const json_t *r)
{
	const char *digest, *pj, *pt;
	json_t *files, *plan_json;
	struct plan *p;
	size_t i;

	files = json_object_get(r, "files");
	digest = json_string_value(json_object_get(r, "plan_digest"));
	pj = json_string_value(json_object_get(files, "plan.json"));
	pt = json_string_value(json_object_get(files, "plan.txt"));
	if (digest == NULL || strlen(digest) != SHA256_HEX_LEN || pj == NULL ||
	    (plan_json = json_loads(pj, 0, NULL)) == NULL)
		return;
	/* The same plan again: its newest maker owns it. */
	for (i = 0; i < PLANS_KEPT; i++)
		if (strcmp(plans[i].digest, digest) == 0)
			break;
	p = &plans[i < PLANS_KEPT ? i : next_slot++ % PLANS_KEPT];
	json_decref(p->body);
	strlcpy(p->digest, digest, sizeof(p->digest));
	p->conn = k->conn;
	p->uid = k->uid;
	p->body = json_pack("{s:s, s:s, s:o, s:s?}", "plan_digest", digest,
	    "plan_text", pt != NULL ? pt : "", "plan_json", plan_json,
	    "working_dir", json_string_value(json_object_get(k->args,
	    "working_dir")));
}

/* MSG_PLAN_READ: {"plan_digest"}; the same refusal for absent and other's. */
int
plans_read(struct conn *c, struct msg *m, json_t *j)
{
	const char *digest;
	size_t i;

	digest = json_string_value(json_object_get(j, "plan_digest"));
	for (i = 0; digest != NULL && i < PLANS_KEPT; i++) {
		if (plans[i].body == NULL || strcmp(plans[i].digest, digest)
		    != 0)
			continue;
		if (plans[i].conn != c->id && plans[i].uid != c->cred.uid)
			break;
		if (conn_send_json(c, MSG_PLAN, m->hdr.reqid, -1,
		    json_incref(plans[i].body)) == 0)
			return 0;
		/* Too large for one frame: mcpd keeps its connection. */
		return conn_error(c, m->hdr.reqid, ERR_INTERNAL, "the plan "
		    "is too large to send");
	}
	return conn_error(c, m->hdr.reqid, ERR_DENIED, "no such plan: it was "
	    "never made here, is not yours, or is no longer kept");
}
