/* SPDX-License-Identifier: ISC */
/*
 * The plan summary against plans terraform 1.11 wrote for terraform/demo
 * (fixtures/regenerate makes them again) and against malformed ones.
 */
#include <atf-c.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tfplan.h"

#define WEB	"terraform_data.web"
#define CANARY	"terraform_data.canary"

static const struct tfplan_signals actions_only = { NULL, 1, 0 };

/* fixtures/NAME, NUL-terminated, with its length in *len. */
static char *
fixture(const atf_tc_t *tc, const char *name, size_t *len)
{
	char path[1024], *buf;
	size_t cap = 8192, n = 0;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "%s/fixtures/%s",
	    atf_tc_get_config_var(tc, "srcdir"), name);
	fd = open(path, O_RDONLY);
	ATF_REQUIRE_MSG(fd != -1, "open %s", path);
	ATF_REQUIRE((buf = malloc(cap)) != NULL);
	while ((r = read(fd, buf + n, cap - n - 1)) > 0)
		if ((n += r) == cap - 1)
			ATF_REQUIRE((buf = realloc(buf, cap *= 2)) != NULL);
	ATF_REQUIRE(r == 0);
	close(fd);
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
}

/* The summary of fixtures/NAME.json with its NAME.txt as plan text. */
static json_t *
summarize(const atf_tc_t *tc, const char *name,
    const struct tfplan_signals *sig)
{
	char file[128], err[256], *js, *text;
	size_t len;
	json_t *s;

	snprintf(file, sizeof(file), "%s.json", name);
	js = fixture(tc, file, &len);
	snprintf(file, sizeof(file), "%s.txt", name);
	text = fixture(tc, file, NULL);
	err[0] = '\0';
	s = tfplan_summary(js, len, text, sig, err, sizeof(err));
	ATF_REQUIRE_MSG(s != NULL, "%s: %s", name, err);
	free(js);
	free(text);
	return s;
}

/* The error tfplan_summary gives for plan JSON text (and no signals). */
static void
check_refused(const char *js, size_t len, const char *want)
{
	char err[256] = "";
	json_t *s;

	s = tfplan_summary(js, len, NULL, &actions_only, err, sizeof(err));
	ATF_CHECK_MSG(s == NULL, "accepted: %.60s", js);
	ATF_CHECK_MSG(strstr(err, want) != NULL, "error \"%s\", want \"%s\"",
	    err, want);
	json_decref(s);
}

static void
check_fixture_refused(const atf_tc_t *tc, const char *name, const char *want)
{
	char *js;
	size_t len;

	js = fixture(tc, name, &len);
	check_refused(js, len, want);
	free(js);
}

static json_int_t
count(const json_t *s, const char *action)
{
	return json_integer_value(json_object_get(json_object_get(s,
	    "counts"), action));
}

/* Every count, in the order create update delete replace read forget no-op. */
static void
check_counts(const json_t *s, json_int_t c, json_int_t u, json_int_t d,
    json_int_t r, json_int_t rd, json_int_t f, json_int_t n)
{
	ATF_CHECK_EQ(json_object_size(json_object_get(s, "counts")), 7);
	ATF_CHECK_EQ(count(s, "create"), c);
	ATF_CHECK_EQ(count(s, "update"), u);
	ATF_CHECK_EQ(count(s, "delete"), d);
	ATF_CHECK_EQ(count(s, "replace"), r);
	ATF_CHECK_EQ(count(s, "read"), rd);
	ATF_CHECK_EQ(count(s, "forget"), f);
	ATF_CHECK_EQ(count(s, "no-op"), n);
}

static const json_t *
resource(const json_t *s, const char *address)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(s, "resources"), i, r)
		if (strcmp(json_string_value(json_object_get(r, "address")),
		    address) == 0)
			return r;
	atf_tc_fail("no resource %s", address);
	return NULL;
}

static const char *
field(const json_t *r, const char *key)
{
	return json_string_value(json_object_get(r, key));
}

/* The resource's actions, joined with commas. */
static const char *
actions_text(const json_t *r)
{
	static char buf[64];
	const json_t *v;
	size_t i;

	buf[0] = '\0';
	json_array_foreach(json_object_get(r, "actions"), i, v) {
		if (i > 0)
			strlcat(buf, ",", sizeof(buf));
		strlcat(buf, json_string_value(v), sizeof(buf));
	}
	return buf;
}

