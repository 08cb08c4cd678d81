/* SPDX-License-Identifier: ISC */
/* The stdio line reader and the JSON-RPC classifier, one bad input each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atf-c.h>

#include "../../mcpd/mcpd.h"

struct seen {
	int	 lines;
	int	 toolong;
	char	 last[256];
};

static void
on_line(const char *p, size_t n, void *arg)
{
	struct seen *s = arg;

	s->lines++;
	snprintf(s->last, sizeof(s->last), "%.*s", (int)n, p);
}

static void
on_long(void *arg)
{
	((struct seen *)arg)->toolong++;
}

static void
feed(struct linereader *lr, struct seen *s, const char *text)
{
	lr_feed(lr, text, strlen(text), on_line, on_long, s);
}

ATF_TC_WITHOUT_HEAD(reader_split);
ATF_TC_BODY(reader_split, tc)
{
	struct linereader lr;
	struct seen s = { 0 };

	lr_init(&lr, 1024);
	feed(&lr, &s, "{\"a\":");
	ATF_CHECK_EQ(s.lines, 0);
	feed(&lr, &s, "1}\n{\"b\":2}\n{\"c\"");
	ATF_CHECK_EQ(s.lines, 2);
	ATF_CHECK_STREQ(s.last, "{\"b\":2}");
	feed(&lr, &s, ":3}\r\n");
	ATF_CHECK_EQ(s.lines, 3);
	ATF_CHECK_STREQ(s.last, "{\"c\":3}\r");
	ATF_CHECK_EQ(s.toolong, 0);
	lr_free(&lr);
}

ATF_TC_WITHOUT_HEAD(reader_limit);
ATF_TC_BODY(reader_limit, tc)
{
	struct linereader lr;
	struct seen s = { 0 };

	lr_init(&lr, 8);
	feed(&lr, &s, "12345678\n");	/* exactly the limit: accepted */
	ATF_CHECK_EQ(s.lines, 1);
	feed(&lr, &s, "123456789");	/* one over: refused at once */
	ATF_CHECK_EQ(s.toolong, 1);
	feed(&lr, &s, "more of the same line");
	ATF_CHECK_EQ(s.toolong, 1);
	feed(&lr, &s, "tail\nok\n");	/* the next line is served */
	ATF_CHECK_EQ(s.lines, 2);
	ATF_CHECK_STREQ(s.last, "ok");
	lr_free(&lr);
}

/* A 10 MiB line against the 4 MiB default, in 64 KiB reads. */
ATF_TC_WITHOUT_HEAD(reader_10mib);
ATF_TC_BODY(reader_10mib, tc)
{
	struct linereader lr;
	struct seen s = { 0 };
	size_t chunk = 64 * 1024, i;
	char *buf;

	ATF_REQUIRE((buf = malloc(chunk)) != NULL);
	memset(buf, 'x', chunk);
	lr_init(&lr, 4 * 1024 * 1024);
	for (i = 0; i < 160; i++)
		lr_feed(&lr, buf, chunk, on_line, on_long, &s);
	ATF_CHECK_EQ(s.toolong, 1);
	ATF_CHECK(lr.cap <= lr.max);
	feed(&lr, &s, "\n{}\n");
	ATF_CHECK_EQ(s.lines, 1);
	ATF_CHECK_STREQ(s.last, "{}");
	lr_free(&lr);
	free(buf);
}

static enum rpc_kind
classify(const char *line, int *code, json_t **idcopy)
{
	struct rpc_msg m;
	enum rpc_kind k;

	rpc_parse(line, strlen(line), &m);
	k = m.kind;
	*code = m.code;
	if (idcopy != NULL)
		*idcopy = m.id != NULL ? json_deep_copy(m.id) : NULL;
	rpc_clear(&m);
	return k;
}

static void
expect_error(const char *line, int want, int id_kept)
{
	json_t *id;
	int code;

	ATF_CHECK_EQ_MSG(classify(line, &code, &id), RPC_INVALID, "%.80s",
	    line);
	ATF_CHECK_EQ_MSG(code, want, "%.80s: code %d", line, code);
	ATF_CHECK_EQ_MSG(id != NULL, id_kept, "%.80s: id", line);
	json_decref(id);
}

ATF_TC_WITHOUT_HEAD(parse_valid);
ATF_TC_BODY(parse_valid, tc)
{
	json_t *id;
	int code;

	ATF_CHECK_EQ(classify("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}", &code, &id), RPC_REQUEST);
	ATF_CHECK(json_is_integer(id) && json_integer_value(id) == 1);
	json_decref(id);
	ATF_CHECK_EQ(classify("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":"
	    "\"ping\",\"params\":{}}", &code, NULL), RPC_REQUEST);
	/* No id: a notification, which is never answered. */
	ATF_CHECK_EQ(classify("{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\"}",
	    &code, NULL), RPC_NOTIFICATION);
	ATF_CHECK_EQ(classify("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}",
	    &code, NULL), RPC_RESPONSE);
	ATF_CHECK_EQ(classify("   \r", &code, NULL), RPC_EMPTY);
}

