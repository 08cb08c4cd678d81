/* SPDX-License-Identifier: ISC */
/*
 * runnerd's kubeconfig reader (kube/api.c, linked in here):
 * the current context's server, CA and user, from files or -data, and
 * clear errors for what it cannot use.
 */
#include <atf-c.h>

#include <stdio.h>
#include <string.h>

#include "kube.h"

static void
write_file(const char *path, const char *text)
{
	FILE *f;

	ATF_REQUIRE((f = fopen(path, "w")) != NULL);
	fputs(text, f);
	fclose(f);
}

/* Two contexts: the current one is "b". */
static const char two_contexts[] =
    "apiVersion: v1\nkind: Config\ncurrent-context: b\n"
    "clusters:\n"
    "- name: one\n  cluster: {server: \"https://one:6443\"}\n"
    "- name: two\n  cluster:\n    server: https://two:6443\n"
    "    certificate-authority-data: Q0EgUEVNCg==\n"	/* "CA PEM\n" */
    "users:\n"
    "- name: u1\n  user: {token: wrong}\n"
    "- name: u2\n  user: {tokenFile: tok}\n"
    "contexts:\n"
    "- name: a\n  context: {cluster: one, user: u1}\n"
    "- name: b\n  context: {cluster: two, user: u2}\n";

ATF_TC_WITHOUT_HEAD(current_context);
ATF_TC_BODY(current_context, tc)
{
	struct kube_api k;
	char why[512];

	write_file("kc", two_contexts);
	write_file("tok", "t0ken\n");
	ATF_REQUIRE_MSG(kube_load(&k, "kc", why, sizeof(why)) == 0, "%s",
	    why);
	ATF_CHECK_STREQ(k.server, "https://two:6443");
	ATF_CHECK_STREQ(k.ca_pem, "CA PEM\n");
	ATF_CHECK_STREQ(k.token, "t0ken");
	ATF_CHECK(k.cert_pem == NULL);
	kube_free(&k);
}

ATF_TC_WITHOUT_HEAD(client_certificate);
ATF_TC_BODY(client_certificate, tc)
{
	struct kube_api k;
	char why[512];

	write_file("cert.pem", "CERT\n");
	write_file("kc", "current-context: x\n"
	    "clusters: [{name: c, cluster: {server: \"https://c\","
	    " certificate-authority: ca.pem}}]\n"
	    "users: [{name: u, user: {client-certificate: cert.pem,"
	    " client-key-data: S0VZCg==}}]\n"
	    "contexts: [{name: x, context: {cluster: c, user: u}}]\n");
	write_file("ca.pem", "CA\n");
	ATF_REQUIRE_MSG(kube_load(&k, "kc", why, sizeof(why)) == 0, "%s",
	    why);
	ATF_CHECK_STREQ(k.ca_pem, "CA\n");
	ATF_CHECK_STREQ(k.cert_pem, "CERT\n");
	ATF_CHECK_STREQ(k.key_pem, "KEY\n");
	ATF_CHECK(k.token == NULL);
	kube_free(&k);
}

static void
refused(const char *text, const char *want)
{
	struct kube_api k;
	char why[512];

	write_file("kc", text);
	ATF_REQUIRE(kube_load(&k, "kc", why, sizeof(why)) == -1);
	ATF_CHECK_MSG(strstr(why, want) != NULL, "\"%s\" lacks \"%s\"", why,
	    want);
}

ATF_TC_WITHOUT_HEAD(refused);
ATF_TC_BODY(refused, tc)
{
	refused("clusters: []\n", "no current-context");
	refused("current-context: x\n"
	    "clusters: [{name: c, cluster: {server: \"http://c\"}}]\n"
	    "users: [{name: u, user: {token: t}}]\n"
	    "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
	    "must be https://");
	refused("current-context: x\n"
	    "clusters: [{name: c, cluster: {server: \"https://c\"}}]\n"
	    "users: [{name: u, user: {}}]\n"
	    "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
	    "neither a token nor a client certificate");
	refused("current-context: x\n"
	    "clusters: [{name: c, cluster: {server: \"https://c\","
	    " certificate-authority: /nonexistent/ca.pem}}]\n"
	    "users: [{name: u, user: {token: t}}]\n"
	    "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
	    "/nonexistent/ca.pem: No such file");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, current_context);
	ATF_TP_ADD_TC(tp, client_certificate);
	ATF_TP_ADD_TC(tp, refused);
	return atf_no_error();
}
