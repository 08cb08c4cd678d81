/* SPDX-License-Identifier: ISC */
/* Scopes: parsed from brokerd's section, resolved from the action only. */
#include <atf-c.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../brokerd/brokerd.h"
#include "tools.h"

static const char scopes_yaml[] =
    "brokerd:\n"
    "  vault: { addr: \"https://vault.example:8200\" }\n"
    "  scopes:\n"
    "    pod-reader:\n"
    "      engine: kubernetes\n"
    "      tools: [k8s_get_pod_status]\n"
    "      mount: kubernetes\n"
    "      role: pod-reader\n"
    "      namespaces: [demo, staging]\n"
    "      target_arg: namespace\n"
    "    terraform:\n"
    "      engine: none\n"
    "      tools: [terraform_plan, terraform_apply]\n"
    "      ttl: 2m\n";

/* The example configuration's split: a read-only credential for plans. */
static const char phases_yaml[] =
    "brokerd:\n"
    "  scopes:\n"
    "    terraform-plan:\n"
    "      engine: none\n"
    "      tools: [terraform_plan, terraform_apply]\n"
    "      phase: plan\n"
    "    terraform-apply:\n"
    "      engine: none\n"
    "      tools: [terraform_apply]\n"
    "      phase: apply\n";

static void
load(const char *text, struct as_config *c)
{
	char err[1024];
	FILE *f;

	ATF_REQUIRE((f = fopen("c.yaml", "w")) != NULL);
	fputs(text, f);
	fclose(f);
	ATF_REQUIRE_MSG(config_load("c.yaml", c, err, sizeof(err)) == 0, "%s",
	    err);
}

static void
expect_config_error(const char *text, const char *want)
{
	struct as_config c;
	char err[1024];
	FILE *f;

	ATF_REQUIRE((f = fopen("c.yaml", "w")) != NULL);
	fputs(text, f);
	fclose(f);
	ATF_CHECK_EQ_MSG(config_load("c.yaml", &c, err, sizeof(err)), -1,
	    "accepted: %s", text);
	ATF_CHECK_MSG(strstr(err, want) != NULL, "got \"%s\", want \"%s\"",
	    err, want);
}

ATF_TC_WITHOUT_HEAD(config);
ATF_TC_BODY(config, tc)
{
	struct as_config c;

	load("", &c);
	ATF_CHECK_STREQ(c.brokerd.vault.addr, "");
	ATF_CHECK_EQ(c.brokerd.vault.request_timeout, 10);
	ATF_CHECK_EQ(c.brokerd.vault.retries, 2);
	ATF_CHECK_EQ(c.brokerd.scopes.n, 0);
	load(scopes_yaml, &c);
	ATF_REQUIRE_EQ(c.brokerd.scopes.n, 2);
	ATF_CHECK_EQ(c.brokerd.scopes.v[0].ttl, 600);	/* the default */
	ATF_CHECK_EQ(c.brokerd.scopes.v[1].ttl, 120);
	ATF_CHECK_EQ(c.brokerd.scopes.v[1].tools.n, 2);
	ATF_CHECK_EQ(c.brokerd.scopes.v[1].phases, PHASE_ANY);	/* default */
	load(phases_yaml, &c);
	ATF_REQUIRE_EQ(c.brokerd.scopes.n, 2);
	ATF_CHECK_EQ(c.brokerd.scopes.v[0].phases, PHASE_PLAN);
	ATF_CHECK_EQ(c.brokerd.scopes.v[1].phases, PHASE_APPLY);
}

