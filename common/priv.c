/* SPDX-License-Identifier: ISC */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sandbox.h"

/*
 * Switches to the daemon's own user when started as root.  An empty
 * user name keeps the current one (development and tests only).
 */
void
priv_drop(const char *user)
{
	struct passwd *pw;
	uid_t uid;
	gid_t gid;

	if (geteuid() != 0)
		return;
	if (user == NULL || *user == '\0') {
		log_warnx("running as root: no user configured");
		return;
	}
	if ((pw = getpwnam(user)) == NULL)
		fatalx("unknown user %s (create it with scripts/create-users)",
		    user);
	uid = pw->pw_uid;
	gid = pw->pw_gid;
	if (setgroups(1, &gid) == -1)
		fatal("setgroups");
	if (setresgid(gid, gid, gid) == -1)
		fatal("setresgid");
	if (setresuid(uid, uid, uid) == -1)
		fatal("setresuid");
	if (setuid(0) != -1 || geteuid() == 0)
		fatalx("could not drop root privileges");
	log_debug("running as %s (uid %u)", user, (unsigned)uid);
}

/* The user priv_drop() will switch to: 1 and its ids, or 0 for none. */
static int
drop_target(const char *user, uid_t *uid, gid_t *gid)
{
	struct passwd *pw;

	if (geteuid() != 0 || user == NULL || *user == '\0')
		return 0;
	if ((pw = getpwnam(user)) == NULL)
		fatalx("unknown user %s (create it with scripts/create-users)",
		    user);
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 1;
}

/* A socket we just bound becomes the daemon user's, before the drop. */
int
priv_give(const char *path, const char *user)
{
	uid_t uid;
	gid_t gid;

	if (!drop_target(user, &uid, &gid))
		return 0;
	return lchown(path, uid, gid);
}

/* mkdir -p of dir's parents: they are root's when we make them. */
static int
make_parents(const char *dir)
{
	char buf[PATH_MAX], *p;

	if (strlcpy(buf, dir, sizeof(buf)) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = strchr(buf + 1, '/'); p != NULL; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(buf, 0755) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

static int
dir_empty(int fd)
{
	struct dirent *de;
	DIR *d;
	int dfd, empty = 1;

	if ((dfd = dup(fd)) == -1 || (d = fdopendir(dfd)) == NULL) {
		if (dfd != -1)
			close(dfd);
		return 0;
	}
	while (empty && (de = readdir(d)) != NULL)
		empty = strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/*
 * The directory a daemon keeps its state in, made if missing and, when
 * the daemon is about to switch to its user, that user's with mode 0700
 * (callers may then grant readers more).  A directory that another user
 * owns is refused, not taken over: it may be shared with other daemons.
 * Returns an open descriptor of the directory.
 */
int
priv_state_dir(const char *dir, const char *user)
{
	struct stat st;
	uid_t uid;
	gid_t gid;
	int fd, saved;

	if (make_parents(dir) == -1 ||
	    (mkdir(dir, 0700) == -1 && errno != EEXIST))
		return -1;
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return -1;
	if (!drop_target(user, &uid, &gid))
		return fd;
	if (fstat(fd, &st) == -1)
		goto fail;
	if (st.st_uid != 0 && st.st_uid != uid) {
		log_warnx("%s belongs to uid %u, not to %s", dir,
		    (unsigned)st.st_uid, user);
		errno = EPERM;
		goto fail;
	}
	if (st.st_uid == 0 && !dir_empty(fd)) {
		log_warnx("%s is root's and not empty: give %s a directory "
		    "of its own", dir, user);
		errno = EPERM;
		goto fail;
	}
	if (fchown(fd, uid, gid) == -1 || fchmod(fd, 0700) == -1)
		goto fail;
	return fd;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}
