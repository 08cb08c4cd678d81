/* SPDX-License-Identifier: ISC */
/*
 * The suite's configuration: one YAML file (etc/agent-sandbox.yaml),
 * one section per process.  Every daemon parses the whole file so that
 * -n catches a mistake in any section.
 */
#ifndef AS_CONFIG_H
#define AS_CONFIG_H

#include <sys/types.h>
#include <limits.h>
#include <stdint.h>

#define CONF_DEFAULT	"/etc/agent-sandbox/agent-sandbox.yaml"
#define ACL_MAX		16
#define NAME_MAX_LEN	64

/* Who may connect to a socket: SO_PEERCRED uid, or any of its groups. */
struct peer_acl {
	uid_t		uids[ACL_MAX];
	size_t		nuids;
	gid_t		gids[ACL_MAX];
	size_t		ngids;
};

struct mcpd_conf {
	char		user[NAME_MAX_LEN];
	long		max_line;	/* bytes of one JSON-RPC line */
	long		max_inflight;	/* concurrent tools/call */
	long		call_timeout;	/* seconds */
	uint64_t	tools;		/* enabled: bit i is tool_at(i) */
};

struct runnerd_conf {
	char		user[NAME_MAX_LEN];
	struct peer_acl	peers;		/* runner.sock: mcpd's users */
	struct peer_acl	operators;	/* runner-control.sock: runnerctl */
	char		backend[16];	/* gvisor | kubernetes */
	char		runsc[PATH_MAX];
	char		state_dir[PATH_MAX];	/* bundles, runsc state, rootfs */
	char		rootfs[PATH_MAX];	/* "": the host's /usr etc. read-only */
	char		sandbox_init[16];	/* auto | always */
	long		timeout;	/* seconds before a sandbox is killed */
	long		memory;		/* bytes, the whole sandbox */
	long		address_space;	/* bytes, one process of the agent's */
	long		pids;		/* processes inside (RLIMIT_NPROC) */
	long		cpu_percent;	/* 100: one CPU */
	long		tmp_size;	/* bytes of /tmp */
	long		work_max;	/* bytes of /work */
	long		output_max;	/* bytes of stdout, and of stderr */
	long		max_calls;	/* sandboxes at once */
	long		inflight_per_user;	/* calls of one uid in runnerd:
					   running, waiting, on approval */
	long		queue_max;	/* calls waiting for one of them */
	long		queue_wait;	/* seconds a call may wait */
	long		peer_timeout;	/* seconds for approvald's, brokerd's,
					   auditd's answer */
	long		egress_idle;	/* seconds an egress relay may idle */
	long		audit_spool_after;	/* ms before an unacknowledged
						   event is spooled; 0: never */
	long		audit_spool_max;	/* bytes of runnerd's spool */
	long		plan_retention;	/* seconds a saved plan is kept */
	long		tasks_per_client;	/* mcpd's tasks kept, a client key */
	long		task_retention;	/* seconds since a task's last change */
	long		terraform_store_per_dir;	/* bytes of plans and
						   snapshots, a working dir */
	long		terraform_store_max;	/* bytes of them, all dirs */
	char		terraform_mirror[PATH_MAX];	/* providers; "" = none */
	char		session_agent[PATH_MAX];	/* session-agent.py */
	long		session_idle;	/* seconds unused before a session ends */
	long		session_lifetime;	/* seconds, at most */
	long		sessions_max;	/* open sessions, all clients */
	long		sessions_per_user;	/* per uid of mcpd's connections */
	long		sessions_per_client;	/* per runner.sock connection */
	long		warm_pool;	/* session sandboxes started ahead */
	long		terraform_pool;	/* terraform sandboxes started ahead */
};

/* runnerd's kubernetes backend (runnerd.backend: kubernetes). */
struct kube_conf {
	char		kubeconfig[PATH_MAX];	/* runnerd's own cluster access */
	char		namespace[NAME_MAX_LEN];	/* where the Jobs run */
	char		runtime_class[NAME_MAX_LEN];	/* gvisor | kata */
	char		image[256];	/* the runner image */
	long		ttl_after_finished;	/* seconds, should runnerd miss it */
	char		pvc[NAME_MAX_LEN];	/* terraform's claim; "" = none */
	char		pvc_path[PATH_MAX];	/* where this host sees it */
	char		provider_mirror_pvc[NAME_MAX_LEN];	/* the provider
					   mirror, read-only; this host sees
					   it at runnerd.terraform_mirror */
	char		apiserver[256];	/* host:port pods reach it at */
	/* Sessions: claims on this SandboxWarmPool (agent-sandbox) */
	char		session_pool[NAME_MAX_LEN];
	char		session_agent[PATH_MAX];	/* in the pool's image */
	long		session_start;	/* seconds for a claim to be ready */
};

struct approvald_conf {
	char		user[NAME_MAX_LEN];
	struct peer_acl	peers;		/* approval.sock: runnerd */
	struct peer_acl	operators;	/* control.sock: approvalctl */
	struct peer_acl	notifiers;	/* notify.sock: notifyd */
	char		policy[PATH_MAX];
	char		database[PATH_MAX];
	char		self_approval[8];	/* never | root */
};

