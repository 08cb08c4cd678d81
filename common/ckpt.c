/*
 * Checkpoints: Ed25519 (RFC 8032) over a canonical text of the fields,
 * through OpenSSL's one-shot EVP_DigestSign/EVP_DigestVerify with a NULL
 * digest, as EVP_SIGNATURE-ED25519(7) requires for pure Ed25519.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/pem.h>

#include "ckpt.h"

#define CKPT_FILE_MAX	4096

/* The signed text: versioned, one field a line, nothing left to parse. */
static int
ckpt_message(const struct ckpt *c, char *buf, size_t len)
{
	int n;

	n = snprintf(buf, len, "agent-sandbox audit checkpoint v1\nseq %llu\n"
	    "head %s\ntime %s\nkey %s\n", (unsigned long long)c->seq, c->head,
	    c->time, c->key_id);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

EVP_PKEY *
ckpt_pubkey_load(const char *path)
{
	EVP_PKEY *k;
	FILE *f;

	if ((f = fopen(path, "re")) == NULL)
		return NULL;
	k = PEM_read_PUBKEY(f, NULL, NULL, NULL);
	fclose(f);
	if (k != NULL && EVP_PKEY_get_id(k) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(k);
		k = NULL;
	}
	if (k == NULL)
		errno = EINVAL;
	return k;
}

/* Names the key in each checkpoint, so a verifier sees a key change. */
int
ckpt_key_id(EVP_PKEY *k, char id[CKPT_KEYID_LEN + 1])
{
	unsigned char raw[32];
	char hex[SHA256_HEX_LEN + 1];
	size_t len = sizeof(raw);

	if (EVP_PKEY_get_raw_public_key(k, raw, &len) != 1)
		return -1;
	sha256_hex(raw, len, hex);
	strlcpy(id, hex, CKPT_KEYID_LEN + 1);
	return 0;
}

int
ckpt_sign(EVP_PKEY *k, struct ckpt *c)
{
	unsigned char sig[64];
	char msg[256];
	size_t siglen = sizeof(sig);
	EVP_MD_CTX *ctx;
	int n, ok;

	if (ckpt_key_id(k, c->key_id) == -1 ||
	    (n = ckpt_message(c, msg, sizeof(msg))) == -1 ||
	    (ctx = EVP_MD_CTX_new()) == NULL)
		return -1;
	ok = EVP_DigestSignInit(ctx, NULL, NULL, NULL, k) == 1 &&
	    EVP_DigestSign(ctx, sig, &siglen, (unsigned char *)msg,
	    (size_t)n) == 1 && siglen == sizeof(sig);
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return -1;
	EVP_EncodeBlock((unsigned char *)c->sig, sig, (int)siglen);
	return 0;
}

/* 0 when c is signed by k. */
int
ckpt_verify(EVP_PKEY *k, const struct ckpt *c)
{
	unsigned char sig[66];
	char msg[256], id[CKPT_KEYID_LEN + 1];
	EVP_MD_CTX *ctx;
	int n, ok;

	if (ckpt_key_id(k, id) == -1 || strcmp(id, c->key_id) != 0 ||
	    strlen(c->sig) != CKPT_SIG_LEN ||
	    EVP_DecodeBlock(sig, (unsigned char *)c->sig, CKPT_SIG_LEN) != 66 ||
	    (n = ckpt_message(c, msg, sizeof(msg))) == -1 ||
	    (ctx = EVP_MD_CTX_new()) == NULL)
		return -1;
	/* EVP_DecodeBlock counts the two '=' of padding as bytes. */
	ok = EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k) == 1 &&
	    EVP_DigestVerify(ctx, sig, 64, (unsigned char *)msg,
	    (size_t)n) == 1;
	EVP_MD_CTX_free(ctx);
	return ok ? 0 : -1;
}

json_t *
ckpt_json(const struct ckpt *c)
{
	return json_pack("{s:I, s:s, s:s, s:s, s:s}", "seq",
	    (json_int_t)c->seq, "head", c->head, "time", c->time, "key_id",
	    c->key_id, "sig", c->sig);
}

static int
copy_str(const json_t *o, const char *key, char *dst, size_t len)
{
	const json_t *v = json_object_get(o, key);

	return json_is_string(v) && strlcpy(dst, json_string_value(v), len) <
	    len ? 0 : -1;
}

/* The fields of a checkpoint record, or the checkpoint file. */
int
ckpt_parse(const json_t *o, struct ckpt *c)
{
	const json_t *s = json_object_get(o, "seq");

	memset(c, 0, sizeof(*c));
	if (!json_is_integer(s) || json_integer_value(s) < 0 ||
	    json_object_size(o) != 5 ||
	    copy_str(o, "head", c->head, sizeof(c->head)) == -1 ||
	    strlen(c->head) != SHA256_HEX_LEN ||
	    copy_str(o, "time", c->time, sizeof(c->time)) == -1 ||
	    copy_str(o, "key_id", c->key_id, sizeof(c->key_id)) == -1 ||
	    copy_str(o, "sig", c->sig, sizeof(c->sig)) == -1) {
		errno = EINVAL;
		return -1;
	}
	c->seq = (uint64_t)json_integer_value(s);
	return 0;
}

/* -1 with errno ENOENT when there is none yet. */
int
ckpt_file_read(const char *path, struct ckpt *c)
{
	char buf[CKPT_FILE_MAX];
	ssize_t n;
	json_t *j;
	int fd, r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0 || (size_t)n == sizeof(buf)) {
		errno = EINVAL;
		return -1;
	}
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	if ((j = cjson_parse(buf, (size_t)n, NULL, 0)) == NULL) {
		errno = EINVAL;
		return -1;
	}
	r = ckpt_parse(j, c);
	json_decref(j);
	return r;
}
