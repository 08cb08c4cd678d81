/* SPDX-License-Identifier: ISC */
/*
 * Standard Webhooks' symmetric signature (spec/standard-webhooks.md in
 * github.com/standard-webhooks/standard-webhooks): HMAC-SHA256 over
 * "{webhook-id}.{webhook-timestamp}.{body}" with the secret's bytes,
 * sent as "v1," and the base64 of the MAC.  The secret is serialized
 * as "whsec_" and base64, 24 to 64 bytes; it is read once, before the
 * sandbox, from a file only notifyd's user reads.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "log.h"
#include "notifyd.h"

#define SECRET_MIN	24
#define SECRET_MAX	64

static unsigned char	 key[SECRET_MAX];
static size_t		 keylen;

/* 0, or -1 with why in err. */
int
secret_load(const char *path, char *err, size_t errlen)
{
	char buf[256], *b64;
	unsigned char raw[SECRET_MAX + 4];
	size_t len, pad = 0;
	FILE *f;
	int n;

	if ((f = fopen(path, "r")) == NULL) {
		snprintf(err, errlen, "%s: cannot read the webhook secret",
		    path);
		return -1;
	}
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	b64 = strncmp(buf, "whsec_", 6) == 0 ? buf + 6 : NULL;
	len = b64 != NULL ? strlen(b64) : 0;
	if (b64 == NULL || len % 4 != 0 || len > 4 * ((SECRET_MAX + 2) / 3) ||
	    (n = EVP_DecodeBlock(raw, (unsigned char *)b64, (int)len)) < 0) {
		explicit_bzero(buf, sizeof(buf));
		snprintf(err, errlen, "%s: not whsec_ and base64", path);
		return -1;
	}
	while (pad < 2 && len > pad && b64[len - 1 - pad] == '=')
		pad++;
	keylen = (size_t)n - pad;
	explicit_bzero(buf, sizeof(buf));
	if (keylen < SECRET_MIN || keylen > SECRET_MAX) {
		explicit_bzero(raw, sizeof(raw));
		snprintf(err, errlen, "%s: the secret must be %d to %d bytes",
		    path, SECRET_MIN, SECRET_MAX);
		return -1;
	}
	memcpy(key, raw, keylen);
	explicit_bzero(raw, sizeof(raw));
	return 0;
}

/* "v1,<base64>" for id, timestamp and body; NULL when out of memory. */
char *
sign_v1(const char *id, long long ts, const char *body)
{
	unsigned char mac[EVP_MAX_MD_SIZE], b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3)
	    + 1];
	unsigned int maclen = 0;
	char *content, *sig;

	if (asprintf(&content, "%s.%lld.%s", id, ts, body) == -1)
		return NULL;
	if (HMAC(EVP_sha256(), key, (int)keylen, (unsigned char *)content,
	    strlen(content), mac, &maclen) == NULL) {
		free(content);
		return NULL;
	}
	free(content);
	EVP_EncodeBlock(b64, mac, (int)maclen);
	if (asprintf(&sig, "v1,%s", b64) == -1)
		return NULL;
	return sig;
}
