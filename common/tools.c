/* SPDX-License-Identifier: ISC */
#include <sys/types.h>

#include <ctype.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools.h"

/*
 * Schemas are JSON Schema text written with ' in place of " so that the
 * table stays legible; no schema may contain a literal apostrophe.
 * The validator below knows a small set of keywords, and tools_init()
 * refuses a schema that uses any other, so that no constraint written
 * here is silently left unchecked.
 */
#define SESSION_ID_OF(what) \
	"'session_id':{'type':'string'," \
	"'pattern':'^[A-Za-z0-9][A-Za-z0-9_.-]*$'," \
	"'minLength':1,'maxLength':64,'description':'" what "'}"
#define SESSION_ID	SESSION_ID_OF("Session to use; omitted: a new " \
	"session, whose id the result gives")
/* Every tool takes the approval a person granted when its tier asks. */
#define APPROVAL_ID \
	",'approval_id':{'type':'string','pattern':'^apr-[A-Za-z0-9_-]+$'," \
	"'maxLength':128,'description':'Approval granted through " \
	"approvalctl, when the policy asks for one'}"
#define REL_PATH(what) \
	"{'type':'string','format':'relative-path','minLength':1," \
	"'maxLength':1024,'description':'" what "'}"
/*
 * Every result names its call (request_id); one that ended before the
 * tool could answer (refused, denied, waiting for an approval, failed)
 * says how in status and why in reason, and has none of the rest.
 */
#define OUTPUT(props, required) \
	"{'type':'object','properties':{" props "," \
	"'request_id':{'type':'string','pattern':'^req-[0-9a-f]{16}$'}," \
	"'status':{'type':'string'},'reason':{'type':'string'}}," \
	"'required':['request_id'],'anyOf':[{'required':" required "}," \
	"{'required':['status','reason']}]}"
/* A stream that is not UTF-8: its text has U+FFFD for each bad byte. */
#define BYTES(stream) \
	"'" stream "_base64':{'type':'string','contentEncoding':'base64'," \
	"'description':'the exact bytes of " stream ", when they are not " \
	"UTF-8'}"
#define RUN_OUTPUT OUTPUT( \
	"'session_id':{'type':'string'}," \
	"'exit_code':{'type':'integer'},'stdout':{'type':'string'}," \
	"'stderr':{'type':'string'}," \
	BYTES("stdout") "," BYTES("stderr") "," \
	"'truncated':{'type':'boolean'}," \
	"'timed_out':{'type':'boolean'},'state_lost':{'type':'boolean'}," \
	"'memory_limit':{'type':'boolean'},'pids_limit':{'type':'boolean'}", \
	"['session_id','exit_code']")
#define SESSION_OUTPUT(flag) OUTPUT( \
	"'session_id':{'type':'string'},'" flag "':{'type':'boolean'}", \
	"['session_id']")

