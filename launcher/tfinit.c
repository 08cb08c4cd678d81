/* SPDX-License-Identifier: ISC */
/*
 * terraform init, cached (issue 19).  What `terraform init -plugin-dir`
 * makes for a module's providers, .terraform/providers (a link per
 * provider into the plugin directory) and .terraform/plugin_path,
 * follows from the module's lock file, the providers the policy lets
 * into the plugin directory and terraform itself, and from nothing else
 * of the module: one init per such key serves every later call, at
 * runnerd.state_dir/tfinit/KEY.
 *
 * An entry is made by a builder: terraform init in a namespace sandbox
 * like the render's (helperlib/render.c), uid 65534, no network, on a
 * configuration written from the lock file alone (each provider's
 * address and version, checked character by character), never the
 * module's, with -lockfile=readonly.  What it made is taken into the
 * cache by descriptors in a confined child: directories, links into
 * the plugin directory and small files only, owned by root.  A call's
 * workspace gets a copy (workspace.c), so nothing a sandbox writes
 * reaches the cache.  The first call of a key runs init itself while
 * the builder runs beside it; a key whose build failed is tried again
 * after TFINIT_RETRY seconds.
 *
 * A seeded call runs terraform without init (tool_terraform.c).  When
 * the module needs more than its providers (modules, a backend, a lock
 * file still to be made), terraform says so before it runs anything,
 * and the script runs init then.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cjson.h"
#include "event.h"
#include "io.h"
#include "launcher.h"
#include "log.h"
#include "sandbox.h"

#define TFINIT_LOCK_MAX	(64 * 1024)	/* a lock file's bytes, at most */
#define TFINIT_FILE_MAX	4096		/* plugin_path and the like */
#define TFINIT_DEPTH	8		/* providers/HOST/NS/TYPE/VER/OS_ARCH */
#define TFINIT_ENTRIES	32		/* kept; the oldest go first */
#define TFINIT_BUILDS	2		/* at once */
#define TFINIT_RETRY	600		/* seconds before a failed key again */

/* An entry of the cache: init on the lock file's providers alone. */
static const char build_script[] =
    "export TF_IN_AUTOMATION=1 TF_INPUT=0 CHECKPOINT_DISABLE=1; "
    "[ -f .terraform.lock.hcl ] || exit 0; "
    TF_LOCK_PROVIDERS " || "
    "{ echo 'the lock file is not as terraform writes it' >&2; exit 2; }; "
    TF_LOCK_INIT " >/dev/null";

struct build {
	pid_t		 pid;
	char		 key[SHA256_HEX_LEN + 1];
	int		 log;		/* its stderr, a file in its dir */
	uint64_t	 timer;		/* runnerd.timeout, as for a call */
};

struct failed {
	char	 key[SHA256_HEX_LEN + 1];
	time_t	 when;
};

static const struct as_config	*conf;
static struct build		 builds[TFINIT_BUILDS];
static struct failed		 failed[16];
static size_t			 failed_next;

/* The cache's directory. */
int
tfinit_dir(const struct as_config *c, char *path, size_t len)
{
	return pathf(path, len, "%s/tfinit", c->runnerd.state_dir);
}

/* An entry's (or a build's) path in it. */
static int
cache_dir(const struct as_config *c, char *path, size_t len, const char *name)
{
	return pathf(path, len, "%s/tfinit/%s", c->runnerd.state_dir, name);
}

/* terraform as the sandboxes find it first on their PATH. */
static void
terraform_identity(char *id, size_t len)
{
	static const char *const paths[] = {
		"/usr/local/bin/terraform", "/usr/bin/terraform", NULL
	};
	struct stat st;
	size_t i;

	snprintf(id, len, "none");
	for (i = 0; paths[i] != NULL; i++)
		if (stat(paths[i], &st) == 0) {
			snprintf(id, len, "%s %llu %llu %lld %lld", paths[i],
			    (unsigned long long)st.st_dev,
			    (unsigned long long)st.st_ino,
			    (long long)st.st_size, (long long)st.st_mtime);
			return;
		}
}