ATF_TC_WITHOUT_HEAD(parse_bad_json);
ATF_TC_BODY(parse_bad_json, tc)
{
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,", RPC_PARSE_ERROR, 0);
	expect_error("garbage", RPC_PARSE_ERROR, 0);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,"
	    "\"method\":\"ping\"}", RPC_PARSE_ERROR, 0);
	/* Invalid UTF-8: a lone continuation byte, an overlong '/'. */
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\x80\"}",
	    RPC_PARSE_ERROR, 0);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":\"\xc0\xaf\","
	    "\"method\":\"ping\"}", RPC_PARSE_ERROR, 0);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\\u0000b\"}",
	    RPC_PARSE_ERROR, 0);
}

ATF_TC_WITHOUT_HEAD(parse_envelope);
ATF_TC_BODY(parse_envelope, tc)
{
	/* Arrays are batches; batch.c decides whether to serve them. */
	ATF_CHECK_EQ(classify("[]", &(int){ 0 }, NULL), RPC_BATCH);
	ATF_CHECK_EQ(classify("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"ping\"}]", &(int){ 0 }, NULL), RPC_BATCH);
	expect_error("42", RPC_INVALID_REQUEST, 0);
	expect_error("\"ping\"", RPC_INVALID_REQUEST, 0);
	expect_error("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}",
	    RPC_INVALID_REQUEST, 1);
	expect_error("{\"id\":1,\"method\":\"ping\"}", RPC_INVALID_REQUEST, 1);
	expect_error("{\"jsonrpc\":2.0,\"id\":1,\"method\":\"ping\"}",
	    RPC_INVALID_REQUEST, 1);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1}", RPC_INVALID_REQUEST, 1);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}",
	    RPC_INVALID_REQUEST, 1);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
	    "\"params\":\"x\"}", RPC_INVALID_REQUEST, 1);
	expect_error("{\"jsonrpc\":\"2.0\"}", RPC_INVALID_REQUEST, 0);
}

/* Ids of every JSON type: only strings and integers are ids in MCP. */
ATF_TC_WITHOUT_HEAD(parse_id_types);
ATF_TC_BODY(parse_id_types, tc)
{
	static const char *const bad[] = { "null", "true", "false", "1.5",
	    "{}", "[1]", "{\"a\":1}" };
	char line[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%s,"
		    "\"method\":\"ping\"}", bad[i]);
		expect_error(line, RPC_INVALID_REQUEST, 0);
	}
}

ATF_TC_WITHOUT_HEAD(parse_huge_numbers);
ATF_TC_BODY(parse_huge_numbers, tc)
{
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1e999,\"method\":\"ping\"}",
	    RPC_PARSE_ERROR, 0);
	expect_error("{\"jsonrpc\":\"2.0\","
	    "\"id\":123456789012345678901234567890,\"method\":\"ping\"}",
	    RPC_PARSE_ERROR, 0);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
	    "\"params\":{\"n\":-1e400}}", RPC_PARSE_ERROR, 0);
}

static char *
nested(size_t depth)
{
	char *s;
	size_t i, off = 0;

	ATF_REQUIRE((s = malloc(depth * 2 + 64)) != NULL);
	off += sprintf(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\","
	    "\"params\":{\"x\":");
	for (i = 0; i < depth; i++)
		s[off++] = '[';
	for (i = 0; i < depth; i++)
		s[off++] = ']';
	strcpy(s + off, "}}");
	return s;
}

ATF_TC_WITHOUT_HEAD(parse_deep_nesting);
ATF_TC_BODY(parse_deep_nesting, tc)
{
	char *s;

	s = nested(60);
	ATF_CHECK_EQ(classify(s, &(int){ 0 }, NULL), RPC_REQUEST);
	free(s);
	s = nested(100);
	expect_error(s, RPC_PARSE_ERROR, 0);
	free(s);
	s = nested(1000000);
	expect_error(s, RPC_PARSE_ERROR, 0);
	free(s);
}

/* Everything mcpd wrote to out (rewound), as one JSON value a line. */
static json_t *
written(FILE *out)
{
	char line[4096];
	json_t *all;

	ATF_REQUIRE((all = json_array()) != NULL);
	fflush(out);
	rewind(out);
	while (fgets(line, sizeof(line), out) != NULL)
		json_array_append_new(all, json_loads(line, 0, NULL));
	ATF_REQUIRE(ftruncate(fileno(out), 0) == 0);
	rewind(out);
	return all;
}

