/* SPDX-License-Identifier: ISC */
/*
 * Standard Webhooks' signatures (spec/standard-webhooks.md in
 * github.com/standard-webhooks/standard-webhooks) over
 * "{webhook-id}.{webhook-timestamp}.{body}".  Symmetric, "v1": an
 * HMAC-SHA256 with the secret's bytes, the secret serialized as
 * "whsec_" and base64, 24 to 64 bytes.  Asymmetric, "v1a": Ed25519,
 * the secret key serialized as "whsk_" and base64 (the 32-byte seed,
 * or seed and public key, 64 bytes, as libsodium keeps it), the
 * receiver holding only the "whpk_" public key.  A webhook with an
 * ed25519_key_file gets v1a, the others v1; each key is read once,
 * before the sandbox, from a file only notifyd's user reads.
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
#define ED25519_SEED	32
#define ED25519_SIG	64
#define B64_LEN(n)	(4 * (((n) + 2) / 3))

static unsigned char	 key[SECRET_MAX];
static size_t		 keylen;
static EVP_PKEY		*ed25519[WEBHOOKS_MAX];	/* by webhook; NULL: v1 */

/*
 * The bytes of a key file: prefix and base64, min to max bytes, into
 * raw (max + 2 bytes); their number, or -1 with why in err.
 */
static int
key_decode(const char *path, const char *prefix, unsigned char *raw,
    size_t min, size_t max, char *err, size_t errlen)
{
	char buf[256], *b64;
	size_t len, pad = 0, plen = strlen(prefix);
	FILE *f;
	int n;

	if ((f = fopen(path, "r")) == NULL) {
		snprintf(err, errlen, "%s: cannot read the key", path);
		return -1;
	}
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	b64 = strncmp(buf, prefix, plen) == 0 ? buf + plen : NULL;
	len = b64 != NULL ? strlen(b64) : 0;
	if (b64 == NULL || len % 4 != 0 || len > B64_LEN(max) ||
	    (n = EVP_DecodeBlock(raw, (unsigned char *)b64, (int)len)) < 0) {
		explicit_bzero(buf, sizeof(buf));
		snprintf(err, errlen, "%s: not %s and base64", path, prefix);
		return -1;
	}
	while (pad < 2 && len > pad && b64[len - 1 - pad] == '=')
		pad++;
	explicit_bzero(buf, sizeof(buf));
	n -= (int)pad;
	if ((size_t)n < min || (size_t)n > max) {
		explicit_bzero(raw, max + 2);
		snprintf(err, errlen, "%s: the key must be %zu to %zu bytes",
		    path, min, max);
		return -1;
	}
	return n;
}

/* The whsec_ secret: 0, or -1 with why in err. */
int
secret_load(const char *path, char *err, size_t errlen)
{
	unsigned char raw[SECRET_MAX + 2];
	int n;

	if ((n = key_decode(path, "whsec_", raw, SECRET_MIN, SECRET_MAX, err,
	    errlen)) == -1)
		return -1;
	keylen = (size_t)n;
	memcpy(key, raw, keylen);
	explicit_bzero(raw, sizeof(raw));
	return 0;
}

/*
 * Webhook hook's whsk_ key: 0, or -1 with why in err.  A 64-byte key's
 * second half must be the public key of its seed.
 */
int
ed25519_load(size_t hook, const char *path, char *err, size_t errlen)
{
	unsigned char raw[2 * ED25519_SEED + 2], pub[ED25519_SEED];
	size_t publen = sizeof(pub);
	EVP_PKEY *pk;
	int n;

	if ((n = key_decode(path, "whsk_", raw, ED25519_SEED,
	    2 * ED25519_SEED, err, errlen)) == -1)
		return -1;
	if (n != ED25519_SEED && n != 2 * ED25519_SEED) {
		explicit_bzero(raw, sizeof(raw));
		snprintf(err, errlen, "%s: an Ed25519 key is 32 or 64 bytes",
		    path);
		return -1;
	}
	pk = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, raw,
	    ED25519_SEED);
	if (pk == NULL || EVP_PKEY_get_raw_public_key(pk, pub, &publen) != 1 ||
	    (n == 2 * ED25519_SEED && memcmp(pub, raw + ED25519_SEED,
	    ED25519_SEED) != 0)) {
		explicit_bzero(raw, sizeof(raw));
		EVP_PKEY_free(pk);
		snprintf(err, errlen, "%s: not an Ed25519 key pair", path);
		return -1;
	}
	explicit_bzero(raw, sizeof(raw));
	EVP_PKEY_free(ed25519[hook]);
	ed25519[hook] = pk;
	return 0;
}

/* The MAC or signature of content as version and base64, or NULL. */
static char *
sign_content(size_t hook, const char *content)
{
	unsigned char sig[EVP_MAX_MD_SIZE > ED25519_SIG ? EVP_MAX_MD_SIZE :
	    ED25519_SIG], b64[B64_LEN(sizeof(sig)) + 1];
	unsigned int maclen = 0;
	size_t siglen = sizeof(sig);
	EVP_MD_CTX *ctx;
	char *out;
	int ok;

	if (ed25519[hook] == NULL) {
		if (HMAC(EVP_sha256(), key, (int)keylen, (const unsigned char *)
		    content, strlen(content), sig, &maclen) == NULL)
			return NULL;
		siglen = maclen;
	} else {
		if ((ctx = EVP_MD_CTX_new()) == NULL)
			return NULL;
		ok = EVP_DigestSignInit(ctx, NULL, NULL, NULL,
		    ed25519[hook]) == 1 && EVP_DigestSign(ctx, sig, &siglen,
		    (const unsigned char *)content, strlen(content)) == 1;
		EVP_MD_CTX_free(ctx);
		if (!ok)
			return NULL;
	}
	EVP_EncodeBlock(b64, sig, (int)siglen);
	if (asprintf(&out, "%s,%s", ed25519[hook] != NULL ? "v1a" : "v1",
	    b64) == -1)
		return NULL;
	return out;
}

/* "v1,<base64>" or "v1a,<base64>" for webhook hook; NULL: out of memory. */
char *
sign_event(size_t hook, const char *id, long long ts, const char *body)
{
	char *content, *sig;

	if (asprintf(&content, "%s.%lld.%s", id, ts, body) == -1)
		return NULL;
	sig = sign_content(hook, content);
	free(content);
	return sig;
}
