/* SPDX-License-Identifier: ISC */
/*
 * Terraform's lasting pieces, on the launcher's side (or the claim
 * keeper's, kube/claim.c): the working directory copied into a call's
 * workspace, the state kept between calls in runnerd's state directory
 * (on the claim with the kubernetes backend), and saved plans stored
 * under their SHA-256.  The sandbox sees copies only, never a host
 * path, and a plan is loaded only if its bytes still have the digest it
 * is asked by.
 *
 * Request keys (all optional): "workdir" (host directory to snapshot
 * and copy in), "state" (runnerd's directory for that working dir),
 * "plan_load" (digest of a saved plan, copied to the bundle's PLAN_DIR,
 * with the module snapshot it was made from in work), "plan_save" (a
 * workspace file to save as a plan after a clean exit) and
 * "keep_state" (copy terraform.tfstate back, also after a failure: what
 * terraform did is never forgotten), and with plan_save "plans_kept_for" (seconds: older
 * saved plans and snapshots of that working directory are removed once
 * the new one is kept), "poolable" (a started sandbox of the
 * terraform pool may run it, launcher/tfpool.c) and "init_cache" (with
 * "providers": .terraform from the init cache, launcher/tfinit.c).
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cjson.h"
#include "io.h"
#include "launcher.h"
#include "output.h"
#include "log.h"
#include "daemon.h"
#include "sandbox.h"
#include "tfstore.h"
#include "treecopy.h"

#define STATE_FILE	"terraform.tfstate"
#define PLAN_FILE	"plan.tfplan"
#define APPLIED_NOTE	"applied.snapshot"
#define CHANGED_MAX	100

/*
 * A regular file for reading, never through a link; a fifo or device
 * that a sandbox left in its place neither blocks nor is read.
 */