/* The key: terraform, the allowed providers, the lock file (or none). */
int
tfinit_key(const json_t *providers, const char *lock, size_t locklen,
    char key[SHA256_HEX_LEN + 1])
{
	char id[PATH_MAX + 128], *list, *buf;
	size_t len;
	FILE *f;

	terraform_identity(id, sizeof(id));
	if ((list = json_dumps(providers != NULL ? providers : json_null(),
	    JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
		return -1;
	if ((f = open_memstream(&buf, &len)) == NULL) {
		free(list);
		return -1;
	}
	fprintf(f, "agent-sandbox terraform init 1\n%s\n%s\n", id, list);
	if (lock != NULL) {
		fprintf(f, "lock %zu\n", locklen);
		fwrite(lock, 1, locklen, f);
	} else
		fprintf(f, "no lock\n");
	free(list);
	if (fclose(f) != 0) {
		free(buf);
		return -1;
	}
	sha256_hex(buf, len, key);
	free(buf);
	return 0;
}

static int
link_target_ok(const char *t)
{
	const char *p;

	if (strncmp(t, PROVIDER_MOUNT "/", sizeof(PROVIDER_MOUNT)) != 0)
		return 0;
	for (p = t; (p = strstr(p, "..")) != NULL; p += 2)
		if (p[-1] == '/' && (p[2] == '/' || p[2] == '\0'))
			return 0;
	return 1;
}

static int
file_copy_at(int src, int dst, const char *name, off_t size, uid_t uid,
    gid_t gid)
{
	char buf[TFINIT_FILE_MAX];
	ssize_t n;
	int in, out, r = -1;

	if (size > TFINIT_FILE_MAX ||
	    (in = openat(src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
	    O_NONBLOCK)) == -1)
		return -1;
	n = read(in, buf, sizeof(buf));
	close(in);
	if (n < 0 || n != size)
		return -1;
	if ((out = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) == -1)
		return -1;
	if (write(out, buf, n) == n && fchown(out, uid, gid) == 0)
		r = 0;
	if (close(out) == -1)
		r = -1;
	return r;
}

/*
 * The tree at src copied into dst, both directory descriptors, never
 * through a link: directories, small regular files and links into the
 * plugin directory; anything else fails the whole copy.
 */
static int
tree_copy_init(int src, int dst, uid_t uid, gid_t gid, int depth)
{
	char target[PATH_MAX];
	struct dirent *e;
	struct stat st;
	ssize_t n;
	DIR *d;
	int fd, s2, d2, r = 0;

	if (depth > TFINIT_DEPTH || (fd = dup(src)) == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while (r == 0 && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(src, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
			r = -1;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			if (mkdirat(dst, e->d_name, 0755) == -1 ||
			    fchownat(dst, e->d_name, uid, gid,
			    AT_SYMLINK_NOFOLLOW) == -1 ||
			    (s2 = openat(src, e->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
				r = -1;
				break;
			}
			if ((d2 = openat(dst, e->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
				r = -1;
			else {
				r = tree_copy_init(s2, d2, uid, gid, depth + 1);
				close(d2);
			}
			close(s2);
		} else if (S_ISLNK(st.st_mode)) {
			n = readlinkat(src, e->d_name, target,
			    sizeof(target) - 1);
			if (n <= 0) {
				r = -1;
				break;
			}
			target[n] = '\0';
			if (!link_target_ok(target) ||
			    symlinkat(target, dst, e->d_name) == -1 ||
			    fchownat(dst, e->d_name, uid, gid,
			    AT_SYMLINK_NOFOLLOW) == -1)
				r = -1;
		} else if (S_ISREG(st.st_mode))
			r = file_copy_at(src, dst, e->d_name, st.st_size, uid,
			    gid);
		else
			r = -1;
	}
	closedir(d);
	return r;
}

static int
open_dir_at(int at, const char *path)
{
	return openat(at, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
}

/* dir/.terraform.lock.hcl, the sandbox user's to read. */
static int
lock_write(const char *dir, const char *lock, size_t len)
{
	char path[PATH_MAX];
	int fd, r;

	if (pathf(path, sizeof(path), "%s/.terraform.lock.hcl", dir) == -1 ||
	    (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0444)) == -1)
		return -1;
	r = write_full(fd, lock, len);
	if (close(fd) == -1)
		r = -1;
	return r;
}

/* The snapshot's lock file, NUL-terminated in *lock, or none (NULL). */
static int
lock_read(const char *state, const char *snapshot, char **lock, size_t *len)
{
	char path[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	*lock = NULL;
	*len = 0;
	if (pathf(path, sizeof(path), "%s/snapshots/%s/.terraform.lock.hcl",
	    state, snapshot) == -1)
		return -1;
	if ((fd = open_regular(path)) == -1)
		return errno == ENOENT ? 0 : -1;
	if (fstat(fd, &st) == -1 || st.st_size > TFINIT_LOCK_MAX ||
	    (*lock = malloc(st.st_size + 1)) == NULL) {
		close(fd);
		return -1;
	}
	n = read(fd, *lock, st.st_size);
	close(fd);
	if (n != st.st_size) {
		free(*lock);
		*lock = NULL;
		return -1;
	}
	(*lock)[n] = '\0';
	*len = n;
	return 0;
}

/*
 * In the seed's confined child, once the module snapshot is kept:
 * dir/.terraform from the cache entry of its key, {"key", "cached":
 * true}; or, with no entry yet, {"key", "lock": the lock file or null}
 * for the launcher to build it; NULL when the lock file cannot key
 * one (too large, not text), and init runs as before.  dir is the
 * workspace, the sandbox user's, or with TFINIT_ROOT an apply's plan
 * directory, which the sandbox sees read-only; with TFINIT_LOCK the
 * lock file the entry was keyed by goes beside it (the render's, which
 * gets nothing else of the module).
 */
json_t *
tfinit_seed(const struct as_config *c, const char *dir, int flags,
    const json_t *req)
{
	uid_t uid = flags & TFINIT_ROOT ? 0 : SANDBOX_UID;
	gid_t gid = flags & TFINIT_ROOT ? 0 : SANDBOX_GID;
	const char *state, *snapshot;
	char key[SHA256_HEX_LEN + 1], path[PATH_MAX], *lock;
	json_t *r = NULL;
	size_t len;
	int src, dst, wfd;

	state = json_string_value(json_object_get(req, "state"));
	snapshot = json_string_value(json_object_get(req, "snapshot"));
	if (state == NULL || snapshot == NULL ||
	    lock_read(state, snapshot, &lock, &len) == -1)
		return NULL;
	if ((lock != NULL && strlen(lock) != len) ||
	    tfinit_key(json_object_get(req, "providers"), lock, len, key) ==
	    -1 || cache_dir(c, path, sizeof(path), key) == -1) {
		free(lock);
		return NULL;
	}
	if ((src = open_dir_at(AT_FDCWD, path)) == -1) {
		r = json_pack("{s:s, s:s?}", "key", key, "lock", lock);
		free(lock);
		return r;
	}
	if ((wfd = open_dir_at(AT_FDCWD, dir)) != -1 &&
	    mkdirat(wfd, ".terraform", 0755) == 0 &&
	    fchownat(wfd, ".terraform", uid, gid, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (dst = open_dir_at(wfd, ".terraform")) != -1) {
		if (tree_copy_init(src, dst, uid, gid, 0) == 0 &&
		    (!(flags & TFINIT_LOCK) || lock == NULL ||
		    lock_write(dir, lock, len) == 0))
			r = json_pack("{s:s, s:b}", "key", key, "cached", 1);
		close(dst);
	}
	free(lock);
	/* Half a copy: init runs as if there were none. */
	if (r == NULL && wfd != -1 && pathf(path, sizeof(path),
	    "%s/.terraform", dir) == 0)
		(void)rm_tree(path);
	if (wfd != -1)
		close(wfd);
	close(src);
	return r;
}

static int
recently_failed(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(failed) / sizeof(failed[0]); i++)
		if (strcmp(failed[i].key, key) == 0 &&
		    time(NULL) - failed[i].when < TFINIT_RETRY)
			return 1;
	return 0;
}

static void
note_failed(const char *key)
{
	struct failed *f = &failed[failed_next++ % (sizeof(failed) /
	    sizeof(failed[0]))];

	strlcpy(f->key, key, sizeof(f->key));
	f->when = time(NULL);
}

/* A private file of dir's, for the builder to write or read. */
static int
file_make(const char *dir, const char *name, const char *text, size_t len,
    int owned)
{
	char path[PATH_MAX];
	int fd;

	if (pathf(path, sizeof(path), "%s/%s", dir, name) == -1 ||
	    (fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		return -1;
	if ((len > 0 && write(fd, text, len) != (ssize_t)len) ||
	    (owned && fchown(fd, SANDBOX_UID, SANDBOX_GID) == -1)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A builder past its deadline is killed; the reaper says it failed. */
static void
build_deadline(void *arg)
{
	struct build *b = arg;

	b->timer = 0;
	if (b->pid > 0)
		kill(b->pid, SIGKILL);
}

/*
 * After a seed: the entry its key lacks, built beside the call, unless
 * it is being built, failed lately, or TFINIT_BUILDS are under way.
 */
void
tfinit_build(const struct as_config *c, const json_t *init,
    const json_t *providers)
{
	const char *key, *lock;
	char dir[PATH_MAX], work[PATH_MAX], name[16 + SHA256_HEX_LEN];
	struct build *b = NULL;
	size_t i;
	int fd = -1;

	conf = c;
	key = json_string_value(json_object_get(init, "key"));
	lock = json_string_value(json_object_get(init, "lock"));
	if (key == NULL || json_is_true(json_object_get(init, "cached")) ||
	    !sha256_hex_ok(key) || recently_failed(key))
		return;
	for (i = 0; i < TFINIT_BUILDS; i++) {
		if (builds[i].pid > 0 && strcmp(builds[i].key, key) == 0)
			return;
		if (builds[i].pid <= 0 && b == NULL)
			b = &builds[i];
	}
	if (b == NULL)
		return;
	snprintf(name, sizeof(name), ".build-%s", key);
	if (cache_dir(c, dir, sizeof(dir), name) == -1 ||
	    pathf(work, sizeof(work), "%s/work", dir) == -1)
		return;
	(void)rm_tree(dir);
	if (mkdir(dir, 0700) == -1 || mkdir(work, 0700) == -1 ||
	    chown(work, SANDBOX_UID, SANDBOX_GID) == -1 ||
	    (lock != NULL && (fd = file_make(work, ".terraform.lock.hcl",
	    lock, strlen(lock), 1)) == -1) ||
	    (lock != NULL && close(fd) == -1) ||
	    (b->log = file_make(dir, "stderr", NULL, 0, 0)) == -1) {
		log_warn("terraform init cache: %s", dir);
		(void)rm_tree(dir);
		return;
	}
	if ((b->pid = fork()) == -1) {
		log_warn("terraform init cache: fork");
		close(b->log);
		(void)rm_tree(dir);
		return;
	}
	if (b->pid == 0)
		bwrap_terraform(c, work, providers, build_script, -1, -1,
		    b->log);
	strlcpy(b->key, key, sizeof(b->key));
	b->timer = ev_timer(c->runnerd.timeout * 1000, build_deadline, b);
	log_debug("terraform init cache: building %.12s", key);
}

struct install_job {
	const char	*from;		/* the builder's work */
	const char	*to;		/* the entry to make */
};

static json_t *
install_child(void *arg)
{
	struct install_job *j = arg;
	int src, dst = -1, ok = 0;

	if (mkdir(j->to, 0755) == -1 ||
	    (dst = open_dir_at(AT_FDCWD, j->to)) == -1)
		return json_pack("{s:b}", "ok", 0);
	/* No .terraform: the lock file names no provider. */
	if ((src = open_dir_at(AT_FDCWD, j->from)) == -1)
		ok = errno == ENOENT;
	else {
		ok = tree_copy_init(src, dst, 0, 0, 0) == 0;
		close(src);
	}
	close(dst);
	return json_pack("{s:b}", "ok", ok);
}

static int
entry_cmp(const void *a, const void *b)
{
	const struct stat *x = a, *y = b;

	return x->st_mtime < y->st_mtime ? 1 : x->st_mtime > y->st_mtime ?
	    -1 : 0;
}

/* Past TFINIT_ENTRIES, the oldest entries go. */
static void
cache_prune(void)
{
	struct { struct stat st; char name[SHA256_HEX_LEN + 1]; }
	    e[TFINIT_ENTRIES * 2];
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *de;
	size_t n = 0, i;
	DIR *d;

	if (tfinit_dir(conf, dir, sizeof(dir)) == -1 ||
	    (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL && n < sizeof(e) / sizeof(e[0]))
		if (sha256_hex_ok(de->d_name) && pathf(path, sizeof(path),
		    "%s/%s", dir, de->d_name) == 0 &&
		    lstat(path, &e[n].st) == 0) {
			strlcpy(e[n].name, de->d_name, sizeof(e[n].name));
			n++;
		}
	closedir(d);
	if (n <= TFINIT_ENTRIES)
		return;
	qsort(e, n, sizeof(e[0]), entry_cmp);
	for (i = TFINIT_ENTRIES; i < n; i++)
		if (pathf(path, sizeof(path), "%s/%s", dir, e[i].name) == 0)
			(void)rm_tree(path);
}

static void
build_log(struct build *b, const char *what)
{
	char text[512], *line;
	ssize_t n;

	n = pread(b->log, text, sizeof(text) - 1, 0);
	text[n > 0 ? n : 0] = '\0';
	/* Its first line that says something: terraform's start blank. */
	line = text + strspn(text, " \n");
	line[strcspn(line, "\n")] = '\0';
	log_warnx("terraform init cache: %.12s %s%s%s", b->key, what,
	    *line != '\0' ? ": " : "", line);
}

/* The entry a builder made, taken in; 0 when pid is no builder. */
int
tfinit_reaped(pid_t pid, int status)
{
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	char dir[PATH_MAX], from[PATH_MAX], tmp[PATH_MAX], to[PATH_MAX];
	char name[16 + SHA256_HEX_LEN], why[256], top[PATH_MAX];
	struct install_job job;
	struct build *b = NULL;
	json_t *r;
	size_t i;

	for (i = 0; i < TFINIT_BUILDS; i++)
		if (builds[i].pid == pid)
			b = &builds[i];
	if (b == NULL)
		return 0;
	b->pid = 0;
	if (b->timer != 0)
		ev_timer_cancel(b->timer);
	b->timer = 0;
	snprintf(name, sizeof(name), ".build-%s", b->key);
	if (tfinit_dir(conf, top, sizeof(top)) == -1 ||
	    cache_dir(conf, dir, sizeof(dir), name) == -1 ||
	    pathf(from, sizeof(from), "%s/work/.terraform", dir) == -1 ||
	    pathf(tmp, sizeof(tmp), "%s/entry", dir) == -1 ||
	    cache_dir(conf, to, sizeof(to), b->key) == -1)
		goto fail;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		build_log(b, "not built");
		goto fail;
	}
	job.from = from;
	job.to = tmp;
	paths.rw[0] = top;
	r = confined_run(conf, &paths, install_child, &job, why, sizeof(why));
	if (r == NULL || !json_is_true(json_object_get(r, "ok"))) {
		json_decref(r);
		build_log(b, "made what the cache does not take");
		goto fail;
	}
	json_decref(r);
	if (rename(tmp, to) == -1 && errno != EEXIST && errno != ENOTEMPTY) {
		log_warn("terraform init cache: %s", to);
		goto fail;
	}
	log_debug("terraform init cache: %.12s built", b->key);
	close(b->log);
	(void)rm_tree(dir);
	cache_prune();
	return 1;
fail:
	note_failed(b->key);
	close(b->log);
	(void)rm_tree(dir);
	return 1;
}

/* At the launcher's start: the cache's directory, no build half done. */
void
tfinit_init(const struct as_config *c)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	conf = c;
	if (tfinit_dir(c, dir, sizeof(dir)) == -1 ||
	    (mkdir(dir, 0700) == -1 && errno != EEXIST))
		fatal("mkdir %s", dir);
	if ((d = opendir(dir)) == NULL)
		fatal("opendir %s", dir);
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, ".build-", 7) == 0 &&
		    pathf(path, sizeof(path), "%s/%s", dir, e->d_name) == 0)
			(void)rm_tree(path);
	closedir(d);
}

/* At the launcher's end: no builder outlives it. */
void
tfinit_shutdown(void)
{
	size_t i;

	for (i = 0; i < TFINIT_BUILDS; i++)
		if (builds[i].pid > 0) {
			kill(builds[i].pid, SIGKILL);
			(void)waitpid(builds[i].pid, NULL, 0);
			builds[i].pid = 0;
			close(builds[i].log);
		}
}
