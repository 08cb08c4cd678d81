/* SPDX-License-Identifier: ISC */
/* auditd: owns the append-only, hash-chained audit log. */
#ifndef AUDITD_H
#define AUDITD_H

#include <sys/types.h>
#include <sys/socket.h>

#include <limits.h>
#include <stdint.h>
#include <jansson.h>

#include "cjson.h"
#include "ckpt.h"
#include "config.h"
#include "scrub.h"
#include "server.h"

/* One record on its way to the file, and who waits for its ack. */
struct arec {
	json_t		*j;		/* the record without seq and prev */
	char		*line;		/* canonical bytes + '\n', once committed */
	size_t		 len;
	uint64_t	 seq;
	uint32_t	 conn;		/* 0: auditd's own record */
	uint64_t	 reqid;
};

/* The open log file and the head of its chain. */
struct auditlog {
	int		 fd;
	char		 path[PATH_MAX];
	off_t		 size;
	uint64_t	 seq;		/* last seq written; 0 for none */
	char		 head[SHA256_HEX_LEN + 1];	/* its digest */
	char		 origin[CKPT_ORIGIN_LEN + 1];	/* "" until known */
	/* counters for auditctl stats */
	uint64_t	 events;
	uint64_t	 batches;
	uint64_t	 max_batch;
	uint64_t	 failures;
	uint64_t	 rotations;
	uint64_t	 duplicates;	/* resent events dropped */
};

extern struct as_config	 auditd_conf;
extern struct auditlog	 auditd_log;

/* log.c */
int	 alog_open(struct auditlog *, const char *, json_t **);
int	 alog_commit(struct auditlog *, struct arec *, size_t);
int	 alog_rotate(struct auditlog *, char *, size_t);
int	 alog_tail_offset(struct auditlog *, size_t, off_t *);
int	 alog_scan(struct auditlog *, off_t,
	    int (*)(const char *, size_t, void *), void *);
json_t	*arec_new(const char *, const char *, json_t *, json_t *);
int	 alog_sync_dir(const char *);

/* forward.c: syslog datagrams to a witness or a SIEM */
struct forward {
	int			 fd;		/* -1: none configured */
	const char		*target;
	struct sockaddr_storage	 addr;
	socklen_t		 len;
	int			 failing;
	uint64_t		 toolong;
};

extern struct forward	 auditd_forward;	/* every record, when configured */

int	 forward_open(struct forward *, const char *);
void	 forward_send(struct forward *, const char *, const char *,
	    const char *, size_t);

/* checkpoint.c */
void	 ckpt_setup(const struct auditd_conf *);
int	 ckpt_make(const struct auditlog *, struct ckpt *);
void	 ckpt_publish(const struct ckpt *);
int	 ckpt_check(struct auditlog *, struct ckpt *, const char **,
	    json_t **);
int	 ckpt_origin_find(struct auditlog *);
int	 ckpt_origin_record(struct auditlog *);

/* writer.c */
int	 writer_event(struct conn *, struct msg *, json_t *);
int	 writer_own_event(const char *, json_t *);
void	 writer_commit(void);
int	 writer_rotate(const char *, char *, size_t);
void	 writer_checkpoint_start(void);
int	 writer_checkpoint(void);

/* seen.c: each writer's last recorded seq, to drop a resent event */
#define WRITER_MAX	95	/* "name:pid:16 hex digits" */
#define SEEN_NEW	0
#define SEEN_WRITTEN	1
#define SEEN_PENDING	2

int	 seen_check(const char *, uint64_t, uint64_t *);
void	 seen_pending(const char *, uint64_t);
void	 seen_written(const char *, uint64_t, uint64_t);
void	 seen_settled(void);
const char *seen_writer(const json_t *, uint64_t *);
int	 seen_load(struct auditlog *);

/* control.c */
int	 control_tail(struct conn *, struct msg *, json_t *);
int	 control_show(struct conn *, struct msg *, json_t *);
int	 control_stats(struct conn *, struct msg *, json_t *);
int	 control_rotate(struct conn *, struct msg *, json_t *);
void	 control_publish(const struct arec *, size_t);
void	 control_closed(struct conn *);

#endif
