/* SPDX-License-Identifier: ISC */
/*
 * One OCI bundle per call: a config.json for runsc, the workspace with
 * the call's input files and the credential file; the shared read-only
 * root skeleton they point at.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "launcher.h"
#include "log.h"

/* Host trees bound read-only when no rootfs is configured. */
static const char *const host_tops[] = {
	"bin", "sbin", "lib", "lib32", "lib64", "libx32", NULL
};
/*
 * And these, each a glob(3) pattern of directories.  Of /etc, only the
 * certificates are bound, so that a CA the operator adds reaches
 * sandboxes at once; the small trees /usr's programs read are copied
 * (etccopy.c), and nothing else of /etc is there.
 */
static const char *const host_binds[] = {
	"/usr", "/etc/ssl", NULL
};
static const char *const skeleton[] = {
	"etc", "tmp", "work", "proc", "dev", "sys", "run",
	"run/secrets", "run/providers", "run/mirror", "run/home", "run/plan",
	NULL
};

/* One file of runnerd's copied into the shared root, replaced whole. */
static int
root_install(const char *root, const char *src, const char *dst_mount,
    mode_t mode)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	int saved;

	if (pathf(tmp, sizeof(tmp), "%s%s.new", root, dst_mount) == -1 ||
	    pathf(dst, sizeof(dst), "%s%s", root, dst_mount) == -1)
		return -1;
	(void)unlink(tmp);
	if (copy_file(src, tmp, mode, 0, 0, 0, NULL) == -1 ||
	    rename(tmp, dst) == -1) {
		saved = errno;
		(void)unlink(tmp);
		errno = saved;
		return -1;
	}
	return 0;
}

/* A file of runnerd's words in the shared root, replaced whole. */
static int
root_write(const char *root, const char *name, const char *text)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	int fd, ok;

	if (pathf(tmp, sizeof(tmp), "%s%s.new", root, name) == -1 ||
	    pathf(dst, sizeof(dst), "%s%s", root, name) == -1)
		return -1;
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0444)) == -1)
		return -1;
	ok = write_full(fd, text, strlen(text)) == 0;
	if (close(fd) == -1 || !ok || rename(tmp, dst) == -1) {
		(void)unlink(tmp);
		return -1;
	}
	return 0;
}

/*
 * The users a sandbox's files can show: root's (the read-only root) and
 * the sandbox's own, with Debian's names, so that ls -l, id, getpwuid
 * and tar answer as on the host.
 */
static const char root_passwd[] =
    "root:x:0:0:root:/root:/usr/sbin/nologin\n"
    "nobody:x:65534:65534:nobody:" HOME_MOUNT ":/usr/sbin/nologin\n";
static const char root_group[] =
    "root:x:0:\n"
    "nogroup:x:65534:\n";

/*
 * localhost from the file, never asked of a resolver the sandbox has no
 * route to (without these, each lookup of it waited out glibc's DNS
 * tries, and CPython's test_logging took its whole deadline).
 */
static const char root_hosts[] =
    "127.0.0.1\tlocalhost\n"
    "::1\tlocalhost ip6-localhost ip6-loopback\n";
static const char root_nsswitch[] =
    "passwd: files\n"
    "group: files\n"
    "hosts: files dns\n"
    "services: files\n"
    "protocols: files\n";

/*
 * The host's own name tables (netbase's), for getservbyname and
 * getprotobyname as on the host.  A host without netbase has none, and
 * neither have its sandboxes.
 */
static const char *const root_host_tables[] = {
	"/etc/services",
	"/etc/protocols",
};

static int
host_tables_install(const char *root)
{
	size_t i;

	for (i = 0; i < sizeof(root_host_tables) /
	    sizeof(root_host_tables[0]); i++)
		if (root_install(root, root_host_tables[i],
		    root_host_tables[i], 0444) == -1 && errno != ENOENT)
			return -1;
	return 0;
}

/*
 * sandbox-init and sandbox-stat.so in the shared root made here, where
 * they cost a sandbox nothing: a bind mount of its own made each start
 * about 10 ms slower (runsc serves each mount apart).  Copied at every
 * start, so that the root has this build's.  /etc/passwd, group, hosts
 * and nsswitch.conf beside them, the host's services and protocols, and
 * its trees that etccopy.c names.  /etc/ld.so.preload last: it names
 * the library once it is there (a name without its file would make
 * every program warn), and images/runner/host-root takes it as the sign
 * that the root is whole.
 */