static int
destructive(const json_t *j)
{
	return json_is_true(json_object_get(j, "destructive"));
}

static int
has_reason(const json_t *s, const char *reason)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(s, "destructive_reasons"), i, v)
		if (strcmp(json_string_value(v), reason) == 0)
			return 1;
	return 0;
}

static json_t *
patterns(const char *a, const char *b)
{
	return json_pack("[s, s]", a, b);
}

ATF_TC_WITHOUT_HEAD(first_create);
ATF_TC_BODY(first_create, tc)
{
	json_t *s;
	const json_t *r;

	s = summarize(tc, "plan-create", &actions_only);
	check_counts(s, 1, 0, 0, 0, 0, 0, 0);
	r = resource(s, WEB);
	ATF_CHECK_STREQ(field(r, "action"), "create");
	ATF_CHECK_STREQ(actions_text(r), "create");
	ATF_CHECK(!destructive(r));
	ATF_CHECK(json_is_null(json_object_get(r, "action_reason")));
	ATF_CHECK_EQ(json_array_size(json_object_get(r, "forced_by")), 0);
	ATF_CHECK(!destructive(s));
	ATF_CHECK_EQ(json_array_size(json_object_get(s,
	    "destructive_reasons")), 0);
	ATF_CHECK_EQ(json_array_size(json_object_get(s, "code")), 0);
	ATF_CHECK_EQ(json_object_size(s), 5);
	ATF_CHECK_EQ(json_object_size(r), 6);
	json_decref(s);
}

ATF_TC_WITHOUT_HEAD(no_changes);
ATF_TC_BODY(no_changes, tc)
{
	json_t *s;

	s = summarize(tc, "plan-noop", &actions_only);
	check_counts(s, 0, 0, 0, 0, 0, 0, 1);
	ATF_CHECK_STREQ(field(resource(s, WEB), "action"), "no-op");
	ATF_CHECK(!destructive(s));
	json_decref(s);
}

ATF_TC_WITHOUT_HEAD(update_in_place);
ATF_TC_BODY(update_in_place, tc)
{
	struct tfplan_signals sig = { NULL, 1, 0 };
	json_t *s;

	sig.patterns = patterns("must be replaced", "will be destroyed");
	s = summarize(tc, "plan-update", &sig);
	check_counts(s, 0, 1, 0, 0, 0, 0, 0);
	ATF_CHECK_STREQ(field(resource(s, WEB), "action"), "update");
	ATF_CHECK(!destructive(resource(s, WEB)));
	ATF_CHECK(!destructive(s));
	json_decref(s);
	json_decref((json_t *)sig.patterns);
}

/* The demo's one-line label edit. */
ATF_TC_WITHOUT_HEAD(label_change_forces_replacement);
ATF_TC_BODY(label_change_forces_replacement, tc)
{
	json_t *s;
	const json_t *r, *forced;

	s = summarize(tc, "plan-replace", &actions_only);
	check_counts(s, 0, 0, 0, 1, 0, 0, 0);
	r = resource(s, WEB);
	ATF_CHECK_STREQ(field(r, "action"), "replace");
	ATF_CHECK_STREQ(actions_text(r), "delete,create");
	ATF_CHECK_STREQ(field(r, "action_reason"),
	    "replace_because_cannot_update");
	forced = json_object_get(r, "forced_by");
	ATF_CHECK_EQ(json_array_size(forced), 1);
	ATF_CHECK_STREQ(json_string_value(json_array_get(forced, 0)),
	    "triggers_replace");
	ATF_CHECK(destructive(r));
	ATF_CHECK(destructive(s));
	ATF_CHECK(has_reason(s, WEB ": replace (forced by triggers_replace)"));
	ATF_CHECK_EQ(json_array_size(json_object_get(s,
	    "destructive_reasons")), 1);
	json_decref(s);
}

