/* SPDX-License-Identifier: ISC */
/* Descriptor I/O every process needs the same way. */
#ifndef AS_IO_H
#define AS_IO_H

#include <stddef.h>
#include <sys/types.h>

int	write_full(int, const void *, size_t);
ssize_t	read_full(int, void *, size_t);
char	*read_lines(int, size_t);
int	copy_fd(int, int);

#endif
