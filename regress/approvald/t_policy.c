/* SPDX-License-Identifier: ISC */
/*
 * The policy and the decision table: approvald's policy.c and decide.c
 * against policy.fixture, with a terraform root built in the work dir.
 */
#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atf-c.h>

#include "../../approvald/approvald.h"

/* approvald.c's globals, which runner.c and control.c refer to. */
struct as_config	 approvald_conf;
struct policy		*approvald_policy;

static void
write_file(const char *path, const char *text)
{
	FILE *f;

	ATF_REQUIRE((f = fopen(path, "w")) != NULL);
	fputs(text, f);
	fclose(f);
}

/*
 * A file of the source tree: kyua passes its root as srcdir; run by
 * hand, srcdir is this program's directory, where make copied regress/.
 */
static void
src_path(const atf_tc_t *tc, const char *rel, const char *copy, char *buf,
    size_t len)
{
	const char *src = atf_tc_get_config_var(tc, "srcdir");

	snprintf(buf, len, "%s/%s", src, rel);
	if (access(buf, R_OK) == -1)
		snprintf(buf, len, "%s/%s", src, copy);
}

static void
touch_file(const char *path)
{
	FILE *f;

	ATF_REQUIRE((f = fopen(path, "w")) != NULL);
	fclose(f);
}

/* policy.fixture with @ROOT@ and @TTL@ filled in, loaded. */
static struct policy *
fixture(const atf_tc_t *tc)
{
	char path[PATH_MAX], root[PATH_MAX], line[512], err[1024];
	struct policy *p;
	FILE *in, *out;
	char *at;

	ATF_REQUIRE(getcwd(root, sizeof(root)) != NULL);
	strlcat(root, "/tf", sizeof(root));
	mkdir("tf", 0755);
	mkdir("tf/demo", 0755);
	mkdir("tf/k8s-demo", 0755);
	mkdir("tf/nested", 0755);
	mkdir("tf/nested/mod", 0755);
	mkdir("outside", 0755);
	/* A module is a directory with a .tf file; "empty" has none. */
	mkdir("tf/empty", 0755);
	touch_file("tf/demo/main.tf");
	touch_file("tf/k8s-demo/main.tf");
	touch_file("tf/nested/mod/main.tf.json");
	touch_file("outside/main.tf");
	unlink("tf/link");
	ATF_REQUIRE(symlink("../outside", "tf/link") == 0);
	src_path(tc, "regress/approvald/policy.fixture", "policy.fixture",
	    path, sizeof(path));
	ATF_REQUIRE((in = fopen(path, "r")) != NULL);
	ATF_REQUIRE((out = fopen("policy.yaml", "w")) != NULL);
	while (fgets(line, sizeof(line), in) != NULL) {
		if ((at = strstr(line, "@ROOT@")) != NULL)
			fprintf(out, "%.*s%s%s", (int)(at - line), line, root,
			    at + 6);
		else if ((at = strstr(line, "@TTL@")) != NULL)
			fprintf(out, "%.*s30m%s", (int)(at - line), line, at + 5);
		else
			fputs(line, out);
	}
	fclose(in);
	fclose(out);
	p = policy_load("policy.yaml", err, sizeof(err));
	if (p == NULL)
		atf_tc_fail("fixture: %s", err);
	return p;
}

/* One row of the table: the verdict and a word of the reason. */
static void
check(const struct policy *p, const char *tool, const char *args,
    enum verdict want, const char *reason)
{
	struct decision d;
	json_t *j;

	ATF_REQUIRE((j = json_loads(args, 0, NULL)) != NULL);
	ATF_REQUIRE_EQ(decide(p, tool, j, &d), 0);
	json_decref(j);
	ATF_CHECK_MSG(d.verdict == want, "%s %s: verdict %d, want %d (%s)",
	    tool, args, d.verdict, want, d.reason);
	ATF_CHECK_MSG(strstr(d.reason, reason) != NULL,
	    "%s %s: reason \"%s\" lacks \"%s\"", tool, args, d.reason, reason);
}

