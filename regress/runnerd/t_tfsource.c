/* SPDX-License-Identifier: ISC */
/*
 * The reading of a module's files for its module calls and where its
 * state goes (helperlib/tfsource.c): every way of writing a remote source
 * that terraform would fetch, and every backend or cloud block, is
 * refused, naming the file, line and source; local calls and
 * look-alikes elsewhere pass; what the reading cannot follow is refused
 * rather than guessed.
 */
#include <atf-c.h>
#include <stdio.h>
#include <string.h>

#include "tfsource.h"

static char why[1024];
static struct tf_facts facts;

static int
ok(const char *rel, const char *text)
{
	why[0] = '\0';
	memset(&facts, 0, sizeof(facts));
	return tf_sources_ok(rel, text, strlen(text), &facts, why,
	    sizeof(why));
}

#define REFUSED(rel, text, want) do {					\
	ATF_CHECK_MSG(!ok(rel, text), "passed: %s", text);		\
	ATF_CHECK_MSG(strstr(why, want) != NULL, "%s: want \"%s\": %s",	\
	    text, want, why);						\
} while (0)

#define PASSES(rel, text) \
	ATF_CHECK_MSG(ok(rel, text), "refused: %s: %s", text, why)

ATF_TC_WITHOUT_HEAD(remote_sources_refused);
ATF_TC_BODY(remote_sources_refused, tc)
{
	static const char *const srcs[] = {
		"git::file:///work/repo.git", "git::https://example.com/r.git",
		"hg::http://example.com/r", "https://example.com/m.zip",
		"s3::https://s3.amazonaws.com/b/m.zip", "gcs::https://x/m",
		"github.com/hashicorp/example", "bitbucket.org/a/b",
		"hashicorp/consul/aws", "app.terraform.io/org/m/aws",
		"/abs/path", "modules/x", ".\\\\m", "", NULL
	};
	char text[512], want[512];
	size_t i;

	for (i = 0; srcs[i] != NULL; i++) {
		snprintf(text, sizeof(text), "# a call\nmodule \"m\" {\n"
		    "  source = \"%s\"\n}\n", srcs[i]);
		snprintf(want, sizeof(want), "main.tf:3: module source \"%s\" "
		    "is refused", srcs[i]);
		if (strstr(srcs[i], "\\") != NULL)
			snprintf(want, sizeof(want), "not one plain string");
		REFUSED("main.tf", text, want);
	}
	REFUSED("sub/x.tf", "module \"m\" { source = \"git::x\" }",
	    "sub/x.tf:1: module source \"git::x\"");
	REFUSED("x.tf", "module m {\n source = \"git::x\"\n}\n", "git::x");
	REFUSED("x.tf", "\xef\xbb\xbfmodule \"m\" {\nsource=\"git::x\"\n}",
	    "git::x");
	REFUSED("x.tf", "resource \"a\" \"b\" {}\nmodule \"m\" {\n"
	    "  count = 1\n  source = \"hg::y\"\n}\n", "x.tf:4: module "
	    "source \"hg::y\"");
}

ATF_TC_WITHOUT_HEAD(not_one_string_refused);
ATF_TC_BODY(not_one_string_refused, tc)
{
	static const char *const vals[] = {
		"\"./a\" != \"\" ? \"git::x\" : \"./b\"", "\"${\"git::x\"}\"",
		"\"./${x}\"", "\"%{if true}git::x%{endif}\"", "(\"./a\")",
		"local.src", "<<EOF\ngit::x\nEOF", "\"./a\" /* c */",
		"\"\\u002e/a\"", "\"$${x}\"", NULL
	};
	char text[512];
	size_t i;

	for (i = 0; vals[i] != NULL; i++) {
		snprintf(text, sizeof(text), "module \"m\" {\n  source = %s\n"
		    "}\n", vals[i]);
		REFUSED("m.tf", text, "m.tf:2: a module source that is not "
		    "one plain string is refused");
	}
}

ATF_TC_WITHOUT_HEAD(local_and_lookalikes_pass);
ATF_TC_BODY(local_and_lookalikes_pass, tc)
{
	PASSES("main.tf", "module \"a\" {\n  source = \"./modules/a\"\n}\n"
	    "module \"b\" { source = \"../b\" }\n"
	    "module \"c\" {\n  source = \"./c\" # why\n  n = 1\n}\n"
	    "module \"d\" {\n  source    = \"./d\" // why\n}\n");
	/* A provider's source, a resource's, a variable's default. */
	PASSES("main.tf", "terraform {\n  required_providers {\n"
	    "    aws = {\n      source = \"hashicorp/aws\"\n    }\n"
	    "    null = { source = \"registry.terraform.io/hashicorp/null\" }"
	    "\n  }\n}\n"
	    "resource \"aws_s3_object\" \"o\" {\n  source = \"git::x\"\n}\n"
	    "variable \"v\" {\n  default = { source = \"git::x\" }\n}\n"
	    "resource \"x\" \"module\" {\n  source = \"s3::y\"\n}\n");
	/* source in a nested object of a module's arguments. */
	PASSES("main.tf", "module \"a\" {\n  source = \"./a\"\n"
	    "  tags = { source = \"git::x\" }\n"
	    "  ok = var.source == \"git::x\"\n}\n");
	/* Strings, heredocs and comments that only look like code. */
	PASSES("main.tf", "locals {\n  a = \"module \\\"m\\\" { source = "
	    "\\\"git::x\\\" }\"\n  b = <<-EOT\n    }\n    module \"m\" {\n"
	    "    source = \"git::x\"\n    EOT\n  c = \"${\"}\"}\"\n}\n"
	    "/* module \"m\" {\n source = \"git::x\" } */\n"
	    "# module \"m\" { source = \"git::x\" }\n");
	PASSES("notes.txt", "module \"m\" { source = \"git::x\" }");
	PASSES("x.tf", "");
	PASSES("x.tf", "locals { s = \"caf\xc3\xa9\" } # \xe2\x80\x94\n");
}

