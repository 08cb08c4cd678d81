/* SPDX-License-Identifier: ISC */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cjson.h"
#include "log.h"

#define CJSON_MAXDEPTH	64

static int
depth_ok(const json_t *j, int depth)
{
	const char *key;
	json_t *v;
	size_t i;

	if (depth > CJSON_MAXDEPTH)
		return 0;
	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, key, v)
			if (!depth_ok(v, depth + 1))
				return 0;
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			if (!depth_ok(v, depth + 1))
				return 0;
	}
	return 1;
}

static json_t *
parse(const void *buf, size_t len, size_t flags, char *err, size_t errlen)
{
	json_error_t je;
	json_t *j;

	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY |
	    flags, &je);
	if (j == NULL) {
		if (err != NULL)
			snprintf(err, errlen, "%s (at byte %d)", je.text,
			    je.position);
		return NULL;
	}
	if (!depth_ok(j, 0)) {
		json_decref(j);
		if (err != NULL)
			snprintf(err, errlen, "nesting deeper than %d",
			    CJSON_MAXDEPTH);
		return NULL;
	}
	return j;
}

/* Strict parse of untrusted bytes: one value, no duplicates, no NULs. */
json_t *
cjson_parse(const void *buf, size_t len, char *err, size_t errlen)
{
	return parse(buf, len, 0, err, errlen);
}

/*
 * The same, but a string may hold \u0000: for the suite's own channels
 * and the audit log, whose strings carry a program's output as it was.
 * Their readers take a string's length from jansson, never strlen.
 */
json_t *
cjson_parse_nul(const void *buf, size_t len, char *err, size_t errlen)
{
	return parse(buf, len, JSON_ALLOW_NUL, err, errlen);
}

char *
cjson_dump(const json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
	    JSON_REAL_PRECISION(17));
}

/*
 * OpenSSL reads its configuration and loads its providers on first use:
 * daemons do it before their sandbox forbids opening files.
 */
void
sha256_preload(void)
{
	char d[SHA256_HEX_LEN + 1];

	sha256_hex("", 0, d);
}

/* len bytes as 2 * len lowercase hex digits and a NUL in out. */
void
hex_encode(const void *buf, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *b = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * len] = '\0';
}

void
sha256_hex(const void *buf, size_t len, char out[SHA256_HEX_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	if (EVP_Digest(buf, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != SHA256_HEX_LEN / 2)
		fatalx("sha256: EVP_Digest failed");
	hex_encode(md, mdlen, out);
}

int
cjson_digest(const json_t *j, char out[SHA256_HEX_LEN + 1])
{
	char *s;

	if ((s = cjson_dump(j)) == NULL)
		return -1;
	sha256_hex(s, strlen(s), out);
	free(s);
	return 0;
}

/* Digest of a whole file from its current offset (plan files). */
int
sha256_file_hex(int fd, char out[SHA256_HEX_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE], buf[65536];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx;
	ssize_t n;
	int r = -1;

	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return -1;
	if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		goto done;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			goto done;
		if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1)
			goto done;
	}
	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 ||
	    mdlen != SHA256_HEX_LEN / 2)
		goto done;
	hex_encode(md, mdlen, out);
	r = 0;
done:
	EVP_MD_CTX_free(ctx);
	return r;
}

/* 1 when s is a digest as sha256_hex writes it: 64 lowercase hex digits. */
int
sha256_hex_ok(const char *s)
{
	size_t i;

	if (s == NULL || strlen(s) != SHA256_HEX_LEN)
		return 0;
	for (i = 0; i < SHA256_HEX_LEN; i++)
		if (!isxdigit((unsigned char)s[i]) ||
		    isupper((unsigned char)s[i]))
			return 0;
	return 1;
}

/* buf as padded base64 text, NUL-terminated; NULL when out of memory. */
char *
base64_encode(const void *buf, size_t len)
{
	char *b64;

	if (len > INT_MAX / 4 * 3 || (b64 = malloc(len / 3 * 4 + 5)) == NULL)
		return NULL;
	EVP_EncodeBlock((unsigned char *)b64, buf, (int)len);
	return b64;
}

/*
 * The bytes of padded base64 text, *outlen of them; NULL when it is not
 * base64 or out of memory.
 */
unsigned char *
base64_decode(const char *text, size_t len, size_t *outlen)
{
	unsigned char *bytes;
	int n;

	if (len % 4 != 0 || len >= INT_MAX ||
	    (bytes = malloc(len / 4 * 3 + 1)) == NULL)
		return NULL;
	if ((n = EVP_DecodeBlock(bytes, (const unsigned char *)text,
	    (int)len)) < 0) {
		free(bytes);
		return NULL;
	}
	/* EVP_DecodeBlock counts the padding as zero bytes. */
	*outlen = (size_t)n - ((len > 0 && text[len - 1] == '=') +
	    (len > 1 && text[len - 2] == '='));
	return bytes;
}

/*
 * What a record keeps of content: its size and SHA-256, never the
 * bytes.  Base64 (file content) is measured as the bytes it decodes to,
 * so that the digest is the file's; text that is not base64 as itself.
 */
json_t *
content_summary(const char *text, size_t len, int base64)
{
	char hex[SHA256_HEX_LEN + 1];
	unsigned char *bytes = NULL;
	size_t n = len;
	json_t *j;

	if (base64 && (bytes = base64_decode(text, len, &n)) != NULL)
		sha256_hex(bytes, n, hex);
	else
		sha256_hex(text, len, hex);
	j = json_pack("{s:I, s:s}", "bytes", (json_int_t)n, "sha256", hex);
	free(bytes);
	return j;
}
