/* SPDX-License-Identifier: ISC */
/*
 * Scopes come from brokerd's configuration, never from the request:
 * the tool and the phase of its call name the scope, the action's own
 * target argument names the namespace, and anything else the requester
 * says can only narrow that to a refusal.  No scope, no credential.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "brokerd.h"
#include "tools.h"

/* A Kubernetes namespace name: an RFC 1123 label. */
int
namespace_valid(const char *ns)
{
	size_t i, len = strlen(ns);

	if (len == 0 || len > 63 || ns[0] == '-' || ns[len - 1] == '-')
		return 0;
	for (i = 0; i < len; i++)
		if (!(islower((unsigned char)ns[i]) ||
		    isdigit((unsigned char)ns[i]) || ns[i] == '-'))
			return 0;
	return 1;
}

static int
namespace_allowed(const struct brokerd_scope *sc, const char *ns)
{
	size_t i;

	for (i = 0; i < sc->namespaces.n; i++)
		if (strcmp(sc->namespaces.v[i], ns) == 0)
			return 1;
	return 0;
}

/*
 * req is {"tool","arguments"} and, optionally, "namespace": the one the
 * caller expects, which must then be the action's target.  0 with t
 * filled, or -1 with the refusal in err.
 */
int
scope_resolve(const struct scope_table *st, const json_t *req,
    struct cred_target *t, char *err, size_t errlen)
{
	const char *tool, *key, *target, *asked;
	const json_t *args, *v;
	int phase;

	memset(t, 0, sizeof(*t));
	json_object_foreach((json_t *)req, key, v)
		if (strcmp(key, "tool") != 0 && strcmp(key, "arguments") != 0 &&
		    strcmp(key, "namespace") != 0) {
			snprintf(err, errlen, "unknown field \"%.32s\"", key);
			return -1;
		}
	tool = json_string_value(json_object_get(req, "tool"));
	args = json_object_get(req, "arguments");
	if (tool == NULL || !json_is_object(args)) {
		snprintf(err, errlen, "expected {\"tool\", \"arguments\"}");
		return -1;
	}
	/* A tool whose calls have no phase is only in scopes of any. */
	phase = call_phase(tool, args);
	if ((t->scope = scope_lookup(st, tool, phase ? phase : PHASE_ANY)) ==
	    NULL) {
		snprintf(err, errlen, "tool %.64s has no credential scope%s",
		    tool, phase == PHASE_PLAN ? " for its plan phase" :
		    phase == PHASE_APPLY ? " for its apply phase" : "");
		return -1;
	}
	strlcpy(t->tool, tool, sizeof(t->tool));
	v = json_object_get(req, "namespace");
	asked = json_string_value(v);
	if (v != NULL && !json_is_null(v) && asked == NULL) {
		snprintf(err, errlen, "namespace must be a string");
		return -1;
	}
	if (strcmp(t->scope->engine, "none") == 0) {
		if (asked != NULL) {
			snprintf(err, errlen, "scope %s grants no namespace",
			    t->scope->name);
			return -1;
		}
		return 0;
	}
	if (t->scope->target_arg[0] == '\0')
		return 0;
	target = json_string_value(json_object_get(args,
	    t->scope->target_arg));
	if (target == NULL || !namespace_valid(target)) {
		snprintf(err, errlen, "tool %s: argument %s must name a "
		    "namespace", tool, t->scope->target_arg);
		return -1;
	}
	if (asked != NULL && strcmp(asked, target) != 0) {
		snprintf(err, errlen, "namespace %.64s is not the action's "
		    "target %s", asked, target);
		return -1;
	}
	if (!namespace_allowed(t->scope, target)) {
		snprintf(err, errlen, "namespace %s is outside scope %s",
		    target, t->scope->name);
		return -1;
	}
	strlcpy(t->ns, target, sizeof(t->ns));
	return 0;
}
