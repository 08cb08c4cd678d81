/* SPDX-License-Identifier: ISC */
/* esc_text: what the operators' tools make of text from an agent. */
#include <atf-c.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

static void
check(const char *in, size_t len, int flags, const char *want)
{
	char *out;

	ATF_REQUIRE((out = esc_text(in, len, flags)) != NULL);
	ATF_CHECK_STREQ_MSG(out, want, "flags %d", flags);
	free(out);
}

#define CHECK(in, flags, want)	check(in, sizeof(in) - 1, flags, want)

ATF_TC_WITHOUT_HEAD(controls);
ATF_TC_BODY(controls, tc)
{
	(void)tc;
	/* CSI, OSC with BEL and with ST, CR, tab, DEL, NUL. */
	CHECK("\x1b[2K\x1b[1Aok", 0, "\\x1b[2K\\x1b[1Aok");
	CHECK("\x1b]0;t\x07\x1b]8;;u\x1b\\", 0,
	    "\\x1b]0;t\\x07\\x1b]8;;u\\x1b\\\\");
	CHECK("a\rb\tc\x7f", 0, "a\\x0db\\x09c\\x7f");
	CHECK("a\0b", 0, "a\\x00b");
	CHECK("one\ntwo", 0, "one\\ntwo");
	/* C1 as UTF-8: CSI, NEL, and the last, APC ... U+009F. */
	CHECK("\xc2\x9b" "2J\xc2\x85\xc2\x9f", 0, "\\u009b2J\\u0085\\u009f");
	/* Bidi embeddings, overrides and isolates. */
	CHECK("\xe2\x80\xaa\xe2\x80\xae\xe2\x81\xa6\xe2\x81\xa9", 0,
	    "\\u202a\\u202e\\u2066\\u2069");
	/* Bidi marks (LRM, RLM, ALM), line and paragraph separators. */
	CHECK("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c" "\xe2\x80\xa8\xe2\x80\xa9",
	    0, "\\u200e\\u200f\\u061c\\u2028\\u2029");
}

ATF_TC_WITHOUT_HEAD(kept);
ATF_TC_BODY(kept, tc)
{
	(void)tc;
	/* Printable text and other UTF-8, the neighbours of what goes. */
	CHECK("plain ~ text", 0, "plain ~ text");
	CHECK("\xc2\xa0\xc3\xa9\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xaa\xf0\x9f\x98\x80",
	    0, "\xc2\xa0\xc3\xa9\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xaa"
	    "\xf0\x9f\x98\x80");
}

ATF_TC_WITHOUT_HEAD(not_utf8);
ATF_TC_BODY(not_utf8, tc)
{
	(void)tc;
	/* A lone continuation, a cut sequence, an overlong ESC, a surrogate. */
	CHECK("\x80z", 0, "\\x80z");
	CHECK("\xe2\x80", 0, "\\xe2\\x80");
	CHECK("\xc0\x9b", 0, "\\xc0\\x9b");
	CHECK("\xed\xa0\x80", 0, "\\xed\\xa0\\x80");
	CHECK("\xf4\x90\x80\x80\xff", 0, "\\xf4\\x90\\x80\\x80\\xff");
	CHECK("\xff", ESC_JSON, "\\uFFFD");
}

ATF_TC_WITHOUT_HEAD(lines);
ATF_TC_BODY(lines, tc)
{
	(void)tc;
	/* A plan's newline stays, its CR does not; its backslashes stay. */
	CHECK("a\nb\r\x1b[1A\\\"", ESC_LINES, "a\nb\\x0d\\x1b[1A\\\"");
	CHECK("a\\b", 0, "a\\\\b");
}

ATF_TC_WITHOUT_HEAD(json);
ATF_TC_BODY(json, tc)
{
	(void)tc;
	/* JSON text: its escapes untouched, the rest as \u escapes. */
	CHECK("{\"a\":\"\\u001B\\\"\x7f\xc2\x9b\xe2\x80\xae\"}", ESC_JSON,
	    "{\"a\":\"\\u001B\\\"\\u007F\\u009B\\u202E\"}");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, controls);
	ATF_TP_ADD_TC(tp, kept);
	ATF_TP_ADD_TC(tp, not_utf8);
	ATF_TP_ADD_TC(tp, lines);
	ATF_TP_ADD_TC(tp, json);
	return atf_no_error();
}
