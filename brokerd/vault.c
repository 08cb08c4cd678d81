/* SPDX-License-Identifier: ISC */
/*
 * The Vault HTTP API over libcurl: TLS verified against the configured
 * CA, the token from a file, every request bounded in time.  Retries
 * happen on 5xx and on connection errors only; a request that mints a
 * lease is repeated only when Vault answered that it failed or when it
 * never left, since a lost answer would leave a lease we cannot name.
 * Vault's own error messages go up as they are.
 *
 * Requests run side by side through libcurl's multi interface, driven
 * by our event loop: libcurl names the sockets to watch and when to
 * wake it (CURLMOPT_SOCKETFUNCTION, CURLMOPT_TIMERFUNCTION), we hand
 * readiness and time-outs back with curl_multi_socket_action() and
 * collect finished transfers with curl_multi_info_read()
 * (https://curl.se/libcurl/c/libcurl-multi.html).  Each request calls
 * back once, from the event loop; the wait before a retry is a timer.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "brokerd.h"
#include "event.h"
#include "io.h"
#include "log.h"

#define VAULT_MAXRESP	(256 * 1024)
#define VAULT_MAXTOKEN	1024
#define RESP_CHUNK	4096

/* One API call and its attempts. */
struct vreq {
	CURL			*easy;
	const char		*method;	/* a literal */
	char			 path[2 * VAULT_PATH_MAX + 32];
	char			*body;		/* ours; wiped */
	int			 idempotent;
	int			 attempt, tries;
	struct curl_slist	 ctype, auth;
	char			*hdr;		/* the token; wiped */
	size_t			 hdrlen;
	char			*resp;		/* wiped */
	size_t			 resplen, respcap;
	char			 curlerr[CURL_ERROR_SIZE];
	long			 status;	/* -1: no answer */
	char			 err[1024];	/* may be cut */
	/* what the answer means, and whom to tell */
	void			(*finish)(struct vreq *);
	vault_issue_cb		 issue_cb;
	vault_revoke_cb		 revoke_cb;
	void			*arg;
};

static struct {
	CURLM			*multi;
	const struct brokerd_vault *conf;
	struct secret		 token;
	uint64_t		 timer;		/* 0: none */
} vault;

static void
resp_wipe(struct vreq *r)
{
	if (r->resp != NULL)
		explicit_bzero(r->resp, r->resplen);
	r->resplen = 0;
}

/* Grows by copying: realloc would leave an unwiped copy behind. */
static size_t
vreq_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct vreq *r = arg;
	size_t n = size * nmemb, len = r->resplen, cap;
	char *p;

	if (n > VAULT_MAXRESP - len)
		return 0;	/* curl fails it: CURLE_WRITE_ERROR */
	if (len + n > r->respcap) {
		cap = len + n + RESP_CHUNK;
		if ((p = malloc(cap)) == NULL)
			return 0;
		if (len > 0)
			memcpy(p, r->resp, len);
		resp_wipe(r);
		free(r->resp);
		r->resp = p;
		r->resplen = len;
		r->respcap = cap;
	}
	memcpy(r->resp + len, ptr, n);
	r->resplen += n;
	return n;
}

static void
vreq_free(struct vreq *r)
{
	if (r->easy != NULL)
		curl_easy_cleanup(r->easy);
	resp_wipe(r);
	free(r->resp);
	if (r->hdr != NULL) {
		explicit_bzero(r->hdr, r->hdrlen);
		free(r->hdr);
	}
	if (r->body != NULL) {
		explicit_bzero(r->body, strlen(r->body));
		free(r->body);
	}
	free(r);
}

int
vault_configured(void)
{
	return vault.conf != NULL && vault.conf->addr[0] != '\0';
}

/*
 * A request ready to go, or NULL with err.  Our own header list, so
 * that the token's copy is ours to wipe.
 */