ATF_TC_WITHOUT_HEAD(create_before_destroy);
ATF_TC_BODY(create_before_destroy, tc)
{
	json_t *s;
	const json_t *r;

	s = summarize(tc, "plan-replace-cbd", &actions_only);
	check_counts(s, 0, 0, 0, 1, 0, 0, 0);
	r = resource(s, WEB);
	ATF_CHECK_STREQ(field(r, "action"), "replace");
	ATF_CHECK_STREQ(actions_text(r), "create,delete");
	ATF_CHECK(destructive(r));
	ATF_CHECK(destructive(s));
	json_decref(s);
}

ATF_TC_WITHOUT_HEAD(pure_delete);
ATF_TC_BODY(pure_delete, tc)
{
	json_t *s;
	const json_t *r;

	s = summarize(tc, "plan-delete", &actions_only);
	check_counts(s, 0, 0, 1, 0, 0, 0, 1);
	r = resource(s, CANARY);
	ATF_CHECK_STREQ(field(r, "action"), "delete");
	ATF_CHECK_STREQ(field(r, "action_reason"),
	    "delete_because_no_resource_config");
	ATF_CHECK(destructive(r));
	ATF_CHECK(!destructive(resource(s, WEB)));
	ATF_CHECK(destructive(s));
	ATF_CHECK(has_reason(s, CANARY ": delete"));
	json_decref(s);
}

/* A removed block with destroy = false leaves the object running. */
ATF_TC_WITHOUT_HEAD(forget_is_not_destructive);
ATF_TC_BODY(forget_is_not_destructive, tc)
{
	json_t *s;

	s = summarize(tc, "plan-forget", &actions_only);
	check_counts(s, 0, 0, 0, 0, 0, 1, 1);
	ATF_CHECK_STREQ(field(resource(s, CANARY), "action"), "forget");
	ATF_CHECK(!destructive(s));
	json_decref(s);
}

ATF_TC_WITHOUT_HEAD(text_signals);
ATF_TC_BODY(text_signals, tc)
{
	struct tfplan_signals sig = { NULL, 0, 0 };
	json_t *s;

	/* Neither switch: the replacement goes unflagged. */
	s = summarize(tc, "plan-replace", &sig);
	ATF_CHECK(!destructive(s));
	ATF_CHECK(!destructive(resource(s, WEB)));
	json_decref(s);

	/* A pattern alone flags the plan, not the resource; case ignored. */
	sig.patterns = patterns("MUST BE REPLACED", "forces replacement");
	s = summarize(tc, "plan-replace", &sig);
	ATF_CHECK(destructive(s));
	ATF_CHECK(!destructive(resource(s, WEB)));
	ATF_CHECK(has_reason(s, "plan text matches \"MUST BE REPLACED\""));
	ATF_CHECK_EQ(json_array_size(json_object_get(s,
	    "destructive_reasons")), 1);
	json_decref(s);

	/* Both: one reason each. */
	sig.delete_actions = 1;
	s = summarize(tc, "plan-replace", &sig);
	ATF_CHECK_EQ(json_array_size(json_object_get(s,
	    "destructive_reasons")), 2);
	json_decref(s);
	json_decref((json_t *)sig.patterns);
}

ATF_TC_WITHOUT_HEAD(no_plan_text);
ATF_TC_BODY(no_plan_text, tc)
{
	struct tfplan_signals sig = { NULL, 0, 0 };
	char err[256], *js;
	size_t len;
	json_t *s;

	sig.patterns = patterns("must be replaced", "destroy");
	js = fixture(tc, "plan-replace.json", &len);
	s = tfplan_summary(js, len, NULL, &sig, err, sizeof(err));
	ATF_REQUIRE_MSG(s != NULL, "%s", err);
	ATF_CHECK(!destructive(s));
	json_decref(s);
	free(js);
	json_decref((json_t *)sig.patterns);
}