static int
init_install(const char *root)
{
	return root_install(root, sandbox_init_path(), INIT_MOUNT, 0555) == -1 ||
	    root_install(root, sandbox_stat_path(), STAT_MOUNT, 0444) == -1 ||
	    root_write(root, "/etc/passwd", root_passwd) == -1 ||
	    root_write(root, "/etc/group", root_group) == -1 ||
	    root_write(root, "/etc/hosts", root_hosts) == -1 ||
	    root_write(root, "/etc/nsswitch.conf", root_nsswitch) == -1 ||
	    host_tables_install(root) == -1 ||
	    etc_trees_install(root) == -1 ||
	    root_write(root, "/etc/ld.so.preload", STAT_MOUNT "\n") == -1 ?
	    -1 : 0;
}

/* A host bind's mount point in the shared root. */
static int
mount_point_make(const char *host, void *root)
{
	char path[PATH_MAX];

	if (pathf(path, sizeof(path), "%s%s", (const char *)root, host) ==
	    -1 || (mkdir(path, 0755) == -1 && errno != EEXIST))
		return -1;
	return 0;
}

/*
 * The read-only root shared by every call: mount points, and the
 * host's /bin, /lib... as the same symlinks into /usr the host has.
 */
int
rootfs_prepare(const struct as_config *conf, char *out, size_t len)
{
	char path[PATH_MAX], host[PATH_MAX], target[PATH_MAX];
	struct stat st;
	ssize_t n;
	size_t i;

	if (conf->runnerd.rootfs[0] != '\0') {
		if (stat(conf->runnerd.rootfs, &st) == -1)
			return -1;
		strlcpy(out, conf->runnerd.rootfs, len);
		return 0;
	}
	if (pathf(out, len, "%s/rootfs", conf->runnerd.state_dir) ==
	    -1 || (mkdir(out, 0755) == -1 && errno != EEXIST))
		return -1;
	for (i = 0; skeleton[i] != NULL; i++)
		if (pathf(path, sizeof(path), "%s/%s", out, skeleton[i]) ==
		    -1 || (mkdir(path, 0755) == -1 && errno != EEXIST))
			return -1;
	if (host_dirs_each(host_binds, mount_point_make, out) == -1)
		return -1;
	for (i = 0; host_tops[i] != NULL; i++) {
		if (pathf(host, sizeof(host), "/%s", host_tops[i]) ==
		    -1 || pathf(path, sizeof(path), "%s/%s", out,
		    host_tops[i]) == -1)
			return -1;
		if (lstat(host, &st) == -1)
			continue;
		if (S_ISLNK(st.st_mode)) {
			if ((n = readlink(host, target, sizeof(target) - 1)) ==
			    -1)
				return -1;
			target[n] = '\0';
			if (symlink(target, path) == -1 && errno != EEXIST)
				return -1;
		} else if (S_ISDIR(st.st_mode) && mkdir(path, 0755) == -1 &&
		    errno != EEXIST)
			return -1;
	}
	return init_install(out);
}

json_t *
bind_mount(const char *dst, const char *src, int ro)
{
	return json_pack("{s:s, s:s, s:s, s:[s, s]}", "destination", dst,
	    "type", "bind", "source", src, "options", "rbind",
	    ro ? "ro" : "rw");
}

/* dir/name, a new directory of the bundle's, bound read-only at dst. */
int
bundle_dir_mount(const char *dir, const char *name, const char *dst,
    json_t *mounts)
{
	char path[PATH_MAX];

	if (pathf(path, sizeof(path), "%s/%s", dir, name) == -1 ||
	    mkdir(path, 0755) == -1)
		return -1;
	return json_array_append_new(mounts, bind_mount(dst, path, 1));
}

static int
host_bind_add(const char *host, void *mounts)
{
	return json_array_append_new(mounts, bind_mount(host, host, 1));
}

static int
mounts_add_host(const struct as_config *conf, json_t *mounts)
{
	char host[PATH_MAX];
	struct stat st;
	size_t i;

	if (conf->runnerd.rootfs[0] != '\0')
		return 0;
	if (host_dirs_each(host_binds, host_bind_add, mounts) == -1)
		return -1;
	for (i = 0; host_tops[i] != NULL; i++) {
		snprintf(host, sizeof(host), "/%s", host_tops[i]);
		if (lstat(host, &st) == 0 && S_ISDIR(st.st_mode) &&
		    json_array_append_new(mounts, bind_mount(host, host, 1)) ==
		    -1)
			return -1;
	}
	return 0;
}

