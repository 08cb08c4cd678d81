/* SPDX-License-Identifier: ISC */
/*
 * Each event to each webhook, with libcurl's multi interface inside
 * the suite's event loop: a transfer in flight is driven by a short
 * tick, a failed one (not 2xx, a timeout, no connection) is tried
 * again after 1, 2, 4 ... seconds, at most retry_max, for as long as
 * it takes.  The event id stays the webhook-id of every attempt, the
 * timestamp is the attempt's, as Standard Webhooks has it.  Each
 * webhook's 2xx is acked to approvald, which keeps it with the row and
 * names it when it sends the row again (after a restart of either
 * side), so that webhook is not posted to again; when every webhook
 * has it, the whole row is acked.  An event sent again after that (a
 * lost ack) is acked again, not delivered again.
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "cjson.h"
#include "event.h"
#include "log.h"
#include "notifyd.h"

#define TICK_MS		20
#define RECENT_MAX	1024	/* acked ids remembered */

struct delivery;

struct job {
	struct delivery		*d;
	size_t			 hook;
	int			 attempts;
	int			 done;
	CURL			*easy;
	struct curl_slist	*headers;
};

struct delivery {
	TAILQ_ENTRY(delivery)	 entry;
	char			 id[EVENT_ID_MAX];
	char			*body;		/* standard */
	char			*slack;		/* the Slack rendering */
	struct job		 jobs[WEBHOOKS_MAX];
};

static TAILQ_HEAD(, delivery)	 deliveries =
    TAILQ_HEAD_INITIALIZER(deliveries);
static CURLM			*multi;
static int			 ticking;
static char			 recent[RECENT_MAX][EVENT_ID_MAX];
static size_t			 recent_next;

static void	tick(void *);

void
deliver_init(void)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (multi = curl_multi_init()) == NULL)
		fatalx("libcurl");
}

static int
is_recent(const char *id)
{
	size_t i;

	for (i = 0; i < RECENT_MAX; i++)
		if (strcmp(recent[i], id) == 0)
			return 1;
	return 0;
}

static struct delivery *
delivery_find(const char *id)
{
	struct delivery *d;

	TAILQ_FOREACH(d, &deliveries, entry)
		if (strcmp(d->id, id) == 0)
			return d;
	return NULL;
}

static void
arm_tick(void)
{
	if (!ticking && ev_timer(TICK_MS, tick, NULL) != 0)
		ticking = 1;
}

