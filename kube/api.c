/* SPDX-License-Identifier: ISC */
/*
 * The cluster's API over libcurl, for the kubernetes helper: the
 * kubeconfig's current context (server, CA, bearer token or client
 * certificate, files read once into memory so the helper needs no file
 * access afterwards), JSON requests with Kubernetes Status errors made
 * readable, text streams (pods/log, followed or not) and watches.  TLS
 * is always verified.
 */
#include <curl/curl.h>
#include <openssl/evp.h>

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cjson.h"
#include "kube.h"
#include "log.h"
#include "ytree.h"

#define KUBE_FILE_MAX	(256 * 1024)
#define KUBE_REPLY_MAX	(8 * 1024 * 1024)
#define CONNECT_TIMEOUT	5L
#define REQUEST_TIMEOUT	30L

volatile sig_atomic_t	 kube_cancelled;

struct kbuf {
	char		*p;
	size_t		 len, max;
	int		 over;
	kube_event_cb	 cb;		/* watches: one call per line */
	kube_text_cb	 text;		/* streams: one call per piece */
	void		*arg;
	int		 stopped;
	void		*curl;
};

static const struct ynode *
ykid(const struct ynode *n, const char *key)
{
	size_t i;

	if (n == NULL || n->type != YN_MAP)
		return NULL;
	for (i = 0; i < n->nkids; i++)
		if (strcmp(n->kids[i]->key, key) == 0)
			return n->kids[i];
	return NULL;
}

static const char *
yval(const struct ynode *n, const char *key)
{
	n = ykid(n, key);
	return n != NULL && n->type == YN_SCALAR ? n->value : NULL;
}

/* The entry of a kubeconfig list (clusters, users, contexts) called name. */
static const struct ynode *
named(const struct ynode *root, const char *list, const char *name,
    const char *inner)
{
	const struct ynode *l;
	const char *v;
	size_t i;

	if (name == NULL || (l = ykid(root, list)) == NULL ||
	    l->type != YN_SEQ)
		return NULL;
	for (i = 0; i < l->nkids; i++)
		if ((v = yval(l->kids[i], "name")) != NULL &&
		    strcmp(v, name) == 0)
			return ykid(l->kids[i], inner);
	return NULL;
}

static char *
read_file(const char *dir, const char *name, char *why, size_t whylen)
{
	char path[PATH_MAX], *p;
	size_t len = 0;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s%s%s", name[0] == '/' ? "" : dir,
	    name[0] == '/' ? "" : "/", name) >= (int)sizeof(path) ||
	    (f = fopen(path, "r")) == NULL) {
		snprintf(why, whylen, "%s: %s", name, strerror(errno));
		return NULL;
	}
	if ((p = calloc(1, KUBE_FILE_MAX + 1)) != NULL)
		len = fread(p, 1, KUBE_FILE_MAX + 1, f);
	fclose(f);
	if (p == NULL || len > KUBE_FILE_MAX) {
		snprintf(why, whylen, "%s: too large", name);
		free(p);
		return NULL;
	}
	return p;
}