/* One line in, as mcpd reads it in a session on version. */
static json_t *
serve(FILE *out, const char *version, const char *line)
{
	mcpd.initialized = version != NULL;
	strlcpy(mcpd.version, version != NULL ? version : "",
	    sizeof(mcpd.version));
	mcp_line(line, strlen(line), NULL);
	return written(out);
}

static FILE *
capture(void)
{
	FILE *out;

	ATF_REQUIRE((out = tmpfile()) != NULL);
	mcpd.out_fd = fileno(out);
	return out;
}

static int
error_code(const json_t *msg)
{
	return (int)json_integer_value(json_object_get(json_object_get(msg,
	    "error"), "code"));
}

#define PING(id)	"{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"ping\"}"
#define NOTE		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}"

/* Refused batches: the wrong revision, none chosen yet, or empty. */
ATF_TC_WITHOUT_HEAD(batch_refused);
ATF_TC_BODY(batch_refused, tc)
{
	static const char *const versions[] = { NULL, "2024-11-05",
	    "2025-06-18", "2025-11-25" };
	FILE *out = capture();
	json_t *w;
	size_t i;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		w = serve(out, versions[i], "[" PING("1") "," PING("2") "]");
		ATF_CHECK_EQ_MSG(json_array_size(w), 1, "%s", versions[i]);
		ATF_CHECK_EQ(error_code(json_array_get(w, 0)),
		    RPC_INVALID_REQUEST);
		json_decref(w);
	}
	w = serve(out, "2025-03-26", "[]");
	ATF_CHECK_EQ(json_array_size(w), 1);
	ATF_CHECK_EQ(error_code(json_array_get(w, 0)), RPC_INVALID_REQUEST);
	json_decref(w);
	fclose(out);
}

/* 2025-03-26: one array, a response per request, none per notification. */
ATF_TC_WITHOUT_HEAD(batch_served);
ATF_TC_BODY(batch_served, tc)
{
	FILE *out = capture();
	json_t *w, *a;

	w = serve(out, "2025-03-26", "[" PING("1") "," NOTE "," PING("\"b\"")
	    ",[1],{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"no/such\"}]");
	ATF_REQUIRE_EQ(json_array_size(w), 1);
	a = json_array_get(w, 0);
	ATF_REQUIRE(json_is_array(a));
	ATF_REQUIRE_EQ(json_array_size(a), 4);
	ATF_CHECK_EQ(json_integer_value(json_object_get(json_array_get(a, 0),
	    "id")), 1);
	ATF_CHECK_STREQ(json_string_value(json_object_get(json_array_get(a,
	    1), "id")), "b");
	ATF_CHECK_EQ(error_code(json_array_get(a, 2)), RPC_INVALID_REQUEST);
	ATF_CHECK_EQ(error_code(json_array_get(a, 3)), RPC_METHOD_NOT_FOUND);
	json_decref(w);
	/* Only notifications: nothing at all is written. */
	w = serve(out, "2025-03-26", "[" NOTE "," NOTE "]");
	ATF_CHECK_EQ(json_array_size(w), 0);
	json_decref(w);
	fclose(out);
}

/*
 * An error with no usable id: "id": null where the revision's schema
 * requires an id (to 2025-06-18), no id from 2025-11-25 on.
 */
ATF_TC_WITHOUT_HEAD(error_id);
ATF_TC_BODY(error_id, tc)
{
	static const struct {
		const char	*version;
		int		 null_id;
	} cases[] = { { NULL, 0 }, { "2024-11-05", 1 }, { "2025-03-26", 1 },
	    { "2025-06-18", 1 }, { "2025-11-25", 0 } };
	FILE *out = capture();
	json_t *w, *msg;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		w = serve(out, cases[i].version, "garbage");
		msg = json_array_get(w, 0);
		ATF_CHECK_EQ(error_code(msg), RPC_PARSE_ERROR);
		ATF_CHECK_EQ_MSG(json_is_null(json_object_get(msg, "id")),
		    cases[i].null_id, "%s", cases[i].version);
		ATF_CHECK_EQ_MSG(json_object_get(msg, "id") != NULL,
		    cases[i].null_id, "%s", cases[i].version);
		json_decref(w);
	}
	fclose(out);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, reader_split);
	ATF_TP_ADD_TC(tp, reader_limit);
	ATF_TP_ADD_TC(tp, reader_10mib);
	ATF_TP_ADD_TC(tp, parse_valid);
	ATF_TP_ADD_TC(tp, parse_bad_json);
	ATF_TP_ADD_TC(tp, parse_envelope);
	ATF_TP_ADD_TC(tp, parse_id_types);
	ATF_TP_ADD_TC(tp, parse_huge_numbers);
	ATF_TP_ADD_TC(tp, parse_deep_nesting);
	ATF_TP_ADD_TC(tp, batch_refused);
	ATF_TP_ADD_TC(tp, batch_served);
	ATF_TP_ADD_TC(tp, error_id);
	return atf_no_error();
}
