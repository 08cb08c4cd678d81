/* SPDX-License-Identifier: ISC */
/*
 * A YAML document as a tree that remembers line numbers, and a
 * table-driven binder from mappings to C structs, so that every file
 * the suite reads reports errors as "file:line: what" and rejects keys
 * it does not know.
 */
#ifndef AS_YTREE_H
#define AS_YTREE_H

#include <stddef.h>

enum ynode_type { YN_SCALAR, YN_MAP, YN_SEQ };

struct ynode {
	enum ynode_type	 type;
	int		 line;
	char		*value;		/* scalars */
	char		*key;		/* set when the node is a mapping value */
	struct ynode	**kids;
	size_t		 nkids;
};

struct yerr {
	char		 file[256];
	char		 msg[1024];
};

struct ynode	*yaml_load_file(const char *, struct yerr *);
struct ynode	*yaml_load_buf(const char *, const char *, size_t,
		    struct yerr *);
void		 ynode_free(struct ynode *);
int		 yerror(struct yerr *, const struct ynode *, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

enum yfield_type {
	YF_STRING,	/* char[size] */
	YF_INT,		/* long, within [min, max] */
	YF_BOOL,	/* int */
	YF_SECONDS,	/* long: "90", "90s", "30m", "2h" */
	YF_MILLIS,	/* long, milliseconds: "500", "500ms", "2s" */
	YF_BYTES,	/* long: "512", "64k", "4M", "1G" */
	YF_MAP,		/* a nested table */
	YF_CUSTOM	/* parse() handles the node */
};

struct yfield {
	const char		*key;
	enum yfield_type	 type;
	size_t			 off;
	size_t			 size;	/* YF_STRING buffer size */
	long			 min, max;
	const struct yfield	*sub;	/* YF_MAP */
	int			(*parse)(const struct ynode *, void *,
				    struct yerr *);
	const char * const	*choices; /* YF_STRING: NULL-terminated */
};

int	 ybind(const struct ynode *, const struct yfield *, void *,
	    struct yerr *);
int	 yscalar(const struct ynode *, struct yerr *, const char *);
int	 yparse_long(const struct ynode *, enum yfield_type, long, long,
	    long *, struct yerr *);

#endif