static const struct tool_def tools[] = {
	{
		.name = "k8s_get_pod_status",
		.title = "Pod status",
		.description = "List the pods of one Kubernetes namespace with "
		    "their phase, ready containers (n/m), restart count and "
		    "age.",
		.input_schema = "{'type':'object','properties':{'namespace':"
		    "{'type':'string','format':'dns-1123-label',"
		    "'pattern':'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',"
		    "'minLength':1,'maxLength':63,"
		    "'description':'Namespace (a DNS-1123 label)'}" APPROVAL_ID "},"
		    "'required':['namespace'],'additionalProperties':false}",
		.output_schema = OUTPUT(
		    "'namespace':{'type':'string'},'pods':{'type':'array',"
		    "'items':{'type':'object','properties':{"
		    "'name':{'type':'string'},'phase':{'type':'string'},"
		    "'ready':{'type':'boolean'},'restarts':{'type':'integer'},"
		    "'ready_containers':{'type':'string'},"
		    "'age':{'type':'string'},'age_seconds':{'type':'integer'}},"
		    "'required':['name']}}", "['namespace','pods']"),
		.hints = TOOL_READONLY | TOOL_IDEMPOTENT | TOOL_OPENWORLD,
	},
	{
		.name = "terraform_plan",
		.title = "Terraform plan",
		.description = "Plan a Terraform working directory in a "
		    "sandbox, save the plan and report its changes, "
		    "destructive ones first. Changes nothing.",
		.input_schema = "{'type':'object','properties':{'working_dir':"
		    REL_PATH("Module directory, relative to the configured "
		    "Terraform root") APPROVAL_ID "},'required':['working_dir'],"
		    "'additionalProperties':false}",
		.output_schema = OUTPUT(
		    "'working_dir':{'type':'string'},"
		    "'plan_digest':{'type':'string'},"
		    "'add':{'type':'integer'},'change':{'type':'integer'},"
		    "'destroy':{'type':'integer'},"
		    "'destructive':{'type':'boolean'},"
		    "'destructive_changes':{'type':'array','items':"
		    "{'type':'string'}},'summary':{'type':'string'}",
		    "['working_dir','destructive']"),
		.hints = TOOL_READONLY | TOOL_IDEMPOTENT | TOOL_OPENWORLD,
		.phases = PHASE_PLAN,
	},
	{
		.name = "terraform_apply",
		.title = "Terraform apply",
		.description = "Without approval_id: plan and record a pending "
		    "approval, apply nothing. With the approval_id a person "
		    "granted out of band: apply exactly the approved plan.",
		.input_schema = "{'type':'object','properties':{'working_dir':"
		    REL_PATH("Module directory, relative to the configured "
		    "Terraform root") APPROVAL_ID "},"
		    "'required':['working_dir'],'additionalProperties':false}",
		.output_schema = OUTPUT(
		    "'working_dir':{'type':'string'},"
		    "'approval_id':{'type':'string'},"
		    "'expires_at':{'type':'string'},"
		    "'plan_digest':{'type':'string'},"
		    "'summary':{'type':'string'}", "['status','working_dir']"),
		.hints = TOOL_DESTRUCTIVE | TOOL_OPENWORLD,
		.phases = PHASE_PLAN | PHASE_APPLY,
	},
	{
		.name = "run_python",
		.title = "Run Python",
		.description = "Run Python 3 code in a sandboxed session "
		    "without network; files persist between calls of the "
		    "same session.",
		.input_schema = "{'type':'object','properties':{'code':"
		    "{'type':'string','minLength':1,'maxLength':1048576},"
		    SESSION_ID APPROVAL_ID "},'required':['code'],"
		    "'additionalProperties':false}",
		.output_schema = RUN_OUTPUT,
		.hints = TOOL_DESTRUCTIVE,
	},
	{
		.name = "run_shell",
		.title = "Run shell command",
		.description = "Run a /bin/sh command line in a sandboxed "
		    "session without network; files persist between calls of "
		    "the same session.",
		.input_schema = "{'type':'object','properties':{'command':"
		    "{'type':'string','minLength':1,'maxLength':1048576},"
		    SESSION_ID APPROVAL_ID "},'required':['command'],"
		    "'additionalProperties':false}",
		.output_schema = RUN_OUTPUT,
		.hints = TOOL_DESTRUCTIVE,
	},
	{
		.name = "write_file",
		.title = "Write file",
		.description = "Write a file (content in base64) into a "
		    "session's workspace, replacing it if it exists.",
		.input_schema = "{'type':'object','properties':{'path':"
		    REL_PATH("File path inside the session workspace")
		    ",'content':{'type':'string','contentEncoding':'base64',"
		    "'maxLength':2800000},"
		    SESSION_ID APPROVAL_ID "},'required':['path','content'],"
		    "'additionalProperties':false}",
		.output_schema = OUTPUT(
		    "'session_id':{'type':'string'},'path':{'type':'string'},"
		    "'bytes':{'type':'integer'}", "['session_id','bytes']"),
		.hints = TOOL_DESTRUCTIVE | TOOL_IDEMPOTENT,
	},
	{
		.name = "read_file",
		.title = "Read file",
		.description = "Read a file from a session's workspace; the "
		    "content comes back in base64.",
		.input_schema = "{'type':'object','properties':{'path':"
		    REL_PATH("File path inside the session workspace") ","
		    SESSION_ID APPROVAL_ID "},'required':['path'],"
		    "'additionalProperties':false}",
		.output_schema = OUTPUT(
		    "'session_id':{'type':'string'},'path':{'type':'string'},"
		    "'content':{'type':'string'},'bytes':{'type':'integer'},"
		    "'truncated':{'type':'boolean'}",
		    "['session_id','content']"),
		.hints = TOOL_READONLY | TOOL_IDEMPOTENT,
	},
	{
		.name = "reset",
		.title = "Reset session",
		.description = "Clear a session's Python state (variables and "
		    "imports); its files stay.",
		.input_schema = "{'type':'object','properties':{"
		    SESSION_ID_OF("Session to reset") APPROVAL_ID "},"
		    "'required':['session_id'],'additionalProperties':false}",
		.output_schema = SESSION_OUTPUT("reset"),
		.hints = TOOL_DESTRUCTIVE | TOOL_IDEMPOTENT,
	},
	{
		.name = "close_session",
		.title = "Close session",
		.description = "End a session and delete its workspace.",
		.input_schema = "{'type':'object','properties':{"
		    SESSION_ID_OF("Session to close") APPROVAL_ID "},"
		    "'required':['session_id'],'additionalProperties':false}",
		.output_schema = SESSION_OUTPUT("closed"),
		.hints = TOOL_DESTRUCTIVE | TOOL_IDEMPOTENT,
	},
};