/* Paths into blocks and maps, and create-then-forget, written by hand. */
ATF_TC_WITHOUT_HEAD(forced_by_paths);
ATF_TC_BODY(forced_by_paths, tc)
{
	const char *js = "{\"format_version\":\"1.2\",\"resource_changes\":["
	    "{\"address\":\"kubernetes_deployment_v1.web\",\"change\":{"
	    "\"actions\":[\"delete\",\"create\"],\"replace_paths\":["
	    "[\"spec\",0,\"selector\",0,\"match_labels\",\"app\"],"
	    "[\"metadata\",0,\"labels\",\"app.kubernetes.io/name\"],"
	    "[\"metadata\",0,\"namespace\"]]}},"
	    "{\"address\":\"terraform_data.old\",\"change\":{"
	    "\"actions\":[\"create\",\"forget\"]}}]}";
	const json_t *forced;
	json_t *s;
	char err[256];

	s = tfplan_summary(js, strlen(js), NULL, &actions_only, err,
	    sizeof(err));
	ATF_REQUIRE_MSG(s != NULL, "%s", err);
	forced = json_object_get(resource(s, "kubernetes_deployment_v1.web"),
	    "forced_by");
	ATF_REQUIRE_EQ(json_array_size(forced), 3);
	ATF_CHECK_STREQ(json_string_value(json_array_get(forced, 0)),
	    "spec[0].selector[0].match_labels.app");
	ATF_CHECK_STREQ(json_string_value(json_array_get(forced, 1)),
	    "metadata[0].labels[\"app.kubernetes.io/name\"]");
	ATF_CHECK_STREQ(json_string_value(json_array_get(forced, 2)),
	    "metadata[0].namespace");
	ATF_CHECK(has_reason(s, "kubernetes_deployment_v1.web: replace "
	    "(forced by spec[0].selector[0].match_labels.app, "
	    "metadata[0].labels[\"app.kubernetes.io/name\"], "
	    "metadata[0].namespace)"));
	ATF_CHECK_STREQ(field(resource(s, "terraform_data.old"), "action"),
	    "replace");
	ATF_CHECK(!destructive(resource(s, "terraform_data.old")));
	check_counts(s, 0, 0, 0, 2, 0, 0, 0);
	json_decref(s);
}

ATF_TC_WITHOUT_HEAD(malformed_fixtures);
ATF_TC_BODY(malformed_fixtures, tc)
{
	check_fixture_refused(tc, "malformed-not-object.json", "not an object");
	check_fixture_refused(tc, "malformed-no-version.json",
	    "no format_version");
	check_fixture_refused(tc, "malformed-version-2.json",
	    "format_version 2.0 is not 1.x");
	check_fixture_refused(tc, "malformed-changes-not-array.json",
	    "resource_changes is not an array");
	check_fixture_refused(tc, "malformed-actions-not-array.json",
	    WEB ": change.actions is not an action list");
	check_fixture_refused(tc, "malformed-unknown-action.json",
	    WEB ": change.actions is not an action list");
	check_fixture_refused(tc, "malformed-replace-path.json",
	    "resource_changes[0]: replace_paths[0] is not an attribute path");
	check_fixture_refused(tc, "malformed-truncated.json", "plan JSON: ");
}

#define REFUSED(js, want)	check_refused(js, sizeof(js) - 1, want)

