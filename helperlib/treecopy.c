/* SPDX-License-Identifier: ISC */
/*
 * A module tree copied by a process with privilege, which must never be
 * led out of the tree by what the tree's owner (the agent) does while
 * it is copied.  Every step works on descriptors: a directory is opened
 * by one name relative to its parent's descriptor, through openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS where
 * the kernel has it (openat2(2)), else with O_NOFOLLOW; what was opened
 * is checked with fstat against what was listed, so an entry swapped
 * in between is refused, not followed.  Links, hard links, fifos,
 * devices and sockets are refused by name, and so are the places from
 * which Terraform would take providers or settings of the module's
 * choosing, names that begin with a dot, and module calls of other
 * than local sources (tfsource.c).
 *
 * The copy can also compute the tree's digest: SHA-256 over one line
 * per entry in name order, "d PATH" for a directory and "f PATH SIZE
 * SHA256" for a file, so that the same files give the same digest;
 * those lines, kept, are the tree's manifest.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cjson.h"
#include "io.h"
#include "launcher.h"
#include "platform.h"
#include "tfsource.h"
#include "treecopy.h"

#define TREE_MAX_BYTES	(64L * 1024 * 1024)
#define TREE_MAX_FILES	10000
#define TREE_MAX_DEPTH	16
#define TREE_RM_DEPTH	256

static int
tree_fail(struct tree_copy *t, const char *fmt, const char *path)
{
	snprintf(t->why, t->whylen, fmt, path);
	return -1;
}

/*
 * The directory at an absolute path, with no link anywhere on the way
 * (approvald resolved it so): the descriptor every walk starts from.
 * One openat2 where the kernel has it, so that a process confined by
 * Landlock (the claim keeper) opens nothing but the directory itself;
 * else one O_NOFOLLOW component at a time.
 */
