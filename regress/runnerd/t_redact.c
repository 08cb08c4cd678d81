/* SPDX-License-Identifier: ISC */
/*
 * The credential cut out of a sandbox's result (runnerd/redact.c): its
 * bytes, base64 and hex, and a JSON credential's values one by one,
 * wherever they stand in the result; nothing else is touched.
 */
#include <sys/mman.h>

#include <atf-c.h>
#include <string.h>
#include <unistd.h>

#include "runnerd.h"

static struct secret *
loaded(const char *bytes)
{
	struct secret *s;
	int fd;

	ATF_REQUIRE((fd = memfd_create("cred", MFD_CLOEXEC)) != -1);
	ATF_REQUIRE(write(fd, bytes, strlen(bytes)) == (ssize_t)strlen(bytes));
	/* It is read from its start, whatever its offset. */
	ATF_REQUIRE((s = secret_load(fd)) != NULL);
	ATF_CHECK_EQ(lseek(fd, 0, SEEK_CUR), (off_t)strlen(bytes));
	close(fd);
	return s;
}

static char *
redacted(const struct secret *s, const char *json)
{
	json_t *j = json_loads(json, 0, NULL);
	char *out;

	ATF_REQUIRE(j != NULL);
	secret_redact(j, s);
	out = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	return out;
}

#define CUT(s, in, want) do {						\
	char *got_ = redacted(s, in);					\
	ATF_CHECK_STREQ_MSG(got_, want, "%s", in);			\
	free(got_);							\
} while (0)

ATF_TC_WITHOUT_HEAD(token);
ATF_TC_BODY(token, tc)
{
	/* printf %s tok-5ecret-0f-a-call | base64; | xxd -p */
	struct secret *s = loaded("tok-5ecret-0f-a-call");

	CUT(s, "{\"stdout\":\"cred=tok-5ecret-0f-a-call\\n\"}",
	    "{\"stdout\":\"cred=<redacted:credential>\\n\"}");
	CUT(s, "{\"a\":[\"dG9rLTVlY3JldC0wZi1hLWNhbGw=\","
	    "{\"b\":\"x746f6b2d356563726574\"}]}",
	    "{\"a\":[\"<redacted:credential>\",{\"b\":\"x746f6b2d356563726574\"}]}");
	CUT(s, "{\"h\":\"746f6b2d3565637265742d30662d612d63616c6c and "
	    "746F6B2D3565637265742D30662D612D63616C6C\"}",
	    "{\"h\":\"<redacted:credential> and <redacted:credential>\"}");
	/* Twice, glued, and a near miss kept. */
	CUT(s, "{\"o\":\"tok-5ecret-0f-a-calltok-5ecret-0f-a-call tok-5ecret-0f\"}",
	    "{\"o\":\"<redacted:credential><redacted:credential> tok-5ecret-0f\"}");
	CUT(s, "{\"n\":1,\"t\":true,\"s\":\"plain\"}",
	    "{\"n\":1,\"s\":\"plain\",\"t\":true}");
	secret_free(s);
}

/*
 * Output that is not UTF-8 comes as base64 too (output.c): the
 * credential is cut from its bytes at any offset, not only where its
 * own base64 would line up; a NAME_base64 that is not base64 is text.
 */
ATF_TC_WITHOUT_HEAD(stream_bytes);
ATF_TC_BODY(stream_bytes, tc)
{
	/* printf '\377tok-5ecret-0f-a-call\0' | base64 */
	struct secret *s = loaded("tok-5ecret-0f-a-call");

	CUT(s, "{\"stdout_base64\":\"/3Rvay01ZWNyZXQtMGYtYS1jYWxsAA==\"}",
	    "{\"stdout_base64\":\"/zxyZWRhY3RlZDpjcmVkZW50aWFsPgA=\"}");
	CUT(s, "{\"stdout_base64\":\"/wA=\"}", "{\"stdout_base64\":\"/wA=\"}");
	CUT(s, "{\"x_base64\":\"cred=tok-5ecret-0f-a-call\"}",
	    "{\"x_base64\":\"cred=<redacted:credential>\"}");
	secret_free(s);
}

/*
 * brokerd's credentials: each secret field, printed alone, is cut; the
 * namespace, server and CA, which honest output names, stay.
 */
ATF_TC_WITHOUT_HEAD(json_parts);
ATF_TC_BODY(json_parts, tc)
{
	struct secret *s = loaded("{\"access_key\":\"AKIAEXAMPLEEXAMPLE12\","
	    "\"secret_key\":\"wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY\","
	    "\"session_token\":\"FwoGZXIvYXdzEXAMPLESESSION\","
	    "\"lease_id\":\"aws/sts/apply/lease-1234\",\"ttl\":900}");

	CUT(s, "{\"plan\":\"secret = wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY\","
	    "\"id\":\"AKIAEXAMPLEEXAMPLE12\",\"t\":\"FwoGZXIvYXdzEXAMPLESESSION\","
	    "\"l\":\"aws/sts/apply/lease-1234\"}",
	    "{\"id\":\"<redacted:credential>\",\"l\":\"aws/sts/apply/lease-1234\","
	    "\"plan\":\"secret = <redacted:credential>\",\"t\":"
	    "\"<redacted:credential>\"}");
	secret_free(s);
	s = loaded("{\"token\":\"eyJhbGciOiJSUzI1NiJ9.pod-reader-token\","
	    "\"namespace\":\"demo-app\",\"server\":\"https://127.0.0.1:6443\","
	    "\"service_account\":\"pod-reader-sa\",\"ca\":\"-----BEGIN "
	    "CERTIFICATE-----\"}");
	CUT(s, "{\"pods\":[{\"namespace\":\"demo-app\",\"name\":\"web\"}],"
	    "\"stdout\":\"eyJhbGciOiJSUzI1NiJ9.pod-reader-token on "
	    "https://127.0.0.1:6443 as pod-reader-sa\"}",
	    "{\"pods\":[{\"name\":\"web\",\"namespace\":\"demo-app\"}],"
	    "\"stdout\":\"<redacted:credential> on https://127.0.0.1:6443 as "
	    "pod-reader-sa\"}");
	secret_free(s);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, token);
	ATF_TP_ADD_TC(tp, stream_bytes);
	ATF_TP_ADD_TC(tp, json_parts);
	return atf_no_error();
}
