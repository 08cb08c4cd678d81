/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer: any byte stream on a daemon socket.  The reader must hand
 * out only well-formed frames and report the rest, never crash.
 */
#include <sys/socket.h>

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "frame.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct channel ch;
	struct msg m;
	ssize_t n;
	int sv[2], r;

	if (size > 1024 * 1024)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		abort();
	/* A socketpair buffers well over 1 MiB on Linux; then EOF. */
	if (write(sv[1], data, size) != (ssize_t)size)
		goto done;
	close(sv[1]);
	sv[1] = -1;
	channel_init(&ch, sv[0]);
	for (;;) {
		n = channel_read(&ch);
		if (n <= 0)
			break;
		while ((r = channel_get(&ch, &m)) == 1) {
			if (m.hdr.version != PROTO_VERSION ||
			    m.len > MSG_MAX_PAYLOAD || m.fd != -1)
				abort();
		}
		if (r == -1)
			break;
	}
	channel_clear(&ch);
done:
	close(sv[0]);
	if (sv[1] != -1)
		close(sv[1]);
	return 0;
}