ATF_TC_WITHOUT_HEAD(malformed_inline);
ATF_TC_BODY(malformed_inline, tc)
{
	check_refused("", 0, "plan JSON: ");
	REFUSED("null", "not an object");
	REFUSED("{\"format_version\":1.2}", "no format_version");
	REFUSED("{\"format_version\":\"1.2\",\"format_version\":\"1.0\"}",
	    "duplicate");
	REFUSED("{\"format_version\":\"1.2\",\"resource_changes\":[7]}",
	    "resource_changes[0] is not an object");
	REFUSED("{\"format_version\":\"1.2\",\"resource_changes\":[{}]}",
	    "resource_changes[0]: no address");
	REFUSED("{\"format_version\":\"1.2\",\"resource_changes\":["
	    "{\"address\":\"a.b\"}]}", "a.b: change.actions");
	REFUSED("{\"format_version\":\"1.2\",\"resource_changes\":["
	    "{\"address\":\"a.b\",\"change\":{\"actions\":[]}}]}",
	    "a.b: change.actions");
	REFUSED("{\"format_version\":\"1.2\",\"resource_changes\":["
	    "{\"address\":\"a.b\",\"change\":{\"actions\":"
	    "[\"delete\",\"create\",\"delete\"]}}]}", "a.b: change.actions");
	REFUSED("{\"format_version\":\"1.2\",\"resource_changes\":["
	    "{\"address\":\"a.b\",\"change\":{\"actions\":[\"create\",7]}}]}",
	    "a.b: change.actions");
	REFUSED("{\"format_version\":\"1.2\",\"resource_changes\":["
	    "{\"address\":\"a.b\",\"change\":{\"actions\":[\"update\"]},"
	    "\"action_reason\":[]}]}", "a.b: action_reason is not a string");
	REFUSED("{\"format_version\":\"1.2\",\"resource_changes\":["
	    "{\"address\":\"a.b\",\"change\":{\"actions\":[\"update\"],"
	    "\"replace_paths\":\"input\"}}]}", "replace_paths is not an array");
	REFUSED("{\"format_version\":\"1.2\",\"resource_changes\":["
	    "{\"address\":\"a.b\",\"change\":{\"actions\":[\"update\"],"
	    "\"replace_paths\":[[0,\"x\"]]}}]}", "replace_paths[0]");
	REFUSED("{\"format_version\":\"1.2\",\"resource_changes\":["
	    "{\"address\":\"a.b\",\"change\":{\"actions\":[\"update\"],"
	    "\"replace_paths\":[[]]}}]}", "replace_paths[0]");
	REFUSED("{\"format_version\":\"1.2\",\"resource_changes\":["
	    "{\"address\":\"a.b\",\"change\":{\"actions\":[\"update\"],"
	    "\"replace_paths\":[[\"input\"],[\"\"]]}}]}", "replace_paths[1]");
}

ATF_TC_WITHOUT_HEAD(bad_signals);
ATF_TC_BODY(bad_signals, tc)
{
	const char *js = "{\"format_version\":\"1.2\"}";
	struct tfplan_signals sig = { NULL, 1, 0 };
	char err[256];
	json_t *s, *p;

	s = tfplan_summary(js, strlen(js), "x", &sig, err, sizeof(err));
	ATF_REQUIRE_MSG(s != NULL, "%s", err);
	check_counts(s, 0, 0, 0, 0, 0, 0, 0);
	json_decref(s);

	sig.patterns = p = json_string("destroy");
	ATF_CHECK(tfplan_summary(js, strlen(js), "x", &sig, err,
	    sizeof(err)) == NULL);
	ATF_CHECK_STREQ(err, "destructive patterns are not a list");
	json_decref(p);
	sig.patterns = p = json_pack("[s, s]", "destroy", "");
	ATF_CHECK(tfplan_summary(js, strlen(js), "x", &sig, err,
	    sizeof(err)) == NULL);
	ATF_CHECK_STREQ(err, "destructive pattern 1 is not a non-empty string");
	json_decref(p);
	sig.patterns = p = json_pack("[i]", 3);
	ATF_CHECK(tfplan_summary(js, strlen(js), "x", &sig, err,
	    sizeof(err)) == NULL);
	json_decref(p);
}

/* The code entry for address and type, checked for its command. */
static void
check_code(const json_t *s, const char *address, const char *type,
    const char *command)
{
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(s, "code"), i, c)
		if (strcmp(field(c, "address"), address) == 0 &&
		    strcmp(field(c, "type"), type) == 0 &&
		    strcmp(field(c, "command"), command) == 0) {
			ATF_CHECK_EQ(json_object_size(c), 3);
			return;
		}
	atf_tc_fail("no %s in %s running \"%s\"", type, address, command);
}