int
tree_open(const char *path)
{
	char buf[PATH_MAX], *p, *next;
	int fd, dfd;

	if (path[0] != '/' || strlcpy(buf, path, sizeof(buf)) >= sizeof(buf)) {
		errno = EINVAL;
		return -1;
	}
	fd = plat_open_nolinks(path, O_RDONLY | O_DIRECTORY);
	if (fd != -1 || errno != ENOSYS)
		return fd;
	if ((fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	for (p = buf + 1; p != NULL && *p != '\0'; p = next) {
		if ((next = strchr(p, '/')) != NULL)
			*next++ = '\0';
		if (*p == '\0')
			continue;
		dfd = plat_open_beneath(fd, p, O_RDONLY | O_DIRECTORY);
		close(fd);
		if (dfd == -1)
			return -1;
		fd = dfd;
	}
	return fd;
}

/* Terraform takes providers and settings from these: never copied. */
static const char *
refused_name(const char *name)
{
	static const char *const names[] = {
		".terraform", "terraform.d", ".terraformrc", "terraform.rc",
		NULL
	};
	size_t i;

	for (i = 0; names[i] != NULL; i++)
		if (strcmp(name, names[i]) == 0)
			return names[i];
	return NULL;
}

/*
 * Names with a leading dot are where programs look for their
 * configuration (.gitconfig, .git, .config, .netrc, .ssh, .gnupg,
 * .npmrc, .aws, .kube...): none is copied, but the lock file, which
 * terraform reads as what it is, the providers' versions and digests.
 */
static int
dot_refused(const char *name)
{
	return name[0] == '.' && strcmp(name, ".terraform.lock.hcl") != 0;
}

/* runnerd keeps the state: the module's own is left out. */
static int
skipped_name(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    strncmp(name, "terraform.tfstate", 17) == 0 ||
	    strcmp(name, ".terraform.tfstate.lock.info") == 0;
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in a directory, sorted; NULL on error. */
static char **
list_names(int dirfd, size_t *n, struct tree_copy *t, const char *rel)
{
	struct dirent *de;
	char **names = NULL, **nn;
	DIR *d;
	int fd;

	*n = 0;
	if ((fd = dup(dirfd)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		tree_fail(t, "%s: cannot read", rel);
		return NULL;
	}
	while ((de = readdir(d)) != NULL) {
		if (skipped_name(de->d_name))
			continue;
		if (++t->files > TREE_MAX_FILES) {
			tree_fail(t, "%s: too many files", rel);
			goto fail;
		}
		if ((nn = reallocarray(names, *n + 1, sizeof(*names))) == NULL)
			goto fail;
		names = nn;
		if ((names[*n] = strdup(de->d_name)) == NULL)
			goto fail;
		(*n)++;
	}
	closedir(d);
	if (names == NULL)
		names = calloc(1, sizeof(*names));
	qsort(names, *n, sizeof(*names), cmp_name);
	return names;
fail:
	closedir(d);
	while (*n > 0)
		free(names[--*n]);
	free(names);
	if (t->why[0] == '\0')
		tree_fail(t, "%s: out of memory", rel);
	return NULL;
}

/* One line of the tree's digest, and of its manifest when kept. */
static void
digest_add(struct tree_copy *t, const char *line)
{
	if (t->md != NULL)
		EVP_DigestUpdate(t->md, line, strlen(line));
	if (t->manifest != NULL)
		fputs(line, t->manifest);
}

/*
 * Copies the open file in, of size bytes, to name in dst; its SHA-256
 * in sha.  It is read once, so that the bytes hashed, read for module
 * sources (tfsource.c) and written are the same whatever its owner
 * does meanwhile; one that grew is refused.
 */
static int
copy_open_file(int in, off_t size, int dst, const char *name,
    const char *rel, struct tree_copy *t, char sha[SHA256_HEX_LEN + 1])
{
	char *buf, extra;
	size_t len = 0;
	ssize_t n;
	int out, r = -1;

	if ((buf = malloc((size_t)size + 1)) == NULL)
		return tree_fail(t, "%s: out of memory", rel);
	while (len < (size_t)size && (n = read(in, buf + len,
	    (size_t)size - len)) > 0)
		len += (size_t)n;
	if (len != (size_t)size || read(in, &extra, 1) != 0) {
		free(buf);
		return tree_fail(t, "%s: changed while it was copied: "
		    "refused", rel);
	}
	if (!tf_sources_ok(rel, buf, len, &t->facts, t->why, t->whylen)) {
		free(buf);
		return -1;
	}
	sha256_hex(buf, len, sha);
	out = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, t->fmode);
	if (out != -1) {
		if (write_full(out, buf, len) == 0 &&
		    fchown(out, t->uid, t->gid) == 0 &&
		    (!t->sync || fsync(out) == 0))
			r = 0;
		if (close(out) == -1)
			r = -1;
	}
	free(buf);
	return r == 0 ? 0 : tree_fail(t, "%s: cannot copy", rel);
}

static int copy_dir(int, int, const char *, int, struct tree_copy *);

/* One entry of src: listed as st, opened by name, checked it is st. */
static int
copy_entry(int src, int dst, const char *name, const char *rel, int depth,
    struct tree_copy *t)
{
	char sha[SHA256_HEX_LEN + 1], line[PATH_MAX + 128];
	struct stat st, ost;
	const char *c;
	int fd, sub, r;

	/* A name is one line of the manifest and of approvalctl show. */
	for (c = name; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return tree_fail(t, "%s: a name with a control "
			    "character is refused", rel);
	if (refused_name(name) != NULL)
		return tree_fail(t, "%s: Terraform would take providers or "
		    "settings from it; the operator's mirror is used instead, "
		    "so it is refused", rel);
	if (dot_refused(name))
		return tree_fail(t, "%s: a program could read it as its "
		    "configuration (names that begin with a dot are where "
		    "programs look for theirs), so it is refused; only "
		    ".terraform.lock.hcl is copied", rel);
	if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return tree_fail(t, "%s: cannot read", rel);
	if (S_ISLNK(st.st_mode))
		return tree_fail(t, "%s: symbolic links are refused", rel);
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return tree_fail(t, "%s: not a file or a directory (a fifo, "
		    "device or socket): refused", rel);
	if (S_ISREG(st.st_mode) && st.st_nlink > 1 && !t->store)
		return tree_fail(t, "%s: hard links are refused", rel);
	fd = plat_open_beneath(src, name, O_RDONLY | O_NONBLOCK |
	    (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
	if (fd == -1)
		return tree_fail(t, errno == ELOOP || errno == EXDEV ?
		    "%s: symbolic links are refused" : "%s: cannot read", rel);
	if (fstat(fd, &ost) == -1 || ost.st_ino != st.st_ino ||
	    ost.st_dev != st.st_dev || (ost.st_mode & S_IFMT) !=
	    (st.st_mode & S_IFMT) || (S_ISREG(ost.st_mode) &&
	    ost.st_nlink > 1 && !t->store)) {
		close(fd);
		return tree_fail(t, "%s: changed while it was copied: "
		    "refused", rel);
	}
	if (S_ISDIR(ost.st_mode)) {
		snprintf(line, sizeof(line), "d %s\n", rel);
		digest_add(t, line);
		if (mkdirat(dst, name, t->dmode) == -1 ||
		    (sub = plat_open_beneath(dst, name, O_RDONLY | O_DIRECTORY)) ==
		    -1) {
			close(fd);
			return tree_fail(t, "%s: cannot copy", rel);
		}
		if (fchown(sub, t->uid, t->gid) == -1)
			r = tree_fail(t, "%s: cannot copy", rel);
		else
			r = copy_dir(fd, sub, rel, depth + 1, t);
		close(sub);
		close(fd);
		return r;
	}
	if ((t->bytes += ost.st_size) > TREE_MAX_BYTES) {
		close(fd);
		return tree_fail(t, "%s: the working directory is larger "
		    "than 64 MiB", rel);
	}
	r = copy_open_file(fd, ost.st_size, dst, name, rel, t, sha);
	close(fd);
	if (r == -1)
		return -1;
	snprintf(line, sizeof(line), "f %s %lld %s\n", rel,
	    (long long)ost.st_size, sha);
	digest_add(t, line);
	return 0;
}

static int
copy_dir(int src, int dst, const char *rel, int depth, struct tree_copy *t)
{
	char path[PATH_MAX];
	char **names;
	size_t i, n;
	int r = 0;

	if (depth > TREE_MAX_DEPTH)
		return tree_fail(t, "%s: too deep", rel);
	if ((names = list_names(src, &n, t, rel)) == NULL)
		return -1;
	for (i = 0; i < n && r == 0; i++) {
		if (pathf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "",
		    names[i]) == -1)
			r = tree_fail(t, "%s: path too long", rel);
		else
			r = copy_entry(src, dst, names[i], path, depth, t);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

/*
 * Copies the tree under src into dst (both open directories); what is
 * made is t->uid:t->gid's.  With digest, the tree's digest too.
 */
int
tree_copy(int src, int dst, struct tree_copy *t,
    char digest[SHA256_HEX_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen;
	int r;

	t->bytes = 0;
	t->files = 0;
	t->why[0] = '\0';
	t->md = NULL;
	if (digest != NULL && ((t->md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(t->md, EVP_sha256(), NULL) != 1)) {
		EVP_MD_CTX_free(t->md);
		return tree_fail(t, "%s", "digest: out of memory");
	}
	r = copy_dir(src, dst, "", 0, t);
	if (t->md != NULL) {
		if (r == 0 && EVP_DigestFinal_ex(t->md, md, &mdlen) == 1)
			hex_encode(md, mdlen, digest);
		EVP_MD_CTX_free(t->md);
		t->md = NULL;
	}
	return r;
}

/*
 * One entry of dirfd and all under it, by descriptors: a link is
 * unlinked, never followed, and a directory on another file system (a
 * mount point) is left alone.  A sandbox may have made the tree; at
 * most TREE_RM_DEPTH levels are taken apart, each holding a descriptor.
 */
static int
remove_at(int parent, const char *name, dev_t dev, int depth)
{
	struct dirent *de;
	struct stat st, ost;
	int fd, r = 0, removed;
	DIR *d;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(parent, name, 0) == -1 && errno != ENOENT ?
		    -1 : 0;
	if (st.st_dev != dev || depth >= TREE_RM_DEPTH) {
		errno = st.st_dev != dev ? EXDEV : ELOOP;
		return -1;
	}
	if ((fd = plat_open_beneath(parent, name, O_RDONLY | O_DIRECTORY)) == -1)
		return -1;
	if (fstat(fd, &ost) == -1 || ost.st_ino != st.st_ino ||
	    ost.st_dev != dev || (d = fdopendir(fd)) == NULL) {
		close(fd);
		errno = EAGAIN;
		return -1;
	}
	/* Entries removed while listing may shift the rest: list again. */
	do {
		removed = 0;
		rewinddir(d);
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			if (remove_at(fd, de->d_name, dev, depth + 1) ==
			    -1)
				r = -1;
			else
				removed = 1;
		}
	} while (removed && r == 0);
	closedir(d);
	if (r == 0 && unlinkat(parent, name, AT_REMOVEDIR) == -1 &&
	    errno != ENOENT)
		r = -1;
	return r;
}

/* rm -rf of one of runnerd's directories: 0 when it is gone. */
int
rm_tree(const char *dir)
{
	char parent[PATH_MAX], *slash;
	struct stat st;
	int fd, r;

	if (strlcpy(parent, dir, sizeof(parent)) >= sizeof(parent) ||
	    (slash = strrchr(parent, '/')) == NULL || slash[1] == '\0') {
		errno = EINVAL;
		return -1;
	}
	*slash = '\0';
	if ((fd = open(slash == parent ? "/" : parent, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -1;
	if (fstatat(fd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) == -1)
		r = errno == ENOENT ? 0 : -1;
	else
		r = remove_at(fd, slash + 1, st.st_dev, 0);
	close(fd);
	return r;
}
