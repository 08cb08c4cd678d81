/* SPDX-License-Identifier: ISC */
/* Canonical JSON and SHA-256 against known vectors. */
#include <atf-c.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cjson.h"

static void
check_canonical(const char *in, const char *want)
{
	char err[256], *out;
	json_t *j;

	j = cjson_parse(in, strlen(in), err, sizeof(err));
	ATF_REQUIRE_MSG(j != NULL, "%s: %s", in, err);
	out = cjson_dump(j);
	ATF_REQUIRE(out != NULL);
	ATF_CHECK_STREQ_MSG(out, want, "input %s", in);
	free(out);
	json_decref(j);
}

ATF_TC_WITHOUT_HEAD(canonical_form);
ATF_TC_BODY(canonical_form, tc)
{
	check_canonical("{\"b\":1,\"a\":[true,null,\"x\"]}",
	    "{\"a\":[true,null,\"x\"],\"b\":1}");
	/* Nested objects sorted too; whitespace gone; UTF-8 kept as is. */
	check_canonical("{ \"z\": {\"b\": 2, \"a\": \"\xc3\xa9\\n\\u0001\"}, "
	    "\"a\" : 0 }",
	    "{\"a\":0,\"z\":{\"a\":\"\xc3\xa9\\n\\u0001\",\"b\":2}}");
	/* Keys order by bytes: upper case before lower, prefixes first. */
	check_canonical("{\"ab\":1,\"a\":2,\"B\":3}",
	    "{\"B\":3,\"a\":2,\"ab\":1}");
	check_canonical("[]", "[]");
	check_canonical("\"\\u00e9\"", "\"\xc3\xa9\"");
	check_canonical("-12345678901234", "-12345678901234");
}

ATF_TC_WITHOUT_HEAD(same_meaning_same_digest);
ATF_TC_BODY(same_meaning_same_digest, tc)
{
	const char *a = "{\"tool\":\"t\",\"arguments\":{\"x\":1,\"y\":[1,2]}}";
	const char *b = "{\"arguments\":{\"y\":[1, 2],\n \"x\":1},\"tool\":\"t\"}";
	const char *c = "{\"arguments\":{\"y\":[2,1],\"x\":1},\"tool\":\"t\"}";
	char da[SHA256_HEX_LEN + 1], db[SHA256_HEX_LEN + 1];
	char dc[SHA256_HEX_LEN + 1];
	json_t *ja, *jb, *jc;

	ja = cjson_parse(a, strlen(a), NULL, 0);
	jb = cjson_parse(b, strlen(b), NULL, 0);
	jc = cjson_parse(c, strlen(c), NULL, 0);
	ATF_REQUIRE(ja && jb && jc);
	ATF_REQUIRE(cjson_digest(ja, da) == 0);
	ATF_REQUIRE(cjson_digest(jb, db) == 0);
	ATF_REQUIRE(cjson_digest(jc, dc) == 0);
	ATF_CHECK_STREQ(da, db);
	ATF_CHECK(strcmp(da, dc) != 0);
	json_decref(ja);
	json_decref(jb);
	json_decref(jc);
}