/*
 * HOME (sandbox_env.c): in the shared root, the read-only root's own
 * empty directory, which costs a sandbox's start nothing (a mount
 * there cost about 3 ms); in an operator's root file system, which
 * need not have it, a new empty tmpfs, read-only.
 */
static int
mounts_add_home(const struct as_config *conf, json_t *mounts)
{
	if (conf->runnerd.rootfs[0] == '\0')
		return 0;
	return json_array_append_new(mounts, json_pack("{s:s, s:s, s:s,"
	    " s:[s, s, s, s, s, s]}", "destination", HOME_MOUNT, "type",
	    "tmpfs", "source", "tmpfs", "options", "ro", "nosuid", "nodev",
	    "noexec", "mode=0555", "size=4k"));
}

static json_t *
spec_mounts(const struct as_config *conf, const char *dir, int cred,
    int session)
{
	char work[PATH_MAX], credpath[PATH_MAX], tmpopt[64];
	json_t *m;

	snprintf(tmpopt, sizeof(tmpopt), "size=%ld",
	    conf->runnerd.tmp_size);
	if (pathf(work, sizeof(work), "%s/work", dir) == -1 ||
	    pathf(credpath, sizeof(credpath), "%s/credential", dir) ==
	    -1)
		return NULL;
	m = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s, s:[s, s, s]},"
	    " {s:s, s:s, s:s, s:[s, s, s, s, s]},"
	    " {s:s, s:s, s:s, s:[s, s, s, s]}, o]",
	    "destination", "/proc", "type", "proc", "source", "proc",
	    "destination", "/dev", "type", "tmpfs", "source", "tmpfs",
	    "options", "nosuid", "noexec", "size=1m",
	    /* POSIX semaphores and shared memory: multiprocessing's locks */
	    "destination", "/dev/shm", "type", "tmpfs", "source", "tmpfs",
	    "options", "nosuid", "nodev", "noexec", "mode=1777", tmpopt,
	    "destination", "/tmp", "type", "tmpfs", "source", "tmpfs",
	    "options", "nosuid", "nodev", "mode=1777", tmpopt,
	    bind_mount("/work", work, 0));
	if (m == NULL || mounts_add_host(conf, m) == -1 ||
	    mounts_add_home(conf, m) == -1 || (cred &&
	    json_array_append_new(m, bind_mount("/run/secrets/credential",
	    credpath, 1)) == -1) || (conf->runnerd.rootfs[0] != '\0' &&
	    (json_array_append_new(m, bind_mount(INIT_MOUNT, sandbox_init_path(), 1)) ==
	    -1 || json_array_append_new(m, bind_mount(STAT_MOUNT, sandbox_stat_path(),
	    1)) == -1)) || (session && json_array_append_new(m,
	    bind_mount(AGENT_MOUNT, conf->runnerd.session_agent, 1)) == -1)) {
		json_decref(m);
		return NULL;
	}
	return m;
}

/*
 * dir/HOST/NAMESPACE/TYPE (or deeper), made with the directories on the
 * way: a mount point or a directory of links in the plugin directory.
 */
