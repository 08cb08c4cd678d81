/*
 * Terraform's lasting pieces, on the launcher's side (or the claim
 * keeper's, claim.c): the working directory copied into a call's
 * workspace, the state kept between calls in runnerd's state directory
 * (on the claim with the kubernetes backend), and saved plans stored
 * under their SHA-256.  The sandbox sees copies only, never a host
 * path, and a plan is loaded only if its bytes still have the digest it
 * is asked by.
 *
 * Request keys (all optional): "workdir" (host directory to copy in),
 * "state" (runnerd's directory for that working dir), "plan_load"
 * (digest of a saved plan, copied in as plan.tfplan), "plan_save" (a
 * workspace file to save as a plan after a clean exit) and "keep_state"
 * (copy terraform.tfstate back after a clean exit), and with plan_save
 * "plans_kept_for" (seconds: older saved plans of that working directory
 * are removed once the new one is kept).
 */
#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cjson.h"
#include "launcher.h"
#include "log.h"

#define SEED_MAX_BYTES	(64L * 1024 * 1024)
#define SEED_MAX_FILES	10000
#define SEED_MAX_DEPTH	16
#define STATE_FILE	"terraform.tfstate"
#define PLAN_FILE	"plan.tfplan"

struct seed {
	long		 bytes;
	int		 files;
	char		*why;
	size_t		 whylen;
};

static int
seed_fail(struct seed *sd, const char *fmt, const char *name)
{
	snprintf(sd->why, sd->whylen, fmt, name);
	return -1;
}

/*
 * A regular file for reading, never through a link; a fifo or device
 * that a sandbox left in its place neither blocks nor is read.
 */
static int
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
 * Copies src to dst (created, never followed), owned by uid:gid.  With
 * digest, also the SHA-256 of what was copied.
 */
static int
copy_file(const char *src, const char *dst, mode_t mode, uid_t uid,
    gid_t gid, char digest[SHA256_HEX_LEN + 1])
{
	char buf[65536];
	ssize_t n;
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
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			goto done;
	if (n == 0 && fchown(out, uid, gid) == 0 && fsync(out) == 0)
		r = 0;
done:
	close(in);
	if (close(out) == -1)
		r = -1;
	return r;
}

/* Terraform's own caches and state never come from the working dir. */
static int
seed_skipped(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    strcmp(name, ".terraform") == 0 ||
	    strncmp(name, STATE_FILE, strlen(STATE_FILE)) == 0;
}

