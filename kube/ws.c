/* SPDX-License-Identifier: ISC */
/*
 * pods/exec over a WebSocket, for a session's kubernetes worker.  This
 * libcurl (7.88) has no ws:// support built in, so curl only connects
 * (CURLOPT_CONNECT_ONLY: TCP, TLS and the client certificate as for
 * every request) and the upgrade and the frames are written here, from
 * RFC 6455 (the handshake, section 4; the framing, section 5).  The
 * API server speaks the v4.channel.k8s.io subprotocol on it: every
 * binary message starts with its stream's number (0 stdin, 1 stdout,
 * 2 stderr, 3 the exec's closing Status), as the Kubernetes API
 * reference for pods/exec and k8s.io/apimachinery's wsstream describe.
 * A client sends masked frames; a server's are unmasked.  Fragmented
 * messages are refused: the API server sends each write as one frame.
 */
#include <sys/types.h>

#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "kube.h"
#include "log.h"

#define WS_GUID		"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"	/* 4.2.2 */
#define WS_PROTOCOL	"v4.channel.k8s.io"
#define WS_FRAME_MAX	(8u * 1024 * 1024)
#define WS_HEAD_MAX	8192
#define WS_WAIT_MS	30000	/* for the handshake and for a send */

enum { OP_CONT = 0, OP_TEXT = 1, OP_BINARY = 2, OP_CLOSE = 8, OP_PING = 9,
    OP_PONG = 10 };

/* Waits until fd is ready for events; -1 on a timeout. */
static int
ws_wait(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	return poll(&p, 1, WS_WAIT_MS) == 1 ? 0 : -1;
}

static int
ws_write(struct kube_ws *ws, const uint8_t *p, size_t len)
{
	size_t sent;
	CURLcode rc;

	while (len > 0) {
		rc = curl_easy_send(ws->curl, p, len, &sent);
		if (rc == CURLE_AGAIN) {
			if (ws_wait(ws->fd, POLLOUT) == -1)
				return -1;
			continue;
		}
		if (rc != CURLE_OK)
			return -1;
		p += sent;
		len -= sent;
	}
	return 0;
}

/* Reads what is there onto ws->in: 0, or -1 once the stream ended. */
static int
ws_fill(struct kube_ws *ws)
{
	uint8_t buf[16384], *p;
	size_t n;
	CURLcode rc;

	for (;;) {
		rc = curl_easy_recv(ws->curl, buf, sizeof(buf), &n);
		if (rc == CURLE_AGAIN)
			return 0;
		if (rc != CURLE_OK || n == 0)
			return -1;
		if (ws->inlen + n > WS_FRAME_MAX + 16)
			return -1;
		if ((p = realloc(ws->in, ws->inlen + n)) == NULL)
			return -1;
		memcpy(p + ws->inlen, buf, n);
		ws->in = p;
		ws->inlen += n;
	}
}

/* One frame of ours: opcode, the stream byte (-1: none), then data. */
static int
ws_frame(struct kube_ws *ws, int op, int stream, const void *data,
    size_t len)
{
	uint8_t head[14], mask[4], *buf;
	size_t n = 0, total = len + (stream >= 0), i;
	int rv;

	head[n++] = 0x80 | op;
	if (total < 126)
		head[n++] = 0x80 | total;
	else if (total <= 0xffff) {
		head[n++] = 0x80 | 126;
		head[n++] = total >> 8;
		head[n++] = total & 0xff;
	} else {
		head[n++] = 0x80 | 127;
		for (i = 0; i < 8; i++)
			head[n++] = (uint64_t)total >> (56 - 8 * i);
	}
	if (getrandom(mask, sizeof(mask), 0) != sizeof(mask) ||
	    (buf = malloc(n + 4 + total)) == NULL)
		return -1;
	memcpy(buf, head, n);
	memcpy(buf + n, mask, 4);
	if (stream >= 0)
		buf[n + 4] = stream;
	if (len > 0)
		memcpy(buf + n + 4 + (stream >= 0), data, len);
	for (i = 0; i < total; i++)
		buf[n + 4 + i] ^= mask[i % 4];
	rv = ws_write(ws, buf, n + 4 + total);
	free(buf);
	return rv;
}

int
kube_ws_send(struct kube_ws *ws, int stream, const void *data, size_t len)
{
	return ws_frame(ws, OP_BINARY, stream, data, len);
}

/* The Sec-WebSocket-Accept a server must answer key with. */
static void
ws_accept(const char *key, char out[64])
{
	unsigned char md[SHA_DIGEST_LENGTH];
	char both[128];

	snprintf(both, sizeof(both), "%s%s", key, WS_GUID);
	SHA1((const unsigned char *)both, strlen(both), md);
	EVP_EncodeBlock((unsigned char *)out, md, sizeof(md));
}

/* Header name's value in the response head (lower-cased names), or NULL. */
static const char *
ws_header(const char *head, const char *name, char *val, size_t vlen)
{
	const char *p, *e;
	size_t n = strlen(name);

	for (p = strstr(head, "\r\n"); p != NULL; p = strstr(p, "\r\n")) {
		p += 2;
		if (strncasecmp(p, name, n) != 0 || p[n] != ':')
			continue;
		p += n + 1;
		p += strspn(p, " \t");
		e = strstr(p, "\r\n");
		snprintf(val, vlen, "%.*s", (int)(e != NULL ? e - p :
		    (long)strlen(p)), p);
		return val;
	}
	return NULL;
}

