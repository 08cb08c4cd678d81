/* SPDX-License-Identifier: ISC */
/* The configuration file: defaults, errors as file:line: what, -nv. */
#include <atf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

static void
write_file(const char *path, const char *text)
{
	FILE *f;

	ATF_REQUIRE((f = fopen(path, "w")) != NULL);
	ATF_REQUIRE(fputs(text, f) >= 0);
	ATF_REQUIRE(fclose(f) == 0);
}

static void
expect_error(const char *text, const char *want)
{
	struct as_config c;
	char err[1024];

	write_file("c.yaml", text);
	ATF_CHECK_EQ_MSG(config_load("c.yaml", &c, err, sizeof(err)), -1,
	    "accepted: %s", text);
	ATF_CHECK_MSG(strstr(err, want) != NULL, "got \"%s\", want \"%s\"",
	    err, want);
}

ATF_TC_WITHOUT_HEAD(defaults);
ATF_TC_BODY(defaults, tc)
{
	struct as_config c;
	char err[1024];

	write_file("c.yaml", "");
	ATF_REQUIRE_MSG(config_load("c.yaml", &c, err, sizeof(err)) == 0,
	    "%s", err);
	ATF_CHECK_STREQ(c.runtime_dir, "/run/agent-sandbox");
	ATF_CHECK_STREQ(c.seccomp, "enforce");
	ATF_CHECK_EQ(c.mcpd.max_line, 4 * 1024 * 1024);
	ATF_CHECK_STREQ(c.runnerd.backend, "gvisor");
	/* Sockets admit nobody until the configuration names them. */
	ATF_CHECK_EQ(c.runnerd.peers.nuids + c.runnerd.peers.ngids, 0);
	ATF_CHECK_EQ(acl_allows(&c.runnerd.peers, 0, NULL, 0), 0);
	ATF_CHECK_EQ(c.auditd.ack_timeout, 5);
	ATF_CHECK_EQ(c.runnerd.audit_spool_after, 500);
	ATF_CHECK_EQ(c.runnerd.audit_spool_max, 64 * 1024 * 1024);
	ATF_CHECK_EQ(c.runnerd.terraform_pool, 0);
}

ATF_TC_WITHOUT_HEAD(values);
ATF_TC_BODY(values, tc)
{
	struct as_config c;
	char err[1024];
	gid_t groups[] = { 5, 7 };

	write_file("c.yaml",
	    "runtime_dir: /tmp/x\n"
	    "mcpd:\n  max_line: 64k\n  call_timeout: 2m\n"
	    "runnerd:\n  peers: { users: [root, 1234], groups: [7] }\n"
	    "  audit_spool_after: 2s\n  audit_spool_max: 1M\n"
	    "  terraform_pool: 3\n"
	    "auditd:\n  rotate_size: 1G\n  ack_timeout: 2s\n");
	ATF_REQUIRE_MSG(config_load("c.yaml", &c, err, sizeof(err)) == 0,
	    "%s", err);
	ATF_CHECK_STREQ(c.runtime_dir, "/tmp/x");
	ATF_CHECK_EQ(c.mcpd.max_line, 64 * 1024);
	ATF_CHECK_EQ(c.mcpd.call_timeout, 120);
	ATF_CHECK_EQ(c.auditd.rotate_size, 1024L * 1024 * 1024);
	ATF_CHECK_EQ(c.auditd.ack_timeout, 2);
	ATF_CHECK_EQ(c.runnerd.audit_spool_after, 2000);
	ATF_CHECK_EQ(c.runnerd.audit_spool_max, 1024 * 1024);
	ATF_CHECK_EQ(c.runnerd.terraform_pool, 3);
	ATF_CHECK_EQ(c.runnerd.peers.nuids, 2);
	ATF_CHECK(acl_allows(&c.runnerd.peers, 0, NULL, 0));
	ATF_CHECK(acl_allows(&c.runnerd.peers, 1234, NULL, 0));
	ATF_CHECK(!acl_allows(&c.runnerd.peers, 1235, NULL, 0));
	ATF_CHECK(acl_allows(&c.runnerd.peers, 99, groups, 2));
	ATF_CHECK(!acl_allows(&c.runnerd.peers, 99, groups, 1));
}

