/* SPDX-License-Identifier: ISC */
/*
 * tfsource.c: a module's calls of other modules, local paths only; no
 * backend or cloud block.
 */
#ifndef AS_TFSOURCE_H
#define AS_TFSOURCE_H

#include <limits.h>
#include <stddef.h>

/*
 * What the reading found that the plan must account for: the module's
 * provisioner blocks (terraform leaves some out of the plan, a removed
 * block's for one), and where the first one stands.
 */
struct tf_facts {
	int	 provisioners;
	char	 first[PATH_MAX + 16];	/* "file:line" */
};

int	 tf_sources_ok(const char *, const char *, size_t, struct tf_facts *,
	    char *, size_t);

#endif
