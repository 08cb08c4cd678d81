/*
 * Scrubbing: a fixture of secret-shaped strings in every position a
 * field can hold them (values, keys, nested objects, arrays, inside
 * longer text) must all be gone, and what an auditor needs must stay.
 */
#include <atf-c.h>
#include <stdlib.h>
#include <string.h>

#include "../../auditd/auditd.h"

static const char *const secrets[] = {
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
	    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	"hvs.CAESIGqjNbpzV7FmWqZyLUvX2kWvGq0yS6Ww1jZf",
	"s.Ga8jKp2Rz7XqWmNb3LcVdTyH",
	"AKIAIOSFODNN7EXAMPLE",
	"ASIAY34FZKBOKMUTVV7A",
	"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n"
	    "4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u\n"
	    "-----END RSA PRIVATE KEY-----",
};
#define NSECRETS	(sizeof(secrets) / sizeof(secrets[0]))

/* Bits of each shape that no scrubbed output may still contain. */
static const char *const fragments[] = {
	"eyJhbGci", "hvs.", "Ga8jKp2R", "AKIA", "ASIAY34", "wJalrXUt",
	"PRIVATE KEY", "MIIEpAIB",
};

static char *
scrubbed(const json_t *in)
{
	json_t *out;
	char *s;

	out = scrub_value(in);
	ATF_REQUIRE(out != NULL);
	s = cjson_dump(out);
	ATF_REQUIRE(s != NULL);
	json_decref(out);
	return s;
}

static void
check_clean(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(fragments) / sizeof(fragments[0]); i++)
		ATF_CHECK_MSG(strstr(s, fragments[i]) == NULL,
		    "\"%s\" left in %s", fragments[i], s);
}

ATF_TC_WITHOUT_HEAD(every_position);
ATF_TC_BODY(every_position, tc)
{
	json_t *fx, *nested, *arr;
	char *s, text[4096];
	size_t i;

	for (i = 0; i < NSECRETS; i++) {
		snprintf(text, sizeof(text), "Error: login with key=%s; "
		    "retry later", secrets[i]);
		nested = json_pack("{s:{s:[s, {s:s}]}}", "deep", "list",
		    secrets[i], "inner", text);
		arr = json_pack("[s, s, [s]]", secrets[i], text, secrets[i]);
		fx = json_pack("{s:s, s:s, s:o, s:o, s:i, s:s}",
		    "value", secrets[i], "output", text, "nested", nested,
		    "array", arr, secrets[i], 1, "scope", "k8s-read");
		ATF_REQUIRE(fx != NULL);
		s = scrubbed(fx);
		check_clean(s);
		ATF_CHECK_MSG(strstr(s, "\"scope\":\"k8s-read\"") != NULL, "%s",
		    s);
		ATF_CHECK_MSG(strstr(s, "retry later") != NULL, "%s", s);
		free(s);
		json_decref(fx);
	}
}

ATF_TC_WITHOUT_HEAD(many_in_one_string);
ATF_TC_BODY(many_in_one_string, tc)
{
	char text[8192] = "", *s;
	json_t *fx;
	size_t i;

	for (i = 0; i < NSECRETS; i++) {
		strlcat(text, i % 2 ? "\"" : " x=", sizeof(text));
		strlcat(text, secrets[i], sizeof(text));
	}
	fx = json_pack("{s:s}", "stdout", text);
	s = scrubbed(fx);
	check_clean(s);
	free(s);
	json_decref(fx);
}

ATF_TC_WITHOUT_HEAD(secret_keys);
ATF_TC_BODY(secret_keys, tc)
{
	static const char *const keys[] = { "token", "client_token",
	    "service_account_token", "secret_access_key", "password",
	    "Authorization", "X-Api-Key", "privateKey", "secretId",
	    "aws_secret_access_key", "vault.token", "db_passwd" };
	json_t *fx, *out;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		ATF_CHECK_MSG(scrub_key_is_secret(keys[i]), "%s", keys[i]);
		fx = json_pack("{s:{s:s, s:{s:s}}}", "auth", keys[i],
		    "plain-looking", "inner", keys[i], "hunter2");
		out = scrub_value(fx);
		ATF_REQUIRE(out != NULL);
		ATF_CHECK_STREQ(json_string_value(json_object_get(
		    json_object_get(out, "auth"), keys[i])), AUDIT_REDACTED);
		ATF_CHECK_STREQ(json_string_value(json_object_get(
		    json_object_get(json_object_get(out, "auth"), "inner"),
		    keys[i])), AUDIT_REDACTED);
		json_decref(out);
		json_decref(fx);
	}
}

/* What auditors read stays: scope, lease id, TTL, digests, ids. */
ATF_TC_WITHOUT_HEAD(kept);
ATF_TC_BODY(kept, tc)
{
	static const char *const plain[] = { "scope", "lease_id", "ttl",
	    "token_ttl", "secret_name", "namespace", "plan_digest",
	    "approval_id", "tokens_used_count" };
	const char *keep = "commit 3f786850e387550fdab836ed7e6dc881de23001b "
	    "uuid 123e4567-e89b-12d3-a456-426614174000 file results.json "
	    "sha256 9f4c6b51ff487c32d9aa740540e50d1b2ec0fbaa82e01d5ba3021e91c"
	    "fa7b617 lease aws/creds/deploy/AbCd1234 AKIA alone";
	json_t *fx, *out;
	size_t i, len;
	char *t;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		ATF_CHECK_MSG(!scrub_key_is_secret(plain[i]), "%s", plain[i]);
	ATF_CHECK((t = scrub_text(keep, strlen(keep), &len)) == NULL);
	free(t);
	fx = json_pack("{s:s, s:s, s:i, s:i, s:b, s:n}", "scope",
	    "k8s-pod-reader", "lease_id", "kubernetes/creds/x/q1W2e3", "ttl",
	    600, "token_ttl", 600, "password_set", 1, "token", NULL);
	out = scrub_value(fx);
	ATF_REQUIRE(json_equal(out, fx));
	json_decref(out);
	json_decref(fx);
}

/* A truncated PEM block (capped output) is cut to the end. */
ATF_TC_WITHOUT_HEAD(pem_truncated);
ATF_TC_BODY(pem_truncated, tc)
{
	const char *in = "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz"
	    "aC1rZXktdjEAAAAABG5vbmUAAAAEbm9u";
	size_t len;
	char *t;

	t = scrub_text(in, strlen(in), &len);
	ATF_REQUIRE(t != NULL);
	ATF_CHECK_STREQ(t, "key:\n<redacted:private-key>");
	free(t);
}

/* Two keys that scrub alike both survive, numbered. */
ATF_TC_WITHOUT_HEAD(key_clash);
ATF_TC_BODY(key_clash, tc)
{
	json_t *fx, *out;

	fx = json_pack("{s:i, s:i}", secrets[3], 1, secrets[4], 2);
	out = scrub_value(fx);
	ATF_REQUIRE(out != NULL);
	ATF_CHECK_EQ(json_object_size(out), 2);
	ATF_CHECK(json_object_get(out, "<redacted:aws-key-id>") != NULL);
	ATF_CHECK(json_object_get(out, "<redacted:aws-key-id>#2") != NULL);
	json_decref(out);
	json_decref(fx);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, every_position);
	ATF_TP_ADD_TC(tp, many_in_one_string);
	ATF_TP_ADD_TC(tp, secret_keys);
	ATF_TP_ADD_TC(tp, kept);
	ATF_TP_ADD_TC(tp, pem_truncated);
	ATF_TP_ADD_TC(tp, key_clash);
	return atf_no_error();
}