static char *
b64_decode(const char *s)
{
	size_t n = strlen(s);
	int len;
	char *p;

	if ((p = calloc(1, n + 1)) == NULL)
		return NULL;
	if ((len = EVP_DecodeBlock((unsigned char *)p,
	    (const unsigned char *)s, (int)n)) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

/* key-data (base64) or key (a file, relative to the kubeconfig). */
static int
pem(const struct ynode *n, const char *key, const char *dir, char **out,
    char *why, size_t whylen)
{
	char datakey[64];
	const char *v;

	snprintf(datakey, sizeof(datakey), "%s-data", key);
	if ((v = yval(n, datakey)) != NULL) {
		if ((*out = b64_decode(v)) == NULL) {
			snprintf(why, whylen, "%s: bad base64", datakey);
			return -1;
		}
	} else if ((v = yval(n, key)) != NULL &&
	    (*out = read_file(dir, v, why, whylen)) == NULL)
		return -1;
	return 0;
}

int
kube_load(struct kube_api *k, const char *path, char *why, size_t whylen)
{
	const struct ynode *cluster, *user, *ctx;
	struct ynode *root;
	struct yerr e;
	char dir[PATH_MAX], err[256];
	const char *v;
	int r = -1;

	memset(k, 0, sizeof(*k));
	memset(&e, 0, sizeof(e));
	strlcpy(e.file, path, sizeof(e.file));
	if ((root = yaml_load_file(path, &e)) == NULL) {
		snprintf(why, whylen, "%s", e.msg);
		return -1;
	}
	strlcpy(dir, path, sizeof(dir));
	strlcpy(dir, dirname(dir), sizeof(dir));
	ctx = named(root, "contexts", yval(root, "current-context"),
	    "context");
	cluster = named(root, "clusters", yval(ctx, "cluster"), "cluster");
	user = named(root, "users", yval(ctx, "user"), "user");
	if (ctx == NULL || cluster == NULL || user == NULL ||
	    (v = yval(cluster, "server")) == NULL) {
		snprintf(why, whylen, "%s: no current-context with a cluster "
		    "server and a user", path);
		goto out;
	}
	if (strncmp(v, "https://", 8) != 0 ||
	    strlcpy(k->server, v, sizeof(k->server)) >= sizeof(k->server)) {
		snprintf(why, whylen, "%s: the server must be https://", path);
		goto out;
	}
	if (pem(cluster, "certificate-authority", dir, &k->ca_pem, err,
	    sizeof(err)) == -1 || pem(user, "client-certificate", dir,
	    &k->cert_pem, err, sizeof(err)) == -1 || pem(user, "client-key",
	    dir, &k->key_pem, err, sizeof(err)) == -1) {
		snprintf(why, whylen, "%s: %s", path, err);
		goto out;
	}
	if ((v = yval(user, "token")) != NULL)
		k->token = strdup(v);
	else if ((v = yval(user, "tokenFile")) != NULL &&
	    (k->token = read_file(dir, v, err, sizeof(err))) == NULL) {
		snprintf(why, whylen, "%s: %s", path, err);
		goto out;
	}
	if (k->token != NULL)
		k->token[strcspn(k->token, "\r\n")] = '\0';
	if (k->token == NULL && (k->cert_pem == NULL || k->key_pem == NULL)) {
		snprintf(why, whylen, "%s: the user has neither a token nor a "
		    "client certificate and key", path);
		goto out;
	}
	if ((k->curl = curl_easy_init()) == NULL) {
		snprintf(why, whylen, "curl_easy_init failed");
		goto out;
	}
	r = 0;
out:
	ynode_free(root);
	if (r == -1)
		kube_free(k);
	return r;
}

static void
wipe(char **p)
{
	if (*p != NULL)
		freezero(*p, strlen(*p));
	*p = NULL;
}

void
kube_free(struct kube_api *k)
{
	wipe(&k->ca_pem);
	wipe(&k->token);
	wipe(&k->cert_pem);
	wipe(&k->key_pem);
	if (k->curl != NULL)
		curl_easy_cleanup(k->curl);
	k->curl = NULL;
}

/* Closes the connections kept for reuse. */
void
kube_disconnect(struct kube_api *k)
{
	curl_easy_cleanup(k->curl);
	if ((k->curl = curl_easy_init()) == NULL)
		fatalx("curl_easy_init");
}

/* Whole lines to the watch callback; a 1 from it ends the watch. */
static int
watch_lines(struct kbuf *b)
{
	json_t *ev;
	char *nl;
	size_t n;
	int r;

	while ((nl = memchr(b->p, '\n', b->len)) != NULL) {
		n = nl - b->p + 1;
		ev = cjson_parse((const uint8_t *)b->p, n - 1, NULL, 0);
		memmove(b->p, b->p + n, b->len - n);
		b->len -= n;
		if (ev == NULL)
			continue;
		r = b->cb(json_string_value(json_object_get(ev, "type")),
		    json_object_get(ev, "object"), b->arg);
		json_decref(ev);
		if (r)
			return 1;
	}
	return 0;
}

static size_t
api_collect(char *data, size_t size, size_t nmemb, void *arg);

/* A 200 stream's pieces to its callback; any other answer collected. */
static size_t
stream_collect(char *data, size_t size, size_t nmemb, void *arg)
{
	struct kbuf *b = arg;
	long code = 0;

	curl_easy_getinfo(b->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200)
		return api_collect(data, size, nmemb, arg);
	if (b->text(data, size * nmemb, b->arg)) {
		b->stopped = 1;
		return 0;
	}
	return size * nmemb;
}

static size_t
api_collect(char *data, size_t size, size_t nmemb, void *arg)
{
	struct kbuf *b = arg;
	size_t n = size * nmemb, take;
	char *p;

	take = n;
	if (b->len + take > b->max) {
		take = b->max - b->len;
		b->over = 1;
	}
	if (take > 0) {
		if ((p = realloc(b->p, b->len + take + 1)) == NULL)
			return 0;
		b->p = p;
		memcpy(b->p + b->len, data, take);
		b->len += take;
		b->p[b->len] = '\0';
	}
	if (b->cb != NULL && watch_lines(b)) {
		b->stopped = 1;
		return 0;
	}
	if (b->over && b->cb != NULL)
		return 0;
	return n;
}

/*
 * The text of a Warning header (299 - "TEXT", RFC 7234 5.5), unescaped,
 * into k->warning; the first one wins.  The API server warns there, for
 * one, when Pod Security would refuse a Job's pods.
 * https://kubernetes.io/blog/2020/09/03/warnings/
 */
static size_t
api_header(char *data, size_t size, size_t nmemb, void *arg)
{
	struct kube_api *k = arg;
	size_t n = size * nmemb, i, o = 0;
	const char *q;

	if (k->warning[0] != '\0' || n < 9 ||
	    strncasecmp(data, "Warning:", 8) != 0 ||
	    (q = memchr(data, '"', n)) == NULL)
		return n;
	for (i = q - data + 1; i < n && data[i] != '"' &&
	    o + 1 < sizeof(k->warning); i++) {
		if (data[i] == '\\' && i + 1 < n)
			i++;
		k->warning[o++] = data[i];
	}
	k->warning[o] = '\0';
	return n;
}

static int
progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut,
    curl_off_t un)
{
	(void)dt, (void)dn, (void)ut, (void)un;
	return *(int *)arg && kube_cancelled;
}

/*
 * c reset for path on the cluster: TLS verified against the cluster's
 * CA, the client certificate if that is how runnerd authenticates; the
 * headers to send (a bearer token), for the caller to free.
 */
struct curl_slist *
kube_curl_setup(struct kube_api *k, void *c, const char *path)
{
	struct curl_slist *h = NULL;
	struct curl_blob blob;
	char url[2048], auth[4096];

	snprintf(url, sizeof(url), "%s%s", k->server, path);
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT);
	if (k->ca_pem != NULL) {
		blob.data = k->ca_pem;
		blob.len = strlen(k->ca_pem);
		blob.flags = CURL_BLOB_COPY;
		curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
	}
	if (k->token != NULL) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
		    k->token);
		h = curl_slist_append(h, auth);
		explicit_bzero(auth, sizeof(auth));
	} else {
		blob.data = k->cert_pem;
		blob.len = strlen(k->cert_pem);
		blob.flags = CURL_BLOB_COPY;
		curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &blob);
		blob.data = k->key_pem;
		blob.len = strlen(k->key_pem);
		curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &blob);
	}
	return h;
}

