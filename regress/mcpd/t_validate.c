/* SPDX-License-Identifier: ISC */
/* The tool table and argument checks against each tool's inputSchema. */
#include <stdio.h>
#include <string.h>

#include <atf-c.h>

#include "config.h"
#include "tools.h"

static void
init(void)
{
	char err[256];

	ATF_REQUIRE_MSG(tools_init(err, sizeof(err)) == 0, "%s", err);
}

/* 0 or -1 from tool_validate; the reason must mention want. */
static void
check(const char *tool, const char *args, int ok, const char *want)
{
	char err[512] = "";
	json_error_t je;
	json_t *j;
	int t, r;

	ATF_REQUIRE_MSG((t = tool_index(tool)) != -1, "%s", tool);
	/* NULs pass here so that the validator's own check is seen. */
	j = json_loads(args, JSON_ALLOW_NUL, &je);
	ATF_REQUIRE_MSG(j != NULL, "%s", args);
	r = tool_validate(t, j, err, sizeof(err));
	json_decref(j);
	ATF_CHECK_EQ_MSG(r, ok ? 0 : -1, "%s %s: %s", tool, args, err);
	if (!ok && want != NULL)
		ATF_CHECK_MSG(strstr(err, want) != NULL, "%s %s: \"%s\" lacks "
		    "\"%s\"", tool, args, err, want);
}

ATF_TC_WITHOUT_HEAD(table);
ATF_TC_BODY(table, tc)
{
	json_t *d, *ann;
	size_t i;

	init();
	ATF_CHECK(tools_count() >= 9);
	ATF_CHECK_EQ(tool_index("no_such_tool"), -1);
	for (i = 0; i < tools_count(); i++) {
		ATF_REQUIRE((d = tool_describe(i)) != NULL);
		ATF_CHECK_STREQ(json_string_value(json_object_get(
		    json_object_get(d, "inputSchema"), "type")), "object");
		ATF_CHECK_STREQ(json_string_value(json_object_get(
		    json_object_get(d, "outputSchema"), "type")), "object");
		ann = json_object_get(d, "annotations");
		ATF_CHECK(json_is_boolean(json_object_get(ann,
		    "readOnlyHint")));
		ATF_CHECK(json_is_boolean(json_object_get(ann,
		    "destructiveHint")));
		ATF_CHECK(json_is_boolean(json_object_get(ann,
		    "idempotentHint")));
		ATF_CHECK(json_is_boolean(json_object_get(ann,
		    "openWorldHint")));
		json_decref(d);
	}
	ATF_CHECK(tool_at(tool_index("terraform_apply"))->hints &
	    TOOL_DESTRUCTIVE);
	ATF_CHECK(tool_at(tool_index("k8s_get_pod_status"))->hints &
	    TOOL_READONLY);
}

ATF_TC_WITHOUT_HEAD(shape);
ATF_TC_BODY(shape, tc)
{
	init();
	check("k8s_get_pod_status", "{\"namespace\":\"default\"}", 1, NULL);
	check("k8s_get_pod_status", "{}", 0, "namespace: required");
	check("k8s_get_pod_status", "{\"namespace\":\"a\",\"all\":true}", 0,
	    "all: unknown argument");
	check("k8s_get_pod_status", "{\"namespace\":5}", 0, "type string");
	check("k8s_get_pod_status", "[]", 0, "must be an object");
	check("terraform_plan", "{\"working_dir\":[\"a\"]}", 0, "type string");
	check("terraform_apply", "{\"working_dir\":\"a\",\"approval_id\":7}",
	    0, "approval_id");
	check("run_shell", "{\"command\":\"\"}", 0, "shorter");
	check("run_shell", "{\"command\":\"a\\u0000b\"}", 0, "NUL");
}

