/* SPDX-License-Identifier: ISC */
/*
 * A program's output in a result, one rule for every backend and for
 * the session agent (session-agent.py says it the same way): a stream
 * is a JSON string of UTF-8 text, a NUL or any control byte in it as
 * JSON escapes it (\u0000); a byte that is not part of valid UTF-8
 * (RFC 3629) stands as U+FFFD there, and then NAME_base64 holds the
 * stream's exact bytes as well.  Valid UTF-8 has no base64 copy.
 *
 * A file a call collects (a plan's text and JSON, files_out) is text
 * that C code reads up to a NUL, and what a person approves must not
 * end early: there a NUL stands as U+FFFD too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cjson.h"
#include "output.h"

#define REPLACEMENT	"\xef\xbf\xbd"	/* U+FFFD in UTF-8 */

/* Length of the valid UTF-8 sequence at p (RFC 3629), or 0. */
static size_t
utf8_len(const unsigned char *p, size_t left)
{
	size_t n, k;
	unsigned char lo = 0x80, hi = 0xbf;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (p[0] == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		if (p[0] == 0xf0)
			lo = 0x90;
		else if (p[0] == 0xf4)
			hi = 0x8f;	/* past U+10FFFF */
	} else
		return 0;
	if (n > left || p[1] < lo || p[1] > hi)
		return 0;
	for (k = 2; k < n; k++)
		if ((p[k] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* The same, with a NUL refused unless nul. */
static size_t
char_len(const unsigned char *p, size_t left, int nul)
{
	return p[0] == '\0' && !nul ? 0 : utf8_len(p, left);
}

/* How many bytes of buf are not part of valid UTF-8 (or NULs, unless nul). */
static size_t
utf8_invalid(const unsigned char *buf, size_t len, int nul)
{
	size_t i, n, bad = 0;

	for (i = 0; i < len; i += n)
		if ((n = char_len(buf + i, len - i, nul)) == 0) {
			bad++;
			n = 1;
		}
	return bad;
}

/* buf as a JSON string, its bad invalid bytes each as U+FFFD. */
static json_t *
text_of(const char *buf, size_t len, size_t bad, int nul)
{
	const unsigned char *p = (const unsigned char *)buf;
	size_t i, n, o = 0;
	char *copy;
	json_t *j;

	if (bad == 0)
		return json_stringn(buf, len);
	if ((copy = malloc(len + bad * 2)) == NULL)
		return NULL;
	for (i = 0; i < len; i += n)
		if ((n = char_len(p + i, len - i, nul)) == 0) {
			memcpy(copy + o, REPLACEMENT, 3);
			o += 3;
			n = 1;
		} else {
			memcpy(copy + o, buf + i, n);
			o += n;
		}
	j = json_stringn(copy, o);
	free(copy);
	return j;
}

/* A collected file as a JSON string: NULs and invalid bytes as U+FFFD. */
json_t *
text_json(const char *buf, size_t len)
{
	return text_of(buf, len, utf8_invalid((const unsigned char *)buf,
	    len, 0), 0);
}

/*
 * Sets r[key] to the stream as text and, when it is not valid UTF-8,
 * r[key_base64] to its bytes (or deletes a key_base64 it had).  -1
 * when out of memory.
 */
int
output_set(json_t *r, const char *key, const char *buf, size_t len)
{
	size_t bad = utf8_invalid((const unsigned char *)buf, len, 1);
	char name[64], *b64;
	int rv;

	snprintf(name, sizeof(name), "%s_base64", key);
	if (json_object_set_new(r, key, text_of(buf, len, bad, 1)) == -1)
		return -1;
	if (bad == 0) {
		json_object_del(r, name);
		return 0;
	}
	if ((b64 = base64_encode(buf, len)) == NULL)
		return -1;
	rv = json_object_set_new(r, name, json_string(b64));
	free(b64);
	return rv;
}

/*
 * Where to cut buf to at most n bytes (n below its length): back to
 * the start of the character at n, so that a cut makes no bad byte.
 */
size_t
output_cut(const char *buf, size_t n)
{
	size_t k;

	for (k = n; k > 0 && n - k < 3 &&
	    ((unsigned char)buf[k] & 0xc0) == 0x80; k--)
		;
	return ((unsigned char)buf[k] & 0xc0) == 0x80 ? n : k;
}
