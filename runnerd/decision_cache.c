/* SPDX-License-Identifier: ISC */
/*
 * approvald's decisions that approvald lets runnerd use again.  An
 * allow made on the tool's name alone carries reuse_ms: until that has
 * passed, a call of the same tool takes the same decision (egress list
 * and all) without asking, so that a stalled approvald does not stall
 * the calls it has already allowed.  runnerd decides nothing here: it
 * keeps only allows, only those approvald marked, only as long as it
 * said.  The bound is reuse_ms: a policy reloaded since shortens nothing.
 */
#include <sys/queue.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "log.h"
#include "runnerd.h"

struct reuse {
	TAILQ_ENTRY(reuse)	 entry;
	char			*tool;
	json_t			*decision;	/* approvald's MSG_DECISION */
	int64_t			 at;		/* ev_now_ms() when received */
	int64_t			 until;
};

/* At most one entry per tool of the table: a list is enough. */
static TAILQ_HEAD(, reuse)	 reuses = TAILQ_HEAD_INITIALIZER(reuses);

static struct reuse *
reuse_find(const char *tool)
{
	struct reuse *r;

	TAILQ_FOREACH(r, &reuses, entry)
		if (strcmp(r->tool, tool) == 0)
			return r;
	return NULL;
}

static void
reuse_drop(struct reuse *r)
{
	TAILQ_REMOVE(&reuses, r, entry);
	free(r->tool);
	json_decref(r->decision);
	free(r);
}

/*
 * approvald's fresh decision for tool.  It replaces what was kept for
 * the tool, so that a decision approvald no longer lets runnerd reuse
 * ends the reuse at once.
 */
void
deccache_store(const char *tool, const json_t *decision)
{
	struct reuse *r;
	const char *verdict;
	json_int_t ms;

	if ((r = reuse_find(tool)) != NULL)
		reuse_drop(r);
	verdict = json_string_value(json_object_get(decision, "decision"));
	ms = json_integer_value(json_object_get(decision, "reuse_ms"));
	/* Never a deny or an approval; the cap keeps the sum in range. */
	if (verdict == NULL || strcmp(verdict, "allow") != 0 || ms <= 0 ||
	    ms > INT32_MAX)
		return;
	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    (r->tool = strdup(tool)) == NULL ||
	    (r->decision = json_deep_copy(decision)) == NULL)
		fatal("decision cache");
	r->at = ev_now_ms();
	r->until = r->at + ms;
	TAILQ_INSERT_TAIL(&reuses, r, entry);
}

/* A copy of tool's decision, *age_ms old, while it may be reused; or NULL. */
json_t *
deccache_lookup(const char *tool, int64_t *age_ms)
{
	struct reuse *r;
	int64_t now;

	if ((r = reuse_find(tool)) == NULL)
		return NULL;
	now = ev_now_ms();
	if (now >= r->until) {
		reuse_drop(r);
		return NULL;
	}
	*age_ms = now - r->at;
	return json_deep_copy(r->decision);
}
