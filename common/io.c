#include <errno.h>
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
