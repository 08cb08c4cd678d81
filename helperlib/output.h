/* SPDX-License-Identifier: ISC */
/*
 * A program's output in a result (output.c): UTF-8 text, NULs kept,
 * and the exact bytes as base64 when they are not UTF-8; a collected
 * file as text alone, a NUL in it a U+FFFD.
 */
#ifndef AS_OUTPUT_H
#define AS_OUTPUT_H

#include <stddef.h>
#include <jansson.h>

json_t	*text_json(const char *, size_t);
int	 output_set(json_t *, const char *, const char *, size_t);
size_t	 output_cut(const char *, size_t);

#endif