/*
 * The reading must not end a heredoc or string where terraform goes
 * on, nor go on where terraform ends it: a call after each is seen.
 */
ATF_TC_WITHOUT_HEAD(lexical_edges);
ATF_TC_BODY(lexical_edges, tc)
{
	REFUSED("x.tf", "locals {\n  a = <<EOT\n  text ${\"EOT\"}\n"
	    "  EOT  \n}\nmodule \"m\" {\n  source = \"git::x\"\n}\n",
	    "x.tf:7: module source \"git::x\"");
	REFUSED("x.tf", "locals {\n  a = <<EOT\n${\nEOT\n}\nEOT\n}\n"
	    "module \"m\" {\n  source = \"git::x\"\n}\n", "x.tf:9:");
	REFUSED("x.tf", "locals { a = \"$${\" }\nmodule \"m\" {\n"
	    "  source = \"git::x\"\n}\n", "x.tf:3:");
	REFUSED("x.tf", "locals { a = \"\\\"}\" }\nmodule \"m\" {\n"
	    "  source = \"git::x\"\n}\n", "x.tf:3:");
	REFUSED("x.tf", "locals { a = \"x\" } /* } */ module \"m\" {\n"
	    "  source = \"git::x\"\n}\n", "x.tf:2:");
	REFUSED("x.tf", "locals { a = \"x\ny\" }\n", "a newline in a quoted "
	    "string");
	REFUSED("x.tf", "locals { a = <<EOT\nx\n}\n", "a heredoc that does "
	    "not end");
	REFUSED("x.tf", "locals { a = 1 \n", "a bracket that does not close");
	REFUSED("x.tf", "locals { a = [1 }\n", "unbalanced brackets");
	REFUSED("x.tf", "/* x", "a comment that does not end");
	REFUSED("x.tf", "\xc2\xa0module \"m\" { source = \"git::x\" }",
	    "x.tf:1: a character outside ASCII");
	REFUSED("x.tf", "locals { a = 1 << 2 }", "<< that starts no heredoc");
}

/* Sequences in strings in sequences: bounded, refused past the bound. */
ATF_TC_WITHOUT_HEAD(deep_templates);
ATF_TC_BODY(deep_templates, tc)
{
	static char text[8 * 1024];
	size_t i, n = 0;

	for (i = 0; i < 1000; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "\"${");
	REFUSED("x.tf", text, "template sequences nested too deep");
	n = (size_t)snprintf(text, sizeof(text), "locals { a = ");
	for (i = 0; i < 100; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "\"${");
	for (i = 0; i < 100; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "}\"");
	snprintf(text + n, sizeof(text) - n, " }\n");
	PASSES("x.tf", text);
}

ATF_TC_WITHOUT_HEAD(json);
ATF_TC_BODY(json, tc)
{
	PASSES("m.tf.json", "{\"module\": {\"a\": {\"source\": \"./a\"}},"
	    " \"terraform\": {\"required_providers\": {\"aws\": "
	    "{\"source\": \"hashicorp/aws\"}}}}");
	PASSES("m.tf.json", "{\"resource\": {\"x\": {\"y\": {\"source\": "
	    "\"git::x\"}}}}");
	REFUSED("m.tf.json", "{\"module\": {\"a\": {\"source\": \"git::x\"}}}",
	    "m.tf.json: module source \"git::x\" is refused");
	REFUSED("m.tf.json", "{\"module\": [{\"//\": \"c\"}, {\"a\": "
	    "[{\"source\": \"./a\"}, {\"source\": \"hg::y\"}]}]}",
	    "module source \"hg::y\"");
	REFUSED("m.tf.json", "{\"module\": {\"a\": {\"source\": \"${x}\"}}}",
	    "not one plain string");
	REFUSED("m.tf.json", "{\"module\": {\"a\": {\"source\": 1}}}",
	    "not one plain string");
	REFUSED("m.tf.json", "{\"module\": {\"a\": {\"source\": \"./a\"}},"
	    " \"module\": {\"b\": {\"source\": \"git::x\"}}}",
	    "m.tf.json:1: not a JSON object");
	REFUSED("m.tf.json", "{\"module\": \"git::x\"}", "neither an object");
	REFUSED("m.tf.json", "[1]", "not a JSON object");
}