static struct vreq *
vreq_new(const char *method, const char *path, const char *body,
    int idempotent, char *err, size_t errlen)
{
	struct vreq *r;
	char url[512];

	if (!vault_configured()) {
		snprintf(err, errlen, "no Vault configured");
		return NULL;
	}
	if (snprintf(url, sizeof(url), "%s/v1/%s", vault.conf->addr, path) >=
	    (int)sizeof(url)) {
		snprintf(err, errlen, "vault: path too long");
		return NULL;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    (r->easy = curl_easy_init()) == NULL ||
	    (body != NULL && (r->body = strdup(body)) == NULL)) {
		if (r != NULL)
			vreq_free(r);
		snprintf(err, errlen, "vault: out of memory");
		return NULL;
	}
	r->method = method;
	strlcpy(r->path, path, sizeof(r->path));
	r->idempotent = idempotent;
	r->tries = vault.conf->retries + 1;
	r->status = -1;
	r->ctype.data = (char *)"Content-Type: application/json";
	if (vault.token.buf != NULL) {
		r->hdrlen = strlen("X-Vault-Token: ") + vault.token.len + 1;
		if ((r->hdr = malloc(r->hdrlen)) == NULL) {
			vreq_free(r);
			snprintf(err, errlen, "vault: out of memory");
			return NULL;
		}
		snprintf(r->hdr, r->hdrlen, "X-Vault-Token: %s",
		    vault.token.buf);
		r->auth.data = r->hdr;
		r->ctype.next = &r->auth;
	}
	curl_easy_setopt(r->easy, CURLOPT_URL, url);
	curl_easy_setopt(r->easy, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, &r->ctype);
	if (r->body != NULL)
		curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, r->body);
	curl_easy_setopt(r->easy, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(r->easy, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(r->easy, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(r->easy, CURLOPT_SSLVERSION,
	    (long)CURL_SSLVERSION_TLSv1_2);
	if (vault.conf->ca_file[0] != '\0')
		curl_easy_setopt(r->easy, CURLOPT_CAINFO, vault.conf->ca_file);
	curl_easy_setopt(r->easy, CURLOPT_CONNECTTIMEOUT,
	    vault.conf->connect_timeout);
	curl_easy_setopt(r->easy, CURLOPT_TIMEOUT, vault.conf->request_timeout);
	curl_easy_setopt(r->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, vreq_write);
	curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(r->easy, CURLOPT_ERRORBUFFER, r->curlerr);
	curl_easy_setopt(r->easy, CURLOPT_PRIVATE, r);
	return r;
}

static int
curl_retryable(CURLcode cc, int idempotent)
{
	switch (cc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
		return 1;	/* the request never left */
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_GOT_NOTHING:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
		return idempotent;
	default:
		return 0;	/* TLS failures above all: no retry */
	}
}

/* Vault's {"errors": [...]}, joined, or the status alone. */
static void
vault_error(struct vreq *r)
{
	json_t *j, *e;
	size_t i, off;
	int n;

	n = snprintf(r->err, sizeof(r->err), "vault: HTTP %ld", r->status);
	off = n > 0 ? (size_t)n : 0;
	j = json_loadb(r->resp, r->resplen, 0, NULL);
	json_array_foreach(json_object_get(j, "errors"), i, e) {
		if (!json_is_string(e) || off >= sizeof(r->err))
			continue;
		n = snprintf(r->err + off, sizeof(r->err) - off, "%s%s",
		    i ? "; " : ": ", json_string_value(e));
		off += n > 0 ? (size_t)n : 0;
	}
	json_decref(j);
}

static void	vreq_retry(void *);

/*
 * One attempt ended with cc: try again after a back-off, or tell the
 * caller (r->finish) and free r.
 */
static void
vreq_done(struct vreq *r, CURLcode cc)
{
	int again;

	r->status = -1;
	if (cc == CURLE_OK) {
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->status);
		if ((again = r->status >= 500))
			log_warnx("vault: %s %s: HTTP %ld (attempt %d)",
			    r->method, r->path, r->status, r->attempt + 1);
	} else {
		log_warnx("vault: %s %s: %s (attempt %d)", r->method, r->path,
		    r->curlerr[0] ? r->curlerr : curl_easy_strerror(cc),
		    r->attempt + 1);
		again = curl_retryable(cc, r->idempotent);
	}
	if (again && r->attempt + 1 < r->tries) {
		(void)ev_timer(VAULT_RETRY_BASE_MS << r->attempt, vreq_retry, r);
		r->attempt++;
		return;
	}
	if (r->status == -1)
		snprintf(r->err, sizeof(r->err), "vault: %s: %s",
		    vault.conf->addr, r->curlerr[0] ? r->curlerr :
		    curl_easy_strerror(cc));
	else if (r->status >= 300)
		vault_error(r);
	r->finish(r);
	vreq_free(r);
}

/* The transfers libcurl has finished since we last asked. */
static void
vault_reap(void)
{
	struct vreq *r;
	CURLMsg *m;
	CURLcode cc;
	CURL *easy;
	int left;

	while ((m = curl_multi_info_read(vault.multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		/* m does not outlive curl_multi_remove_handle(). */
		easy = m->easy_handle;
		cc = m->data.result;
		curl_multi_remove_handle(vault.multi, easy);
		curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&r);
		vreq_done(r, cc);
	}
}

static int
vreq_start(struct vreq *r)
{
	resp_wipe(r);
	r->curlerr[0] = '\0';
	return curl_multi_add_handle(vault.multi, r->easy) == CURLM_OK ? 0 :
	    -1;
}

static void
vreq_retry(void *arg)
{
	struct vreq *r = arg;

	if (vreq_start(r) == -1) {
		snprintf(r->err, sizeof(r->err), "vault: cannot retry");
		r->status = -1;
		r->finish(r);
		vreq_free(r);
	}
}

static void
vault_socket_ready(int fd, short revents, void *arg)
{
	int flags = 0, running;

	(void)arg;
	if (revents & POLLIN)
		flags |= CURL_CSELECT_IN;
	if (revents & POLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (revents & (POLLERR | POLLHUP | POLLNVAL))
		flags |= CURL_CSELECT_ERR;
	curl_multi_socket_action(vault.multi, fd, flags, &running);
	vault_reap();
}

/*
 * CURLMOPT_SOCKETFUNCTION: which of its sockets libcurl waits on, and
 * for what.  A socket we watch already carries a mark (socketp).
 */
static int
vault_socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp,
    void *socketp)
{
	short events = ((what & CURL_POLL_IN) ? POLLIN : 0) |
	    ((what & CURL_POLL_OUT) ? POLLOUT : 0);

	(void)easy;
	(void)userp;
	if (what == CURL_POLL_REMOVE) {
		ev_del(fd);
		curl_multi_assign(vault.multi, fd, NULL);
	} else if (socketp == NULL) {
		if (ev_add(fd, events, vault_socket_ready, NULL) == -1)
			return -1;
		curl_multi_assign(vault.multi, fd, &vault);
	} else
		ev_set(fd, events);
	return 0;
}

static void
vault_timeout(void *arg)
{
	int running;

	(void)arg;
	vault.timer = 0;
	curl_multi_socket_action(vault.multi, CURL_SOCKET_TIMEOUT, 0,
	    &running);
	vault_reap();
}

/* CURLMOPT_TIMERFUNCTION: one timer for all transfers; -1 removes it. */
static int
vault_timer_cb(CURLM *multi, long ms, void *userp)
{
	(void)multi;
	(void)userp;
	if (vault.timer != 0)
		ev_timer_cancel(vault.timer);
	vault.timer = ms < 0 ? 0 : ev_timer(ms, vault_timeout, NULL);
	return 0;
}

/* Before the sandbox: libcurl and OpenSSL read their configuration now. */
int
vault_init(const struct brokerd_vault *conf, char *err, size_t errlen)
{
	vault.conf = conf;
	if (!vault_configured())
		return 0;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (vault.multi = curl_multi_init()) == NULL) {
		snprintf(err, errlen, "cannot initialise libcurl");
		return -1;
	}
	curl_multi_setopt(vault.multi, CURLMOPT_SOCKETFUNCTION,
	    vault_socket_cb);
	curl_multi_setopt(vault.multi, CURLMOPT_TIMERFUNCTION, vault_timer_cb);
	return vault_token_load(err, errlen);
}

/*
 * Reads the token file (at start and on SIGHUP).  The old token stays
 * if the new one cannot be read, so a bad rotation does not stop us.
 * Requests under way keep the token they started with.
 */
int
vault_token_load(char *err, size_t errlen)
{
	char buf[VAULT_MAXTOKEN + 2];
	ssize_t n;
	size_t len, i;
	int fd, r = -1;

	if (!vault_configured())
		return 0;
	if ((fd = open(vault.conf->token_file, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", vault.conf->token_file,
		    strerror(errno));
		return -1;
	}
	n = read_full(fd, buf, sizeof(buf));
	close(fd);
	if (n == -1) {
		snprintf(err, errlen, "%s: %s", vault.conf->token_file,
		    strerror(errno));
		return -1;
	}
	len = (size_t)n;
	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		len--;
	for (i = 0; i < len; i++)
		if (!isgraph((unsigned char)buf[i]))
			break;
	if (len == 0 || len > VAULT_MAXTOKEN || i != len)
		snprintf(err, errlen, "%s: not a Vault token",
		    vault.conf->token_file);
	else
		r = secret_set(&vault.token, buf, len);
	explicit_bzero(buf, sizeof(buf));
	return r;
}

/* GET sys/health: 200 active, 429 standby; anything else is an error. */
static void
health_finish(struct vreq *r)
{
	char *err = r->arg;

	if (r->status == 200 || r->status == 429)
		err[0] = '\0';
	else if (r->status == 503)
		strlcpy(err, "vault: sealed (HTTP 503)", sizeof(r->err));
	else if (r->status == 501)
		strlcpy(err, "vault: not initialized (HTTP 501)",
		    sizeof(r->err));
	else
		strlcpy(err, r->err, sizeof(r->err));
}

/*
 * At start-up, before the event loop runs: one attempt, waited for
 * here, so that name resolution and TLS load what they need while the
 * sandbox still lets them.
 */
int
vault_health(char *err, size_t errlen)
{
	char msg[sizeof(((struct vreq *)NULL)->err)];
	struct vreq *r;

	if ((r = vreq_new("GET", "sys/health", NULL, 1, err, errlen)) == NULL)
		return -1;
	r->tries = 1;
	r->finish = health_finish;
	r->arg = msg;
	vreq_done(r, curl_easy_perform(r->easy));
	strlcpy(err, msg, errlen);
	return msg[0] == '\0' ? 0 : -1;
}

/* Lease ids go into the journal, one a line: keep them plain. */
int
lease_id_valid(const char *id)
{
	size_t i, len = strlen(id);

	if (len == 0 || len >= LEASE_ID_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)id[i]) && strchr("._/-+",
		    id[i]) == NULL)
			return 0;
	return 1;
}

