/* SPDX-License-Identifier: ISC */
/*
 * The kubernetes backend (kubernetes.c): one Job per call, created,
 * watched and deleted over the cluster's API by a helper process that
 * runnerd starts (runnerd -K) before it sandboxes itself, since libcurl
 * needs DNS, the CA file and more syscalls than the engine's filter
 * allows.
 */
#ifndef RUNNERD_KUBE_H
#define RUNNERD_KUBE_H

#include <sys/types.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "config.h"

#define KUBE_MANAGED_BY		"agent-sandbox-runnerd"
#define KUBE_REQID_LABEL	"agent-sandbox/request-id"
#define KUBE_CONTAINER		"sandbox"
#define KUBE_SECRETS_DIR	"/run/secrets"	/* the credential file is here */
#define KUBE_NAME_LEN		20		/* "as-" + 16 hex digits + NUL */
#define KUBE_CLAIM_CALLS	"calls"	/* on the claim: one directory a call */

/* The cluster as runnerd's kubeconfig names it (current-context). */
struct kube_api {
	char	 server[512];
	char	*ca_pem;		/* NULL: the system's CAs */
	char	*token;			/* a bearer token, or a client cert: */
	char	*cert_pem;
	char	*key_pem;
	void	*curl;
	char	 warning[1024];		/* the last answer's Warning header */
};

/* kube/api.c */
extern volatile sig_atomic_t	kube_cancelled;	/* set by a signal */
int	 kube_load(struct kube_api *, const char *, char *, size_t);
void	 kube_free(struct kube_api *);
void	 kube_disconnect(struct kube_api *);
int	 kube_request(struct kube_api *, const char *, const char *, json_t *,
	    json_t **, char *, size_t);
struct curl_slist *kube_curl_setup(struct kube_api *, void *, const char *);
typedef int	(*kube_event_cb)(const char *, json_t *, void *);
int	 kube_watch(struct kube_api *, const char *, int, kube_event_cb,
	    void *, char *, size_t);
typedef int	(*kube_text_cb)(const char *, size_t, void *);
int	 kube_stream(struct kube_api *, const char *, int, kube_text_cb,
	    void *, char *, size_t);

/* kube/job.c: the objects, built from the configuration alone */
#define KUBE_EGRESS_LABEL	"agent-sandbox/egress"
#define KUBE_JOB_CRED		0x1	/* its Secret at KUBE_SECRETS_DIR */
#define KUBE_JOB_CLAIM		0x2	/* /work: its directory on the claim */
#define KUBE_JOB_APISERVER	0x4	/* KUBE_EGRESS_LABEL: apiserver */
#define KUBE_JOB_AGENT_CODE	0x8	/* the agent's code: address space capped */
#define KUBE_JOB_PLAN		0x10	/* PLAN_MOUNT: the claim's plan/, read-only */
#define KUBE_PRLIMIT		"/usr/bin/prlimit"	/* util-linux's, in the image */
/* The Job's last line: this, its command's exit status, a newline. */
#define KUBE_END_MARK		"\036agent-sandbox-exit "
/*
 * The pod's memory limit is runnerd.memory and this, for gVisor's sentry
 * and gofer (measured on the real node: README).
 */
#define KUBE_MEMORY_RUNTIME	(128L * 1024 * 1024)
void	 kube_name(uint64_t, char [KUBE_NAME_LEN]);
int	 kube_egress(const struct as_config *, json_t *, char *, size_t);
json_t	*kube_job(const struct as_config *, uint64_t, json_t *,
	    const json_t *, int);
json_t	*kube_secret(const struct as_config *, uint64_t, const char *,
	    const void *, size_t);

/* kube/run.c: one call in a worker process, and the start-up sweep */
json_t	*kube_run(const struct as_config *, struct kube_api *, uint64_t,
	    json_t *, int, int);
json_t	*kube_sweep(const struct as_config *, struct kube_api *);

/* kube/claim.c: terraform's claim, and the keeper that alone writes on it */
int	 claim_needed(json_t *);
int	 claim_call_path(const char *, uint64_t, const char *, char *, size_t);
void	 claim_start(const struct as_config *);
void	 claim_close(void);
int	 claim_seed(uint64_t, json_t *, char *, size_t);
void	 claim_collect(uint64_t, json_t *, json_t *);

/* kube/rootchild.c: the helper's root children and their channels */
struct channel;
void	 rootchild_start(const struct as_config *, struct channel *,
	    void (*)(const struct as_config *, int), const char *);
int	 rootchild_enter(int, const char *);
void	 rootchild_serve(int, uint32_t, json_t *(*)(uint32_t, uint64_t,
	    json_t *));
void	 rootchild_close(struct channel *);
json_t	*rootchild_ask(struct channel *, uint32_t, uint32_t, uint64_t,
	    json_t *, const char *, char *, size_t);

/* kube/renderer.c: saved plans rendered on this host (helperlib/render.c) */
void	 renderer_start(const struct as_config *);
void	 renderer_close(void);
void	 renderer_render(uint64_t, json_t *, json_t *);

/*
 * kube/ws.c: pods/exec over a WebSocket (RFC 6455) with the
 * v4.channel.k8s.io framing: each message's first byte is its stream.
 */
#define KUBE_WS_STDIN	0
#define KUBE_WS_STDOUT	1
#define KUBE_WS_STDERR	2
#define KUBE_WS_ERROR	3	/* the exec's end, a Status object */
struct kube_ws {
	void		*curl;
	int		 fd;
	uint8_t		*in;		/* what came and is no whole frame yet */
	size_t		 inlen;
};
typedef int	(*kube_ws_cb)(int, const uint8_t *, size_t, void *);
int	 kube_ws_open(struct kube_api *, const char *, struct kube_ws *,
	    char *, size_t);
int	 kube_ws_send(struct kube_ws *, int, const void *, size_t);
int	 kube_ws_read(struct kube_ws *, kube_ws_cb, void *);
void	 kube_ws_close(struct kube_ws *);

/* kube/session.c: sessions on claimed agent-sandbox Sandboxes */
int	 kube_sessions(const struct as_config *, struct kube_api *);
void	 kube_session_message(uint32_t, uint64_t, const uint8_t *, size_t);

/* kubernetes.c: the helper process */
void	 kube_main(const struct as_config *, int) __attribute__((noreturn));

#endif
