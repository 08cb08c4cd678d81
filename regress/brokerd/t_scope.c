/* Scopes: parsed from brokerd's section, resolved from the action only. */
#include <atf-c.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../brokerd/brokerd.h"

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
	    "    b: { engine: none, tools: [u, t] }\n", "t is in two scopes");
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

	load(scopes_yaml, &a);
	fflush(stdout);
	saved = dup(1);
	ATF_REQUIRE((f = fopen("printed.yaml", "w")) != NULL);
	dup2(fileno(f), 1);
	config_print(&a);
	fflush(stdout);
	dup2(saved, 1);
	fclose(f);
	ATF_REQUIRE_MSG(config_load("printed.yaml", &b, err, sizeof(err)) == 0,
	    "%s", err);
	ATF_CHECK(memcmp(&a.brokerd, &b.brokerd, sizeof(a.brokerd)) == 0);
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
	ATF_TP_ADD_TC(tp, namespace_names);
	return atf_no_error();
}