ATF_TC(decision_table);
ATF_TC_HEAD(decision_table, tc)
{
	atf_tc_set_md_var(tc, "descr", "deny by default, tiers, namespace "
	    "and working_dir constraints");
}
ATF_TC_BODY(decision_table, tc)
{
	struct policy *p = fixture(tc);

	check(p, "rm_rf", "{}", VERDICT_DENY,
	    "tool rm_rf is not in the policy");
	check(p, "forbidden_tool", "{}", VERDICT_DENY, "denied by the policy");
	check(p, "run_python", "{\"code\": \"1\"}", VERDICT_ALLOW, "low risk");
	check(p, "k8s_get_pod_status", "{\"namespace\": \"demo\"}",
	    VERDICT_ALLOW, "low risk");
	check(p, "k8s_get_pod_status", "{\"namespace\": \"kube-system\"}",
	    VERDICT_DENY, "is not allowed for k8s_get_pod_status");
	check(p, "k8s_get_pod_status", "{\"namespace\": \"Demo\"}",
	    VERDICT_DENY, "characters other than");
	check(p, "k8s_get_pod_status", "{\"namespace\": \"-demo\"}",
	    VERDICT_DENY, "starts or ends");
	check(p, "k8s_get_pod_status", "{}", VERDICT_DENY,
	    "namespace is required");
	check(p, "k8s_get_pod_status", "{\"namespace\": 7}", VERDICT_DENY,
	    "namespace is required");
	check(p, "terraform_plan", "{\"working_dir\": \"demo\"}",
	    VERDICT_ALLOW, "low risk");
	check(p, "terraform_plan", "{\"working_dir\": \"nested/mod\"}",
	    VERDICT_ALLOW, "low risk");
	check(p, "terraform_apply", "{\"working_dir\": \"demo\"}",
	    VERDICT_APPROVAL, "approval");
	check(p, "terraform_apply", "{\"working_dir\": \"../demo\"}",
	    VERDICT_DENY, "\"..\"");
	check(p, "terraform_apply", "{\"working_dir\": \"demo/../k8s-demo\"}",
	    VERDICT_DENY, "\"..\"");
	check(p, "terraform_apply", "{\"working_dir\": \"./demo\"}",
	    VERDICT_DENY, "\".\"");
	check(p, "terraform_apply", "{\"working_dir\": \"/etc\"}",
	    VERDICT_DENY, "is absolute");
	check(p, "terraform_apply", "{\"working_dir\": \"demo/\"}",
	    VERDICT_DENY, "empty component");
	check(p, "terraform_apply", "{\"working_dir\": \"\"}",
	    VERDICT_DENY, "is empty");
	check(p, "terraform_apply", "{\"working_dir\": \"nested/mod\"}",
	    VERDICT_DENY, "is not allowed for terraform_apply");
	check(p, "terraform_apply", "{}", VERDICT_DENY,
	    "working_dir is required");
	check(p, "terraform_plan", "{\"working_dir\": \"link\"}",
	    VERDICT_DENY, "goes through a symlink");
	check(p, "terraform_plan", "{\"working_dir\": \"missing\"}",
	    VERDICT_DENY, "No such file");
	check(p, "terraform_plan", "{\"working_dir\": \"empty\"}",
	    VERDICT_DENY, "not a Terraform directory");
	policy_free(p);
}

ATF_TC(decision_payload);
ATF_TC_HEAD(decision_payload, tc)
{
	atf_tc_set_md_var(tc, "descr", "MSG_DECISION carries tier, egress, "
	    "destructive signals and the resolved directory");
}
ATF_TC_BODY(decision_payload, tc)
{
	struct policy *p = fixture(tc);
	struct decision d;
	json_t *args, *j;
	char *s;

	args = json_pack("{s:s}", "code", "print(1)");
	ATF_REQUIRE_EQ(decide(p, "run_python", args, &d), 0);
	j = decision_json(p, "run_python", &d);
	s = cjson_dump(j);
	ATF_CHECK(strstr(s, "\"decision\":\"allow\"") != NULL);
	ATF_CHECK(strstr(s, "\"tier\":\"low\"") != NULL);
	ATF_CHECK(strstr(s, "\"egress\":[\"pypi.org:443\",\"127.0.0.1:8080\"]")
	    != NULL);
	ATF_CHECK(strstr(s, "\"destructive_actions\":true") != NULL);
	ATF_CHECK(strstr(s, "\"must be replaced\"") != NULL);
	free(s);
	json_decref(j);
	json_decref(args);

	args = json_pack("{s:s}", "working_dir", "demo");
	ATF_REQUIRE_EQ(decide(p, "terraform_apply", args, &d), 0);
	j = decision_json(p, "terraform_apply", &d);
	ATF_CHECK_STREQ(json_string_value(json_object_get(j, "decision")),
	    "approval_required");
	ATF_CHECK(strstr(json_string_value(json_object_get(j,
	    "working_dir_path")), "/tf/demo") != NULL);
	json_decref(j);
	json_decref(args);

	/* A malformed call is not a decision at all. */
	args = json_pack("[]");
	ATF_CHECK_EQ(decide(p, "run_python", args, &d), -1);
	ATF_CHECK_EQ(decide(p, NULL, args, &d), -1);
	json_decref(args);
	policy_free(p);
}