static void
job_start(struct job *j)
{
	const struct webhook *w = &notifyd_conf.notifyd.webhooks[j->hook];
	const char *body = strcmp(w->format, "slack") == 0 ? j->d->slack :
	    j->d->body;
	char hdr[600], *sig;
	long long ts = (long long)time(NULL);

	j->attempts++;
	if ((sig = sign_event(j->hook, j->d->id, ts, body)) == NULL ||
	    (j->easy = curl_easy_init()) == NULL)
		fatalx("out of memory");
	j->headers = curl_slist_append(NULL, "Content-Type: application/json");
	snprintf(hdr, sizeof(hdr), "webhook-id: %s", j->d->id);
	j->headers = curl_slist_append(j->headers, hdr);
	snprintf(hdr, sizeof(hdr), "webhook-timestamp: %lld", ts);
	j->headers = curl_slist_append(j->headers, hdr);
	snprintf(hdr, sizeof(hdr), "webhook-signature: %s", sig);
	j->headers = curl_slist_append(j->headers, hdr);
	free(sig);
	curl_easy_setopt(j->easy, CURLOPT_URL, w->url);
	curl_easy_setopt(j->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(j->easy, CURLOPT_HTTPHEADER, j->headers);
	curl_easy_setopt(j->easy, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(j->easy, CURLOPT_TIMEOUT,
	    notifyd_conf.notifyd.timeout);
	curl_easy_setopt(j->easy, CURLOPT_NOSIGNAL, 1L);
	/* A redirect is a failure (the spec's advice): no following. */
	curl_easy_setopt(j->easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(j->easy, CURLOPT_PRIVATE, j);
	if (curl_multi_add_handle(multi, j->easy) != CURLM_OK)
		fatalx("curl_multi_add_handle");
	arm_tick();
}

static void
job_retry(void *arg)
{
	job_start(arg);
}

static void
delivery_free(struct delivery *d)
{
	TAILQ_REMOVE(&deliveries, d, entry);
	free(d->body);
	free(d->slack);
	free(d);
}

/* Every webhook has it: approvald may drop the row. */
static void
delivery_check(struct delivery *d)
{
	size_t i;

	for (i = 0; i < notifyd_conf.notifyd.nwebhooks; i++)
		if (!d->jobs[i].done)
			return;
	strlcpy(recent[recent_next], d->id, EVENT_ID_MAX);
	recent_next = (recent_next + 1) % RECENT_MAX;
	approvald_ack(d->id, NULL);
	delivery_free(d);
}

/* What approvald keeps of a webhook: the SHA-256 of its URL. */
static void
webhook_digest(size_t hook, char digest[SHA256_HEX_LEN + 1])
{
	const char *url = notifyd_conf.notifyd.webhooks[hook].url;

	sha256_hex(url, strlen(url), digest);
}

/* Whether approvald says webhook hook has the event (delivered). */
static int
delivered_before(size_t hook, const json_t *delivered)
{
	char digest[SHA256_HEX_LEN + 1];
	const json_t *v;
	size_t i;

	webhook_digest(hook, digest);
	json_array_foreach(delivered, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v),
		    digest) == 0)
			return 1;
	return 0;
}

static long
backoff_ms(int attempts)
{
	long ms = 1000L << (attempts > 20 ? 20 : attempts - 1);

	return ms > notifyd_conf.notifyd.retry_max * 1000 ?
	    notifyd_conf.notifyd.retry_max * 1000 : ms;
}

static void
job_finished(struct job *j, CURLcode rc)
{
	const char *url = notifyd_conf.notifyd.webhooks[j->hook].url;
	char digest[SHA256_HEX_LEN + 1];
	long status = 0, wait;

	curl_easy_getinfo(j->easy, CURLINFO_RESPONSE_CODE, &status);
	curl_multi_remove_handle(multi, j->easy);
	curl_easy_cleanup(j->easy);
	curl_slist_free_all(j->headers);
	j->easy = NULL;
	j->headers = NULL;
	if (rc == CURLE_OK && status >= 200 && status <= 299) {
		log_debug("%s: %s delivered (attempt %d)", url, j->d->id,
		    j->attempts);
		j->done = 1;
		webhook_digest(j->hook, digest);
		approvald_ack(j->d->id, digest);
		delivery_check(j->d);
		return;
	}
	wait = backoff_ms(j->attempts);
	log_warnx("%s: %s not delivered (%s, status %ld, attempt %d); again "
	    "in %ld ms", url, j->d->id, curl_easy_strerror(rc), status,
	    j->attempts, wait);
	if (ev_timer(wait, job_retry, j) == 0)
		fatal("retry timer");
}

static void
tick(void *arg)
{
	struct CURLMsg *msg;
	struct job *j;
	int running = 0, left;

	(void)arg;
	ticking = 0;
	curl_multi_perform(multi, &running);
	while ((msg = curl_multi_info_read(multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &j);
		job_finished(j, msg->data.result);
	}
	if (running > 0)
		arm_tick();
}

/*
 * A row from approvald: id, the standard body exactly as stored, and
 * the webhooks that have it already (borrowed).
 */
void
deliver_event(const char *id, const char *body, const json_t *delivered)
{
	struct delivery *d;
	size_t i;

	if (delivery_find(id) != NULL)
		return;
	if (is_recent(id)) {
		approvald_ack(id, NULL);
		return;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL ||
	    (d->body = strdup(body)) == NULL ||
	    (d->slack = slack_render(body)) == NULL)
		fatalx("out of memory");
	strlcpy(d->id, id, sizeof(d->id));
	TAILQ_INSERT_TAIL(&deliveries, d, entry);
	for (i = 0; i < notifyd_conf.notifyd.nwebhooks; i++) {
		d->jobs[i].d = d;
		d->jobs[i].hook = i;
		if ((d->jobs[i].done = delivered_before(i, delivered)))
			log_debug("%s: %s delivered before", notifyd_conf.
			    notifyd.webhooks[i].url, id);
	}
	for (i = 0; i < notifyd_conf.notifyd.nwebhooks; i++)
		if (!d->jobs[i].done)
			job_start(&d->jobs[i]);
	/* Every webhook had it: only the row's ack was lost. */
	delivery_check(d);
}
