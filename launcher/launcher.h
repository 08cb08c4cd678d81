/* SPDX-License-Identifier: ISC */
/*
 * The gvisor backend's privileged half.  runsc needs root and a wide
 * set of syscalls, and a seccomp filter survives execve, so runnerd
 * starts this launcher (runnerd -L, helperlib/exec.c) before it drops
 * anything: it keeps root, talks only to the engine over a socketpair,
 * and only writes bundles, runs runsc, collects output, kills and
 * cleans up.
 */
#ifndef RUNNERD_LAUNCHER_H
#define RUNNERD_LAUNCHER_H

#include <sys/types.h>
#include <limits.h>
#include <stdint.h>
#include <jansson.h>

#include "backend.h"
#include "cjson.h"
#include "config.h"
#include "proto.h"

#define SANDBOX_UID		65534
#define SANDBOX_GID		65534
#define EGRESS_PORT		3128	/* the proxy inside the sandbox's netns */
#define CONTAINER_PREFIX	"as-"
#define CONTAINER_ID_LEN	20	/* "as-" + 16 hex digits + NUL */
#define AGENT_MOUNT		"/run/agent.py"	/* the session agent, read-only */
#define INIT_MOUNT		"/run/sandbox-init" /* before every command */
#define STAT_MOUNT		"/run/sandbox-stat.so" /* in ld.so.preload */
#define PROVIDER_MOUNT		"/run/providers" /* terraform -plugin-dir */
#define HOME_MOUNT		"/run/home"	/* HOME, XDG: empty, read-only */
#define PLAN_MOUNT		"/run/plan"	/* an apply's saved plan, read-only */
#define PLAN_DIR		"plan"		/* its directory in the bundle */

/*
 * A lock file's providers as required_providers in providers.tf, each
 * address and version of the characters terraform writes there and
 * nothing else, so that nothing of the file but those two reaches the
 * configuration; then init from the plugin directory only, the lock
 * file unchanged (the init cache's builder, launcher/tfinit.c, and the
 * render, helperlib/render.c).
 */
#define TF_LOCK_PROVIDERS "awk 'BEGIN { print \"terraform {\"; " \
    "print \"required_providers {\" } " \
    "/^provider \"[A-Za-z0-9._\\/-]+\" [{]$/ { if (a != \"\") exit 1; " \
    "a = $2; gsub(/\"/, \"\", a); next } " \
    "/^  version += \"[A-Za-z0-9.+-]+\"$/ { if (a == \"\") exit 1; " \
    "v = $3; gsub(/\"/, \"\", v); next } " \
    "/^[}]$/ { if (a == \"\" || v == \"\") exit 1; " \
    "printf \"p%d = { source = \\\"%s\\\", version = \\\"%s\\\" }\\n\", " \
    "n++, a, v; a = v = \"\"; next } " \
    "END { if (a != \"\") exit 1; print \"}\"; print \"}\" }' " \
    ".terraform.lock.hcl >providers.tf"
#define TF_LOCK_INIT "terraform init -input=false -no-color " \
    "-lockfile=readonly -plugin-dir=" PROVIDER_MOUNT " </dev/null"
/* helperlib/render.c's sandbox */
#define RENDER_BWRAP		"/usr/bin/bwrap"

struct sbx;

/* sandbox_env.c: every sandbox's environment, and nothing else */
struct env_var {
	const char	*name;
	const char	*value;
};
extern const struct env_var sandbox_env[];

/* launcher/phase.c: a one-shot sandbox's phases, as they start */
#define PHASE_NAME_MAX	16
struct phase {
	int		 fd;		/* -1: none (left) to read */
	uint64_t	 id;
	const json_t	*names;		/* the request's, in order */
	size_t		 next;		/* the first that may come now */
	char		 line[PHASE_NAME_MAX];
	size_t		 len;
	int		 junk;		/* this line is no phase */
	void		(*hook)(void *, const char *); /* after each report */
	void		*hook_arg;
};
int	 phase_request_ok(const json_t *);
int	 phase_open(struct phase *, uint64_t, json_t *, int *);
int	 phase_adopt(struct phase *, uint64_t, json_t *, int);
void	 phase_read(struct phase *);
void	 phase_report(struct phase *, const char *);
void	 phase_close(struct phase *);

void	 launcher_main(const struct as_config *, int) __attribute__((noreturn));

/* launcher/runsc.c */
void	 runsc_exec(const struct as_config *, const char *, const char *,
	    int, int, int, int) __attribute__((noreturn));

/* helperlib/fork.c */
pid_t	 fork_paired(int *);

/* helperlib/exec.c: the helper, as the engine's exec starts it */
int	 helper_begin(int, char **, struct as_config *);

