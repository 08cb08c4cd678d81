/* SPDX-License-Identifier: ISC */
/*
 * The store of module snapshots and saved plans (workspace.c), bounded.
 * Each file of a kept snapshot is a hard link to one blob per content,
 * ROOT/terraform/.blobs/SHA256 (a name no working directory's state can
 * have), so that a module planned again with one file changed adds
 * that file only.  What a working directory keeps (the distinct files
 * of its snapshots and its saved plans) and what all of them keep (the
 * blobs and every saved plan) have quotas: runnerd.terraform_store_per_dir
 * and runnerd.terraform_store_max.
 *
 * All of it is root's, below runnerd's state directory, where no
 * sandbox reaches; it runs in the launcher's confined children.
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
#include "log.h"
#include "tfstore.h"

#define BLOBS		".blobs"
#define LINK_TMP	".dedupe"	/* in a snapshot: no module file is */
#define MANIFEST_MAX	(16L * 1024 * 1024)

/*
 * Each "f PATH SIZE SHA256" line of a manifest (treecopy.c) to fn,
 * read from the right, since a path may hold spaces; text is cut into
 * its pieces.  The first nonzero fn returns, else 0.
 */
int
manifest_each(char *text, int (*fn)(const struct mfile *, void *),
    void *arg)
{
	struct mfile f;
	char *line, *next, *sp;
	int r;

	for (line = text; *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) == NULL)
			break;
		*next++ = '\0';
		if (line[0] != 'f' || line[1] != ' ' ||
		    (sp = strrchr(line, ' ')) == NULL || sp <= line + 2)
			continue;
		*sp = '\0';
		f.sha = sp + 1;
		if ((sp = strrchr(line, ' ')) == NULL || sp <= line + 1)
			continue;
		*sp = '\0';
		f.size = strtoll(sp + 1, NULL, 10);
		f.path = line + 2;
		if (!sha256_hex_ok(f.sha) || f.size < 0)
			continue;
		if ((r = fn(&f, arg)) != 0)
			return r;
	}
	return 0;
}

/* The blobs' directory of the store that state (ROOT/terraform/X) is in. */
static int
blobs_dir(const char *state, char *buf, size_t len)
{
	const char *slash = strrchr(state, '/');

	if (slash == NULL) {
		errno = EINVAL;
		return -1;
	}
	return pathf(buf, len, "%.*s/" BLOBS, (int)(slash - state), state);
}

struct dedupe {
	const char	*snap;
	const char	*blobs;
	long long	 added;
};

/* One file of the snapshot: the blob, or a link to the one there is. */
static int
dedupe_file(const struct mfile *f, void *arg)
{
	struct dedupe *d = arg;
	char file[PATH_MAX], blob[PATH_MAX], tmp[PATH_MAX];
	int tries;

	if (pathf(file, sizeof(file), "%s/%s", d->snap, f->path) == -1 ||
	    pathf(blob, sizeof(blob), "%s/%s", d->blobs, f->sha) == -1 ||
	    pathf(tmp, sizeof(tmp), "%s/" LINK_TMP, d->snap) == -1)
		return -1;
	/* A blob can go between the two tries (store_gc): then again. */
	for (tries = 0; tries < 3; tries++) {
		if (link(file, blob) == 0) {
			d->added += f->size;
			return 0;
		}
		if (errno != EEXIST)
			return -1;
		(void)unlink(tmp);
		if (link(blob, tmp) == 0)
			return rename(tmp, file);
		if (errno != ENOENT)
			return -1;
	}
	return -1;
}

/*
 * The files of the snapshot kept at snap, with manifest (its lines),
 * made links into the blobs: 0 and in *added the bytes of new blobs.
 */
int
store_dedupe(const char *state, const char *snap, const char *manifest,
    long long *added)
{
	struct dedupe d = { snap, NULL, 0 };
	char blobs[PATH_MAX], *text;
	int r;

	*added = 0;
	if (blobs_dir(state, blobs, sizeof(blobs)) == -1 ||
	    (mkdir(blobs, 0700) == -1 && errno != EEXIST) ||
	    (text = strdup(manifest)) == NULL)
		return -1;
	d.blobs = blobs;
	r = manifest_each(text, dedupe_file, &d);
	free(text);
	*added = d.added;
	return r;
}

/* Bytes of the regular files in dir whose names end in suffix ("": all). */
static long long
dir_bytes(const char *dir, const char *suffix)
{
	struct dirent *de;
	struct stat st;
	long long sum = 0;
	size_t n, m = strlen(suffix);
	DIR *d;
	int fd;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (de->d_name[0] == '.' || n < m ||
		    strcmp(de->d_name + n - m, suffix) != 0 ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		    -1 || !S_ISREG(st.st_mode))
			continue;
		sum += st.st_size;
	}
	closedir(d);
	return sum;
}

struct blob_ref {
	char		 sha[SHA256_HEX_LEN + 1];
	long long	 size;
};

struct seen {
	struct blob_ref	*ref;
	size_t		 n, cap;
};