ATF_TC_WITHOUT_HEAD(known_digests);
ATF_TC_BODY(known_digests, tc)
{
	char d[SHA256_HEX_LEN + 1];
	const char *in = "{\"b\":1,\"a\":[true,null,\"x\"]}";
	json_t *j;

	sha256_hex("abc", 3, d);
	ATF_CHECK_STREQ(d,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	sha256_hex("", 0, d);
	ATF_CHECK_STREQ(d,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	j = cjson_parse(in, strlen(in), NULL, 0);
	ATF_REQUIRE(j != NULL);
	ATF_REQUIRE(cjson_digest(j, d) == 0);
	ATF_CHECK_STREQ(d,
	    "54a65415ad370228851a1da4b31b6fd42dc58b19a50d35cae759325f7388ce64");
	json_decref(j);
}

ATF_TC_WITHOUT_HEAD(file_digest);
ATF_TC_BODY(file_digest, tc)
{
	char d[SHA256_HEX_LEN + 1];
	int fd;

	fd = open("f", O_RDWR | O_CREAT | O_TRUNC, 0600);
	ATF_REQUIRE(fd != -1);
	ATF_REQUIRE(write(fd, "abc", 3) == 3);
	ATF_REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
	ATF_REQUIRE(sha256_file_hex(fd, d) == 0);
	ATF_CHECK_STREQ(d,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	close(fd);
}

/* One text must not mean two things: duplicates, junk, depth refused. */
ATF_TC_WITHOUT_HEAD(refused_input);
ATF_TC_BODY(refused_input, tc)
{
	const char *bad[] = {
		"{\"a\":1,\"a\":2}",
		"{\"a\":1} x",
		"{\"a\":",
		"\"\xff\"",
		"{\"a\":\"\\u0000\"}",
		NULL
	};
	char deep[400], err[256];
	json_t *j;
	int i;

	for (i = 0; bad[i] != NULL; i++) {
		j = cjson_parse(bad[i], strlen(bad[i]), err, sizeof(err));
		ATF_CHECK_MSG(j == NULL, "accepted %s", bad[i]);
		json_decref(j);
	}
	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	deep[200] = '\0';
	j = cjson_parse(deep, 200, err, sizeof(err));
	ATF_CHECK(j == NULL);
	ATF_CHECK(strstr(err, "nesting") != NULL);
}

/*
 * The internal channels' parse keeps a NUL inside a string, by length,
 * and its canonical form escapes it again; it refuses what the strict
 * parse refuses besides.
 */
ATF_TC_WITHOUT_HEAD(nul_in_strings);
ATF_TC_BODY(nul_in_strings, tc)
{
	const char *in = "{\"out\":\"a\\u0000b\"}";
	const char *bad[] = {
		"{\"a\":1,\"a\":2}",
		"{\"a\\u0000\":1}",
		"\"\xff\"",
		NULL
	};
	char err[256], *out;
	json_t *j, *v;
	int i;

	ATF_CHECK(cjson_parse(in, strlen(in), NULL, 0) == NULL);
	j = cjson_parse_nul(in, strlen(in), err, sizeof(err));
	ATF_REQUIRE_MSG(j != NULL, "%s", err);
	v = json_object_get(j, "out");
	ATF_REQUIRE(json_string_length(v) == 3);
	ATF_CHECK(memcmp(json_string_value(v), "a\0b", 3) == 0);
	ATF_REQUIRE((out = cjson_dump(j)) != NULL);
	ATF_CHECK_STREQ(out, in);
	free(out);
	json_decref(j);
	for (i = 0; bad[i] != NULL; i++) {
		j = cjson_parse_nul(bad[i], strlen(bad[i]), err, sizeof(err));
		ATF_CHECK_MSG(j == NULL, "accepted %s", bad[i]);
		json_decref(j);
	}
}

static void
summary_is(const char *text, int base64, json_int_t bytes, const char *hex)
{
	json_t *j = content_summary(text, strlen(text), base64);

	ATF_REQUIRE(j != NULL);
	ATF_CHECK_EQ_MSG(json_integer_value(json_object_get(j, "bytes")),
	    bytes, "%s: bytes", text);
	ATF_CHECK_STREQ_MSG(json_string_value(json_object_get(j, "sha256")),
	    hex, "%s: sha256", text);
	ATF_CHECK_EQ(json_object_size(j), 2);
	json_decref(j);
}

/* Base64 is measured as the bytes it stands for, padding or none. */
ATF_TC_WITHOUT_HEAD(content_summary);
ATF_TC_BODY(content_summary, tc)
{
	/* printf 'hello world' | sha256sum, and '!' added, and "" */
	summary_is("aGVsbG8gd29ybGQ=", 1, 11, "b94d27b9934d3e08a52e52d7da7dab"
	    "fac484efe37a5380ee9088f7ace2efcde9");
	summary_is("aGVsbG8gd29ybGQh", 1, 12, "7509e5bda0c762d2bac7f90d758b5b"
	    "2263fa01ccbc542ab5e3df163be08e6ca9");
	summary_is("", 1, 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934c"
	    "a495991b7852b855");
	/* Not base64 (length, alphabet), and text: the text's own. */
	summary_is("hello world", 1, 11, "b94d27b9934d3e08a52e52d7da7dabfac48"
	    "4efe37a5380ee9088f7ace2efcde9");
	summary_is("!!!!", 1, 4, "2f74420af441bf2d45de7eba6b1b9aa6658f33d3767"
	    "3190b5eb91c113588900e");
	summary_is("hello world!", 0, 12, "7509e5bda0c762d2bac7f90d758b5b2263"
	    "fa01ccbc542ab5e3df163be08e6ca9");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, content_summary);
	ATF_TP_ADD_TC(tp, canonical_form);
	ATF_TP_ADD_TC(tp, same_meaning_same_digest);
	ATF_TP_ADD_TC(tp, known_digests);
	ATF_TP_ADD_TC(tp, file_digest);
	ATF_TP_ADD_TC(tp, refused_input);
	ATF_TP_ADD_TC(tp, nul_in_strings);
	return atf_no_error();
}