#define NTOOLS	(sizeof(tools) / sizeof(tools[0]))
_Static_assert(NTOOLS <= TOOLS_MAX, "the config keeps tools in a bitmask");

static json_t	*input_schemas[NTOOLS];
static json_t	*output_schemas[NTOOLS];

static const char *const keywords[] = {
	"type", "properties", "required", "additionalProperties", "items",
	"minLength", "maxLength", "pattern", "format", "contentEncoding",
	"minimum", "maximum", "enum", "description", "title", "anyOf", NULL
};

size_t
tools_count(void)
{
	return NTOOLS;
}

/* The mask with every known tool, so that a printed list reads back equal. */
uint64_t
tools_all(void)
{
	return tools_count() >= 64 ? UINT64_MAX :
	    ((uint64_t)1 << tools_count()) - 1;
}

const struct tool_def *
tool_at(size_t i)
{
	return i < NTOOLS ? &tools[i] : NULL;
}

int
tool_index(const char *name)
{
	size_t i;

	for (i = 0; i < NTOOLS; i++)
		if (strcmp(tools[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The phases a tool's calls can be in; 0 for unknown tools too. */
int
tool_phases(const char *name)
{
	int t;

	return (t = tool_index(name)) == -1 ? 0 : tools[t].phases;
}

/*
 * A call is in the apply phase only with the approval_id of an approval
 * a person granted (runnerd spends it before anything runs); without
 * one, terraform_apply only plans and records a pending approval.
 * runnerd and brokerd both ask here, so they cannot disagree.
 */
int
call_phase(const char *tool, const json_t *args)
{
	int phases = tool_phases(tool);

	if ((phases & PHASE_APPLY) &&
	    json_is_string(json_object_get(args, "approval_id")))
		return PHASE_APPLY;
	return phases & PHASE_PLAN;
}

static int
known_keyword(const char *k)
{
	size_t i;

	for (i = 0; keywords[i] != NULL; i++)
		if (strcmp(keywords[i], k) == 0)
			return 1;
	return 0;
}

/* Every keyword, in every subschema, is one the validator enforces. */
static int
schema_check(const json_t *s, char *err, size_t errlen)
{
	const char *k;
	json_t *v, *sub;
	size_t i;

	if (!json_is_object(s)) {
		snprintf(err, errlen, "a schema is not an object");
		return -1;
	}
	json_object_foreach((json_t *)s, k, v) {
		if (!known_keyword(k)) {
			snprintf(err, errlen, "unsupported keyword \"%s\"", k);
			return -1;
		}
	}
	if ((v = json_object_get(s, "properties")) != NULL)
		json_object_foreach(v, k, sub)
			if (schema_check(sub, err, errlen) == -1)
				return -1;
	if ((v = json_object_get(s, "items")) != NULL &&
	    schema_check(v, err, errlen) == -1)
		return -1;
	if ((v = json_object_get(s, "anyOf")) != NULL) {
		if (!json_is_array(v) || json_array_size(v) == 0) {
			snprintf(err, errlen, "anyOf is not a list of schemas");
			return -1;
		}
		json_array_foreach(v, i, sub)
			if (schema_check(sub, err, errlen) == -1)
				return -1;
	}
	return 0;
}

static json_t *
schema_load(const char *text, char *err, size_t errlen)
{
	json_error_t je;
	json_t *j;
	char *s, *p;

	if ((s = strdup(text)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (p = s; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	j = json_loads(s, 0, &je);
	free(s);
	if (j == NULL) {
		snprintf(err, errlen, "%s", je.text);
		return NULL;
	}
	if (schema_check(j, err, errlen) == -1) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* Parses the table's schemas once; before the sandbox, and fatal if bad. */
int
tools_init(char *err, size_t errlen)
{
	char why[256];
	size_t i;

	for (i = 0; i < NTOOLS; i++) {
		if (input_schemas[i] != NULL)
			continue;
		input_schemas[i] = schema_load(tools[i].input_schema, why,
		    sizeof(why));
		output_schemas[i] = schema_load(tools[i].output_schema, why,
		    sizeof(why));
		if (input_schemas[i] == NULL || output_schemas[i] == NULL) {
			snprintf(err, errlen, "tool %s: %s", tools[i].name,
			    why);
			return -1;
		}
	}
	return 0;
}

/* The tool as tools/list shows it (a new reference). */
json_t *
tool_describe(size_t i)
{
	const struct tool_def *t = &tools[i];

	return json_pack("{s:s, s:s, s:s, s:O, s:O, "
	    "s:{s:s, s:b, s:b, s:b, s:b}}", "name", t->name, "title", t->title,
	    "description", t->description,
	    "inputSchema", input_schemas[i], "outputSchema", output_schemas[i],
	    "annotations", "title", t->title,
	    "readOnlyHint", (t->hints & TOOL_READONLY) != 0,
	    "destructiveHint", (t->hints & TOOL_DESTRUCTIVE) != 0,
	    "idempotentHint", (t->hints & TOOL_IDEMPOTENT) != 0,
	    "openWorldHint", (t->hints & TOOL_OPENWORLD) != 0);
}

static int
verr(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (path[0] != '\0')
		snprintf(err, errlen, "%s: %s", path, msg);
	else
		snprintf(err, errlen, "%s", msg);
	return -1;
}

static size_t
utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

static int
dns_label(const char *s)
{
	size_t i, n = strlen(s);

	if (n < 1 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) &&
		    !isdigit((unsigned char)s[i]) && s[i] != '-')
			return 0;
	return 1;
}

/* Relative, never climbing: no leading '/', no "..", no control bytes. */
static int
relative_path(const char *s)
{
	if (s[0] == '\0' || s[0] == '/' || strstr(s, "..") != NULL)
		return 0;
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

static int
base64_text(const char *s)
{
	size_t i, n = strlen(s), pad = 0;

	if (n % 4 != 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (s[i] == '=') {
			pad++;
			continue;
		}
		if (pad > 0 || !(isalnum((unsigned char)s[i]) ||
		    s[i] == '+' || s[i] == '/'))
			return 0;
	}
	return pad <= 2;
}

static const struct {
	const char	*name;
	int		(*ok)(const char *);
	const char	*what;
} formats[] = {
	{ "dns-1123-label", dns_label, "must be a DNS-1123 label (at most "
	    "63 lowercase letters, digits or '-', starting and ending with "
	    "a letter or digit)" },
	{ "relative-path", relative_path, "must be a relative path "
	    "without \"..\" or control characters" },
};

static int
check_format(const char *fmt, const char *s, const char *path, char *err,
    size_t errlen)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(formats[i].name, fmt) == 0) {
			if (formats[i].ok(s))
				return 0;
			return verr(err, errlen, path, "%s", formats[i].what);
		}
	return verr(err, errlen, path, "unknown format %s", fmt);
}

static int
check_pattern(const char *re, const char *s, const char *path, char *err,
    size_t errlen)
{
	regex_t rx;
	int r;

	if (regcomp(&rx, re, REG_EXTENDED | REG_NOSUB) != 0)
		return verr(err, errlen, path, "bad pattern in schema");
	r = regexec(&rx, s, 0, NULL, 0);
	regfree(&rx);
	if (r != 0)
		return verr(err, errlen, path, "must match %s", re);
	return 0;
}

static int
check_string(const json_t *schema, const json_t *v, const char *path,
    char *err, size_t errlen)
{
	const char *s = json_string_value(v);
	json_t *k;
	size_t n;

	/* Argument strings go on to sandboxes and logs: no NUL inside. */
	if (strlen(s) != json_string_length(v))
		return verr(err, errlen, path, "must not contain NUL");
	n = utf8_chars(s);
	if ((k = json_object_get(schema, "minLength")) != NULL &&
	    (json_int_t)n < json_integer_value(k))
		return verr(err, errlen, path, "shorter than %"
		    JSON_INTEGER_FORMAT " characters", json_integer_value(k));
	if ((k = json_object_get(schema, "maxLength")) != NULL &&
	    (json_int_t)n > json_integer_value(k))
		return verr(err, errlen, path, "longer than %"
		    JSON_INTEGER_FORMAT " characters", json_integer_value(k));
	if ((k = json_object_get(schema, "format")) != NULL &&
	    check_format(json_string_value(k), s, path, err, errlen) == -1)
		return -1;
	if ((k = json_object_get(schema, "pattern")) != NULL &&
	    check_pattern(json_string_value(k), s, path, err, errlen) == -1)
		return -1;
	if ((k = json_object_get(schema, "contentEncoding")) != NULL &&
	    strcmp(json_string_value(k), "base64") == 0 && !base64_text(s))
		return verr(err, errlen, path, "must be base64");
	return 0;
}

static int
type_ok(const char *type, const json_t *v)
{
	if (strcmp(type, "object") == 0)
		return json_is_object(v);
	if (strcmp(type, "array") == 0)
		return json_is_array(v);
	if (strcmp(type, "string") == 0)
		return json_is_string(v);
	if (strcmp(type, "integer") == 0)
		return json_is_integer(v);
	if (strcmp(type, "number") == 0)
		return json_is_number(v);
	if (strcmp(type, "boolean") == 0)
		return json_is_boolean(v);
	return 0;
}

static int validate(const json_t *, const json_t *, const char *, char *,
    size_t);

static int
check_object(const json_t *schema, const json_t *v, const char *path,
    char *err, size_t errlen)
{
	json_t *props, *req, *sub, *r;
	const char *k;
	char kpath[256];
	size_t i;

	props = json_object_get(schema, "properties");
	req = json_object_get(schema, "required");
	json_array_foreach(req, i, r)
		if (json_object_get(v, json_string_value(r)) == NULL) {
			snprintf(kpath, sizeof(kpath), "%s%s%s", path,
			    path[0] ? "." : "", json_string_value(r));
			return verr(err, errlen, kpath, "required");
		}
	json_object_foreach((json_t *)v, k, sub) {
		snprintf(kpath, sizeof(kpath), "%s%s%.64s", path,
		    path[0] ? "." : "", k);
		if (props != NULL && json_object_get(props, k) != NULL) {
			if (validate(json_object_get(props, k), sub, kpath,
			    err, errlen) == -1)
				return -1;
		} else if (json_is_false(json_object_get(schema,
		    "additionalProperties")))
			return verr(err, errlen, kpath, "unknown argument");
	}
	return 0;
}

static int
validate(const json_t *schema, const json_t *v, const char *path, char *err,
    size_t errlen)
{
	json_t *k, *e;
	const char *type;
	size_t i;
	char ipath[256];

	type = json_string_value(json_object_get(schema, "type"));
	if (type != NULL && !type_ok(type, v))
		return verr(err, errlen, path, "must be of type %s", type);
	if ((k = json_object_get(schema, "enum")) != NULL) {
		json_array_foreach(k, i, e)
			if (json_equal(e, (json_t *)v))
				break;
		if (i == json_array_size(k))
			return verr(err, errlen, path, "not an allowed value");
	}
	if (json_is_string(v))
		return check_string(schema, v, path, err, errlen);
	if (json_is_integer(v)) {
		if ((k = json_object_get(schema, "minimum")) != NULL &&
		    json_integer_value(v) < json_integer_value(k))
			return verr(err, errlen, path, "below the minimum");
		if ((k = json_object_get(schema, "maximum")) != NULL &&
		    json_integer_value(v) > json_integer_value(k))
			return verr(err, errlen, path, "above the maximum");
	}
	/* One alternative must hold; the last one's complaint is told. */
	if ((k = json_object_get(schema, "anyOf")) != NULL) {
		json_array_foreach(k, i, e)
			if (validate(e, v, path, err, errlen) == 0)
				break;
		if (i == json_array_size(k))
			return -1;
	}
	if (json_is_object(v))
		return check_object(schema, v, path, err, errlen);
	if (json_is_array(v) && (k = json_object_get(schema, "items")) != NULL)
		json_array_foreach(v, i, e) {
			snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
			if (validate(k, e, ipath, err, errlen) == -1)
				return -1;
		}
	return 0;
}

/* 0 when args satisfy tool i's inputSchema; else -1 and why in err. */
int
tool_validate(size_t i, const json_t *args, char *err, size_t errlen)
{
	if (i >= NTOOLS || input_schemas[i] == NULL)
		return verr(err, errlen, "", "unknown tool");
	if (!json_is_object(args))
		return verr(err, errlen, "", "arguments must be an object");
	return validate(input_schemas[i], args, "", err, errlen);
}
