/* SPDX-License-Identifier: ISC */
/*
 * The small trees of the host's /etc that /usr's programs read, copied
 * into the shared root at the launcher's start rather than bound: each
 * bind is one more gofer mount that every sandbox's start waits for
 * (README "Limitations").  A link is copied as a link, never followed;
 * a file keeps its mode bits, so what only root may read on the host
 * only root may read in a sandbox.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "launcher.h"

/*
 * Each a glob(3) pattern of directories: /etc/alternatives holds
 * Debian's names for cc, awk and the like, /etc/python3* and /etc/java-*
 * what /usr's Python and Java link to (sitecustomize.py, jvm.cfg).
 */
static const char *const etc_trees[] = {
	"/etc/alternatives", "/etc/python3*", "/etc/java-*", NULL
};

/* Bounds on what one host tree may bring in: /etc's are far smaller. */
#define ETC_TREE_MAX_DEPTH	8
#define ETC_TREE_MAX_BYTES	(16L << 20)

static int etc_dir_copy(int, int, int, long *);

/* src's sname, and all under it, made as dst's dname. */
static int
etc_entry_copy(int src, const char *sname, int dst, const char *dname,
    int depth, long *bytes)
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;
	int in = -1, out = -1, r = -1;

	if (fstatat(src, sname, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return -1;
	if (S_ISLNK(st.st_mode)) {
		if ((n = readlinkat(src, sname, target, sizeof(target) - 1)) ==
		    -1)
			return -1;
		target[n] = '\0';
		return symlinkat(target, dst, dname);
	}
	if (S_ISDIR(st.st_mode)) {
		if (depth >= ETC_TREE_MAX_DEPTH) {
			errno = ELOOP;
			return -1;
		}
		if (mkdirat(dst, dname, 0700) == -1)
			return -1;
		in = openat(src, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		out = openat(dst, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (in != -1 && out != -1)
			r = etc_dir_copy(in, out, depth + 1, bytes);
	} else if (S_ISREG(st.st_mode)) {
		if ((*bytes += st.st_size) > ETC_TREE_MAX_BYTES) {
			errno = EFBIG;
			return -1;
		}
		in = openat(src, sname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
		out = openat(dst, dname, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (in != -1 && out != -1)
			r = copy_fd(in, out);
	} else
		return 0;	/* a fifo or socket: nothing a program reads */
	/* The host's mode, set last: the umask must not narrow it. */
	if (r == 0 && fchmod(out, st.st_mode & 0755) == -1)
		r = -1;
	if (in != -1)
		close(in);
	if (out != -1 && close(out) == -1)
		r = -1;
	return r;
}

static int
etc_dir_copy(int src, int dst, int depth, long *bytes)
{
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	if ((fd = dup(src)) == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while (r == 0 && (de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			r = etc_entry_copy(src, de->d_name, dst, de->d_name,
			    depth, bytes);
	closedir(d);
	return r;
}

/*
 * host, a directory (an absolute path), copied to the same path under
 * root, whose parent directory must be there: made beside
 * it as .new, then exchanged with the old copy, so that a sandbox a
 * crash left running sees one whole tree or the other.
 */
int
host_tree_install(const char *root, const char *host)
{
	char parent[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX], stale[PATH_MAX];
	const char *base;
	long bytes = 0;
	int src, dst, r = -1;

	base = strrchr(host, '/') + 1;
	if (pathf(parent, sizeof(parent), "%.*s/", (int)(base - host - 1),
	    host) == -1 || pathf(dir, sizeof(dir), "%s%s", root, parent) ==
	    -1 || pathf(tmp, sizeof(tmp), "%s.new", base) == -1 ||
	    pathf(stale, sizeof(stale), "%s%s", dir, tmp) == -1 ||
	    rm_tree(stale) == -1)
		return -1;
	if ((src = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return -1;
	if ((dst = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) != -1) {
		if (etc_entry_copy(src, base, dst, tmp, 0, &bytes) == 0 &&
		    (renameat2(dst, tmp, dst, base, RENAME_EXCHANGE) == 0 ||
		    (errno == ENOENT && renameat(dst, tmp, dst, base) == 0)))
			r = 0;
		close(dst);
	}
	close(src);
	/* The old copy, after an exchange; a part-made one, after a fault. */
	if (rm_tree(stale) == -1)
		r = -1;
	return r;
}

/*
 * Calls fn with each directory the glob(3) patterns name on this host
 * (not a link to one), until it fails.
 */
int
host_dirs_each(const char *const patterns[],
    int (*fn)(const char *, void *), void *arg)
{
	struct stat st;
	glob_t g;
	size_t i, j;
	int r = 0;

	for (i = 0; patterns[i] != NULL && r == 0; i++) {
		if (glob(patterns[i], 0, NULL, &g) != 0)
			continue;	/* none here */
		for (j = 0; j < g.gl_pathc && r == 0; j++)
			if (lstat(g.gl_pathv[j], &st) == 0 &&
			    S_ISDIR(st.st_mode))
				r = fn(g.gl_pathv[j], arg);
		globfree(&g);
	}
	return r;
}

static int
etc_tree_add(const char *host, void *root)
{
	return host_tree_install(root, host);
}

/*
 * A copy in root whose host tree has gone (its package removed) goes
 * too, as does a part-made .new copy.
 */
static int
etc_trees_prune(const char *root)
{
	char pattern[PATH_MAX];
	struct stat st;
	glob_t g;
	size_t i, j;
	int r = 0;

	for (i = 0; etc_trees[i] != NULL && r == 0; i++) {
		if (pathf(pattern, sizeof(pattern), "%s%s", root,
		    etc_trees[i]) == -1)
			return -1;
		if (glob(pattern, GLOB_NOESCAPE, NULL, &g) != 0)
			continue;	/* none there */
		for (j = 0; j < g.gl_pathc && r == 0; j++)
			if (lstat(g.gl_pathv[j] + strlen(root), &st) == -1 &&
			    errno == ENOENT)
				r = rm_tree(g.gl_pathv[j]);
		globfree(&g);
	}
	return r;
}

/* Every etc_trees directory of this host, copied into root, alone. */
int
etc_trees_install(const char *root)
{
	if (etc_trees_prune(root) == -1)
		return -1;
	return host_dirs_each(etc_trees, etc_tree_add, (void *)root);
}
