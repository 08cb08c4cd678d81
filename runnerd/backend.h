/* SPDX-License-Identifier: ISC */
/*
 * The sandbox backend as the call pipeline sees it: start a command with
 * files in; get back its exit status, capped output and files out; kill
 * it.  A backend cleans up after itself, also after a kill.  gvisor
 * runs runsc on this machine; kubernetes runs a Job per call on a
 * cluster (kubernetes.c).  runnerd.backend names the one in use.
 */
#ifndef RUNNERD_BACKEND_H
#define RUNNERD_BACKEND_H

#include <stdint.h>
#include <jansson.h>

#include "config.h"

struct sbx_request {
	uint64_t	 id;		/* the call's request id */
	json_t		*argv;		/* array of strings */
	json_t		*files_in;	/* NULL or {"name": "text"} */
	json_t		*files_out;	/* NULL or ["name", ...] */
	json_t		*egress;	/* NULL or ["host:port", ...]; else no network */
	json_t		*workspace;	/* NULL or terraform's keys (workspace.c) */
	int		 agent_code;	/* argv runs the agent's code: capped inside */
	int		 credfd;	/* -1 or the secret's memfd; always taken */
};

/*
 * The result, a JSON object: "status" (exited, deadline, memory_limit,
 * output_limit, killed, failed), "exit_code", "signal", "stdout",
 * "stderr", "stdout_truncated", "stderr_truncated", "duration_ms",
 * "files" and, when status is failed, "error"; "stderr_in_stdout" true
 * when stdout holds both streams (a pod's log).
 */
typedef void	(*sbx_done_cb)(uint64_t, json_t *);
/*
 * Once, at start-up: the leftovers removed, {"sandboxes": ["req-...",
 * ...]}, and with "journal" what the previous runnerd's helper tore
 * down after it was gone ([{"request_id", "kind", "when",
 * "session_id"?}]).  0 when all of it is recorded: the helper may then
 * forget its journal.
 */
typedef void	(*sbx_swept_cb)(json_t *);

/*
 * Sessions: a long-lived sandbox running the session agent, named by a
 * key the engine chooses.  After session_open comes READY ({"container",
 * "warm", "start_ms"}) or ENDED; each session_call gets one REPLY (the
 * agent's JSON object); ENDED ({"reason"}) comes once the sandbox is
 * gone, after session_close or on its own, and frees the key.  ENDED
 * with "sessions_off" true says the backend has no sessions at all.
 */
#define SESSION_ID_LEN	21	/* "ses-" + 16 hex digits + NUL */

enum sbx_session_event {
	SBX_SESSION_READY,
	SBX_SESSION_REPLY,
	SBX_SESSION_ENDED,
};
typedef void	(*sbx_session_cb)(enum sbx_session_event, uint64_t, json_t *);

/*
 * A one-shot sandbox reached a phase of its request's "phases" (or the
 * render): {"phase"}.  Only for the calls' progress; nothing depends on it.
 */
typedef void	(*sbx_progress_cb)(uint64_t, json_t *);

/*
 * Both backends are a helper process behind one channel (helper.c):
 * gvisor's launcher (launcher/), the kubernetes helper (kube/).  Each
 * backend's init, before privileges drop, checks its runtime and
 * starts its helper; the rest is the same for both.
 */
void	 gvisor_init(const struct as_config *, sbx_done_cb, sbx_swept_cb,
	    sbx_session_cb, sbx_progress_cb);
void	 kubernetes_init(const struct as_config *, sbx_done_cb, sbx_swept_cb,
	    sbx_session_cb);

/* helper.c: the engine's end of the channel to either helper */
#define HELPER_CHANNEL_FD	3	/* in the helper, after the exec */
void	 helper_start(const char *, const struct as_config *, const char *,
	    sbx_done_cb, sbx_swept_cb, sbx_session_cb, sbx_progress_cb);
int	 helper_send(uint32_t, uint64_t, int, json_t *);
void	 helper_journal_recorded(void);
int	 helper_run(const struct sbx_request *);
void	 helper_kill(uint64_t);
/* The key, the request that opens it and the session's id. */
int	 helper_session_open(uint64_t, uint64_t, const char *);
int	 helper_session_call(uint64_t, json_t *);
void	 helper_session_cancel(uint64_t);
void	 helper_session_close(uint64_t);
/* On exit: end what runs and wait until it is cleaned up. */
void	 helper_stop(void);

#endif
