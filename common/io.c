/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"

/* Writes all of buf, through short writes and signals: 0, or -1. */
int
write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads until len bytes or end of file, through signals: the count, or -1. */
ssize_t
read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;
	ssize_t n;

	while (got < len && (n = read(fd, p + got, len - got)) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* All of in, to its end, written to out: 0, or -1. */
int
copy_fd(int in, int out)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (write_full(out, buf, (size_t)n) == -1)
			return -1;
	}
	return 0;
}

/*
 * A journal's complete lines: up to max bytes from fd, NUL-terminated
 * and cut after the last newline, so that a line a crash cut short is
 * dropped.  NULL when it cannot be read.
 */
char *
read_lines(int fd, size_t max)
{
	char *buf, *last;
	ssize_t n;

	if ((buf = malloc(max + 1)) == NULL)
		return NULL;
	if ((n = read_full(fd, buf, max)) == -1) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	if ((last = strrchr(buf, '\n')) != NULL)
		last[1] = '\0';
	else
		buf[0] = '\0';
	return buf;
}
