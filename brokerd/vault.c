/*
 * The Vault HTTP API over libcurl: TLS verified against the configured
 * CA, the token from a file, every request bounded in time.  Retries
 * happen on 5xx and on connection errors only; a request that mints a
 * lease is repeated only when Vault answered that it failed or when it
 * never left, since a lost answer would leave a lease we cannot name.
 * Vault's own error messages go up as they are.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "brokerd.h"
#include "io.h"
#include "log.h"

#define VAULT_MAXRESP	(256 * 1024)
#define VAULT_MAXTOKEN	1024
#define RETRY_BASE_MS	200

static struct {
	CURL			*curl;
	const struct brokerd_vault *conf;
	struct secret		 token;
	char			*resp;		/* the last answer; wiped */
	size_t			 resplen;
	char			 curlerr[CURL_ERROR_SIZE];
} vault;

static size_t
vault_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	size_t n = size * nmemb;

	(void)arg;
	if (n > VAULT_MAXRESP - vault.resplen)
		return 0;	/* curl fails the transfer: CURLE_WRITE_ERROR */
	memcpy(vault.resp + vault.resplen, ptr, n);
	vault.resplen += n;
	return n;
}

static void
resp_wipe(void)
{
	explicit_bzero(vault.resp, vault.resplen);
	vault.resplen = 0;
}

int
vault_configured(void)
{
	return vault.conf != NULL && vault.conf->addr[0] != '\0';
}

/* Before the sandbox: libcurl and OpenSSL read their configuration now. */
int
vault_init(const struct brokerd_vault *conf, char *err, size_t errlen)
{
	vault.conf = conf;
	if (!vault_configured())
		return 0;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (vault.curl = curl_easy_init()) == NULL ||
	    (vault.resp = malloc(VAULT_MAXRESP)) == NULL) {
		snprintf(err, errlen, "cannot initialise libcurl");
		return -1;
	}
	return vault_token_load(err, errlen);
}

/*
 * Reads the token file (at start and on SIGHUP).  The old token stays
 * if the new one cannot be read, so a bad rotation does not stop us.
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

static void
backoff(int attempt)
{
	struct timespec ts;
	long ms = RETRY_BASE_MS << attempt;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Vault's {"errors": [...]}, joined, or the status alone. */
static void
vault_error(long status, char *err, size_t errlen)
{
	json_t *j, *e;
	size_t i, off;
	int n;

	n = snprintf(err, errlen, "vault: HTTP %ld", status);
	off = n > 0 ? (size_t)n : 0;
	j = json_loadb(vault.resp, vault.resplen, 0, NULL);
	json_array_foreach(json_object_get(j, "errors"), i, e) {
		if (!json_is_string(e) || off >= errlen)
			continue;
		n = snprintf(err + off, errlen - off, "%s%s", i ? "; " : ": ",
		    json_string_value(e));
		off += n > 0 ? (size_t)n : 0;
	}
	json_decref(j);
}

/*
 * One API call: the HTTP status with the body in vault.resp, or -1 with
 * err.  idempotent says whether a request that may have reached Vault
 * can be sent again.
 */