static void
issue_finish(struct vreq *r)
{
	struct vault_lease l;
	const char *id;
	json_t *resp;

	if (r->status == -1 || r->status >= 300) {
		r->issue_cb(r->arg, NULL, r->err);
		return;
	}
	resp = json_loadb(r->resp, r->resplen, 0, NULL);
	resp_wipe(r);
	id = json_string_value(json_object_get(resp, "lease_id"));
	if (id == NULL || !lease_id_valid(id) ||
	    !json_is_integer(json_object_get(resp, "lease_duration")) ||
	    !json_is_object(json_object_get(resp, "data"))) {
		/* Whatever was minted expires with its TTL. */
		snprintf(r->err, sizeof(r->err), "vault: unexpected answer "
		    "to %s (HTTP %ld)", r->path, r->status);
		json_decref(resp);
		r->issue_cb(r->arg, NULL, r->err);
		return;
	}
	memset(&l, 0, sizeof(l));
	strlcpy(l.lease_id, id, sizeof(l.lease_id));
	l.ttl = (long)json_integer_value(json_object_get(resp,
	    "lease_duration"));
	l.data = json_object_get(resp, "data");
	r->issue_cb(r->arg, &l, NULL);
	json_decref(resp);
}

/* Starts r with body as JSON text; on failure r is freed, err says why. */
static int
vreq_submit(struct vreq *r, char *err, size_t errlen)
{
	if (vreq_start(r) == 0)
		return 0;
	snprintf(err, errlen, "vault: cannot start a request");
	vreq_free(r);
	return -1;
}

