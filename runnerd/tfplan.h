/* SPDX-License-Identifier: ISC */
/*
 * The summary of a terraform plan that terraform_plan returns and that an
 * operator reads before approving: built from `terraform show -json` of
 * the saved plan, its text, and the policy's destructive signals.
 *
 * {
 *   "counts": {"create": n, "update": n, "delete": n, "replace": n,
 *              "read": n, "forget": n, "no-op": n},
 *   "resources": [{
 *     "address": "terraform_data.web",
 *     "actions": ["delete", "create"],	 as terraform wrote them
 *     "action": "replace",		 create|update|delete|replace|read|
 *					 forget|no-op
 *     "destructive": true,
 *     "forced_by": ["triggers_replace"],	 replace_paths, as text
 *     "action_reason": "replace_because_cannot_update" | null
 *   }, ...],
 *   "code": [{				 what runs at apply time
 *     "address": "module.m.terraform_data.x",
 *     "type": "local-exec",		 remote-exec|file|external|...
 *     "command": "echo hi"		 or "(computed from: var.cmd)"
 *   }, ...],
 *   "destructive": true,
 *   "destructive_reasons": ["terraform_data.web: replace (forced by "
 *       "triggers_replace)", "plan text matches \"must be replaced\"",
 *       "runs code at apply time: local-exec in terraform_data.x"]
 * }
 *
 * replace is ["delete","create"], ["create","delete"] (create_before_destroy)
 * or ["create","forget"]; forget drops an object from the state and leaves
 * it running.  With delete_actions set, every resource whose actions hold
 * "delete" is destructive; a pattern is a case-insensitive substring
 * looked for in the plan text, the same reading approvald gives it.
 * With code set, every entry of "code" is destructive: the policy lets
 * a person approve code that runs at apply time.
 */
#ifndef TFPLAN_H
#define TFPLAN_H

#include <stddef.h>
#include <jansson.h>

struct tfplan_signals {
	const json_t	*patterns;	/* array of strings, or NULL */
	int		 delete_actions;
	int		 code;		/* code at apply time is destructive */
};

json_t	*tfplan_summary(const char *, size_t, const char *,
	    const struct tfplan_signals *, char *, size_t);

#endif