/*
 * One HTTP exchange: the status code, or -1 and why for a transport
 * failure.  interruptible: kube_cancelled ends it (waits, not cleanup).
 */
static long
perform(struct kube_api *k, const char *method, const char *path,
    const char *body, struct kbuf *b, long timeout, int interruptible,
    char *why, size_t whylen)
{
	struct curl_slist *h;
	CURLcode rc;
	long code = -1;
	CURL *c = k->curl;

	h = kube_curl_setup(k, c, path);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout);
	b->curl = c;
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, b->text != NULL ?
	    stream_collect : api_collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
	k->warning[0] = '\0';
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, api_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, k);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, &interruptible);
	h = curl_slist_append(h, "Accept: application/json");
	if (body != NULL) {
		h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && b->stopped))
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	else if (rc == CURLE_ABORTED_BY_CALLBACK)
		snprintf(why, whylen, "cancelled");
	else
		snprintf(why, whylen, "Kubernetes API %s: %s", k->server,
		    curl_easy_strerror(rc));
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(h);
	return code;
}

/* A failed answer as the API says it: code, reason and message. */
static void
status_why(long code, const json_t *st, char *why, size_t whylen)
{
	const char *reason, *msg;

	reason = json_string_value(json_object_get(st, "reason"));
	msg = json_string_value(json_object_get(st, "message"));
	snprintf(why, whylen, "Kubernetes API: HTTP %ld%s%s%s%s", code,
	    reason != NULL ? " " : "", reason != NULL ? reason : "",
	    msg != NULL ? ": " : "", msg != NULL ? msg : "");
}