static struct vreq *
vreq_json(const char *method, const char *path, json_t *req, int idempotent,
    char *err, size_t errlen)
{
	struct vreq *r = NULL;
	char *body;

	if (req == NULL || (body = json_dumps(req, JSON_COMPACT)) == NULL)
		snprintf(err, errlen, "out of memory");
	else {
		r = vreq_new(method, path, body, idempotent, err, errlen);
		json_text_free(body);
	}
	json_decref(req);
	return r;
}

/*
 * kubernetes: POST <mount>/creds/<role> {"kubernetes_namespace","ttl"};
 * aws: POST <mount>/sts/<role> {"ttl"}.  0 when under way: cb gets the
 * lease, or NULL and why; -1 with err when it could not start.
 */
int
vault_issue(const struct brokerd_scope *sc, const char *ns,
    vault_issue_cb cb, void *arg, char *err, size_t errlen)
{
	char path[2 * VAULT_PATH_MAX + 16], ttl[32];
	struct vreq *r;
	int kube = strcmp(sc->engine, "kubernetes") == 0;

	snprintf(ttl, sizeof(ttl), "%lds", sc->ttl);
	snprintf(path, sizeof(path), "%s/%s/%s", sc->mount,
	    kube ? "creds" : "sts", sc->role);
	if ((r = vreq_json("POST", path, kube ? json_pack("{s:s, s:s}",
	    "kubernetes_namespace", ns, "ttl", ttl) : json_pack("{s:s}", "ttl",
	    ttl), 0, err, errlen)) == NULL)
		return -1;
	r->finish = issue_finish;
	r->issue_cb = cb;
	r->arg = arg;
	return vreq_submit(r, err, errlen);
}

static void
revoke_finish(struct vreq *r)
{
	r->revoke_cb(r->arg, r->status >= 200 && r->status < 300 ? NULL :
	    r->err);
}

/*
 * PUT sys/leases/revoke {"lease_id"}: Vault answers 204.  cb gets NULL
 * or why not; -1 with err when it could not start.
 */
int
vault_revoke(const char *lease_id, vault_revoke_cb cb, void *arg, char *err,
    size_t errlen)
{
	struct vreq *r;

	if ((r = vreq_json("PUT", "sys/leases/revoke", json_pack("{s:s}",
	    "lease_id", lease_id), 1, err, errlen)) == NULL)
		return -1;
	r->finish = revoke_finish;
	r->revoke_cb = cb;
	r->arg = arg;
	return vreq_submit(r, err, errlen);
}
