/* SPDX-License-Identifier: ISC */
/*
 * N-of-M approvals.  An approval carries its requirement from the
 * policy in force when it was requested: {"rules": [{"required": N,
 * "from": [names], "gids": [gids]}], "reason_required": bool}.  The
 * rules are alternatives ("2 of dev or 1 of admin", as Teleport's
 * thresholds read); an approver counts for a rule when one of its
 * groups is among the rule's, or for any operator when it names none.
 * Approvers are distinct uids: the database keeps one review per uid.
 */
#include <stdio.h>
#include <string.h>

#include "approvald.h"

/* Whether an operator in gids counts for rule. */
static int
in_rule(const json_t *rule, const json_t *gids)
{
	const json_t *want = json_object_get(rule, "gids"), *g, *w;
	size_t i, k;

	if (json_array_size(want) == 0)
		return 1;
	json_array_foreach(gids, i, g)
		json_array_foreach(want, k, w)
			if (json_integer_value(g) == json_integer_value(w))
				return 1;
	return 0;
}

/* Whether an operator with these groups counts for any rule of req. */
int
threshold_counts(const json_t *req, const gid_t *groups, size_t ngroups)
{
	const json_t *rule;
	json_t *gids;
	size_t i;
	int yes = 0;

	if ((gids = json_array()) == NULL)
		return 0;
	for (i = 0; i < ngroups; i++)
		json_array_append_new(gids, json_integer(groups[i]));
	json_array_foreach(json_object_get(req, "rules"), i, rule)
		if (in_rule(rule, gids))
			yes = 1;
	json_decref(gids);
	return yes;
}

/* "N more from a, b" for one rule, appended to buf. */
static void
rule_missing(const json_t *rule, long have, char *buf, size_t len)
{
	const json_t *name;
	char part[256];
	size_t i;

	snprintf(part, sizeof(part), "%lld more from ",
	    (long long)json_integer_value(json_object_get(rule, "required")) -
	    have);
	if (json_array_size(json_object_get(rule, "from")) == 0)
		strlcat(part, "any operator", sizeof(part));
	json_array_foreach(json_object_get(rule, "from"), i, name) {
		if (i > 0)
			strlcat(part, ", ", sizeof(part));
		strlcat(part, json_string_value(name) ? json_string_value(name)
		    : "?", sizeof(part));
	}
	if (buf[0] != '\0')
		strlcat(buf, " or ", len);
	strlcat(buf, part, len);
}

/*
 * 1 when the approvers ([{"gids": [...]}, ...]) meet a rule of req;
 * else 0, and missing says what each rule still needs.
 */
int
threshold_met(const json_t *req, const json_t *approvers, char *missing,
    size_t len)
{
	const json_t *rule, *a;
	size_t i, k;
	long have;

	missing[0] = '\0';
	json_array_foreach(json_object_get(req, "rules"), i, rule) {
		have = 0;
		json_array_foreach(approvers, k, a)
			if (in_rule(rule, json_object_get(a, "gids")))
				have++;
		if (have >= json_integer_value(json_object_get(rule,
		    "required")))
			return 1;
		rule_missing(rule, have, missing, len);
	}
	return 0;
}