static long
vault_call(const char *method, const char *path, const char *body,
    int idempotent, char *err, size_t errlen)
{
	struct curl_slist ctype, auth;
	char url[512], *hdr = NULL;
	size_t hdrlen = 0;
	long status = -1;
	CURLcode cc = CURLE_OK;
	int attempt;

	if (snprintf(url, sizeof(url), "%s/v1/%s", vault.conf->addr, path) >=
	    (int)sizeof(url)) {
		snprintf(err, errlen, "vault: path too long");
		return -1;
	}
	/* Our own header list, so that the token's copy is ours to wipe. */
	ctype.data = (char *)"Content-Type: application/json";
	ctype.next = NULL;
	if (vault.token.buf != NULL) {
		hdrlen = strlen("X-Vault-Token: ") + vault.token.len + 1;
		if ((hdr = malloc(hdrlen)) == NULL) {
			snprintf(err, errlen, "vault: out of memory");
			return -1;
		}
		snprintf(hdr, hdrlen, "X-Vault-Token: %s", vault.token.buf);
		auth.data = hdr;
		auth.next = NULL;
		ctype.next = &auth;
	}
	for (attempt = 0; attempt <= vault.conf->retries; attempt++) {
		if (attempt > 0)
			backoff(attempt - 1);
		resp_wipe();
		vault.curlerr[0] = '\0';
		curl_easy_reset(vault.curl);
		curl_easy_setopt(vault.curl, CURLOPT_URL, url);
		curl_easy_setopt(vault.curl, CURLOPT_CUSTOMREQUEST, method);
		curl_easy_setopt(vault.curl, CURLOPT_HTTPHEADER, &ctype);
		if (body != NULL)
			curl_easy_setopt(vault.curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(vault.curl, CURLOPT_PROTOCOLS_STR, "https");
		curl_easy_setopt(vault.curl, CURLOPT_SSL_VERIFYPEER, 1L);
		curl_easy_setopt(vault.curl, CURLOPT_SSL_VERIFYHOST, 2L);
		curl_easy_setopt(vault.curl, CURLOPT_SSLVERSION,
		    (long)CURL_SSLVERSION_TLSv1_2);
		if (vault.conf->ca_file[0] != '\0')
			curl_easy_setopt(vault.curl, CURLOPT_CAINFO,
			    vault.conf->ca_file);
		curl_easy_setopt(vault.curl, CURLOPT_CONNECTTIMEOUT,
		    vault.conf->connect_timeout);
		curl_easy_setopt(vault.curl, CURLOPT_TIMEOUT,
		    vault.conf->request_timeout);
		curl_easy_setopt(vault.curl, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(vault.curl, CURLOPT_WRITEFUNCTION,
		    vault_write);
		curl_easy_setopt(vault.curl, CURLOPT_ERRORBUFFER,
		    vault.curlerr);
		cc = curl_easy_perform(vault.curl);
		if (cc == CURLE_OK) {
			curl_easy_getinfo(vault.curl, CURLINFO_RESPONSE_CODE,
			    &status);
			if (status < 500)
				break;
			log_warnx("vault: %s %s: HTTP %ld (attempt %d)",
			    method, path, status, attempt + 1);
		} else {
			status = -1;
			log_warnx("vault: %s %s: %s (attempt %d)", method,
			    path, vault.curlerr[0] ? vault.curlerr :
			    curl_easy_strerror(cc), attempt + 1);
			if (!curl_retryable(cc, idempotent))
				break;
		}
	}
	if (hdr != NULL) {
		explicit_bzero(hdr, hdrlen);
		free(hdr);
	}
	if (status == -1)
		snprintf(err, errlen, "vault: %s: %s", vault.conf->addr,
		    vault.curlerr[0] ? vault.curlerr : curl_easy_strerror(cc));
	else if (status >= 300)
		vault_error(status, err, errlen);
	return status;
}

/* GET sys/health: 200 active, 429 standby; anything else is an error. */
int
vault_health(char *err, size_t errlen)
{
	long status;

	if (!vault_configured()) {
		snprintf(err, errlen, "no Vault configured");
		return -1;
	}
	status = vault_call("GET", "sys/health", NULL, 1, err, errlen);
	resp_wipe();
	if (status == 200 || status == 429)
		return 0;
	if (status == 503)
		snprintf(err, errlen, "vault: sealed (HTTP 503)");
	else if (status == 501)
		snprintf(err, errlen, "vault: not initialized (HTTP 501)");
	return -1;
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

/*
 * kubernetes: POST <mount>/creds/<role> {"kubernetes_namespace","ttl"};
 * aws: POST <mount>/sts/<role> {"ttl"}.  Fills l from the answer.
 */
int
vault_issue(const struct brokerd_scope *sc, const char *ns,
    struct vault_lease *l, char *err, size_t errlen)
{
	char path[2 * VAULT_PATH_MAX + 16], ttl[32], *body;
	const char *id;
	json_t *req, *resp;
	long status;
	int kube = strcmp(sc->engine, "kubernetes") == 0;

	memset(l, 0, sizeof(*l));
	snprintf(ttl, sizeof(ttl), "%lds", sc->ttl);
	snprintf(path, sizeof(path), "%s/%s/%s", sc->mount,
	    kube ? "creds" : "sts", sc->role);
	req = kube ? json_pack("{s:s, s:s}", "kubernetes_namespace", ns,
	    "ttl", ttl) : json_pack("{s:s}", "ttl", ttl);
	if (req == NULL || (body = json_dumps(req, JSON_COMPACT)) == NULL) {
		json_decref(req);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	json_decref(req);
	status = vault_call("POST", path, body, 0, err, errlen);
	json_text_free(body);
	if (status == -1 || status >= 300) {
		resp_wipe();
		return -1;
	}
	resp = json_loadb(vault.resp, vault.resplen, 0, NULL);
	resp_wipe();
	id = json_string_value(json_object_get(resp, "lease_id"));
	if (id == NULL || !lease_id_valid(id) ||
	    !json_is_integer(json_object_get(resp, "lease_duration")) ||
	    !json_is_object(json_object_get(resp, "data"))) {
		/* Whatever was minted expires with its TTL. */
		snprintf(err, errlen, "vault: unexpected answer to %s (HTTP "
		    "%ld)", path, status);
		json_decref(resp);
		return -1;
	}
	strlcpy(l->lease_id, id, sizeof(l->lease_id));
	l->ttl = (long)json_integer_value(json_object_get(resp,
	    "lease_duration"));
	l->data = json_incref(json_object_get(resp, "data"));
	json_decref(resp);
	return 0;
}

void
vault_lease_clear(struct vault_lease *l)
{
	json_decref(l->data);
	memset(l, 0, sizeof(*l));
}

/* PUT sys/leases/revoke {"lease_id"}: Vault answers 204. */
int
vault_revoke(const char *lease_id, char *err, size_t errlen)
{
	json_t *req;
	char *body;
	long status;

	if ((req = json_pack("{s:s}", "lease_id", lease_id)) == NULL ||
	    (body = json_dumps(req, JSON_COMPACT)) == NULL) {
		json_decref(req);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	json_decref(req);
	status = vault_call("PUT", "sys/leases/revoke", body, 1, err, errlen);
	json_text_free(body);
	resp_wipe();
	return status >= 200 && status < 300 ? 0 : -1;
}