/* What approval binding rests on. */
ATF_TC_WITHOUT_HEAD(params_binding);
ATF_TC_BODY(params_binding, tc)
{
	char a[SHA256_HEX_LEN + 1], b[SHA256_HEX_LEN + 1];
	char c[SHA256_HEX_LEN + 1], *canon;
	json_t *j;

	(void)tc;
	j = json_loads("{\"working_dir\":\"demo\",\"x\":1}", 0, NULL);
	ATF_REQUIRE_EQ(params_digest("terraform_apply", j, a, &canon), 0);
	ATF_CHECK_STREQ(canon, "{\"working_dir\":\"demo\",\"x\":1}");
	free(canon);
	json_decref(j);
	/* Key order and approval_id do not matter ... */
	j = json_loads("{\"x\":1,\"approval_id\":\"apr-1\","
	    "\"working_dir\":\"demo\"}", 0, NULL);
	ATF_REQUIRE_EQ(params_digest("terraform_apply", j, b, NULL), 0);
	ATF_CHECK_STREQ(a, b);
	json_decref(j);
	/* ... any other parameter or the tool does. */
	j = json_loads("{\"working_dir\":\"k8s-demo\",\"x\":1}", 0, NULL);
	ATF_REQUIRE_EQ(params_digest("terraform_apply", j, c, NULL), 0);
	ATF_CHECK(strcmp(a, c) != 0);
	json_decref(j);
	j = json_loads("{\"working_dir\":\"demo\",\"x\":1}", 0, NULL);
	ATF_REQUIRE_EQ(params_digest("terraform_plan", j, c, NULL), 0);
	ATF_CHECK(strcmp(a, c) != 0);
	json_decref(j);
}

ATF_TC(destructive_marks);
ATF_TC_HEAD(destructive_marks, tc)
{
	atf_tc_set_md_var(tc, "descr", "delete/replace actions and text "
	    "signals mark a plan destructive; runnerd cannot unmark");
}
ATF_TC_BODY(destructive_marks, tc)
{
	struct policy *p = fixture(tc);
	json_t *sum, *m, *r;

	sum = json_loads("{\"resources\":["
	    "{\"address\":\"a\",\"actions\":[\"delete\",\"create\"],"
	    "\"destructive\":false},"
	    "{\"address\":\"b\",\"actions\":[\"update\"]},"
	    "{\"address\":\"c\",\"actions\":[\"delete\"]}]}", 0, NULL);
	m = mark_destructive(p, sum, "# a forces replacement");
	r = json_object_get(m, "resources");
	ATF_CHECK(json_is_true(json_object_get(json_array_get(r, 0),
	    "destructive")));
	ATF_CHECK(json_is_false(json_object_get(json_array_get(r, 1),
	    "destructive")));
	ATF_CHECK(json_is_true(json_object_get(json_array_get(r, 2),
	    "destructive")));
	ATF_CHECK_STREQ(json_string_value(json_array_get(json_object_get(m,
	    "destructive_signals"), 0)), "Forces Replacement");
	ATF_CHECK(json_is_true(json_object_get(m, "destructive")));
	json_decref(m);
	/* No summary and a harmless text: not destructive. */
	m = mark_destructive(p, NULL, "0 to destroy? no: nothing to do");
	ATF_CHECK(json_is_false(json_object_get(m, "destructive")));
	json_decref(m);
	/* The switch off: actions alone do not mark. */
	p->delete_actions = 0;
	m = mark_destructive(p, sum, "");
	ATF_CHECK(json_is_false(json_object_get(m, "destructive")));
	json_decref(m);
	json_decref(sum);
	policy_free(p);
}

/* A bad policy names the file, the line and what is wrong. */
static void
bad_policy(const char *text, const char *want)
{
	char err[1024];

	write_file("bad.yaml", text);
	ATF_CHECK(policy_load("bad.yaml", err, sizeof(err)) == NULL);
	ATF_CHECK_MSG(strstr(err, want) != NULL, "error \"%s\" lacks \"%s\"",
	    err, want);
}