ATF_TC_WITHOUT_HEAD(provisioners);
ATF_TC_BODY(provisioners, tc)
{
	struct tfplan_signals sig = { NULL, 1, 0 };
	json_t *s;

	s = summarize(tc, "plan-code", &sig);
	check_counts(s, 2, 0, 0, 0, 0, 0, 0);
	ATF_CHECK_EQ(json_array_size(json_object_get(s, "code")), 5);
	check_code(s, "terraform_data.x", "local-exec", "echo hi");
	check_code(s, "terraform_data.x", "local-exec",
	    "(computed from: local.greeting, self.id, self)");
	check_code(s, "module.inner.terraform_data.y", "local-exec",
	    "echo nested; interpreter = [\"/bin/bash\",\"-c\"]");
	check_code(s, "module.inner.terraform_data.y", "remote-exec",
	    "[\"echo a\",\"echo b\"]");
	check_code(s, "module.inner.terraform_data.y", "file",
	    "a.txt; destination = /tmp/a.txt");
	/* Shown, but destructive only where the policy lets it be approved. */
	ATF_CHECK(!destructive(s));
	json_decref(s);

	sig.code = 1;
	s = summarize(tc, "plan-code", &sig);
	ATF_CHECK(destructive(s));
	ATF_CHECK(has_reason(s, "runs code at apply time: local-exec in "
	    "terraform_data.x"));
	ATF_CHECK(has_reason(s, "runs code at apply time: remote-exec in "
	    "module.inner.terraform_data.y"));
	ATF_CHECK_EQ(json_array_size(json_object_get(s,
	    "destructive_reasons")), 5);
	json_decref(s);
}

ATF_TC_WITHOUT_HEAD(external_data_source);
ATF_TC_BODY(external_data_source, tc)
{
	char err[256], *js;
	size_t len;
	json_t *s;

	js = fixture(tc, "hand-external.json", &len);
	s = tfplan_summary(js, len, NULL, &actions_only, err, sizeof(err));
	ATF_REQUIRE_MSG(s != NULL, "%s", err);
	check_counts(s, 0, 0, 0, 0, 1, 0, 0);
	ATF_CHECK_EQ(json_array_size(json_object_get(s, "code")), 2);
	check_code(s, "module.probe.data.external.who", "external",
	    "[\"sh\",\"-c\",\"id\"]");
	check_code(s, "module.probe.data.external.computed", "external",
	    "(computed from: var.prog)");
	json_decref(s);
	free(js);
}

/* A configuration that is not terraform's shape is refused, not skipped. */
ATF_TC_WITHOUT_HEAD(malformed_configuration);
ATF_TC_BODY(malformed_configuration, tc)
{
#define CONFIG(c)	"{\"format_version\":\"1.2\",\"configuration\":" c "}"
#define RES	"{\"address\":\"a.b\",\"mode\":\"managed\",\"type\":\"a\""
	REFUSED(CONFIG("{\"root_module\":[]}"), "module root is not");
	REFUSED(CONFIG("{\"root_module\":{\"resources\":{}}}"),
	    "module root is not");
	REFUSED(CONFIG("{\"root_module\":{\"module_calls\":{\"m\":{}}}}"),
	    "module module.m. is not");
	REFUSED(CONFIG("{\"root_module\":{\"resources\":[{}]}}"),
	    "a resource is not");
	REFUSED(CONFIG("{\"root_module\":{\"resources\":[" RES
	    ",\"provisioners\":{}}]}}"), "a resource is not");
	REFUSED(CONFIG("{\"root_module\":{\"resources\":[" RES
	    ",\"provisioners\":[{}]}]}}"), "a.b: provisioner 0 has no type");
	REFUSED(CONFIG("{\"root_module\":{\"resources\":[" RES
	    ",\"provisioners\":[{\"type\":\"local-exec\","
	    "\"expressions\":[]}]}]}}"), "expressions are not an object");
#undef RES
#undef CONFIG
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, first_create);
	ATF_TP_ADD_TC(tp, no_changes);
	ATF_TP_ADD_TC(tp, update_in_place);
	ATF_TP_ADD_TC(tp, label_change_forces_replacement);
	ATF_TP_ADD_TC(tp, create_before_destroy);
	ATF_TP_ADD_TC(tp, pure_delete);
	ATF_TP_ADD_TC(tp, forget_is_not_destructive);
	ATF_TP_ADD_TC(tp, text_signals);
	ATF_TP_ADD_TC(tp, no_plan_text);
	ATF_TP_ADD_TC(tp, forced_by_paths);
	ATF_TP_ADD_TC(tp, malformed_fixtures);
	ATF_TP_ADD_TC(tp, malformed_inline);
	ATF_TP_ADD_TC(tp, bad_signals);
	ATF_TP_ADD_TC(tp, provisioners);
	ATF_TP_ADD_TC(tp, external_data_source);
	ATF_TP_ADD_TC(tp, malformed_configuration);
	return 0;
}
