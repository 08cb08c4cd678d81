/* SPDX-License-Identifier: ISC */
/* Control characters made visible, for the operators' tools (escape.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

/*
 * The length of the UTF-8 sequence at p (left bytes at most) and its
 * code point; 0 when p does not begin one.
 */
static size_t
utf8_decode(const unsigned char *p, size_t left, unsigned *cp)
{
	/* The least code point of each length: shorter forms are overlong. */
	static const unsigned least[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t n, i;
	unsigned c;

	if (p[0] < 0x80)
		n = 1, c = p[0];
	else if ((p[0] & 0xe0) == 0xc0)
		n = 2, c = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, c = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, c = p[0] & 0x07;
	else
		return 0;
	if (n > left)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (n > 1 && (c < least[n] || (c >= 0xd800 && c <= 0xdfff) ||
	    c > 0x10ffff))
		return 0;
	*cp = c;
	return n;
}

/*
 * What a terminal acts on instead of showing: controls, the bidi
 * embeddings, overrides, isolates and marks (they reorder what stands
 * near them), and the line and paragraph separators.
 */
static int
acted_on(unsigned cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
	    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	    cp == 0x200e || cp == 0x200f || cp == 0x061c || cp == 0x2028 ||
	    cp == 0x2029;
}

/* The len bytes at s, escaped as flags say, NUL-terminated; NULL on ENOMEM. */
char *
esc_text(const char *s, size_t len, int flags)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out, *o;
	size_t i, n;
	unsigned cp;

	/* The longest form, "\ufffd", stands for a single byte. */
	if (len > (SIZE_MAX - 1) / 6 || (out = malloc(len * 6 + 1)) == NULL)
		return NULL;
	o = out;
	for (i = 0; i < len; i += n) {
		if ((n = utf8_decode(p + i, len - i, &cp)) == 0) {
			n = 1;
			if (flags & ESC_JSON)
				o += sprintf(o, "\\uFFFD");
			else
				o += sprintf(o, "\\x%02x", p[i]);
		} else if (cp == '\n' && (flags & ESC_LINES))
			*o++ = '\n';
		else if (acted_on(cp)) {
			/* jansson's case in JSON, escape.h's elsewhere. */
			if (flags & ESC_JSON)
				o += sprintf(o, "\\u%04X", cp);
			else if (cp >= 0x80)
				o += sprintf(o, "\\u%04x", cp);
			else if (cp == '\n')
				o += sprintf(o, "\\n");
			else
				o += sprintf(o, "\\x%02x", cp);
		} else if (cp == '\\' && !(flags & (ESC_LINES | ESC_JSON)))
			o += sprintf(o, "\\\\");
		else {
			memcpy(o, p + i, n);
			o += n;
		}
	}
	*o = '\0';
	return out;
}
