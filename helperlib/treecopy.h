/* SPDX-License-Identifier: ISC */
/* treecopy.c: a module tree copied by descriptors, never through a link. */
#ifndef AS_TREECOPY_H
#define AS_TREECOPY_H

#include <sys/types.h>

#include <stdio.h>

#include <openssl/evp.h>

#include "tfsource.h"

#include "cjson.h"

struct tree_copy {
	uid_t		 uid;		/* owner of what is made */
	gid_t		 gid;
	mode_t		 dmode;		/* of directories made */
	mode_t		 fmode;		/* of files made */
	int		 sync;		/* fsync each: runnerd's state, not
					   a sandbox's throwaway workspace */
	char		*why;		/* what was refused, and where */
	size_t		 whylen;
	FILE		*manifest;	/* the digest's lines, when wanted */
	int		 store;		/* the source is runnerd's snapshot
					   store, whose files are hard links
					   to its blobs (tfstore.c) */
	long		 bytes;
	int		 files;
	EVP_MD_CTX	*md;
	struct tf_facts	 facts;		/* of the .tf and .tf.json files */
};

int	 tree_open(const char *);
int	 tree_copy(int, int, struct tree_copy *, char [SHA256_HEX_LEN + 1]);

#endif
