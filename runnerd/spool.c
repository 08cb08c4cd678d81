/* SPDX-License-Identifier: ISC */
/*
 * runnerd's audit spool: the events auditd has not acknowledged in
 * time (runnerd.audit_spool_after), one payload a line, in the order
 * they were sent.  An event is counted as recorded once its line is on
 * disk (fdatasync), not before; peer.c keeps the same lines pending on
 * auditd's channel and resends them until each is acknowledged, and
 * auditd drops a copy by its writer and seq.  The file is emptied when
 * no line is left unacknowledged; a file left by a runnerd that died
 * is sent before anything else at the next start.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "log.h"
#include "runnerd.h"

#define SPOOL_FILE	"audit.spool"

static int	 spool_fd = -1;
static off_t	 spool_size;
static size_t	 spool_lines;	/* not acknowledged yet */

/* Empties the file: every line in it is acknowledged. */
static void
spool_clear(void)
{
	spool_lines = 0;
	if (spool_fd != -1 && spool_size > 0 &&
	    ftruncate(spool_fd, 0) == -1) {
		log_warn("%s", SPOOL_FILE);
		return;
	}
	spool_size = 0;
}

static char *
spool_read(struct stat *st)
{
	if (fstat(spool_fd, st) == -1)
		return NULL;
	if (!S_ISREG(st->st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	return read_lines(spool_fd, st->st_size);
}

/*
 * Before privileges drop: opens the spool in the state directory dirfd
 * and hands each complete line the previous runnerd left to peer.c.
 */
int
spool_open(int dirfd)
{
	struct stat st;
	char *buf, *line, *save;

	if ((spool_fd = openat(dirfd, SPOOL_FILE, O_RDWR | O_APPEND |
	    O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) == -1)
		return -1;
	if ((buf = spool_read(&st)) == NULL) {
		close(spool_fd);
		spool_fd = -1;
		return -1;
	}
	/* A line cut short by the crash was never counted as recorded. */
	spool_size = strlen(buf);
	if (spool_size != st.st_size && ftruncate(spool_fd, spool_size) == -1)
		log_warn("%s", SPOOL_FILE);
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if (audit_resend(line) == 0)
			spool_lines++;
	free(buf);
	if (spool_lines > 0)
		log_info("%s: %zu events the previous runnerd spooled go to "
		    "auditd first", SPOOL_FILE, spool_lines);
	else
		spool_clear();
	return 0;
}

int
spool_busy(void)
{
	return spool_lines > 0;
}

/*
 * Appends one event and syncs it: 0, or -1 when it is not on disk (the
 * file is as before).  Past runnerd.audit_spool_max, ENOSPC.
 */
int
spool_append(const char *payload)
{
	struct iovec iov[2];
	size_t len = strlen(payload);
	ssize_t n;
	int saved;

	if (spool_fd == -1) {
		errno = EBADF;
		return -1;
	}
	if (spool_size + (off_t)len + 1 >
	    runnerd_conf.runnerd.audit_spool_max) {
		errno = ENOSPC;
		return -1;
	}
	iov[0].iov_base = (void *)payload;
	iov[0].iov_len = len;
	iov[1].iov_base = "\n";
	iov[1].iov_len = 1;
	if ((n = writev(spool_fd, iov, 2)) == (ssize_t)len + 1 &&
	    fdatasync(spool_fd) == 0) {
		spool_size += n;
		spool_lines++;
		return 0;
	}
	saved = n != -1 && n != (ssize_t)len + 1 ? ENOSPC : errno;
	/* Nothing of it may stay: the next line would follow a torn one. */
	if (ftruncate(spool_fd, spool_size) == -1)
		log_warn("%s", SPOOL_FILE);
	errno = saved;
	return -1;
}

/* auditd acknowledged the oldest line. */
void
spool_acked(void)
{
	if (spool_lines > 0 && --spool_lines == 0)
		spool_clear();
}