int
open_regular(const char *path)
{
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* The files a call asked back, each up to max bytes: {"name": "text"}. */
json_t *
files_collect(const char *work, json_t *names, size_t max)
{
	char path[PATH_MAX], *buf;
	json_t *files, *v;
	size_t i;
	ssize_t n;
	int fd;

	if ((files = json_object()) == NULL || json_array_size(names) == 0 ||
	    (buf = malloc(max)) == NULL)
		return files;
	json_array_foreach(names, i, v) {
		if (pathf(path, sizeof(path), "%s/%s", work,
		    json_string_value(v)) == -1 ||
		    (fd = open_regular(path)) == -1)
			continue;
		if ((n = read(fd, buf, max)) >= 0)
			json_object_set_new(files, json_string_value(v),
			    text_json(buf, n));
		close(fd);
	}
	free(buf);
	return files;
}

/*
 * Copies src to dst (created, never followed), owned by uid:gid, and
 * with sync on disk before it returns (runnerd's state; a workspace is
 * thrown away).  With digest, also the SHA-256 of what was copied.
 */
int
copy_file(const char *src, const char *dst, mode_t mode, uid_t uid,
    gid_t gid, int sync, char digest[SHA256_HEX_LEN + 1])
{
	int in, out, r = -1;

	if ((in = open_regular(src)) == -1)
		return -1;
	if (digest != NULL && (sha256_file_hex(in, digest) == -1 ||
	    lseek(in, 0, SEEK_SET) == -1)) {
		close(in);
		return -1;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    mode);
	if (out == -1) {
		close(in);
		return -1;
	}
	if (copy_fd(in, out) == 0 && fchown(out, uid, gid) == 0 &&
	    (!sync || fsync(out) == 0))
		r = 0;
	close(in);
	if (close(out) == -1)
		r = -1;
	return r;
}

static int
plain_abs_path(const char *p)
{
	return p != NULL && p[0] == '/' && strlen(p) < PATH_MAX - 64 &&
	    strstr(p, "/../") == NULL && strstr(p, "/./") == NULL &&
	    strcmp(p + strlen(p) - (strlen(p) >= 3 ? 3 : 0), "/..") != 0;
}

/*
 * Where terraform's state and saved plans live: on the claim with the
 * kubernetes backend (the Jobs mount it), else runnerd's state_dir.
 */
const char *
workspace_state_root(const struct as_config *c)
{
	if (strcmp(c->runnerd.backend, "kubernetes") == 0 &&
	    c->kubernetes.pvc[0] != '\0')
		return c->kubernetes.pvc_path;
	return c->runnerd.state_dir;
}

/* The keys above have the right shape, and state is runnerd's own. */
int
workspace_request_ok(const struct as_config *c, json_t *req)
{
	const char *state, *v;
	char prefix[PATH_MAX];
	json_t *j;

	if ((j = json_object_get(req, "workdir")) != NULL &&
	    !plain_abs_path(json_string_value(j)))
		return 0;
	if ((j = json_object_get(req, "plan_load")) != NULL &&
	    !sha256_hex_ok(json_string_value(j)))
		return 0;
	if ((j = json_object_get(req, "snapshot")) != NULL &&
	    !sha256_hex_ok(json_string_value(j)))
		return 0;
	if ((j = json_object_get(req, "plan_save")) != NULL &&
	    !workspace_name_ok(json_string_value(j)))
		return 0;
	if ((j = json_object_get(req, "keep_state")) != NULL &&
	    !json_is_boolean(j))
		return 0;
	if ((j = json_object_get(req, "poolable")) != NULL &&
	    !json_is_boolean(j))
		return 0;
	if ((j = json_object_get(req, "init_cache")) != NULL &&
	    !json_is_boolean(j))
		return 0;
	if ((j = json_object_get(req, "plans_kept_for")) != NULL &&
	    (!json_is_integer(j) || json_integer_value(j) < 60))
		return 0;
	state = json_string_value(json_object_get(req, "state"));
	/* A module is copied only as a snapshot, into runnerd's state. */
	if (state == NULL)
		return json_object_get(req, "state") == NULL &&
		    json_object_get(req, "workdir") == NULL &&
		    json_object_get(req, "plan_load") == NULL &&
		    json_object_get(req, "plan_save") == NULL &&
		    !json_is_true(json_object_get(req, "keep_state"));
	if (pathf(prefix, sizeof(prefix), "%s/terraform/",
	    workspace_state_root(c)) == -1 ||
	    strncmp(state, prefix, strlen(prefix)) != 0)
		return 0;
	v = state + strlen(prefix);
	return workspace_name_ok(v);
}

int
mkdir_owned(const char *path)
{
	return mkdir(path, 0700) == -1 && errno != EEXIST ? -1 : 0;
}

static int
open_dir(const char *path)
{
	return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* A small file of runnerd's, dir/name, replaced whole. */
static int
note_write(const char *dir, const char *name, const char *text)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	size_t len = strlen(text);
	int fd, r = -1;

	if (pathf(tmp, sizeof(tmp), "%s/.note", dir) == -1 ||
	    pathf(path, sizeof(path), "%s/%s", dir, name) == -1)
		return -1;
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1)
		return -1;
	if (write(fd, text, len) == (ssize_t)len && fsync(fd) == 0)
		r = 0;
	if (close(fd) == -1)
		r = -1;
	if (r == 0 && rename(tmp, path) == -1)
		r = -1;
	if (r == -1)
		(void)unlink(tmp);
	return r;
}

static int
fail_errno(char *why, size_t whylen, const char *what)
{
	snprintf(why, whylen, "%s: %s", what, strerror(errno));
	return -1;
}

static int
has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && strcmp(s + n - m, suffix) == 0;
}