ATF_TC_WITHOUT_HEAD(policy_errors);
ATF_TC_BODY(policy_errors, tc)
{
	(void)tc;
	bad_policy("tools:\n  x:\n    tier: low\n    colour: red\n",
	    "bad.yaml:4: unknown key \"colour\"");
	bad_policy("tools:\n  x:\n    tier: medium\n",
	    "bad.yaml:3: tier: \"medium\" is not low, high or deny");
	bad_policy("tools:\n  x:\n    namespaces: [a]\n",
	    "bad.yaml:3: x: tier is required");
	bad_policy("tools:\n  x:\n    tier: low\n    namespaces: [ok, Bad]\n",
	    "bad.yaml:4: namespaces: \"Bad\"");
	bad_policy("tools:\n  x:\n    tier: low\n    working_dirs: [../up]\n",
	    "bad.yaml:4: working_dirs: \"../up\"");
	bad_policy("terraform_root: /srv\ntools:\n  x:\n    tier: low\n"
	    "    egress: [\"host\"]\n", "bad.yaml:5: egress: \"host\" is not "
	    "host:port");
	bad_policy("tools:\n  x:\n    tier: low\n    working_dirs: [a]\n",
	    "x: working_dirs need a terraform_root");
	bad_policy("terraform_root: rel\n", "must be an absolute path");
	bad_policy("approval_ttl: 0\n", "bad.yaml:1: approval_ttl: 0 is out "
	    "of range");
	bad_policy("tools:\n  Bad-Name:\n    tier: low\n",
	    "bad.yaml:3: bad tool name");
	bad_policy("tools: [a]\n", "tools: expected a mapping");
	bad_policy("tools:\n  terraform_apply:\n    tier: low\n",
	    "bad.yaml:3: terraform_apply: tier low would leave nobody");
	bad_policy("terraform:\n  provisioners: allow\n",
	    "bad.yaml:2: provisioners");
	bad_policy("terraform:\n  providers: [null]\n",
	    "bad.yaml:2: providers: \"null\" is not [HOSTNAME/]NAMESPACE/TYPE");
	bad_policy("terraform:\n  providers: [a/b/c/d]\n",
	    "bad.yaml:2: providers: \"a/b/c/d\" is not");
	bad_policy("terraform:\n  providers: [../x/y]\n",
	    "bad.yaml:2: providers: \"../x/y\" has an empty, long or dot-led");
	bad_policy("terraform:\n  providers: [\"a/b c\"]\n",
	    "bad.yaml:2: providers: \"a/b c\" has characters");
	bad_policy("terraform:\n  plugins: []\n",
	    "bad.yaml:2: unknown key \"plugins\"");
}

ATF_TC(terraform_section);
ATF_TC_HEAD(terraform_section, tc)
{
	atf_tc_set_md_var(tc, "descr", "providers are normalised and carried "
	    "by a terraform decision; code at apply time is denied by "
	    "default and destructive when approvable");
}
ATF_TC_BODY(terraform_section, tc)
{
	struct policy *p = fixture(tc);
	struct decision d;
	json_t *args, *j, *sum, *m;
	char err[1024], *s;

	ATF_CHECK_STREQ(p->provisioners, "deny");
	ATF_CHECK(!provisioners_approved(p));
	args = json_pack("{s:s}", "working_dir", "demo");
	ATF_REQUIRE_EQ(decide(p, "terraform_plan", args, &d), 0);
	j = decision_json(p, "terraform_plan", &d);
	s = cjson_dump(j);
	ATF_CHECK(strstr(s, "\"terraform_providers\":[]") != NULL);
	ATF_CHECK(strstr(s, "\"terraform_provisioners\":\"deny\"") != NULL);
	free(s);
	json_decref(j);
	json_decref(args);
	/* Not a terraform call: nothing about terraform. */
	args = json_pack("{s:s}", "code", "print(1)");
	ATF_REQUIRE_EQ(decide(p, "run_python", args, &d), 0);
	j = decision_json(p, "run_python", &d);
	ATF_CHECK(json_object_get(j, "terraform_providers") == NULL);
	json_decref(j);
	json_decref(args);
	policy_free(p);

	write_file("tf.yaml", "terraform:\n  providers: [HashiCorp/Kubernetes,"
	    " example.com/acme/thing]\n  provisioners: approve\n");
	ATF_REQUIRE_MSG((p = policy_load("tf.yaml", err, sizeof(err))) !=
	    NULL, "%s", err);
	ATF_REQUIRE_EQ(p->providers.n, 2);
	ATF_CHECK_STREQ(p->providers.v[0],
	    "registry.terraform.io/hashicorp/kubernetes");
	ATF_CHECK_STREQ(p->providers.v[1], "example.com/acme/thing");
	ATF_CHECK(provisioners_approved(p));
	sum = json_loads("{\"resources\":[],\"code\":[{\"address\":"
	    "\"terraform_data.x\",\"type\":\"local-exec\",\"command\":"
	    "\"echo hi\"}]}", 0, NULL);
	m = mark_destructive(p, sum, "");
	ATF_CHECK(json_is_true(json_object_get(m, "destructive")));
	ATF_CHECK_EQ(json_array_size(json_object_get(m, "code")), 1);
	json_decref(m);
	json_decref(sum);
	policy_free(p);
}