#define SCOPES_MAX		16
#define NAMES_MAX		16
#define VAULT_PATH_MAX		128

struct name_list {
	char		v[NAMES_MAX][NAME_MAX_LEN];
	size_t		n;
};

/*
 * A scope: what credential a tool's action gets, chosen by brokerd's
 * configuration alone from the tool and the phase of its call.  A tool
 * named by no scope for that phase gets none.
 */
struct brokerd_scope {
	char		name[NAME_MAX_LEN];
	char		engine[16];	/* none | kubernetes | aws */
	struct name_list tools;		/* each tool and phase in one scope */
	int		phases;		/* PHASE_*: the calls it serves */
	char		mount[VAULT_PATH_MAX];	/* secrets engine mount */
	char		role[VAULT_PATH_MAX];	/* its role */
	struct name_list namespaces;	/* allowed targets */
	char		target_arg[NAME_MAX_LEN]; /* argument naming the target */
	long		ttl;		/* seconds */
	char		kube_server[256];	/* written into the secret */
	char		kube_ca_file[PATH_MAX];
};

struct scope_table {
	struct brokerd_scope v[SCOPES_MAX];
	size_t		n;
};

/* brokerd waits this, doubled at each retry, before trying Vault again. */
#define VAULT_RETRY_BASE_MS	200

struct brokerd_vault {
	char		addr[256];	/* https://host:port; "" = no Vault */
	char		ca_file[PATH_MAX];	/* "" = the system's CAs */
	char		token_file[PATH_MAX];
	long		connect_timeout;	/* seconds */
	long		request_timeout;	/* seconds, whole request */
	long		retries;	/* on 5xx and connection errors */
};

struct brokerd_conf {
	char		user[NAME_MAX_LEN];
	struct peer_acl	peers;		/* broker.sock: runnerd */
	char		journal[PATH_MAX];
	struct brokerd_vault vault;
	struct scope_table scopes;
};

struct auditd_conf {
	char		user[NAME_MAX_LEN];
	struct peer_acl	peers;		/* audit.sock writers: the daemons */
	struct peer_acl	readers;	/* audit.sock readers: auditctl */
	char		log[PATH_MAX];
	long		rotate_size;
	char		key[PATH_MAX];		/* Ed25519, auditd's alone */
	char		pubkey[PATH_MAX];	/* written from key at start */
	char		checkpoint_file[PATH_MAX];	/* the latest one */
	long		checkpoint_every;	/* records */
	long		checkpoint_interval;	/* seconds */
	char		checkpoint_syslog[PATH_MAX];	/* "" = none */
	char		forward_syslog[PATH_MAX];	/* every record; "" = none */
	char		on_truncation[16];	/* record | refuse */
	long		ack_timeout;	/* seconds a writer waits for an ack */
};

#define WEBHOOKS_MAX	8
#define WEBHOOK_URL_MAX	512

/* Where notifyd posts, in which body (standard or slack), signed how. */
struct webhook {
	char		url[WEBHOOK_URL_MAX];
	char		format[16];
	char		ed25519_key_file[PATH_MAX];	/* whsk_...: v1a; "": v1 */
};

struct notifyd_conf {
	char		user[NAME_MAX_LEN];
	struct webhook	webhooks[WEBHOOKS_MAX];	/* none: no outbox at all */
	size_t		nwebhooks;
	char		secret_file[PATH_MAX];	/* whsec_..., notifyd's alone;
						   v1, for webhooks with no
						   ed25519_key_file */
	long		timeout;	/* seconds, one POST */
	long		retry_max;	/* seconds, the longest back-off */
};

/* What one peer may hold of a daemon, on every socket it serves. */
struct conn_conf {
	long		max;		/* connections to one socket */
	long		per_uid;	/* of those, one uid's */
	long		frame_time;	/* seconds from a frame's first byte */
	long		queued_max;	/* bytes waiting for a peer to read */
};

struct as_config {
	char			path[PATH_MAX];
	char			runtime_dir[PATH_MAX];
	char			seccomp[16];	/* enforce | trap */
	struct conn_conf	connections;
	struct mcpd_conf	mcpd;
	struct runnerd_conf	runnerd;
	struct kube_conf	kubernetes;
	struct approvald_conf	approvald;
	struct brokerd_conf	brokerd;
	struct auditd_conf	auditd;
	struct notifyd_conf	notifyd;
};

int	 config_load(const char *, struct as_config *, char *, size_t);
void	 config_defaults(struct as_config *);
void	 config_print(const struct as_config *);
const struct brokerd_scope *scope_lookup(const struct scope_table *,
	    const char *, int);
int	 config_socket_path(const struct as_config *, const char *, char *,
	    size_t);
void	 acl_merge(struct peer_acl *, const struct peer_acl *);
int	 acl_allows(const struct peer_acl *, uid_t, const gid_t *, size_t);
struct ynode;
struct yerr;
int	 config_groups(const struct ynode *, struct peer_acl *, struct yerr *);

#endif
