/* SPDX-License-Identifier: ISC */
/*
 * Checkpoints: Ed25519 (RFC 8032) over the text of a C2SP signed note
 * (c2sp.org/signed-note, laid out as c2sp.org/tlog-checkpoint), or, in
 * the v1 form, over a canonical text of the fields; through OpenSSL's
 * one-shot EVP_DigestSign/EVP_DigestVerify with a NULL digest, as
 * EVP_SIGNATURE-ED25519(7) requires for pure Ed25519.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/pem.h>
#include <openssl/rand.h>

#include "ckpt.h"

/* A note with cosignatures: C2SP asks room for 16 signatures. */
#define CKPT_FILE_MAX	4096

/* The signed text of the v1 form: versioned, one field a line. */
static int
ckpt_message_v1(const struct ckpt *c, char *buf, size_t len)
{
	int n;

	n = snprintf(buf, len, "agent-sandbox audit checkpoint v1\nseq %llu\n"
	    "head %s\ntime %s\nkey %s\n", (unsigned long long)c->seq, c->head,
	    c->time, c->key_id);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

/* Canonical base64 of exactly want bytes: decoded, then encoded again. */
static int
b64_decode(const char *s, size_t slen, unsigned char *out, size_t want)
{
	unsigned char buf[135];
	char again[181];

	if (slen == 0 || slen % 4 != 0 || slen >= sizeof(again) ||
	    want > slen / 4 * 3 ||
	    EVP_DecodeBlock(buf, (const unsigned char *)s, (int)slen) < 0 ||
	    EVP_EncodeBlock((unsigned char *)again, buf, (int)want) !=
	    (int)slen || memcmp(again, s, slen) != 0)
		return -1;
	memcpy(out, buf, want);
	return 0;
}

static int
hex_decode(const char *hex, unsigned char *out, size_t len)
{
	unsigned int b;
	size_t i;

	for (i = 0; i < len; i++) {
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = (unsigned char)b;
	}
	return 0;
}

/*
 * The note text (C2SP tlog-checkpoint): origin, tree size (our seq),
 * root hash (the head record's digest, base64), each ending in newline.
 */
static int
ckpt_body(const struct ckpt *c, char *buf, size_t len)
{
	unsigned char raw[32];
	char root[45];
	int n;

	if (strlen(c->head) != SHA256_HEX_LEN ||
	    hex_decode(c->head, raw, sizeof(raw)) == -1)
		return -1;
	EVP_EncodeBlock((unsigned char *)root, raw, sizeof(raw));
	n = snprintf(buf, len, "%s\n%llu\n%s\n", c->origin,
	    (unsigned long long)c->seq, root);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

static int
ckpt_message(const struct ckpt *c, char *buf, size_t len)
{
	return c->origin[0] != '\0' ? ckpt_body(c, buf, len) :
	    ckpt_message_v1(c, buf, len);
}

/* C2SP signed-note key ID: SHA-256(name || 0x0A || 0x01 || key)[:4]. */
static int
ckpt_key_hash(EVP_PKEY *k, const char *name, unsigned char hash[4])
{
	unsigned char buf[CKPT_ORIGIN_LEN + 2 + 32], md[32];
	size_t n = strlen(name), len = 32;

	if (n > CKPT_ORIGIN_LEN ||
	    EVP_PKEY_get_raw_public_key(k, buf + n + 2, &len) != 1 ||
	    len != 32)
		return -1;
	memcpy(buf, name, n);
	buf[n] = '\n';
	buf[n + 1] = 0x01;
	if (EVP_Digest(buf, n + 2 + len, md, NULL, EVP_sha256(), NULL) != 1)
		return -1;
	memcpy(hash, md, 4);
	return 0;
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

/* A new log's name: our key's id and 128 random bits. */
int
ckpt_origin_new(EVP_PKEY *k, char origin[CKPT_ORIGIN_LEN + 1])
{
	unsigned char r[16];
	char id[CKPT_KEYID_LEN + 1];
	int n;

	if (ckpt_key_id(k, id) == -1 || RAND_bytes(r, sizeof(r)) != 1)
		return -1;
	n = snprintf(origin, CKPT_ORIGIN_LEN + 1, "%s%s/", CKPT_ORIGIN_PREFIX,
	    id);
	if (n < 0 || (size_t)n + 2 * sizeof(r) > CKPT_ORIGIN_LEN)
		return -1;
	hex_encode(r, sizeof(r), origin + n);
	return 0;
}

/* Whether s has the shape ckpt_origin_new gives. */
int
ckpt_origin_ok(const char *s)
{
	size_t p = sizeof(CKPT_ORIGIN_PREFIX) - 1;

	return strlen(s) == CKPT_ORIGIN_LEN &&
	    strncmp(s, CKPT_ORIGIN_PREFIX, p) == 0 &&
	    strspn(s + p, "0123456789abcdef") == CKPT_KEYID_LEN &&
	    s[p + CKPT_KEYID_LEN] == '/' &&
	    strspn(s + p + CKPT_KEYID_LEN + 1, "0123456789abcdef") == 32;
}

/*
 * The origin a record of auditd's names: audit.origin, audit.rotated,
 * log.checkpoint, log.truncated, log.rewritten.  Only auditd writes
 * audit.* and log.* events, so a writer's fields cannot name one.
 */
const char *
ckpt_record_origin(const json_t *rec)
{
	const char *ev = json_string_value(json_object_get(rec, "event"));
	const char *o = json_string_value(json_object_get(json_object_get(rec,
	    "fields"), "origin"));

	if (ev == NULL || o == NULL || (strncmp(ev, "audit.", 6) != 0 &&
	    strncmp(ev, "log.", 4) != 0))
		return NULL;
	return o;
}

/* Signs the note of c (whose origin is set); fills key_id and key_hash. */
int
ckpt_sign(EVP_PKEY *k, struct ckpt *c)
{
	unsigned char sig[64];
	char msg[256];
	size_t siglen = sizeof(sig);
	EVP_MD_CTX *ctx;
	int n, ok;

	if (!ckpt_origin_ok(c->origin) || ckpt_key_id(k, c->key_id) == -1 ||
	    ckpt_key_hash(k, c->origin, c->key_hash) == -1 ||
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
	c->has_key_hash = 1;
	return 0;
}

/*
 * 0 when c is signed by k.  A note's origin names the key by its id,
 * and its signature line by the note's key hash: both must be k's.
 */
int
ckpt_verify(EVP_PKEY *k, const struct ckpt *c)
{
	unsigned char sig[64], hash[4];
	char msg[256], id[CKPT_KEYID_LEN + 1];
	EVP_MD_CTX *ctx;
	int n, ok;

	if (ckpt_key_id(k, id) == -1 || strcmp(id, c->key_id) != 0 ||
	    (c->origin[0] != '\0' && (!ckpt_origin_ok(c->origin) ||
	    strncmp(c->origin + sizeof(CKPT_ORIGIN_PREFIX) - 1, id,
	    CKPT_KEYID_LEN) != 0)) ||
	    (c->has_key_hash && (ckpt_key_hash(k, c->origin, hash) == -1 ||
	    memcmp(hash, c->key_hash, sizeof(hash)) != 0)) ||
	    b64_decode(c->sig, strlen(c->sig), sig, sizeof(sig)) == -1 ||
	    (n = ckpt_message(c, msg, sizeof(msg))) == -1 ||
	    (ctx = EVP_MD_CTX_new()) == NULL)
		return -1;
	ok = EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k) == 1 &&
	    EVP_DigestVerify(ctx, sig, sizeof(sig), (unsigned char *)msg,
	    (size_t)n) == 1;
	EVP_MD_CTX_free(ctx);
	return ok ? 0 : -1;
}

/*
 * The C2SP signed note: the text, a blank line, then the signature
 * line "— <origin> base64(key hash || signature)".  The key name is the
 * origin, as tlog-checkpoint recommends.
 */
int
ckpt_note(const struct ckpt *c, char *buf, size_t len)
{
	unsigned char raw[4 + 64];
	char b64[93];
	int n, m;

	if (!c->has_key_hash || c->origin[0] == '\0' ||
	    b64_decode(c->sig, strlen(c->sig), raw + 4, 64) == -1 ||
	    (n = ckpt_body(c, buf, len)) == -1)
		return -1;
	memcpy(raw, c->key_hash, 4);
	EVP_EncodeBlock((unsigned char *)b64, raw, sizeof(raw));
	m = snprintf(buf + n, len - (size_t)n, "\n\u2014 %s %s\n", c->origin,
	    b64);
	return m < 0 || (size_t)m >= len - (size_t)n ? -1 : n + m;
}

/* The fields of a checkpoint record: v1's, or the note's. */
json_t *
ckpt_json(const struct ckpt *c)
{
	if (c->origin[0] == '\0')
		return json_pack("{s:I, s:s, s:s, s:s, s:s}", "seq",
		    (json_int_t)c->seq, "head", c->head, "time", c->time,
		    "key_id", c->key_id, "sig", c->sig);
	return json_pack("{s:I, s:s, s:s, s:s, s:s}", "seq",
	    (json_int_t)c->seq, "head", c->head, "origin", c->origin,
	    "key_id", c->key_id, "sig", c->sig);
}

static int
copy_str(const json_t *o, const char *key, char *dst, size_t len)
{
	const json_t *v = json_object_get(o, key);

	return json_is_string(v) && strlcpy(dst, json_string_value(v), len) <
	    len ? 0 : -1;
}

/* A checkpoint record's fields, or a v1 checkpoint file. */
int
ckpt_parse(const json_t *o, struct ckpt *c)
{
	const json_t *s = json_object_get(o, "seq");
	int v1 = json_object_get(o, "origin") == NULL;

	memset(c, 0, sizeof(*c));
	if (!json_is_integer(s) || json_integer_value(s) < 0 ||
	    json_object_size(o) != 5 ||
	    copy_str(o, "head", c->head, sizeof(c->head)) == -1 ||
	    strlen(c->head) != SHA256_HEX_LEN ||
	    (v1 ? copy_str(o, "time", c->time, sizeof(c->time)) :
	    copy_str(o, "origin", c->origin, sizeof(c->origin))) == -1 ||
	    (!v1 && !ckpt_origin_ok(c->origin)) ||
	    copy_str(o, "key_id", c->key_id, sizeof(c->key_id)) == -1 ||
	    copy_str(o, "sig", c->sig, sizeof(c->sig)) == -1) {
		errno = EINVAL;
		return -1;
	}
	c->seq = (uint64_t)json_integer_value(s);
	return 0;
}

/* The next line of [*p, end) without its newline; NULL at the end. */
static const char *
next_line(const char **p, const char *end, size_t *len)
{
	const char *s = *p, *nl;

	if (s >= end || (nl = memchr(s, '\n', (size_t)(end - s))) == NULL)
		return NULL;
	*len = (size_t)(nl - s);
	*p = nl + 1;
	return s;
}

/*
 * A checkpoint file in the note form.  Our text has exactly three
 * lines; of the signature lines, the one whose key name is the origin
 * is ours, and a witness's cosignatures are left alone.
 */
static int
ckpt_note_parse(const char *buf, size_t len, struct ckpt *c)
{
	static const char dash[] = "\u2014 ";
	const char *p = buf, *end = buf + len, *l, *sp;
	unsigned char raw[32], sig[4 + 64];
	char num[21];
	size_t n, dl = sizeof(dash) - 1;
	const char *errstr = NULL;

	memset(c, 0, sizeof(*c));
	if ((l = next_line(&p, end, &n)) == NULL || n > CKPT_ORIGIN_LEN)
		goto bad;
	memcpy(c->origin, l, n);
	if (!ckpt_origin_ok(c->origin) ||
	    (l = next_line(&p, end, &n)) == NULL || n == 0 ||
	    n >= sizeof(num) || (n > 1 && l[0] == '0'))
		goto bad;
	memcpy(num, l, n);
	num[n] = '\0';
	if (strspn(num, "0123456789") != n)
		goto bad;
	c->seq = strtonum(num, 0, LLONG_MAX, &errstr);
	if (errstr != NULL || (l = next_line(&p, end, &n)) == NULL ||
	    b64_decode(l, n, raw, sizeof(raw)) == -1 ||
	    (l = next_line(&p, end, &n)) == NULL || n != 0)
		goto bad;
	hex_encode(raw, sizeof(raw), c->head);
	while ((l = next_line(&p, end, &n)) != NULL) {
		if (n < dl || memcmp(l, dash, dl) != 0 ||
		    (sp = memchr(l + dl, ' ', n - dl)) == NULL)
			goto bad;
		if ((size_t)(sp - l - dl) != strlen(c->origin) ||
		    memcmp(l + dl, c->origin, strlen(c->origin)) != 0 ||
		    c->has_key_hash)
			continue;
		if (b64_decode(sp + 1, (size_t)(l + n - sp - 1), sig,
		    sizeof(sig)) == -1)
			goto bad;
		memcpy(c->key_hash, sig, 4);
		EVP_EncodeBlock((unsigned char *)c->sig, sig + 4, 64);
		c->has_key_hash = 1;
	}
	if (!c->has_key_hash || p != end)
		goto bad;
	memcpy(c->key_id, c->origin + sizeof(CKPT_ORIGIN_PREFIX) - 1,
	    CKPT_KEYID_LEN);
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

/* Either form; -1 with errno ENOENT when there is none yet. */
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
	if (buf[0] != '{')
		return ckpt_note_parse(buf, (size_t)n, c);
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
