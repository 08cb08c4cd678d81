/* SPDX-License-Identifier: ISC */
/* The secret's way out: file format, sealed memfd, "<redacted>". */
#include <sys/mman.h>

#include <atf-c.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../brokerd/brokerd.h"

static const struct brokerd_scope kube_scope = {
	.name = "pod-reader", .engine = "kubernetes",
	.kube_server = "https://10.0.0.1:6443",
};
static const struct brokerd_scope aws_scope = {
	.name = "cloud", .engine = "aws",
};

static json_t *
data_of(const char *json)
{
	json_t *j;

	ATF_REQUIRE((j = json_loads(json, 0, NULL)) != NULL);
	return j;
}

ATF_TC_WITHOUT_HEAD(redacted);
ATF_TC_BODY(redacted, tc)
{
	struct secret s = { NULL, 0 };
	char line[128];

	ATF_REQUIRE(secret_set(&s, "hunter2", 7) == 0);
	snprintf(line, sizeof(line), "token %s", secret_fmt(&s));
	ATF_CHECK_STREQ(line, "token <redacted>");
	secret_clear(&s);
	ATF_CHECK(s.buf == NULL && s.len == 0);
}

ATF_TC_WITHOUT_HEAD(kubernetes_file);
ATF_TC_BODY(kubernetes_file, tc)
{
	struct secret s = { NULL, 0 };
	json_t *d, *f;

	cred_init();
	d = data_of("{\"service_account_token\":\"tok\","
	    "\"service_account_name\":\"v-token-x\","
	    "\"service_account_namespace\":\"demo\"}");
	ATF_REQUIRE(cred_file(&kube_scope, "demo", "k/creds/r/1", 600, d,
	    "-----BEGIN CERTIFICATE-----\n", &s) == 0);
	ATF_REQUIRE((f = json_loads(s.buf, 0, NULL)) != NULL);
	ATF_CHECK_STREQ(json_string_value(json_object_get(f, "token")), "tok");
	ATF_CHECK_STREQ(json_string_value(json_object_get(f, "namespace")),
	    "demo");
	ATF_CHECK_STREQ(json_string_value(json_object_get(f, "server")),
	    "https://10.0.0.1:6443");
	ATF_CHECK(json_string_value(json_object_get(f, "ca")) != NULL);
	ATF_CHECK_STREQ(json_string_value(json_object_get(f,
	    "service_account")), "v-token-x");
	json_decref(f);
	json_decref(d);
	secret_clear(&s);
	/* A credential without its token is no credential. */
	d = data_of("{\"service_account_name\":\"v\"}");
	ATF_CHECK_EQ(cred_file(&kube_scope, "demo", "k/1", 600, d, NULL, &s),
	    -1);
	json_decref(d);
}

ATF_TC_WITHOUT_HEAD(aws_file);
ATF_TC_BODY(aws_file, tc)
{
	struct secret s = { NULL, 0 };
	json_t *d, *f;

	cred_init();
	d = data_of("{\"access_key\":\"ASIA1\",\"secret_key\":\"sk\","
	    "\"security_token\":\"st\"}");
	ATF_REQUIRE(cred_file(&aws_scope, "", "aws/sts/r/1", 900, d, NULL,
	    &s) == 0);
	ATF_REQUIRE((f = json_loads(s.buf, 0, NULL)) != NULL);
	ATF_CHECK_STREQ(json_string_value(json_object_get(f, "access_key")),
	    "ASIA1");
	ATF_CHECK_STREQ(json_string_value(json_object_get(f,
	    "session_token")), "st");
	json_decref(f);
	json_decref(d);
	secret_clear(&s);
}

ATF_TC_WITHOUT_HEAD(sealed_memfd);
ATF_TC_BODY(sealed_memfd, tc)
{
	struct secret s = { NULL, 0 };
	char buf[64];
	int fd;

	ATF_REQUIRE(secret_set(&s, "{\"token\":\"abc\"}", 15) == 0);
	ATF_REQUIRE((fd = cred_memfd(&s)) != -1);
	secret_clear(&s);
	ATF_CHECK_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SEAL | F_SEAL_SHRINK |
	    F_SEAL_GROW | F_SEAL_WRITE);
	/* Readable from the start by whoever receives it. */
	ATF_REQUIRE_EQ(read(fd, buf, sizeof(buf)), 15);
	ATF_CHECK(memcmp(buf, "{\"token\":\"abc\"}", 15) == 0);
	ATF_CHECK(pwrite(fd, "x", 1, 0) == -1 && errno == EPERM);
	ATF_CHECK(ftruncate(fd, 100) == -1 && errno == EPERM);
	ATF_CHECK(fcntl(fd, F_ADD_SEALS, 0) == -1 && errno == EPERM);
	ATF_CHECK(mmap(NULL, 15, PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	close(fd);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, redacted);
	ATF_TP_ADD_TC(tp, kubernetes_file);
	ATF_TP_ADD_TC(tp, aws_file);
	ATF_TP_ADD_TC(tp, sealed_memfd);
	return atf_no_error();
}
