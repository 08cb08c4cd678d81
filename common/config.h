/*
 * The suite's configuration: one YAML file (etc/agent-sandbox.yaml),
 * one section per process.  Every daemon parses the whole file so that
 * -n catches a mistake in any section.
 */
#ifndef AS_CONFIG_H
#define AS_CONFIG_H

#include <sys/types.h>
#include <limits.h>

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
};

struct runnerd_conf {
	char		user[NAME_MAX_LEN];
	struct peer_acl	peers;		/* runner.sock: mcpd's users */
	char		backend[16];	/* gvisor | kubernetes */
	char		runsc[PATH_MAX];
	char		state_dir[PATH_MAX];
};

struct approvald_conf {
	char		user[NAME_MAX_LEN];
	struct peer_acl	peers;		/* approval.sock: runnerd */
	struct peer_acl	operators;	/* control.sock: approvalctl */
	char		policy[PATH_MAX];
	char		database[PATH_MAX];
};

struct brokerd_conf {
	char		user[NAME_MAX_LEN];
	struct peer_acl	peers;		/* broker.sock: runnerd */
	char		journal[PATH_MAX];
};

struct auditd_conf {
	char		user[NAME_MAX_LEN];
	struct peer_acl	peers;		/* audit.sock writers: the daemons */
	struct peer_acl	readers;	/* audit.sock readers: auditctl */
	char		log[PATH_MAX];
	long		rotate_size;
};

struct as_config {
	char			path[PATH_MAX];
	char			runtime_dir[PATH_MAX];
	char			seccomp[16];	/* enforce | trap */
	struct mcpd_conf	mcpd;
	struct runnerd_conf	runnerd;
	struct approvald_conf	approvald;
	struct brokerd_conf	brokerd;
	struct auditd_conf	auditd;
};

int	 config_load(const char *, struct as_config *, char *, size_t);
void	 config_defaults(struct as_config *);
void	 config_print(const struct as_config *);
int	 config_socket_path(const struct as_config *, const char *, char *,
	    size_t);
void	 acl_merge(struct peer_acl *, const struct peer_acl *);
int	 acl_allows(const struct peer_acl *, uid_t, const gid_t *, size_t);

#endif