ATF_TC_WITHOUT_HEAD(config_errors);
ATF_TC_BODY(config_errors, tc)
{
	expect_config_error("brokerd:\n  vault: { addr: http://v:8200 }\n",
	    "not an https:// URL");
	expect_config_error("brokerd:\n  vault: { token: x }\n",
	    "unknown key \"token\"");
	expect_config_error("brokerd:\n  scopes:\n    a: { tools: [x] }\n",
	    "engine is required");
	expect_config_error("brokerd:\n  scopes:\n"
	    "    a: { engine: vaultish }\n", "not one of the allowed");
	expect_config_error("brokerd:\n  scopes:\n"
	    "    a: { engine: kubernetes, mount: k, role: r }\n",
	    "needs mount, role, namespaces and target_arg");
	expect_config_error("brokerd:\n  scopes:\n"
	    "    a: { engine: none, tools: [t] }\n"
	    "    b: { engine: none, tools: [u, t] }\n",
	    "c.yaml:4: tool t is in two scopes for one phase: a and b");
	/* Two scopes for one tool and phase: which one would be a guess. */
	expect_config_error("brokerd:\n  scopes:\n"
	    "    a: { engine: none, tools: [terraform_apply] }\n"
	    "    b: { engine: none, tools: [terraform_apply], phase: apply }\n",
	    "c.yaml:4: tool terraform_apply is in two scopes for one phase: "
	    "a and b");
	expect_config_error("brokerd:\n  scopes:\n"
	    "    a: { engine: none, tools: [terraform_apply], phase: plan }\n"
	    "    b: { engine: none, tools: [terraform_plan] }\n"
	    "    c: { engine: none, tools: [terraform_apply], phase: plan }\n",
	    "c.yaml:5: tool terraform_apply is in two scopes for one phase: "
	    "a and c");
	expect_config_error("brokerd:\n  scopes:\n"
	    "    a: { engine: none, tools: [terraform_plan], phase: apply }\n",
	    "c.yaml:3: scope a: tool terraform_plan has no apply phase");
	expect_config_error("brokerd:\n  scopes:\n"
	    "    a: { engine: none, tools: [run_shell], phase: plan }\n",
	    "scope a: tool run_shell has no plan phase");
	expect_config_error("brokerd:\n  scopes:\n"
	    "    a: { engine: none, phase: write }\n",
	    "phase: \"write\" is not any, plan or apply");
	expect_config_error("brokerd:\n  scopes:\n"
	    "    a: { engine: none, role: admin }\n", "takes no mount");
	expect_config_error("brokerd:\n  scopes:\n"
	    "    a: { engine: none, ttl: 1s }\n", "out of range");
}

/* -nv prints brokerd's section so that it parses back to the same. */
ATF_TC_WITHOUT_HEAD(print_round_trip);
ATF_TC_BODY(print_round_trip, tc)
{
	struct as_config a, b;
	char err[1024];
	FILE *f;
	int saved;

	const char *const texts[] = { scopes_yaml, phases_yaml };
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		load(texts[i], &a);
		fflush(stdout);
		saved = dup(1);
		ATF_REQUIRE((f = fopen("printed.yaml", "w")) != NULL);
		dup2(fileno(f), 1);
		config_print(&a);
		fflush(stdout);
		dup2(saved, 1);
		close(saved);
		fclose(f);
		ATF_REQUIRE_MSG(config_load("printed.yaml", &b, err,
		    sizeof(err)) == 0, "%s", err);
		ATF_CHECK(memcmp(&a.brokerd, &b.brokerd,
		    sizeof(a.brokerd)) == 0);
	}
}

static int
resolve(const struct as_config *c, const char *json, struct cred_target *t,
    char *err, size_t errlen)
{
	json_t *req;
	int r;

	ATF_REQUIRE((req = json_loads(json, 0, NULL)) != NULL);
	r = scope_resolve(&c->brokerd.scopes, req, t, err, errlen);
	json_decref(req);
	return r;
}

static void
expect_refusal(const struct as_config *c, const char *json, const char *want)
{
	struct cred_target t;
	char err[256];

	ATF_CHECK_EQ_MSG(resolve(c, json, &t, err, sizeof(err)), -1,
	    "granted: %s", json);
	ATF_CHECK_MSG(strstr(err, want) != NULL, "got \"%s\", want \"%s\"",
	    err, want);
}