static int
seen_add(const struct mfile *f, void *arg)
{
	struct seen *s = arg;
	struct blob_ref *p;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		if ((p = reallocarray(s->ref, s->cap, sizeof(*p))) == NULL)
			return -1;
		s->ref = p;
	}
	memcpy(s->ref[s->n].sha, f->sha, SHA256_HEX_LEN + 1);
	s->ref[s->n++].size = f->size;
	return 0;
}

/* A manifest file's lines into s. */
static int
manifest_add(int dir, const char *name, struct seen *s)
{
	struct stat st;
	char *text;
	ssize_t n;
	int fd, r;

	if ((fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return 0;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > MANIFEST_MAX ||
	    (text = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return 0;
	}
	n = read_full(fd, text, (size_t)st.st_size);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	r = manifest_each(text, seen_add, s);
	free(text);
	return r;
}

static int
cmp_ref(const void *a, const void *b)
{
	return strcmp(((const struct blob_ref *)a)->sha,
	    ((const struct blob_ref *)b)->sha);
}

/*
 * What the working directory whose state is state keeps: each distinct
 * file of its snapshots once, and its saved plans; -1 on error.
 */
long long
store_dir_usage(const char *state)
{
	struct seen s = { NULL, 0, 0 };
	struct dirent *de;
	char snaps[PATH_MAX], plans[PATH_MAX];
	long long sum;
	size_t i, n;
	DIR *d;

	if (pathf(snaps, sizeof(snaps), "%s/snapshots", state) == -1 ||
	    pathf(plans, sizeof(plans), "%s/plans", state) == -1)
		return -1;
	sum = dir_bytes(plans, ".tfplan");
	if ((d = opendir(snaps)) == NULL)
		return sum;
	while ((de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (n > 9 && strcmp(de->d_name + n - 9, ".manifest") == 0 &&
		    manifest_add(dirfd(d), de->d_name, &s) == -1) {
			sum = -1;
			break;
		}
	}
	closedir(d);
	if (sum != -1 && s.n > 0) {
		qsort(s.ref, s.n, sizeof(*s.ref), cmp_ref);
		for (i = 0; i < s.n; i++)
			if (i == 0 || strcmp(s.ref[i].sha,
			    s.ref[i - 1].sha) != 0)
				sum += s.ref[i].size;
	}
	free(s.ref);
	return sum;
}

/* What the whole store keeps: its blobs and every saved plan. */
long long
store_usage(const char *state)
{
	struct dirent *de;
	char blobs[PATH_MAX], top[PATH_MAX], plans[PATH_MAX];
	long long sum;
	const char *slash;
	DIR *d;

	if (blobs_dir(state, blobs, sizeof(blobs)) == -1 ||
	    (slash = strrchr(state, '/')) == NULL ||
	    pathf(top, sizeof(top), "%.*s", (int)(slash - state), state) == -1)
		return -1;
	sum = dir_bytes(blobs, "");
	if ((d = opendir(top)) == NULL)
		return sum;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' && pathf(plans, sizeof(plans),
		    "%s/%s/plans", top, de->d_name) == 0)
			sum += dir_bytes(plans, ".tfplan");
	closedir(d);
	return sum;
}

/* Blobs no snapshot links any more, removed. */
void
store_gc(const char *state)
{
	struct dirent *de;
	struct stat st;
	char blobs[PATH_MAX];
	DIR *d;

	if (blobs_dir(state, blobs, sizeof(blobs)) == -1 ||
	    (d = opendir(blobs)) == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' && fstatat(dirfd(d), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_nlink == 1 && unlinkat(dirfd(d), de->d_name, 0) == -1)
			log_warn("store: %s/%s", blobs, de->d_name);
	closedir(d);
}

/* Whether used is past max; why names the quota and its setting. */
static int
quota_over(long long used, long max, const char *what, const char *setting,
    char *why, size_t whylen)
{
	if (used <= max)
		return 0;
	snprintf(why, whylen, "%s take %lld MiB, more than the quota "
	    "(runnerd.%s, %ld MiB): plans older than runnerd.plan_retention "
	    "are removed; the operator can raise the quota", what, used >> 20,
	    setting, max >> 20);
	return 1;
}

/*
 * Whether state may keep more: 0, or -1 and why, naming the quota that
 * is reached and the setting that raises it.
 */
int
store_room(const struct as_config *c, const char *state, char *why,
    size_t whylen)
{
	long long dir, all;

	if ((dir = store_dir_usage(state)) == -1 ||
	    (all = store_usage(state)) == -1) {
		snprintf(why, whylen, "the plan store: %s", strerror(errno));
		return -1;
	}
	if (quota_over(dir, c->runnerd.terraform_store_per_dir, "this "
	    "working directory's plans and module snapshots",
	    "terraform_store_per_dir", why, whylen) ||
	    quota_over(all, c->runnerd.terraform_store_max, "the plans and "
	    "module snapshots of all working directories",
	    "terraform_store_max", why, whylen))
		return -1;
	return 0;
}