/* Whether note (a digest, in a file of runnerd's) names digest. */
static int
note_names(int dir, const char *note, const char *digest)
{
	char buf[SHA256_HEX_LEN];
	ssize_t n;
	int fd;

	if ((fd = openat(dir, note, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n == SHA256_HEX_LEN && memcmp(buf, digest, n) == 0;
}

/* Whether a kept plan, or the last apply, was made from snapshot digest. */
static int
snapshot_needed(const char *state, const char *digest)
{
	char plans[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int used = 0;

	if (pathf(plans, sizeof(plans), "%s/plans", state) == -1 ||
	    (d = opendir(state)) == NULL)
		return 1;
	used = note_names(dirfd(d), APPLIED_NOTE, digest);
	closedir(d);
	if (used || (d = opendir(plans)) == NULL)
		return used;
	while (!used && (de = readdir(d)) != NULL)
		used = has_suffix(de->d_name, ".snapshot") &&
		    note_names(dirfd(d), de->d_name, digest);
	closedir(d);
	return used;
}

/* A kept snapshot and its manifest removed, and the blobs only it had. */
static void
snapshot_remove(const char *state, const char *digest)
{
	char path[PATH_MAX];

	if (pathf(path, sizeof(path), "%s/snapshots/%s", state, digest) ==
	    0 && rm_tree(path) == -1)
		log_warn("remove %s", path);
	if (pathf(path, sizeof(path), "%s/snapshots/%s.manifest", state,
	    digest) == 0)
		(void)unlink(path);
	store_gc(state);
}

/*
 * The module as it is now, kept in the state directory under the
 * digest of its files: what the plan is made from, what a person
 * approves, and what the apply runs, whatever happens to the live
 * directory afterwards.  A snapshot already kept is reused.
 */
static int
snapshot_take(const struct as_config *c, int live, const char *state,
    char digest[SHA256_HEX_LEN + 1], struct tf_facts *facts, char *why,
    size_t whylen)
{
	struct tree_copy t = { .uid = 0, .gid = 0, .dmode = 0755,
	    .fmode = 0644, .sync = 1, .why = why, .whylen = whylen };
	char snaps[PATH_MAX], incoming[PATH_MAX], dst[PATH_MAX], *list = NULL;
	char note[PATH_MAX];
	size_t listlen = 0;
	long long added = 0;
	int in, r, kept = 0;

	/* A store at its quota takes nothing more, not even a copy. */
	if (store_room(c, state, why, whylen) == -1)
		return -1;
	if (pathf(snaps, sizeof(snaps), "%s/snapshots", state) == -1 ||
	    mkdir_owned(snaps) == -1 ||
	    pathf(incoming, sizeof(incoming), "%s/.incoming-XXXXXX", snaps) ==
	    -1 || mkdtemp(incoming) == NULL) {
		snprintf(why, whylen, "snapshot: %s", strerror(errno));
		return -1;
	}
	if ((in = open_dir(incoming)) == -1) {
		snprintf(why, whylen, "snapshot: %s", strerror(errno));
		(void)rm_tree(incoming);
		return -1;
	}
	if ((t.manifest = open_memstream(&list, &listlen)) == NULL) {
		snprintf(why, whylen, "snapshot: %s", strerror(errno));
		close(in);
		(void)rm_tree(incoming);
		return -1;
	}
	r = tree_copy(live, in, &t, digest);
	*facts = t.facts;
	close(in);
	if (fclose(t.manifest) != 0 && r == 0)
		r = fail_errno(why, whylen, "snapshot manifest");
	if (r == 0 && pathf(dst, sizeof(dst), "%s/%s", snaps, digest) == 0) {
		if (rename(incoming, dst) == 0) {
			incoming[0] = '\0';
			kept = 1;
		} else if (errno == EEXIST || errno == ENOTEMPTY)
			/* The same files were planned before: refresh its age. */
			(void)utimensat(AT_FDCWD, dst, NULL,
			    AT_SYMLINK_NOFOLLOW);
		else
			r = fail_errno(why, whylen, "snapshot");
	}
	/* Its files once in the store, each a link to its blob. */
	if (r == 0 && kept && store_dedupe(state, dst, list, &added) == -1)
		r = fail_errno(why, whylen, "snapshot store");
	/* The list of its files: what a later plan is compared with. */
	if (r == 0 && pathf(note, sizeof(note), "%s.manifest", digest) == 0 &&
	    note_write(snaps, note, list) == -1)
		r = fail_errno(why, whylen, "snapshot manifest");
	free(list);
	if (incoming[0] != '\0')
		(void)rm_tree(incoming);
	/* What it added may be past a quota: then it is not kept. */
	if (kept && (r == -1 || (added > 0 &&
	    store_room(c, state, why, whylen) == -1))) {
		snapshot_remove(state, digest);
		r = -1;
	}
	return r;
}

/* The sandbox's copy of a kept snapshot, checked against its digest. */
static int
snapshot_seed(const char *state, const char *digest, const char *work,
    char *why, size_t whylen)
{
	struct tree_copy t = { .uid = SANDBOX_UID, .gid = SANDBOX_GID,
	    .dmode = 0755, .fmode = 0644, .store = 1, .why = why,
	    .whylen = whylen };
	char path[PATH_MAX], got[SHA256_HEX_LEN + 1];
	int src, dst, r = -1;

	if (pathf(path, sizeof(path), "%s/snapshots/%s", state, digest) ==
	    -1 || (src = open_dir(path)) == -1) {
		snprintf(why, whylen, "module snapshot %.12s: %s", digest,
		    errno == ENOENT ? "not found" : strerror(errno));
		return -1;
	}
	if ((dst = open_dir(work)) != -1) {
		r = tree_copy(src, dst, &t, got);
		close(dst);
	} else
		snprintf(why, whylen, "workspace: %s", strerror(errno));
	close(src);
	if (r == 0 && strcmp(got, digest) != 0) {
		snprintf(why, whylen, "module snapshot %.12s was modified; "
		    "nothing run", digest);
		r = -1;
	}
	return r;
}

/* The snapshot a saved plan was made from (written by workspace_keep). */
static int
plan_snapshot(const char *state, const char *plan,
    char digest[SHA256_HEX_LEN + 1])
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (pathf(path, sizeof(path), "%s/plans/%s.snapshot", state, plan) ==
	    -1 || (fd = open_regular(path)) == -1)
		return -1;
	n = read(fd, digest, SHA256_HEX_LEN);
	close(fd);
	if (n != SHA256_HEX_LEN)
		return -1;
	digest[SHA256_HEX_LEN] = '\0';
	return sha256_hex_ok(digest) ? 0 : -1;
}

/* The module snapshot snap (none when "") and the state, into work. */
static int
module_seed(const char *state, const char *snap, const char *work,
    char *why, size_t whylen)
{
	char src[PATH_MAX], dst[PATH_MAX];

	if (snap[0] != '\0' &&
	    snapshot_seed(state, snap, work, why, whylen) == -1)
		return -1;
	if (pathf(src, sizeof(src), "%s/" STATE_FILE, state) == -1 ||
	    pathf(dst, sizeof(dst), "%s/" STATE_FILE, work) == -1)
		return -1;
	if (access(src, F_OK) == 0 &&
	    copy_file(src, dst, 0644, SANDBOX_UID, SANDBOX_GID, 0, NULL) ==
	    -1) {
		snprintf(why, whylen, "state: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* A bundle's PLAN_DIR, beside its work/ (launcher/bundle.c). */
int
plan_dir_of(const char *work, char *buf, size_t len)
{
	const char *base;

	if ((base = strrchr(work, '/')) == NULL) {
		errno = EINVAL;
		return -1;
	}
	return pathf(buf, len, "%.*s/" PLAN_DIR, (int)(base - work), work);
}

/*
 * The saved plan whose SHA-256 is load, checked, into plandir: root's,
 * and the sandbox's read-only PLAN_MOUNT, never in its /work.
 */
int
plan_seed(const char *state, const char *load, const char *plandir,
    char *why, size_t whylen)
{
	char src[PATH_MAX], dst[PATH_MAX], digest[SHA256_HEX_LEN + 1];

	if (plandir == NULL) {
		snprintf(why, whylen, "this backend loads no saved plan");
		return -1;
	}
	if (pathf(src, sizeof(src), "%s/plans/%s.tfplan", state, load) == -1 ||
	    pathf(dst, sizeof(dst), "%s/" PLAN_FILE, plandir) == -1)
		return -1;
	if (copy_file(src, dst, 0444, 0, 0, 0, digest) == -1) {
		snprintf(why, whylen, "saved plan %.12s: %s", load,
		    errno == ENOENT ? "not found" : strerror(errno));
		return -1;
	}
	if (strcmp(digest, load) != 0) {
		snprintf(why, whylen, "the saved plan file was modified: its "
		    "SHA-256 is %.12s…, the approval is for %.12s…; nothing "
		    "applied", digest, load);
		return -1;
	}
	return 0;
}

/*
 * Fills work before the sandbox starts: 0, or -1 and why.  A plan
 * snapshots the live directory first and runs from the snapshot; an
 * apply runs from the snapshot its approved plan was made from, and
 * never reads the live directory, with the plan in plandir (NULL: the
 * backend has none).  req gets "snapshot": the digest.
 */
int
workspace_seed(const struct as_config *c, const char *work,
    const char *plandir, json_t *req, char *why, size_t whylen)
{
	char src[PATH_MAX], terraform[PATH_MAX], snap[SHA256_HEX_LEN + 1];
	const char *workdir, *state, *load;
	struct tf_facts facts;
	int live;

	workdir = json_string_value(json_object_get(req, "workdir"));
	state = json_string_value(json_object_get(req, "state"));
	load = json_string_value(json_object_get(req, "plan_load"));
	/* Which snapshot a plan ran from is ours to say, never the asker's. */
	json_object_del(req, "snapshot");
	json_object_del(req, "module_provisioners");
	if (state == NULL)
		return 0;
	if (pathf(terraform, sizeof(terraform), "%s/terraform",
	    workspace_state_root(c)) == -1 || mkdir_owned(terraform) == -1 ||
	    mkdir_owned(state) == -1 ||
	    pathf(src, sizeof(src), "%s/plans", state) == -1 ||
	    mkdir_owned(src) == -1) {
		snprintf(why, whylen, "state directory: %s", strerror(errno));
		return -1;
	}
	if (load != NULL) {
		if (plan_snapshot(state, load, snap) == -1) {
			snprintf(why, whylen, "saved plan %.12s: no module "
			    "snapshot kept with it; plan again", load);
			return -1;
		}
	} else if (workdir != NULL) {
		if ((live = tree_open(workdir)) == -1) {
			snprintf(why, whylen, "%s: %s", workdir,
			    errno == ELOOP || errno == EXDEV ? "goes through "
			    "a symbolic link" : strerror(errno));
			return -1;
		}
		if (snapshot_take(c, live, state, snap, &facts, why,
		    whylen) == -1) {
			close(live);
			return -1;
		}
		close(live);
		/* For the engine to compare with what the plan lists. */
		json_object_set_new(req, "module_provisioners", json_pack(
		    "{s:i, s:s}", "count", facts.provisioners, "first",
		    facts.first));
	} else
		snap[0] = '\0';
	if (module_seed(state, snap, work, why, whylen) == -1)
		return -1;
	if (snap[0] != '\0')
		json_object_set_new(req, "snapshot", json_string(snap));
	return load == NULL ? 0 : plan_seed(state, load, plandir, why,
	    whylen);
}

/*
 * Keeps src in dir by rename, so that a crash leaves the old file or the
 * new one whole; named name, or after its digest when name is NULL.  A
 * file it replaces stays as name.backup.
 */
static int
keep_file(const char *src, const char *dir, const char *name,
    char digest[SHA256_HEX_LEN + 1])
{
	char tmp[PATH_MAX], dst[PATH_MAX], old[PATH_MAX], bak[PATH_MAX];
	int fd;

	if (pathf(tmp, sizeof(tmp), "%s/.incoming", dir) == -1 ||
	    pathf(old, sizeof(old), "%s/.previous", dir) == -1)
		return -1;
	(void)unlink(tmp);
	(void)unlink(old);
	if (copy_file(src, tmp, 0600, 0, 0, 1, digest) == -1 ||
	    (name != NULL ? pathf(dst, sizeof(dst), "%s/%s", dir, name) :
	    pathf(dst, sizeof(dst), "%s/%s.tfplan", dir, digest)) == -1)
		goto fail;
	if (name != NULL && link(dst, old) == 0 &&
	    (pathf(bak, sizeof(bak), "%s.backup", dst) == -1 ||
	    rename(old, bak) == -1))
		goto fail;
	if (rename(tmp, dst) == -1)
		goto fail;
	if ((fd = open_dir(dir)) != -1) {
		(void)fsync(fd);
		close(fd);
	}
	return 0;
fail:
	(void)unlink(tmp);
	(void)unlink(old);
	return -1;
}

/* A saved plan goes with the note of the snapshot it was made from. */
static int
plan_remove(const char *path)
{
	char note[PATH_MAX];
	size_t n = strlen(path) - strlen(".tfplan");

	if (snprintf(note, sizeof(note), "%.*s.snapshot", (int)n, path) <
	    (int)sizeof(note))
		(void)unlink(note);
	return unlink(path);
}

/*
 * What is older than max_age seconds in dir, but for the entries whose
 * name starts with keep, removed: saved plans (each with its snapshot
 * note), or snapshots.  An approval can outlive them only if it lasts
 * longer than runnerd's plan_retention, and then its apply says the
 * plan is not found.
 */
static void
prune(const char *dir, long long max_age, const char *keep)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	time_t cutoff = time(NULL) - max_age;
	DIR *d;
	int r;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    strncmp(de->d_name, keep, strlen(keep)) == 0 ||
		    pathf(path, sizeof(path), "%s/%s", dir, de->d_name) == -1 ||
		    lstat(path, &st) == -1 || st.st_mtime >= cutoff)
			continue;
		if (S_ISDIR(st.st_mode))
			r = rm_tree(path);
		else if (S_ISREG(st.st_mode) && has_suffix(de->d_name,
		    ".tfplan"))
			r = plan_remove(path);
		else if (S_ISREG(st.st_mode) && has_suffix(de->d_name,
		    ".manifest"))
			r = unlink(path);
		else
			continue;
		if (r == -1)
			log_warn("prune %s", path);
	}
	closedir(d);
}

/* A note of runnerd's, whole, NUL-terminated; at most 16 MiB. */
static char *
read_note(int fd, ssize_t *len)
{
	struct stat st;
	char *buf;

	if (fstat(fd, &st) == -1 || st.st_size > 16L * 1024 * 1024 ||
	    (buf = malloc((size_t)st.st_size + 1)) == NULL)
		return NULL;
	if ((*len = read_full(fd, buf, (size_t)st.st_size)) != st.st_size) {
		free(buf);
		return NULL;
	}
	buf[*len] = '\0';
	return buf;
}

struct mentry {
	const char	*path;
	const char	*sha;
};

static int
cmp_mentry(const void *a, const void *b)
{
	return strcmp(((const struct mentry *)a)->path,
	    ((const struct mentry *)b)->path);
}

/*
 * The files of a snapshot's manifest ("f PATH SIZE SHA256" lines; a
 * name holds no control character, so a line is one entry), sorted by
 * path; buf keeps the text they point into.
 */
struct mlist {
	struct mentry	*e;
	size_t		 n;
};

static int
mlist_add(const struct mfile *f, void *arg)
{
	struct mlist *l = arg;
	struct mentry *ne;

	if ((ne = reallocarray(l->e, l->n + 1, sizeof(*ne))) == NULL)
		return -1;
	l->e = ne;
	l->e[l->n].path = f->path;
	l->e[l->n++].sha = f->sha;
	return 0;
}

static struct mentry *
manifest_load(const char *snaps, const char *digest, char **buf, size_t *n)
{
	struct mlist l = { NULL, 0 };
	char path[PATH_MAX];
	ssize_t len = 0;
	int fd;

	*n = 0;
	*buf = NULL;
	if (pathf(path, sizeof(path), "%s/%s.manifest", snaps, digest) == -1 ||
	    (fd = open_regular(path)) == -1)
		return NULL;
	*buf = read_note(fd, &len);
	close(fd);
	if (*buf == NULL)
		return NULL;
	(void)manifest_each(*buf, mlist_add, &l);
	if (l.e != NULL)
		qsort(l.e, l.n, sizeof(*l.e), cmp_mentry);
	*n = l.n;
	return l.e;
}

static int
change_add(json_t *list, const char *path, const char *change)
{
	return json_array_size(list) < CHANGED_MAX ? json_array_append_new(list,
	    json_pack("{s:s, s:s}", "path", path, "change", change)) : 0;
}

/*
 * The files added, removed or changed since the snapshot last applied to
 * this working directory; NULL when none was applied yet (or its
 * manifest is gone).  At most CHANGED_MAX are listed.
 */
static json_t *
files_changed(const char *state, const char *snap)
{
	char snaps[PATH_MAX], path[PATH_MAX], applied[SHA256_HEX_LEN + 1];
	char *obuf = NULL, *nbuf = NULL;
	struct mentry *o = NULL, *n = NULL;
	size_t no, nn, i = 0, j = 0;
	json_t *list = NULL;
	int c, fd;
	ssize_t len;

	if (pathf(snaps, sizeof(snaps), "%s/snapshots", state) == -1 ||
	    pathf(path, sizeof(path), "%s/" APPLIED_NOTE, state) == -1 ||
	    (fd = open_regular(path)) == -1)
		return NULL;
	len = read(fd, applied, SHA256_HEX_LEN);
	close(fd);
	if (len != SHA256_HEX_LEN)
		return NULL;
	applied[SHA256_HEX_LEN] = '\0';
	if (!sha256_hex_ok(applied) ||
	    (o = manifest_load(snaps, applied, &obuf, &no)) == NULL ||
	    (n = manifest_load(snaps, snap, &nbuf, &nn)) == NULL ||
	    (list = json_array()) == NULL)
		goto done;
	while (i < no || j < nn) {
		c = i == no ? 1 : j == nn ? -1 : strcmp(o[i].path, n[j].path);
		if (c < 0)
			change_add(list, o[i++].path, "removed");
		else if (c > 0)
			change_add(list, n[j++].path, "added");
		else {
			if (strcmp(o[i].sha, n[j].sha) != 0)
				change_add(list, n[j].path, "changed");
			i++;
			j++;
		}
	}
done:
	free(o);
	free(n);
	free(obuf);
	free(nbuf);
	return list;
}

/*
 * Whether the bundle's plan file beside work still has the digest load
 * it was checked by: nothing in the sandbox can change it (a read-only
 * mount of root's), and this says so if something did.
 */
static int
plan_unchanged(const char *work, const char *load)
{
	char dir[PATH_MAX], path[PATH_MAX], digest[SHA256_HEX_LEN + 1];
	int fd, r;

	if (plan_dir_of(work, dir, sizeof(dir)) == -1 ||
	    pathf(path, sizeof(path), "%s/" PLAN_FILE, dir) == -1 ||
	    (fd = open_regular(path)) == -1)
		return 0;
	r = sha256_file_hex(fd, digest) == 0 && strcmp(digest, load) == 0;
	close(fd);
	return r;
}

/*
 * After the sandbox: the state terraform wrote is kept whatever the
 * exit (resources an apply made before it failed stay known, and r
 * says so); after a clean exit the plan too, with a note of the module
 * snapshot it was made from.
 */
void
workspace_keep(const char *work, json_t *req, json_t *r, int clean)
{
	char src[PATH_MAX], plans[PATH_MAX], digest[SHA256_HEX_LEN + 1];
	char name[PATH_MAX];
	const char *state, *save, *snap, *load;
	json_t *max_age, *changed;

	state = json_string_value(json_object_get(req, "state"));
	load = json_string_value(json_object_get(req, "plan_load"));
	save = json_string_value(json_object_get(req, "plan_save"));
	snap = json_string_value(json_object_get(req, "snapshot"));
	if (state == NULL)
		return;
	if (snap != NULL)
		json_object_set_new(r, "snapshot_digest", json_string(snap));
	if (json_is_object(json_object_get(req, "module_provisioners")))
		json_object_set(r, "module_provisioners", json_object_get(req,
		    "module_provisioners"));
	if (json_is_true(json_object_get(req, "keep_state")) &&
	    pathf(src, sizeof(src), "%s/" STATE_FILE, work) == 0 &&
	    access(src, F_OK) == 0) {
		if (keep_file(src, state, STATE_FILE, digest) == -1) {
			log_warn("keep %s/" STATE_FILE, state);
			json_object_set_new(r, "error",
			    json_string("the new state could not be saved"));
		} else if (!clean)
			json_object_set_new(r, "state_kept", json_true());
	}
	if (load != NULL && !plan_unchanged(work, load)) {
		json_object_set_new(r, "error", json_sprintf("the approved "
		    "plan %.12s… was not the plan file at the apply's end: "
		    "what ran may not be what was approved", load));
		return;
	}
	/* What the next plan's changed files are counted from. */
	if (clean && save == NULL && snap != NULL && load != NULL &&
	    note_write(state, APPLIED_NOTE, snap) == -1)
		log_warn("note %s/" APPLIED_NOTE, state);
	/* A failed plan's snapshot goes at once, unless another needs it. */
	if (save != NULL && !clean && snap != NULL &&
	    !snapshot_needed(state, snap))
		snapshot_remove(state, snap);
	if (save == NULL || !clean)
		return;
	if (snap != NULL && (changed = files_changed(state, snap)) != NULL)
		json_object_set_new(r, "files_changed", changed);
	if (pathf(src, sizeof(src), "%s/%s", work, save) == -1 ||
	    pathf(plans, sizeof(plans), "%s/plans", state) == -1 ||
	    keep_file(src, plans, NULL, digest) == -1 ||
	    (snap != NULL && (pathf(name, sizeof(name), "%s.snapshot",
	    digest) == -1 || note_write(plans, name, snap) == -1))) {
		log_warn("save plan %s", save);
		json_object_set_new(r, "error",
		    json_string("the plan could not be saved"));
		return;
	}
	json_object_set_new(r, "plan_digest", json_string(digest));
	if ((max_age = json_object_get(req, "plans_kept_for")) == NULL)
		return;
	prune(plans, json_integer_value(max_age), digest);
	if (snap != NULL && pathf(src, sizeof(src), "%s/snapshots", state) ==
	    0) {
		prune(src, json_integer_value(max_age), snap);
		store_gc(state);
	}
}