ATF_TC_WITHOUT_HEAD(resolve_target);
ATF_TC_BODY(resolve_target, tc)
{
	struct as_config c;
	struct cred_target t;
	char err[256];

	load(scopes_yaml, &c);
	ATF_REQUIRE_MSG(resolve(&c, "{\"tool\":\"k8s_get_pod_status\","
	    "\"arguments\":{\"namespace\":\"staging\"}}", &t, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK_STREQ(t.scope->name, "pod-reader");
	ATF_CHECK_STREQ(t.ns, "staging");
	/* Naming the target again is allowed; naming another is not. */
	ATF_CHECK(resolve(&c, "{\"tool\":\"k8s_get_pod_status\","
	    "\"arguments\":{\"namespace\":\"demo\"},\"namespace\":\"demo\"}",
	    &t, err, sizeof(err)) == 0);
	expect_refusal(&c, "{\"tool\":\"k8s_get_pod_status\",\"arguments\":"
	    "{\"namespace\":\"demo\"},\"namespace\":\"staging\"}",
	    "not the action's target");
	expect_refusal(&c, "{\"tool\":\"k8s_get_pod_status\",\"arguments\":"
	    "{\"namespace\":\"prod\"}}", "outside scope pod-reader");
	expect_refusal(&c, "{\"tool\":\"k8s_get_pod_status\",\"arguments\":"
	    "{\"namespace\":[\"demo\"]}}", "must name a namespace");
	expect_refusal(&c, "{\"tool\":\"run_shell\",\"arguments\":{}}",
	    "has no credential scope");
	/* The requester cannot pick a scope, or anything else. */
	expect_refusal(&c, "{\"tool\":\"k8s_get_pod_status\",\"arguments\":"
	    "{\"namespace\":\"demo\"},\"scope\":\"admin\"}",
	    "unknown field \"scope\"");
	expect_refusal(&c, "{\"tool\":\"terraform_plan\",\"arguments\":{},"
	    "\"namespace\":\"demo\"}", "grants no namespace");
	ATF_CHECK(resolve(&c, "{\"tool\":\"terraform_apply\",\"arguments\":"
	    "{\"working_dir\":\"x\"}}", &t, err, sizeof(err)) == 0);
	ATF_CHECK_STREQ(t.scope->engine, "none");
	ATF_CHECK_STREQ(t.ns, "");
}

static void
expect_scope(const struct as_config *c, const char *json, const char *want)
{
	struct cred_target t;
	char err[256];

	ATF_REQUIRE_MSG(resolve(c, json, &t, err, sizeof(err)) == 0, "%s: %s",
	    json, err);
	ATF_CHECK_STREQ_MSG(t.scope->name, want, "%s", json);
}

/*
 * brokerd tells the phase from the call itself: terraform_apply with an
 * approval applies, without one it only plans, like terraform_plan.
 */
ATF_TC_WITHOUT_HEAD(resolve_phase);
ATF_TC_BODY(resolve_phase, tc)
{
	struct as_config c;

	load(phases_yaml, &c);
	expect_scope(&c, "{\"tool\":\"terraform_plan\",\"arguments\":"
	    "{\"working_dir\":\"demo\"}}", "terraform-plan");
	expect_scope(&c, "{\"tool\":\"terraform_apply\",\"arguments\":"
	    "{\"working_dir\":\"demo\"}}", "terraform-plan");
	expect_scope(&c, "{\"tool\":\"terraform_apply\",\"arguments\":"
	    "{\"working_dir\":\"demo\",\"approval_id\":\"apr-1\"}}",
	    "terraform-apply");
	/* Only a string is an approval, as runnerd reads it. */
	expect_scope(&c, "{\"tool\":\"terraform_apply\",\"arguments\":"
	    "{\"working_dir\":\"demo\",\"approval_id\":null}}",
	    "terraform-plan");
	/* A plan has no apply phase, whatever it carries. */
	expect_scope(&c, "{\"tool\":\"terraform_plan\",\"arguments\":"
	    "{\"working_dir\":\"demo\",\"approval_id\":\"apr-1\"}}",
	    "terraform-plan");
	/* Asking for the other scope by name is still refused. */
	expect_refusal(&c, "{\"tool\":\"terraform_apply\",\"arguments\":"
	    "{\"working_dir\":\"demo\"},\"scope\":\"terraform-apply\"}",
	    "unknown field \"scope\"");
	/* A phase no scope serves gets no credential. */
	load("brokerd:\n  scopes:\n    w: { engine: none, "
	    "tools: [terraform_apply], phase: apply }\n", &c);
	expect_scope(&c, "{\"tool\":\"terraform_apply\",\"arguments\":"
	    "{\"working_dir\":\"demo\",\"approval_id\":\"apr-1\"}}", "w");
	expect_refusal(&c, "{\"tool\":\"terraform_apply\",\"arguments\":"
	    "{\"working_dir\":\"demo\"}}",
	    "terraform_apply has no credential scope for its plan phase");
	expect_refusal(&c, "{\"tool\":\"terraform_plan\",\"arguments\":"
	    "{\"working_dir\":\"demo\"}}",
	    "terraform_plan has no credential scope for its plan phase");
}

ATF_TC_WITHOUT_HEAD(namespace_names);
ATF_TC_BODY(namespace_names, tc)
{
	ATF_CHECK(namespace_valid("demo"));
	ATF_CHECK(namespace_valid("team-a-1"));
	ATF_CHECK(!namespace_valid(""));
	ATF_CHECK(!namespace_valid("-a"));
	ATF_CHECK(!namespace_valid("Demo"));
	ATF_CHECK(!namespace_valid("a/b"));
	ATF_CHECK(!namespace_valid("a.b"));
	ATF_CHECK(!namespace_valid(
	    "a234567890123456789012345678901234567890123456789012345678901234"));
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, config);
	ATF_TP_ADD_TC(tp, config_errors);
	ATF_TP_ADD_TC(tp, print_round_trip);
	ATF_TP_ADD_TC(tp, resolve_target);
	ATF_TP_ADD_TC(tp, resolve_phase);
	ATF_TP_ADD_TC(tp, namespace_names);
	return atf_no_error();
}