int
plugin_dir_make(const char *dir, const char *name)
{
	char path[PATH_MAX], *p;

	if (pathf(path, sizeof(path), "%s/%s", dir, name) == -1)
		return -1;
	for (p = path + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(path, 0755) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(path, 0755) == -1 && errno != EEXIST ? -1 : 0;
}

struct provider_mounts {
	const char	*top;
	json_t		*mounts;
};

static int
provider_mount(const char *name, const char *src, void *arg)
{
	struct provider_mounts *pm = arg;
	char dst[PATH_MAX];

	if (pathf(dst, sizeof(dst), PROVIDER_MOUNT "/%s", name) == -1 ||
	    plugin_dir_make(pm->top, name) == -1)
		return -1;
	return json_array_append_new(pm->mounts, bind_mount(dst, src, 1));
}

/*
 * Terraform's plugin directory: an empty directory of the bundle's,
 * read-only, and over it each allowed provider of the mirror, read-only
 * too.
 */
static int
mounts_add_providers(const struct as_config *conf, const char *dir,
    const json_t *providers, json_t *mounts)
{
	char top[PATH_MAX];
	struct provider_mounts pm = { top, mounts };

	if (pathf(top, sizeof(top), "%s/providers", dir) == -1 ||
	    mkdir(top, 0755) == -1 || json_array_append_new(mounts,
	    bind_mount(PROVIDER_MOUNT, top, 1)) == -1)
		return -1;
	return providers_each(conf, providers, provider_mount, &pm);
}

/*
 * The environment of sandbox_env and nothing else (nothing of
 * runnerd's); with egress, a proxy too.
 */
static json_t *
spec_env(int egress)
{
	static const char *const proxy_vars[] = {
		"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", NULL
	};
	char v[64];
	json_t *env;
	size_t i;

	env = json_array();
	for (i = 0; env != NULL && sandbox_env[i].name != NULL; i++)
		json_array_append_new(env, json_sprintf("%s=%s",
		    sandbox_env[i].name, sandbox_env[i].value));
	for (i = 0; env != NULL && egress && proxy_vars[i] != NULL; i++) {
		snprintf(v, sizeof(v), "%s=http://127.0.0.1:%d", proxy_vars[i],
		    EGRESS_PORT);
		json_array_append_new(env, json_string(v));
	}
	return env;
}

/*
 * A sandbox's command runs under sandbox-init, whose seccomp filter
 * refuses user namespaces, unless runsc's own --oci-seccomp can
 * (userns.c).
 */
static json_t *
spec_args(json_t *argv)
{
	json_t *args;

	if (userns_by_runsc())
		return json_incref(argv);
	if ((args = json_pack("[s]", INIT_MOUNT)) != NULL &&
	    json_array_extend(args, argv) == -1) {
		json_decref(args);
		return NULL;
	}
	return args;
}

/*
 * Limits gVisor enforces inside, per process: fork fails with EAGAIN
 * past pids tasks of the sandbox user, and where the agent's own code
 * runs an allocation past address_space fails with ENOMEM (MemoryError
 * in Python), so that an absurd allocation ends a call rather than the
 * sandbox.  It is not memory: a process reserves address space it never
 * touches (a thread's 8 MiB stack, glibc's 64 MiB a malloc arena, Go's
 * and Node's heaps), and at 512 MiB Python started no more than about
 * 20 threads at once here.  This runsc enforces no other bound inside
 * (RLIMIT_DATA is not applied to mmap); memory is the host cgroup's
 * (helperlib/cgroup.c).
 */
static json_t *
spec_rlimits(const struct as_config *conf, int address_space)
{
	json_t *r;

	r = json_pack("[{s:s, s:i, s:i}, {s:s, s:I, s:I}, {s:s, s:i, s:i}]",
	    "type", "RLIMIT_NOFILE", "hard", 1024, "soft", 1024,
	    "type", "RLIMIT_NPROC", "hard", (json_int_t)conf->runnerd.pids,
	    "soft", (json_int_t)conf->runnerd.pids,
	    "type", "RLIMIT_CORE", "hard", 0, "soft", 0);
	if (r != NULL && address_space && json_array_append_new(r,
	    json_pack("{s:s, s:I, s:I}", "type", "RLIMIT_AS", "hard",
	    (json_int_t)conf->runnerd.address_space, "soft",
	    (json_int_t)conf->runnerd.address_space)) == -1) {
		json_decref(r);
		return NULL;
	}
	return r;
}

/*
 * runsc tells the sandbox the memory limit of its cgroup as its total
 * memory (/proc/meminfo), the host's when it has none: the outer bound.
 */
static json_t *
spec_resources(const struct as_config *conf)
{
	return json_pack("{s:{s:I}}", "memory", "limit",
	    (json_int_t)cgroup_memory_max(conf));
}

static json_t *
spec_build(const struct as_config *conf, const char *dir, const char *cid,
    const char *rootfs, json_t *argv, int cred, int egress, int session,
    int agent_code)
{
	char cgpath[PATH_MAX];
	json_t *spec, *ns, *mounts;

	if (cgroup_runsc_path(cid, cgpath, sizeof(cgpath)) == -1 ||
	    (mounts = spec_mounts(conf, dir, cred, session)) == NULL)
		return NULL;
	argv = spec_args(argv);
	ns = json_pack("[{s:s}, {s:s}, {s:s}, {s:s}]", "type", "pid",
	    "type", "ipc", "type", "uts", "type", "mount");
	/* With egress runsc uses the namespace the launcher made for it. */
	if (ns != NULL && !egress)
		json_array_append_new(ns, json_pack("{s:s}", "type",
		    "network"));
	spec = json_pack("{s:s, s:{s:b, s:{s:i, s:i}, s:o, s:o, s:s,"
	    " s:{s:[], s:[], s:[], s:[], s:[]}, s:b, s:o},"
	    " s:{s:s, s:b}, s:s, s:o, s:{s:s, s:o, s:o}}",
	    "ociVersion", "1.0.2",
	    "process", "terminal", 0, "user", "uid", SANDBOX_UID, "gid",
	    SANDBOX_GID, "args", argv, "env", spec_env(egress), "cwd", "/work",
	    "capabilities", "bounding", "effective", "inheritable",
	    "permitted", "ambient",
	    "noNewPrivileges", 1,
	    "rlimits", spec_rlimits(conf, session || agent_code),
	    "root", "path", rootfs, "readonly", 1,
	    "hostname", "sandbox",
	    "mounts", mounts,
	    "linux", "cgroupsPath", cgpath, "namespaces", ns,
	    "resources", spec_resources(conf));
	if (spec != NULL && userns_by_runsc() && json_object_set_new(
	    json_object_get(spec, "linux"), "seccomp", userns_seccomp()) ==
	    -1) {
		json_decref(spec);
		return NULL;
	}
	return spec;
}

/*
 * The call a bundle serves, in its "call" file: its container id is
 * random, and the start-up sweep reports leftovers by call.
 */
int
bundle_tag(const char *dir, uint64_t id)
{
	char path[PATH_MAX], line[32];
	int fd, n, r;

	if (pathf(path, sizeof(path), "%s/call", dir) == -1 ||
	    (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		return -1;
	n = snprintf(line, sizeof(line), "%016" PRIx64 "\n", id);
	r = write_full(fd, line, n);
	if (close(fd) == -1)
		r = -1;
	return r;
}

/* The call of a bundle bundle_tag marked: 0, or -1 if none is. */
int
bundle_call(const char *dir, uint64_t *id)
{
	char path[PATH_MAX], line[32];
	ssize_t n;
	int fd;

	if (pathf(path, sizeof(path), "%s/call", dir) == -1 ||
	    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n != 17 || line[16] != '\n')
		return -1;
	line[16] = '\0';
	return sscanf(line, "%" SCNx64, id) == 1 ? 0 : -1;
}

/*
 * The bundle directory: config.json, work/ (its own tmpfs) with the
 * inputs, credential.
 */
int
bundle_create(const struct as_config *conf, const char *dir, const char *cid,
    const char *rootfs, json_t *req, int credfd)
{
	char work[PATH_MAX], cfg[PATH_MAX], cred[PATH_MAX];
	json_t *spec, *files, *egress, *providers;
	int r;

	if (mkdir(dir, 0700) == -1 ||
	    pathf(work, sizeof(work), "%s/work", dir) == -1 ||
	    pathf(cfg, sizeof(cfg), "%s/config.json", dir) == -1 ||
	    mkdir(work, 0700) == -1 || work_mount(conf, work) == -1)
		return -1;
	if ((files = json_object_get(req, "files_in")) != NULL &&
	    files_write(work, files) == -1)
		return -1;
	if (credfd != -1 && (pathf(cred, sizeof(cred), "%s/credential",
	    dir) == -1 || credential_write(cred, credfd) == -1))
		return -1;
	egress = json_object_get(req, "egress");
	spec = spec_build(conf, dir, cid, rootfs, json_object_get(req, "argv"),
	    credfd != -1, json_array_size(egress) > 0,
	    json_is_true(json_object_get(req, "session")),
	    json_is_true(json_object_get(req, "agent_code")));
	if (spec == NULL) {
		errno = EINVAL;
		return -1;
	}
	if ((providers = json_object_get(req, "providers")) != NULL &&
	    mounts_add_providers(conf, dir, providers, json_object_get(spec,
	    "mounts")) == -1) {
		json_decref(spec);
		return -1;
	}
	/*
	 * An apply's saved plan: root's, on a read-only mount, so that
	 * nothing in the sandbox can change it once workspace.c checked it.
	 */
	if ((json_object_get(req, "plan_load") != NULL &&
	    bundle_dir_mount(dir, PLAN_DIR, PLAN_MOUNT, json_object_get(spec,
	    "mounts")) == -1) || (json_is_true(json_object_get(req,
	    "pooled")) && tfpool_mounts(conf, dir, json_object_get(spec,
	    "mounts")) == -1)) {
		json_decref(spec);
		return -1;
	}
	r = json_dump_file(spec, cfg, JSON_COMPACT);
	json_decref(spec);
	return r;
}