/* helperlib/request.c: what both helpers check and write of a request */
int	 workspace_name_ok(const char *);
int	 request_ok(json_t *);
int	 pathf(char *, size_t, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
int	 files_write(const char *, json_t *);
int	 credential_read(int, char *, size_t, size_t *);
int	 credential_write(const char *, int);
int	 container_id_new(char [CONTAINER_ID_LEN]);

/* launcher/bundle.c */
int	 rootfs_prepare(const struct as_config *, char *, size_t);
int	 plugin_dir_make(const char *, const char *);
int	 bundle_create(const struct as_config *, const char *, const char *,
	    const char *, json_t *, int);
json_t	*bind_mount(const char *, const char *, int);
int	 bundle_dir_mount(const char *, const char *, const char *, json_t *);
int	 bundle_tag(const char *, uint64_t);
int	 bundle_call(const char *, uint64_t *);

/* launcher/userns.c */
void	 userns_init(const struct as_config *);
int	 userns_by_runsc(void);
json_t	*userns_seccomp(void);
int	 table_lacks_clone3(const char *);

/* launcher/etccopy.c */
int	 host_dirs_each(const char *const [], int (*)(const char *, void *),
	    void *);
int	 host_tree_install(const char *, const char *);
int	 etc_trees_install(const char *);

/* helperlib/hostfiles.c: what of this host the sandboxes get */
int	 sandbox_init_find(const char *);
const char *sandbox_init_path(void);
const char *sandbox_stat_path(void);
int	 providers_each(const struct as_config *, const json_t *,
	    int (*)(const char *, const char *, void *), void *);

/* helperlib/treecopy.c */
int	 rm_tree(const char *);

/* launcher/workfs.c: each sandbox's /work, a tmpfs of work_max bytes */
int	 work_mount(const struct as_config *, const char *);
int	 bundle_remove(const char *);

/* launcher/tfpool.c: the terraform pool's sandboxes */
json_t	*tfpool_box_request(void);
int	 tfpool_mounts(const struct as_config *, const char *, json_t *);
const char *tfpool_script(const json_t *);
int	 tfpool_claim(const struct as_config *, const char *, const json_t *,
	    int, char *, size_t);

/* launcher/tfinit.c: terraform init, cached per lock file */
int	 tfinit_key(const json_t *, const char *, size_t,
	    char [SHA256_HEX_LEN + 1]);
int	 tfinit_dir(const struct as_config *, char *, size_t);
#define TFINIT_ROOT	0x1	/* .terraform root's: an apply's plan dir */
#define TFINIT_LOCK	0x2	/* and the lock file beside: the render's */
json_t	*tfinit_seed(const struct as_config *, const char *, int,
	    const json_t *);
void	 tfinit_build(const struct as_config *, const json_t *,
	    const json_t *);
int	 tfinit_reaped(pid_t, int);
void	 tfinit_init(const struct as_config *);
void	 tfinit_shutdown(void);

/* helperlib/confine.c: the helpers' reads of agent trees, under Landlock */
struct sandbox_paths;
json_t	*confined_run(const struct as_config *, const struct sandbox_paths *,
	    json_t *(*)(void *), void *, char *, size_t);
int	 workspace_seed_confined(const struct as_config *, const char *,
	    int, json_t *, char *, size_t);
void	 workspace_collect_confined(const struct as_config *, const char *,
	    json_t *, json_t *, int, const char *);
int	 plan_seed_confined(const struct as_config *, const char *,
	    const char *, const char *, char *, size_t);

/* helperlib/workspace.c */
const char *workspace_state_root(const struct as_config *);
int	 copy_file(const char *, const char *, mode_t, uid_t, gid_t, int,
	    char [SHA256_HEX_LEN + 1]);
int	 open_regular(const char *);
json_t	*files_collect(const char *, json_t *, size_t);
int	 workspace_request_ok(const struct as_config *, json_t *);
int	 workspace_seed(const struct as_config *, const char *, const char *,
	    json_t *, char *, size_t);
void	 workspace_keep(const char *, json_t *, json_t *, int);
int	 mkdir_owned(const char *);
int	 plan_dir_of(const char *, char *, size_t);
int	 plan_seed(const char *, const char *, const char *, char *, size_t);

/* helperlib/render.c: the plan shown where no module code ran */
struct render {
	pid_t		 pid;		/* bwrap: -1 before it, after its end */
	int		 go;		/* -1 once it has gone */
	int		 err;		/* its stderr */
	char		 why[256];	/* why it could not start */
	int		 ended;		/* it went, then ended, as status says */
	int		 status;
	char		 work[PATH_MAX];
};
void	 bwrap_terraform(const struct as_config *, const char *,
	    const json_t *, const char *, int, int, int)
	    __attribute__((noreturn));
void	 render_exec(const struct as_config *, const char *, const char *,
	    const json_t *, const char *, int, int, int)
	    __attribute__((noreturn));
void	 render_init(struct render *);
void	 render_start(const struct as_config *, const char *, const char *,
	    json_t *, struct render *);
const char *render_inbox(const struct render *);
int	 render_go(struct render *, char *, size_t);
int	 render_went(const struct render *);
int	 render_running(const struct render *);
int	 render_reaped(struct render *, pid_t, int);
void	 render_kill(struct render *);
int	 render_ended_ok(struct render *, char *, size_t);
void	 render_stop(struct render *);
void	 render_collect(const struct as_config *, const char *, int, json_t *,
	    const char *);

/* helperlib/cgroup.c */
int	 cgroup_runsc_path(const char *, char *, size_t);
int	 cgroup_create(const struct as_config *, const char *);
long	 cgroup_memory_max(const struct as_config *);
int	 cgroup_hit_memory_limit(const char *);
int	 cgroup_enter(const char *, const char *, long);
void	 cgroup_kill(const char *);
void	 cgroup_remove(const char *);

/* launcher/egress.c */
void	 egress_init(const struct as_config *);
pid_t	 egress_start(const char *, json_t *, int *);
int	 egress_listen_here(int);

/* launcher/journal.c: what was torn down after runnerd was gone */
void	 journal_lock(const struct as_config *);
json_t	*journal_read(void);
void	 journal_note(uint64_t, const char *);
void	 journal_sync(void);
void	 journal_remove(void);

/* launcher/sweep.c */
int	 runsc_cmd(const struct as_config *, char *, size_t, ...)
	    __attribute__((sentinel));
json_t	*sweep(const struct as_config *);

#endif
