/* SPDX-License-Identifier: ISC */
/*
 * The lease journal: "+<lease id>" when a lease is minted, "-<lease id>"
 * when it is revoked, one a line, synced before we answer.  Lease ids
 * only: a lease id cannot be used as a credential, only revoked.  At
 * start the journal is replayed, compacted to what is still
 * outstanding, and those leases are handed back for revocation.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "brokerd.h"
#include "io.h"
#include "log.h"

#define JOURNAL_MAXSIZE	(8 * 1024 * 1024)

static int	jfd = -1;

static int
journal_write(char op, const char *id)
{
	char line[LEASE_ID_MAX + 3];
	int n;

	if (jfd == -1) {
		errno = EBADF;
		return -1;
	}
	n = snprintf(line, sizeof(line), "%c%s\n", op, id);
	if (n < 0 || (size_t)n >= sizeof(line)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (write_full(jfd, line, n) == -1 || fsync(jfd) == -1) {
		log_warn("lease journal");
		return -1;
	}
	return 0;
}

int
journal_add(const char *id)
{
	return journal_write('+', id);
}

/* With none left outstanding the journal starts over, empty. */
int
journal_remove(const char *id, int none_left)
{
	if (none_left && jfd != -1) {
		if (ftruncate(jfd, 0) == -1 || fsync(jfd) == -1) {
			log_warn("lease journal");
			return -1;
		}
		return 0;
	}
	return journal_write('-', id);
}

/* The ids added and not removed, in order; NULL-terminated. */
static char **
journal_replay(char *buf, size_t len, size_t *n)
{
	char **ids = NULL, **nids, *line, *nl;
	size_t i;

	*n = 0;
	for (line = buf; line < buf + len; line = nl + 1) {
		if ((nl = memchr(line, '\n', buf + len - line)) == NULL)
			break;	/* a torn last line: its write never synced */
		*nl = '\0';
		if ((line[0] != '+' && line[0] != '-') ||
		    !lease_id_valid(line + 1)) {
			log_warnx("lease journal: skipping a bad line");
			continue;
		}
		for (i = 0; i < *n; i++)
			if (strcmp(ids[i], line + 1) == 0)
				break;
		if (line[0] == '-' && i < *n) {
			ids[i] = ids[--*n];
		} else if (line[0] == '+' && i == *n) {
			nids = reallocarray(ids, *n + 2, sizeof(*ids));
			if (nids == NULL) {
				free(ids);
				return NULL;
			}
			ids = nids;
			ids[(*n)++] = line + 1;
		}
	}
	if (ids == NULL && (ids = calloc(1, sizeof(*ids))) == NULL)
		return NULL;
	ids[*n] = NULL;
	return ids;
}

static char *
read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd;

	*len = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return calloc(1, 1);
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1 || st.st_size > JOURNAL_MAXSIZE ||
	    (buf = malloc(st.st_size + 1)) == NULL) {
		snprintf(err, errlen, "%s: cannot read", path);
		close(fd);
		return NULL;
	}
	n = read_full(fd, buf, st.st_size);
	close(fd);
	if (n == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(buf);
		return NULL;
	}
	*len = (size_t)n;
	return buf;
}

/*
 * Replays and compacts the journal at path (write a new one, rename it
 * over), keeps it open for appending, and calls cb for each lease left
 * outstanding by the previous run.
 */
int
journal_open(const char *path, void (*cb)(const char *, void *), void *arg,
    char *err, size_t errlen)
{
	char tmp[PATH_MAX], **ids;
	size_t len, n, i;
	char *buf;
	int fd;

	if ((buf = read_file(path, &len, err, errlen)) == NULL)
		return -1;
	if ((ids = journal_replay(buf, len, &n)) == NULL) {
		free(buf);
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp) ||
	    (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	for (i = 0; i < n; i++)
		if (write_full(fd, "+", 1) == -1 || write_full(fd, ids[i],
		    strlen(ids[i])) == -1 || write_full(fd, "\n", 1) == -1)
			break;
	if (i < n || fsync(fd) == -1) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		close(fd);
		goto fail;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	if ((jfd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	for (i = 0; i < n; i++)
		cb(ids[i], arg);
	free(ids);
	free(buf);
	return 0;
fail:
	free(ids);
	free(buf);
	return -1;
}
