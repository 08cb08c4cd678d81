/* SPDX-License-Identifier: ISC */
/* tfstore.c: module snapshots kept once per file, under quotas. */
#ifndef AS_TFSTORE_H
#define AS_TFSTORE_H

#include <stddef.h>

#include "config.h"

struct mfile {
	const char	*path;
	long long	 size;
	const char	*sha;
};

int	 manifest_each(char *, int (*)(const struct mfile *, void *), void *);
int	 store_dedupe(const char *, const char *, const char *, long long *);
long long store_dir_usage(const char *);
long long store_usage(const char *);
void	 store_gc(const char *);
int	 store_room(const struct as_config *, const char *, char *, size_t);

#endif
