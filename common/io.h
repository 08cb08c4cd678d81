/* Descriptor I/O every process needs the same way. */
#ifndef AS_IO_H
#define AS_IO_H

#include <stddef.h>

int	write_full(int, const void *, size_t);

#endif