ATF_TC_WITHOUT_HEAD(namespace);
ATF_TC_BODY(namespace, tc)
{
	static const char *const bad[] = { "Default", "kube_system", "-a",
	    "a-", "a.b", "", "ns with space",
	    "a123456789012345678901234567890123456789012345678901234567890123"
	};

	char args[256];
	size_t i;

	init();
	check("k8s_get_pod_status", "{\"namespace\":\"kube-system\"}", 1, NULL);
	check("k8s_get_pod_status", "{\"namespace\":\"a1\"}", 1, NULL);
	check("k8s_get_pod_status", "{\"namespace\":\"a12345678901234567890123"
	    "4567890123456789012345678901234567890\"}", 1, NULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(args, sizeof(args), "{\"namespace\":\"%s\"}", bad[i]);
		check("k8s_get_pod_status", args, 0, "namespace");
	}
}

ATF_TC_WITHOUT_HEAD(working_dir);
ATF_TC_BODY(working_dir, tc)
{
	static const char *const bad[] = { "/etc", "/", "..", "../x",
	    "envs/../../etc", "a/..", "tab\\there" };
	char args[256];
	size_t i;

	init();
	check("terraform_plan", "{\"working_dir\":\"envs/prod\"}", 1, NULL);
	check("terraform_apply", "{\"working_dir\":\"demo\",\"approval_id\":"
	    "\"apr-0123abcd\"}", 1, NULL);
	check("terraform_apply", "{\"working_dir\":\"demo\",\"approval_id\":"
	    "\"approve-me\"}", 0, "approval_id");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(args, sizeof(args), "{\"working_dir\":\"%s\"}",
		    bad[i]);
		check("terraform_plan", args, 0, "relative path");
		check("terraform_apply", args, 0, "relative path");
	}
}

ATF_TC_WITHOUT_HEAD(sessions);
ATF_TC_BODY(sessions, tc)
{
	init();
	check("write_file", "{\"path\":\"a.txt\",\"content\":\"aGVsbG8=\"}", 1,
	    NULL);
	check("write_file", "{\"path\":\"a.txt\",\"content\":\"not base64!\"}",
	    0, "base64");
	check("write_file", "{\"path\":\"/etc/passwd\",\"content\":\"\"}", 0,
	    "path");
	check("read_file", "{\"path\":\"out/r.csv\",\"session_id\":\"s-1\"}",
	    1, NULL);
	check("run_python", "{\"code\":\"print(1)\",\"session_id\":\"../x\"}",
	    0, "session_id");
	check("reset", "{}", 0, "session_id: required");
	check("close_session", "{\"session_id\":\"s1\"}", 1, NULL);
}

static int
load(const char *yaml, struct as_config *c, char *err, size_t errlen)
{
	FILE *f;

	ATF_REQUIRE((f = fopen("conf.yaml", "w")) != NULL);
	fputs(yaml, f);
	fclose(f);
	return config_load("conf.yaml", c, err, errlen);
}

ATF_TC_WITHOUT_HEAD(config_tools);
ATF_TC_BODY(config_tools, tc)
{
	struct as_config c;
	char err[1024];

	ATF_REQUIRE_MSG(load("runtime_dir: /tmp\n", &c, err, sizeof(err)) == 0,
	    "%s", err);
	ATF_CHECK_EQ(c.mcpd.tools, tools_all());
	ATF_REQUIRE_MSG(load("runtime_dir: /tmp\nmcpd:\n  tools: [run_shell, "
	    "terraform_plan]\n", &c, err, sizeof(err)) == 0, "%s", err);
	ATF_CHECK_EQ(c.mcpd.tools,
	    ((uint64_t)1 << tool_index("run_shell")) |
	    ((uint64_t)1 << tool_index("terraform_plan")));
	ATF_CHECK(load("runtime_dir: /tmp\nmcpd:\n  tools: [rm_rf]\n", &c,
	    err, sizeof(err)) == -1);
	ATF_CHECK_MSG(strstr(err, ":3:") != NULL &&
	    strstr(err, "unknown tool \"rm_rf\"") != NULL, "%s", err);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, table);
	ATF_TP_ADD_TC(tp, shape);
	ATF_TP_ADD_TC(tp, namespace);
	ATF_TP_ADD_TC(tp, working_dir);
	ATF_TP_ADD_TC(tp, sessions);
	ATF_TP_ADD_TC(tp, config_tools);
	return atf_no_error();
}
