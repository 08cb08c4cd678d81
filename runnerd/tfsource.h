/*
 * tfsource.c: a module's calls of other modules, local paths only; no
 * backend or cloud block.
 */
#ifndef AS_TFSOURCE_H
#define AS_TFSOURCE_H

#include <stddef.h>

int	 tf_sources_ok(const char *, const char *, size_t, char *, size_t);

#endif
