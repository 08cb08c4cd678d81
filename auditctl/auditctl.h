/* SPDX-License-Identifier: ISC */
/* auditctl: reads, follows and verifies the audit log. */
#ifndef AUDITCTL_H
#define AUDITCTL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <jansson.h>

#include "ckpt.h"

/* Exit codes of verify, and the kind of a failure. */
#define VERIFY_INTACT		0
#define VERIFY_ERROR		1	/* unreadable, no key */
#define VERIFY_TAMPERED		2
#define VERIFY_TRUNCATED	3
#define VERIFY_OTHERLOG		4	/* the checkpoint (key) of another log */

/* What the chain is checked against: NULL when unknown. */
struct verify_anchor {
	EVP_PKEY		*key;
	char			 key_id[CKPT_KEYID_LEN + 1];
	const struct ckpt	*latest;	/* the checkpoint file's */
};

/* Where a chain first breaks. */
struct verify_fail {
	int		 kind;		/* VERIFY_TAMPERED, _TRUNCATED ... */
	const char	*file;
	size_t		 line;
	uint64_t	 seq;
	char		 what[512];
};

struct verify_sum {
	size_t		 files;
	uint64_t	 records;
	uint64_t	 first_seq;
	uint64_t	 last_seq;
	char		 head[65];
	int		 anchored;	/* the first record starts the chain */
	int		 daemon_checked; /* the last record is auditd's head */
	uint64_t	 checkpoints;	/* records whose signature held */
	uint64_t	 latest_seq;	/* the checkpoint file's, when reached */
	int		 compared;	/* the checkpoint file was compared */
	char		 origin[CKPT_ORIGIN_LEN + 1];	/* the log it names */
	uint64_t	 foreign;	/* checkpoints by another log's key */
	int		 latest_early;	/* its seq came before the origin */
};

/* Printing, as text or JSON (-j). */
struct output {
	void	(*record)(const json_t *);
	void	(*object)(const json_t *);
	void	(*verified)(const struct verify_sum *);
	void	(*broken)(const struct verify_fail *);
};

extern const struct output output_text;
extern const struct output output_json;

/* export.c */
time_t	 export_time(const char *);
long	 export_files(char **, size_t, int, time_t, const char *, FILE *,
	    size_t *);

/* verify.c: 0 whole, 1 broken (fail filled in), -1 unreadable. */
int	 verify_files(char **, size_t, const struct verify_anchor *,
	    struct verify_sum *, struct verify_fail *);

#endif
