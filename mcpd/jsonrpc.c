/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cjson.h"
#include "io.h"
#include "log.h"
#include "mcpd.h"

/*
 * The stdio transport: one JSON-RPC message per line.  A line longer
 * than max is refused as soon as it crosses the limit and the rest of
 * it is skipped, so memory stays bounded whatever the client sends.
 */
void
lr_init(struct linereader *lr, size_t max)
{
	memset(lr, 0, sizeof(*lr));
	lr->max = max;
}

void
lr_free(struct linereader *lr)
{
	free(lr->buf);
	lr_init(lr, lr->max);
}

static int
lr_append(struct linereader *lr, const char *p, size_t n)
{
	size_t ncap;
	char *nb;

	if (lr->len + n > lr->cap) {
		ncap = lr->cap ? lr->cap : 4096;
		while (ncap < lr->len + n)
			ncap *= 2;
		if (ncap > lr->max)
			ncap = lr->max;
		if ((nb = realloc(lr->buf, ncap)) == NULL)
			return -1;
		lr->buf = nb;
		lr->cap = ncap;
	}
	memcpy(lr->buf + lr->len, p, n);
	lr->len += n;
	return 0;
}

void
lr_feed(struct linereader *lr, const char *p, size_t n, lr_line_cb line,
    lr_long_cb toolong, void *arg)
{
	const char *nl;
	size_t seg;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		seg = nl != NULL ? (size_t)(nl - p) : n;
		if (lr->discarding)
			;
		else if (lr->len + seg > lr->max) {
			lr->len = 0;
			lr->discarding = 1;
			toolong(arg);
		} else if (lr_append(lr, p, seg) == -1)
			fatal("line buffer");
		if (nl != NULL) {
			if (!lr->discarding)
				line(lr->buf != NULL ? lr->buf : "", lr->len,
				    arg);
			lr->len = 0;
			lr->discarding = 0;
			seg++;
		}
		p += seg;
		n -= seg;
	}
}

static void
invalid(struct rpc_msg *m, int code, const char *why)
{
	m->kind = RPC_INVALID;
	m->code = code;
	strlcpy(m->why, why, sizeof(m->why));
}

/* MCP narrows JSON-RPC: an id is a string or an integer, never null. */
static int
id_valid(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

static int
blank(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			return 0;
	return 1;
}

/* Classifies the message in m->root, one object. */
static void
classify(struct rpc_msg *m)
{
	json_t *id, *v;

	if (!json_is_object(m->root)) {
		invalid(m, RPC_INVALID_REQUEST,
		    "Invalid Request: not a JSON object");
		return;
	}
	id = json_object_get(m->root, "id");
	if (id != NULL && !id_valid(id)) {
		invalid(m, RPC_INVALID_REQUEST,
		    "Invalid Request: id must be a string or an integer");
		return;
	}
	m->id = id;
	v = json_object_get(m->root, "jsonrpc");
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0) {
		invalid(m, RPC_INVALID_REQUEST,
		    "Invalid Request: jsonrpc must be \"2.0\"");
		return;
	}
	v = json_object_get(m->root, "method");
	if (v == NULL && id != NULL && (json_object_get(m->root, "result") ||
	    json_object_get(m->root, "error"))) {
		m->kind = RPC_RESPONSE;
		return;
	}
	if (!json_is_string(v)) {
		invalid(m, RPC_INVALID_REQUEST,
		    "Invalid Request: method must be a string");
		return;
	}
	m->method = json_string_value(v);
	m->params = json_object_get(m->root, "params");
	if (m->params != NULL && !json_is_object(m->params) &&
	    !json_is_array(m->params)) {
		invalid(m, RPC_INVALID_REQUEST,
		    "Invalid Request: params must be an object");
		return;
	}
	m->kind = id != NULL ? RPC_REQUEST : RPC_NOTIFICATION;
}

/*
 * Classifies one line.  m->root holds the parsed value (release it with
 * rpc_clear); for RPC_INVALID, m->id is the id to answer to, or NULL
 * when the message had none that could be trusted.  An array is a
 * batch, whose members go through rpc_classify one by one.
 */
void
rpc_parse(const char *line, size_t len, struct rpc_msg *m)
{
	char err[200];

	memset(m, 0, sizeof(*m));
	if (blank(line, len)) {
		m->kind = RPC_EMPTY;
		return;
	}
	if ((m->root = cjson_parse(line, len, err, sizeof(err))) == NULL) {
		invalid(m, RPC_PARSE_ERROR, "Parse error: ");
		strlcat(m->why, err, sizeof(m->why));
		return;
	}
	if (json_is_array(m->root))
		m->kind = RPC_BATCH;
	else
		classify(m);
}

/* Classifies one member of a batch; takes the reference to v. */
void
rpc_classify(json_t *v, struct rpc_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->root = v;
	classify(m);
}

void
rpc_clear(struct rpc_msg *m)
{
	json_decref(m->root);
	memset(m, 0, sizeof(*m));
}

/* Writes one message, or a batch's answer, as one line; takes msg. */
void
rpc_write(json_t *msg)
{
	char *s;

	if (msg == NULL || (s = json_dumps(msg, JSON_COMPACT)) == NULL)
		fatalx("cannot encode a reply");
	json_decref(msg);
	if (write_full(mcpd.out_fd, s, strlen(s)) == -1 ||
	    write_full(mcpd.out_fd, "\n", 1) == -1)
		fatal("stdout");
	free(s);
}

/* A response goes into its batch, if it has one; takes msg. */
static void
rpc_send(json_t *msg)
{
	if (msg == NULL)
		fatalx("cannot encode a reply");
	if (!batch_collect(msg))
		rpc_write(msg);
}

/* Answers id (NULL: null) with result, whose reference it takes. */
void
rpc_result(const json_t *id, json_t *result)
{
	rpc_send(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
	    id != NULL ? id : json_null(), "result", result));
}

/*
 * An error to a message whose id could not be read: JSON-RPC 2.0 (5.1)
 * answers it with "id": null.  MCP's schemas up to 2025-06-18 require
 * the id (JSONRPCError.id), so a session on one of those gets the null;
 * from 2025-11-25 it is optional (JSONRPCErrorResponse.id?) and left
 * out, as it is before a session has chosen a revision.
 */
static int
null_id_required(void)
{
	return mcpd.initialized && strcmp(mcpd.version, "2025-11-25") < 0;
}

void
rpc_error(const json_t *id, int code, const char *message, json_t *data)
{
	json_t *err, *msg;

	err = json_pack("{s:i, s:s}", "code", code, "message", message);
	if (err != NULL && data != NULL)
		json_object_set_new(err, "data", data);
	msg = json_pack("{s:s, s:o}", "jsonrpc", "2.0", "error", err);
	if (msg != NULL && (id != NULL || null_id_required()))
		json_object_set(msg, "id", id != NULL ? (json_t *)id :
		    json_null());
	rpc_send(msg);
}

void
rpc_notify(const char *method, json_t *params)
{
	rpc_send(json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method",
	    method, "params", params));
}