ATF_TC(policy_defaults);
ATF_TC_HEAD(policy_defaults, tc)
{
	atf_tc_set_md_var(tc, "descr", "an empty policy denies everything; "
	    "the shipped example loads");
}
ATF_TC_BODY(policy_defaults, tc)
{
	struct policy *p;
	struct decision d;
	char err[1024], path[PATH_MAX];
	json_t *args = json_object();

	write_file("empty.yaml", "{}\n");
	ATF_REQUIRE((p = policy_load("empty.yaml", err, sizeof(err))) != NULL);
	ATF_CHECK_EQ(p->approval_ttl, 30 * 60);
	ATF_CHECK_EQ(p->delete_actions, 1);
	ATF_REQUIRE_EQ(decide(p, "run_python", args, &d), 0);
	ATF_CHECK_EQ(d.verdict, VERDICT_DENY);
	policy_free(p);
	json_decref(args);

	src_path(tc, "etc/policy.yaml", "../../../etc/policy.yaml", path,
	    sizeof(path));
	p = policy_load(path, err, sizeof(err));
	if (p == NULL)
		atf_tc_fail("etc/policy.yaml: %s", err);
	ATF_CHECK(policy_tool(p, "terraform_apply")->tier == TIER_HIGH);
	ATF_CHECK(policy_tool(p, "close_session")->tier == TIER_LOW);
	policy_free(p);
}

/* reuse_ms in the MSG_DECISION for tool and args; 0 when absent. */
static json_int_t
reuse_of(const struct policy *p, const char *tool, const char *args)
{
	struct decision d;
	json_t *a, *j, *v;
	json_int_t ms;

	ATF_REQUIRE((a = json_loads(args, 0, NULL)) != NULL);
	ATF_REQUIRE_EQ(decide(p, tool, a, &d), 0);
	ATF_REQUIRE((j = decision_json(p, tool, &d)) != NULL);
	v = json_object_get(j, "reuse_ms");
	ATF_CHECK_MSG(v == NULL || json_integer_value(v) > 0,
	    "%s: reuse_ms present but not positive", tool);
	ms = json_integer_value(v);
	json_decref(j);
	json_decref(a);
	return ms;
}

ATF_TC(decision_reuse);
ATF_TC_HEAD(decision_reuse, tc)
{
	atf_tc_set_md_var(tc, "descr", "reuse_ms only for an allow decided "
	    "on the tool's name alone; decision_reuse sets it, 0 never");
}
ATF_TC_BODY(decision_reuse, tc)
{
	struct policy *p = fixture(tc);
	char err[1024];

	ATF_CHECK_EQ(p->decision_reuse, 30);
	ATF_CHECK_EQ(reuse_of(p, "run_python", "{\"code\": \"1\"}"), 30000);
	/* Arguments decide these: allowed now, maybe not next time. */
	ATF_CHECK_EQ(reuse_of(p, "k8s_get_pod_status",
	    "{\"namespace\": \"demo\"}"), 0);
	ATF_CHECK_EQ(reuse_of(p, "terraform_plan",
	    "{\"working_dir\": \"demo\"}"), 0);
	/* A person, or a refusal, every time. */
	ATF_CHECK_EQ(reuse_of(p, "terraform_apply",
	    "{\"working_dir\": \"demo\"}"), 0);
	ATF_CHECK_EQ(reuse_of(p, "forbidden_tool", "{}"), 0);
	ATF_CHECK_EQ(reuse_of(p, "rm_rf", "{}"), 0);
	policy_free(p);

	write_file("reuse.yaml", "decision_reuse: 5s\ntools:\n  a:\n"
	    "    tier: low\n  b:\n    tier: high\n");
	ATF_REQUIRE_MSG((p = policy_load("reuse.yaml", err, sizeof(err))) !=
	    NULL, "%s", err);
	ATF_CHECK_EQ(reuse_of(p, "a", "{}"), 5000);
	ATF_CHECK_EQ(reuse_of(p, "b", "{}"), 0);
	policy_free(p);
	write_file("never.yaml", "decision_reuse: 0\ntools:\n  a:\n"
	    "    tier: low\n");
	ATF_REQUIRE_MSG((p = policy_load("never.yaml", err, sizeof(err))) !=
	    NULL, "%s", err);
	ATF_CHECK_EQ(reuse_of(p, "a", "{}"), 0);
	policy_free(p);
	bad_policy("decision_reuse: 2h\n", "bad.yaml:1: decision_reuse");
}