static int
seed_tree(const char *src, const char *dst, int depth, struct seed *sd)
{
	char s[PATH_MAX], d[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *dir;
	int r = 0;

	if (depth > SEED_MAX_DEPTH)
		return seed_fail(sd, "%s: too deep", src);
	if ((dir = opendir(src)) == NULL)
		return seed_fail(sd, "%s: cannot read", src);
	while (r == 0 && (de = readdir(dir)) != NULL) {
		if (seed_skipped(de->d_name))
			continue;
		if (pathf(s, sizeof(s), "%s/%s", src, de->d_name) == -1 ||
		    pathf(d, sizeof(d), "%s/%s", dst, de->d_name) == -1 ||
		    lstat(s, &st) == -1) {
			r = seed_fail(sd, "%s: cannot read", de->d_name);
			break;
		}
		if (++sd->files > SEED_MAX_FILES)
			r = seed_fail(sd, "%s: too many files", src);
		else if (S_ISLNK(st.st_mode))
			r = seed_fail(sd, "%s: symbolic links are refused", s);
		else if (S_ISDIR(st.st_mode)) {
			if (mkdir(d, 0755) == -1 ||
			    chown(d, SANDBOX_UID, SANDBOX_GID) == -1)
				r = seed_fail(sd, "%s: cannot copy", s);
			else
				r = seed_tree(s, d, depth + 1, sd);
		} else if (S_ISREG(st.st_mode)) {
			if ((sd->bytes += st.st_size) > SEED_MAX_BYTES)
				r = seed_fail(sd, "%s: working directory too "
				    "large", src);
			else if (copy_file(s, d, 0644, SANDBOX_UID,
			    SANDBOX_GID, NULL) == -1)
				r = seed_fail(sd, "%s: cannot copy", s);
		}
		/* Devices, fifos and sockets are not module files: left out. */
	}
	closedir(dir);
	return r;
}

static int
hex_digest_ok(const char *s)
{
	size_t i;

	if (s == NULL || strlen(s) != SHA256_HEX_LEN)
		return 0;
	for (i = 0; i < SHA256_HEX_LEN; i++)
		if (!isxdigit((unsigned char)s[i]) ||
		    isupper((unsigned char)s[i]))
			return 0;
	return 1;
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
	    !hex_digest_ok(json_string_value(j)))
		return 0;
	if ((j = json_object_get(req, "plan_save")) != NULL &&
	    !workspace_name_ok(json_string_value(j)))
		return 0;
	if ((j = json_object_get(req, "keep_state")) != NULL &&
	    !json_is_boolean(j))
		return 0;
	if ((j = json_object_get(req, "plans_kept_for")) != NULL &&
	    (!json_is_integer(j) || json_integer_value(j) < 60))
		return 0;
	state = json_string_value(json_object_get(req, "state"));
	if (state == NULL)
		return json_object_get(req, "state") == NULL &&
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

static int
mkdir_owned(const char *path)
{
	return mkdir(path, 0700) == -1 && errno != EEXIST ? -1 : 0;
}

/* Fills work before the sandbox starts: 0, or -1 and why. */
int
workspace_seed(const struct as_config *c, const char *work, json_t *req,
    char *why, size_t whylen)
{
	char src[PATH_MAX], dst[PATH_MAX], terraform[PATH_MAX];
	char digest[SHA256_HEX_LEN + 1];
	const char *workdir, *state, *load;
	struct seed sd = { 0, 0, why, whylen };

	workdir = json_string_value(json_object_get(req, "workdir"));
	state = json_string_value(json_object_get(req, "state"));
	load = json_string_value(json_object_get(req, "plan_load"));
	if (workdir != NULL && seed_tree(workdir, work, 0, &sd) == -1)
		return -1;
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
	if (pathf(src, sizeof(src), "%s/" STATE_FILE, state) == -1 ||
	    pathf(dst, sizeof(dst), "%s/" STATE_FILE, work) == -1)
		return -1;
	if (access(src, F_OK) == 0 &&
	    copy_file(src, dst, 0644, SANDBOX_UID, SANDBOX_GID, NULL) == -1) {
		snprintf(why, whylen, "state: %s", strerror(errno));
		return -1;
	}
	if (load == NULL)
		return 0;
	if (pathf(src, sizeof(src), "%s/plans/%s.tfplan", state, load) == -1 ||
	    pathf(dst, sizeof(dst), "%s/" PLAN_FILE, work) == -1)
		return -1;
	if (copy_file(src, dst, 0444, SANDBOX_UID, SANDBOX_GID, digest) ==
	    -1) {
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
 * Keeps src in dir by rename, so that a crash leaves the old file or the
 * new one whole; named name, or after its digest when name is NULL.
 */
static int
keep_file(const char *src, const char *dir, const char *name,
    char digest[SHA256_HEX_LEN + 1])
{
	char tmp[PATH_MAX], dst[PATH_MAX];

	if (pathf(tmp, sizeof(tmp), "%s/.incoming", dir) == -1)
		return -1;
	(void)unlink(tmp);
	if (copy_file(src, tmp, 0600, 0, 0, digest) == -1 ||
	    (name != NULL ? pathf(dst, sizeof(dst), "%s/%s", dir, name) :
	    pathf(dst, sizeof(dst), "%s/%s.tfplan", dir, digest)) == -1 ||
	    rename(tmp, dst) == -1) {
		(void)unlink(tmp);
		return -1;
	}
	return 0;
}

/*
 * Saved plans older than max_age seconds, but for keep, removed: an
 * approval can outlive them only if it lasts longer than runnerd's
 * plan_retention, and then its apply says the plan is not found.
 */
static void
plans_prune(const char *plans, long long max_age, const char *keep)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	time_t cutoff = time(NULL) - max_age;
	DIR *dir;

	if ((dir = opendir(plans)) == NULL)
		return;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, keep) == 0 ||
		    pathf(path, sizeof(path), "%s/%s", plans,
		    de->d_name) == -1 || lstat(path, &st) == -1 ||
		    !S_ISREG(st.st_mode) || st.st_mtime >= cutoff)
			continue;
		if (unlink(path) == -1)
			log_warn("prune %s", path);
	}
	closedir(dir);
}

/* After a clean exit: keep the state and the plan, note it in r. */
void
workspace_keep(const char *work, json_t *req, json_t *r)
{
	char src[PATH_MAX], plans[PATH_MAX], digest[SHA256_HEX_LEN + 1];
	const char *state, *save;
	json_t *max_age;

	state = json_string_value(json_object_get(req, "state"));
	save = json_string_value(json_object_get(req, "plan_save"));
	if (state == NULL)
		return;
	if (json_is_true(json_object_get(req, "keep_state")) &&
	    pathf(src, sizeof(src), "%s/" STATE_FILE, work) == 0 &&
	    access(src, F_OK) == 0 &&
	    keep_file(src, state, STATE_FILE, digest) == -1) {
		log_warn("keep %s/" STATE_FILE, state);
		json_object_set_new(r, "error",
		    json_string("the new state could not be saved"));
	}
	if (save == NULL)
		return;
	if (pathf(src, sizeof(src), "%s/%s", work, save) == -1 ||
	    pathf(plans, sizeof(plans), "%s/plans", state) == -1 ||
	    keep_file(src, plans, NULL, digest) == -1) {
		log_warn("save plan %s", save);
		json_object_set_new(r, "error",
		    json_string("the plan could not be saved"));
		return;
	}
	json_object_set_new(r, "plan_digest", json_string(digest));
	if ((max_age = json_object_get(req, "plans_kept_for")) != NULL &&
	    pathf(src, sizeof(src), "%s.tfplan", digest) == 0)
		plans_prune(plans, json_integer_value(max_age), src);
}