/* The state is runnerd's: no backend or cloud block, in either syntax. */
ATF_TC_WITHOUT_HEAD(state_elsewhere_refused);
ATF_TC_BODY(state_elsewhere_refused, tc)
{
	REFUSED("main.tf", "terraform {\n  required_version = \">= 1.0\"\n"
	    "  backend \"local\" {\n    path = \"/tmp/x.tfstate\"\n  }\n}\n",
	    "main.tf:3: a backend block is refused");
	REFUSED("b.tf", "terraform {\n  backend \"http\" {\n"
	    "    address = \"http://127.0.0.1:1/\"\n  }\n}\n",
	    "b.tf:2: a backend block is refused");
	REFUSED("c.tf", "resource \"terraform_data\" \"x\" {}\n"
	    "terraform { cloud {\n organization = \"o\"\n} }\n",
	    "c.tf:2: a cloud block is refused");
	REFUSED("sub/override.tf", "terraform {\n backend \"local\" {}\n}",
	    "sub/override.tf:2: a backend block");
	REFUSED("m.tf.json", "{\"terraform\": {\"backend\": {\"local\": "
	    "{\"path\": \"x\"}}}}", "m.tf.json: a backend block");
	REFUSED("m.tf.json", "{\"terraform\": [{\"required_version\": "
	    "\"1\"}, {\"cloud\": {}}]}", "m.tf.json: a cloud block");
	REFUSED("m.tf.json", "{\"terraform\": 3}", "\"terraform\" is "
	    "neither an object");
	/* The words elsewhere: attributes, labels, strings, other blocks. */
	PASSES("main.tf", "terraform {\n  required_providers {\n"
	    "    null = { source = \"hashicorp/null\" }\n  }\n}\n"
	    "resource \"x\" \"backend\" {\n  backend = \"cloud\"\n"
	    "  cloud { backend = 1 }\n}\n"
	    "locals {\n  terraform = { backend = \"b\" }\n}\n"
	    "# terraform { backend \"local\" {} }\n");
	PASSES("m.tf.json", "{\"terraform\": {\"required_version\": "
	    "\">= 1\"}, \"resource\": {\"x\": {\"y\": {\"backend\": 1}}}}");
}

#define PROVISIONERS(rel, text, n, at) do {				\
	PASSES(rel, text);						\
	ATF_CHECK_EQ_MSG(facts.provisioners, n, "%s: %d provisioners",	\
	    text, facts.provisioners);					\
	ATF_CHECK_STREQ_MSG(facts.first, at, "%s", text);		\
} while (0)

/* Every provisioner block is counted, in every block kind and syntax. */
ATF_TC_WITHOUT_HEAD(provisioners_counted);
ATF_TC_BODY(provisioners_counted, tc)
{
	PROVISIONERS("main.tf", "resource \"terraform_data\" \"x\" {\n"
	    "  provisioner \"local-exec\" {\n    command = \"true\"\n  }\n"
	    "  provisioner \"local-exec\" {\n    when = destroy\n"
	    "    command = \"true\"\n  }\n}\n", 2, "main.tf:2");
	/* terraform's plan leaves a removed block's out. */
	PROVISIONERS("r.tf", "# gone\nremoved {\n  from = terraform_data.x\n"
	    "  lifecycle { destroy = true }\n  provisioner \"local-exec\" {\n"
	    "    when = destroy\n    command = \"id\"\n  }\n}\n", 1, "r.tf:5");
	PROVISIONERS("n.tf", "resource \"a\" \"b\" {\n  connection { host = "
	    "\"h\" }\n  provisioner \"remote-exec\" { inline = [\"x\"] }\n"
	    "  provisioner \"file\" {\n source = \"a\"\n destination = \"b\""
	    "\n }\n}\n", 2, "n.tf:3");
	/* The word alone, in expressions, strings and comments, is none. */
	PROVISIONERS("w.tf", "locals {\n  provisioner = \"provisioner \\\"x\\\" {\"\n"
	    "  y = local.provisioner\n}\n# provisioner \"local-exec\" {}\n"
	    "output \"provisioner\" { value = 1 }\n", 0, "");
	PROVISIONERS("m.tf.json", "{\"resource\": {\"terraform_data\": {\"x\": "
	    "{\"provisioner\": [{\"local-exec\": {\"command\": \"a\"}}, "
	    "{\"local-exec\": {\"command\": \"b\"}}]}}}, \"removed\": "
	    "[{\"from\": \"x.y\", \"provisioner\": {\"local-exec\": "
	    "{\"command\": \"c\"}}}]}", 3, "m.tf.json:1");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, provisioners_counted);
	ATF_TP_ADD_TC(tp, state_elsewhere_refused);
	ATF_TP_ADD_TC(tp, remote_sources_refused);
	ATF_TP_ADD_TC(tp, not_one_string_refused);
	ATF_TP_ADD_TC(tp, local_and_lookalikes_pass);
	ATF_TP_ADD_TC(tp, lexical_edges);
	ATF_TP_ADD_TC(tp, deep_templates);
	ATF_TP_ADD_TC(tp, json);
	return atf_no_error();
}