ATF_TC(thresholds);
ATF_TC_HEAD(thresholds, tc)
{
	atf_tc_set_md_var(tc, "descr", "approvals rules are alternatives: "
	    "what counts, what is missing, and the one operator default");
}
ATF_TC_BODY(thresholds, tc)
{
	static const gid_t dev[] = { 100, 4300 }, admin[] = { 200 },
	    other[] = { 300 };
	struct policy *p;
	json_t *req, *approvers;
	char err[1024], missing[512];

	write_file("nofm.yaml", "tools:\n"
	    "  terraform_apply:\n    tier: high\n"
	    "    approvals: [{required: 2, from: [4300]},"
	    " {required: 1, from: [200]}]\n"
	    "    require_reason: true\n"
	    "  run_shell:\n    tier: high\n");
	p = policy_load("nofm.yaml", err, sizeof(err));
	if (p == NULL)
		atf_tc_fail("nofm.yaml: %s", err);
	ATF_REQUIRE((req = policy_requirement(policy_tool(p,
	    "terraform_apply"))) != NULL);
	ATF_CHECK(json_is_true(json_object_get(req, "reason_required")));
	ATF_CHECK(threshold_counts(req, dev, 2));
	ATF_CHECK(threshold_counts(req, admin, 1));
	ATF_CHECK(!threshold_counts(req, other, 1));
	approvers = json_pack("[{s:[i,i]}]", "gids", 100, 4300);
	ATF_CHECK(!threshold_met(req, approvers, missing, sizeof(missing)));
	ATF_CHECK_STREQ(missing, "1 more from 4300 or 1 more from 200");
	json_array_append_new(approvers, json_pack("{s:[i]}", "gids", 4300));
	ATF_CHECK(threshold_met(req, approvers, missing, sizeof(missing)));
	json_decref(approvers);
	approvers = json_pack("[{s:[i]}]", "gids", 200);
	ATF_CHECK(threshold_met(req, approvers, missing, sizeof(missing)));
	json_decref(approvers);
	json_decref(req);

	/* No rules: one approval from any operator. */
	ATF_REQUIRE((req = policy_requirement(policy_tool(p, "run_shell")))
	    != NULL);
	ATF_CHECK(threshold_counts(req, other, 1));
	approvers = json_array();
	ATF_CHECK(!threshold_met(req, approvers, missing, sizeof(missing)));
	ATF_CHECK_STREQ(missing, "1 more from any operator");
	json_array_append_new(approvers, json_pack("{s:[]}", "gids"));
	ATF_CHECK(threshold_met(req, approvers, missing, sizeof(missing)));
	json_decref(approvers);
	json_decref(req);
	policy_free(p);

	write_file("lowrule.yaml", "tools:\n  run_shell:\n    tier: low\n"
	    "    approvals: {required: 2}\n");
	ATF_CHECK(policy_load("lowrule.yaml", err, sizeof(err)) == NULL);
	ATF_CHECK_MSG(strstr(err, "approvals are for tier high only") !=
	    NULL, "%s", err);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, decision_table);
	ATF_TP_ADD_TC(tp, decision_payload);
	ATF_TP_ADD_TC(tp, params_binding);
	ATF_TP_ADD_TC(tp, destructive_marks);
	ATF_TP_ADD_TC(tp, policy_errors);
	ATF_TP_ADD_TC(tp, terraform_section);
	ATF_TP_ADD_TC(tp, policy_defaults);
	ATF_TP_ADD_TC(tp, decision_reuse);
	ATF_TP_ADD_TC(tp, thresholds);
	return atf_no_error();
}
