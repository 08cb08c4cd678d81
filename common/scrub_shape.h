/* SPDX-License-Identifier: ISC */
/*
 * The secret shapes the scrubber looks for (scrub_shape.c), private to
 * scrub.c: which one, if any, starts at s[i].
 */
#ifndef AS_SCRUB_SHAPE_H
#define AS_SCRUB_SHAPE_H

#include <stddef.h>

/* What a shape matched at s[i]: keep bytes stay, the next len - keep go. */
struct scrub_hit {
	const char	*kind;
	size_t		 keep;
	size_t		 len;
};

int	scrub_shape(const char *, size_t, size_t, struct scrub_hit *);

#endif