ATF_TC_WITHOUT_HEAD(errors);
ATF_TC_BODY(errors, tc)
{
	expect_error("runtime_dir: /x\nbogus: 1\n",
	    "c.yaml:2: unknown key \"bogus\"");
	expect_error("mcpd:\n  user: x\n  colour: red\n",
	    "c.yaml:3: unknown key \"colour\"");
	expect_error("mcpd:\n  max_line: lots\n",
	    "c.yaml:2: max_line: \"lots\" is not a number");
	expect_error("mcpd:\n  max_line: 1\n", "c.yaml:2: max_line: 1 is out of range");
	expect_error("mcpd:\n  call_timeout: 5y\n", "c.yaml:2: call_timeout: bad duration");
	expect_error("auditd:\n  ack_timeout: 0\n",
	    "c.yaml:2: ack_timeout: 0 is out of range");
	expect_error("runnerd:\n  backend: docker\n",
	    "c.yaml:2: backend: \"docker\" is not one of the allowed values");
	expect_error("runnerd:\n  peers: { users: [no-such-user-here] }\n",
	    "c.yaml:2: unknown user \"no-such-user-here\"");
	expect_error("runnerd:\n  peers: { groups: [no-such-group-here] }\n",
	    "c.yaml:2: unknown group");
	expect_error("runnerd:\n  peers: { uids: [1] }\n",
	    "c.yaml:2: unknown key \"uids\"");
	expect_error("runnerd:\n  peers: root\n", "c.yaml:2: peers: expected");
	expect_error("mcpd: 3\n", "c.yaml:1: mcpd: expected a mapping");
	expect_error("mcpd:\n  user: [a]\n", "c.yaml:2: user: expected a string");
	expect_error("mcpd:\n  user: a\n  user: b\n", "c.yaml:3: duplicate key");
	expect_error("mcpd: {\n", "c.yaml:2:");
	expect_error("runtime_dir: relative\n", "runtime_dir must be an absolute");
	/* 10 s x 3 tries and 200 + 400 ms between them: 30.6 s. */
	expect_error("runnerd:\n  peer_timeout: 30s\n",
	    "runnerd.peer_timeout (30 s) must be at least brokerd's longest "
	    "Vault request, vault.request_timeout x (retries + 1) and the "
	    "waits between them (30600 ms)");
	expect_error("runnerd:\n  audit_spool_after: 5m\n",
	    "c.yaml:2: audit_spool_after: bad duration \"5m\" (use ms or s)");
	expect_error("runnerd:\n  peer_timeout: 40s\n  audit_spool_after: 40s\n",
	    "runnerd.audit_spool_after (40000 ms) must be below "
	    "runnerd.peer_timeout (40 s), or 0");
	expect_error("runnerd:\n  terraform_pool: 17\n",
	    "c.yaml:2: terraform_pool: 17 is out of range");
	expect_error("runnerd:\n  terraform_pool: -1\n",
	    "c.yaml:2: terraform_pool: -1 is out of range");
	expect_error("a: &x 1\nb: *x\n", "c.yaml:1: anchors are not supported");
	expect_error("---\na: 1\n---\nb: 2\n", "only one document");
}

ATF_TC_WITHOUT_HEAD(missing_file);
ATF_TC_BODY(missing_file, tc)
{
	struct as_config c;
	char err[1024];

	ATF_CHECK_EQ(config_load("nope.yaml", &c, err, sizeof(err)), -1);
	ATF_CHECK(strstr(err, "nope.yaml: No such file") != NULL);
}

/* What -nv prints is itself a configuration that loads to the same. */
ATF_TC_WITHOUT_HEAD(print_round_trip);
ATF_TC_BODY(print_round_trip, tc)
{
	struct as_config a, b;
	char err[1024];
	FILE *f;
	int saved;

	write_file("c.yaml",
	    "runtime_dir: /tmp/y\nmcpd:\n  max_inflight: 3\n"
	    "runnerd:\n  audit_spool_after: 250ms\n"
	    "approvald:\n  operators: { users: [0], groups: [0] }\n");
	ATF_REQUIRE(config_load("c.yaml", &a, err, sizeof(err)) == 0);
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
	memset(a.path, 0, sizeof(a.path));
	memset(b.path, 0, sizeof(b.path));
	ATF_CHECK(memcmp(&a, &b, sizeof(a)) == 0);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, defaults);
	ATF_TP_ADD_TC(tp, values);
	ATF_TP_ADD_TC(tp, errors);
	ATF_TP_ADD_TC(tp, missing_file);
	ATF_TP_ADD_TC(tp, print_round_trip);
	return atf_no_error();
}