/*
 * A JSON request (body may be NULL): the HTTP status and the answer, or
 * -1 and why when there was none.  A status >= 300 comes with why.
 */
int
kube_request(struct kube_api *k, const char *method, const char *path,
    json_t *body, json_t **reply, char *why, size_t whylen)
{
	struct kbuf b = { .max = KUBE_REPLY_MAX };
	char *text = NULL;
	long code;

	*reply = NULL;
	if (body != NULL && (text = json_dumps(body, JSON_COMPACT)) == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	code = perform(k, method, path, text, &b, REQUEST_TIMEOUT, 0, why,
	    whylen);
	if (text != NULL)
		freezero(text, strlen(text));
	if (code != -1 && b.p != NULL)
		*reply = cjson_parse((const uint8_t *)b.p, b.len, NULL, 0);
	if (code >= 300)
		status_why(code, *reply, why, whylen);
	else if (code != -1 && b.over) {
		snprintf(why, whylen, "Kubernetes API: answer too large");
		code = -1;
	}
	free(b.p);
	return (int)code;
}

/*
 * A watch (path has ?watch=1): cb gets each event's type and object
 * until it returns 1.  1 when it did, 0 when the server ended the watch
 * first, -1 and why on errors (ERROR events included), cancellation
 * and a stream cut short.
 */
int
kube_watch(struct kube_api *k, const char *path, int timeout,
    kube_event_cb cb, void *arg, char *why, size_t whylen)
{
	struct kbuf b = { .max = KUBE_REPLY_MAX, .cb = cb, .arg = arg };
	long code;

	code = perform(k, "GET", path, NULL, &b, timeout + CONNECT_TIMEOUT,
	    1, why, whylen);
	free(b.p);
	if (b.stopped)
		return 1;
	if (code >= 300)
		status_why(code, NULL, why, whylen);
	else if (code != -1)
		return 0;
	return -1;
}

/*
 * A text stream (pods/log, with follow=true or not): cb gets each piece
 * as it comes until it returns 1.  1 when it did, 0 when the server
 * ended the stream first, -1 and why on errors (an answer other than
 * 200, in the API's words), cancellation and a stream cut short.
 */
int
kube_stream(struct kube_api *k, const char *path, int timeout,
    kube_text_cb cb, void *arg, char *why, size_t whylen)
{
	struct kbuf b = { .max = KUBE_REPLY_MAX, .text = cb, .arg = arg };
	json_t *st;
	long code;

	code = perform(k, "GET", path, NULL, &b, timeout + CONNECT_TIMEOUT,
	    1, why, whylen);
	if (code >= 300) {
		st = b.p != NULL ? cjson_parse((const uint8_t *)b.p, b.len,
		    NULL, 0) : NULL;
		status_why(code, st, why, whylen);
		json_decref(st);
	}
	free(b.p);
	if (b.stopped)
		return 1;
	return code == 200 ? 0 : -1;
}