/* Reads the answer's head; what follows it stays in ws->in. */
static char *
ws_head(struct kube_ws *ws)
{
	uint8_t *end;
	char *head;
	size_t n;

	for (;;) {
		end = ws->inlen >= 4 ? memmem(ws->in, ws->inlen, "\r\n\r\n",
		    4) : NULL;
		if (end != NULL)
			break;
		if (ws->inlen > WS_HEAD_MAX || ws_wait(ws->fd, POLLIN) == -1 ||
		    ws_fill(ws) == -1)
			return NULL;
	}
	n = end - ws->in + 4;
	if ((head = strndup((char *)ws->in, n)) == NULL)
		return NULL;
	memmove(ws->in, ws->in + n, ws->inlen - n);
	ws->inlen -= n;
	return head;
}

/*
 * Upgrades a GET of path (pods/NAME/exec?...) to the exec stream; -1
 * and why when the cluster refuses it.
 */
int
kube_ws_open(struct kube_api *k, const char *path, struct kube_ws *ws,
    char *why, size_t whylen)
{
	struct curl_slist *h;
	unsigned char rnd[16];
	char key[32], want[64], got[128], host[512], *req = NULL, *head = NULL;
	const char *hp;
	curl_socket_t fd;
	int code = 0, n = 0;

	memset(ws, 0, sizeof(*ws));
	ws->fd = -1;
	if ((ws->curl = curl_easy_init()) == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	h = kube_curl_setup(k, ws->curl, "/");
	curl_easy_setopt(ws->curl, CURLOPT_CONNECT_ONLY, 1L);
	if (curl_easy_perform(ws->curl) != CURLE_OK ||
	    curl_easy_getinfo(ws->curl, CURLINFO_ACTIVESOCKET, &fd) !=
	    CURLE_OK || fd == CURL_SOCKET_BAD) {
		snprintf(why, whylen, "Kubernetes API %s: cannot connect for "
		    "pods/exec", k->server);
		goto fail;
	}
	ws->fd = fd;
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		goto fail;
	EVP_EncodeBlock((unsigned char *)key, rnd, sizeof(rnd));
	hp = strstr(k->server, "://");
	snprintf(host, sizeof(host), "%s", hp != NULL ? hp + 3 : k->server);
	host[strcspn(host, "/")] = '\0';
	n = asprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n"
	    "Sec-WebSocket-Protocol: " WS_PROTOCOL "\r\n%s%s\r\n", path, host,
	    key, h != NULL ? h->data : "", h != NULL ? "\r\n" : "");
	if (n == -1 || ws_write(ws, (uint8_t *)req, n) == -1 ||
	    (head = ws_head(ws)) == NULL) {
		snprintf(why, whylen, "Kubernetes API %s: pods/exec: no "
		    "answer to the upgrade", k->server);
		goto fail;
	}
	sscanf(head, "HTTP/1.%*d %d", &code);
	ws_accept(key, want);
	if (code != 101) {
		snprintf(why, whylen, "Kubernetes API: pods/exec: HTTP %d",
		    code);
		goto fail;
	}
	if (ws_header(head, "sec-websocket-accept", got, sizeof(got)) ==
	    NULL || strcmp(got, want) != 0 || ws_header(head,
	    "sec-websocket-protocol", got, sizeof(got)) == NULL ||
	    strcmp(got, WS_PROTOCOL) != 0) {
		snprintf(why, whylen, "Kubernetes API: pods/exec: not a %s "
		    "WebSocket", WS_PROTOCOL);
		goto fail;
	}
	if (req != NULL)
		freezero(req, n);
	free(head);
	curl_slist_free_all(h);
	return 0;
fail:
	if (req != NULL)
		freezero(req, n);
	free(head);
	curl_slist_free_all(h);
	kube_ws_close(ws);
	return -1;
}

/*
 * Hands each whole message now in to cb (stream, data, len), answers
 * pings; 0, or -1 once the stream is closed or broken, or cb says 1.
 */
int
kube_ws_read(struct kube_ws *ws, kube_ws_cb cb, void *arg)
{
	uint64_t len;
	size_t hl, i;
	uint8_t op, *p;
	int ended;

	ended = ws_fill(ws) == -1;
	while (ws->inlen >= 2) {
		p = ws->in;
		op = p[0] & 0x0f;
		if (!(p[0] & 0x80) || op == OP_CONT || (p[1] & 0x80))
			return -1;	/* fragmented, or masked by a server */
		len = p[1] & 0x7f;
		hl = 2;
		if (len == 126) {
			if (ws->inlen < 4)
				break;
			len = (uint64_t)p[2] << 8 | p[3];
			hl = 4;
		} else if (len == 127) {
			if (ws->inlen < 10)
				break;
			for (len = 0, i = 0; i < 8; i++)
				len = len << 8 | p[2 + i];
			hl = 10;
		}
		if (len > WS_FRAME_MAX)
			return -1;
		if (ws->inlen < hl + len)
			break;
		if (op == OP_CLOSE)
			return -1;
		if (op == OP_PING && ws_frame(ws, OP_PONG, -1, p + hl,
		    len) == -1)
			return -1;
		if ((op == OP_BINARY || op == OP_TEXT) && len >= 1 &&
		    cb(p[hl], p + hl + 1, len - 1, arg) == 1)
			return -1;
		memmove(ws->in, ws->in + hl + len, ws->inlen - hl - len);
		ws->inlen -= hl + len;
	}
	return ended ? -1 : 0;
}

void
kube_ws_close(struct kube_ws *ws)
{
	if (ws->curl != NULL) {
		if (ws->fd != -1)
			(void)ws_frame(ws, OP_CLOSE, -1, "\x03\xe8", 2);
		curl_easy_cleanup(ws->curl);
	}
	free(ws->in);
	memset(ws, 0, sizeof(*ws));
	ws->fd = -1;
}
