/* SPDX-License-Identifier: ISC */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "auditd.h"
#include "daemon.h"
#include "grant.h"
#include "log.h"
#include "sandbox.h"

/* Enough for every daemon's writers plus operators' readers. */
#define AUDIT_MAXCONNS	512

static struct peer_acl	 audit_acl;

/*
 * Writers (the daemons) and readers (auditctl) share audit.sock; the
 * listener admits either, each rule then names the role it is for.  An
 * event's strings may hold NUL: a program's output, recorded as it was.
 */
static const struct msg_rule audit_rules[] = {
	{ MSG_AUDIT_EVENT, PAYLOAD_JSON_NUL, 0, 0, &auditd_conf.auditd.peers,
	    writer_event },
	{ MSG_AUDIT_TAIL, PAYLOAD_JSON_OPT, 0, 0, &auditd_conf.auditd.readers,
	    control_tail },
	{ MSG_AUDIT_SHOW, PAYLOAD_JSON_OPT, 0, 0, &auditd_conf.auditd.readers,
	    control_show },
	{ MSG_AUDIT_STATS, PAYLOAD_NONE, 0, 0, &auditd_conf.auditd.readers,
	    control_stats },
	{ MSG_AUDIT_ROTATE, PAYLOAD_NONE, 0, 0, &auditd_conf.auditd.readers,
	    control_rotate },
	{ 0, 0, 0, 0, NULL, NULL }
};

static struct listener	 audit_listener = {
	.name = "audit.sock",
	.owner = auditd_conf.auditd.user,
	.acl = &audit_acl,
	.maxconns = AUDIT_MAXCONNS,
	.rules = audit_rules,
	.closed = control_closed,
};

static void
auditd_sighup(void)
{
	char old[PATH_MAX];

	(void)writer_rotate("SIGHUP", old, sizeof(old));
}

/*
 * auditctl verify reads the log itself: the readers may read the files
 * (a directory passes that on to the files rotation makes in it).
 */
static void
readers_grant(int fd, const char *path, int inherit)
{
	/* Without a user to switch to, auditd and its readers are one. */
	if (geteuid() != 0 || auditd_conf.auditd.user[0] == '\0')
		return;
	if (grant_fd(fd, &auditd_conf.auditd.readers, inherit ?
	    GRANT_R | GRANT_X : GRANT_R, inherit) == 0)
		return;
	if (errno == EOPNOTSUPP)
		log_warnx("%s: no ACLs on this file system: auditctl verify "
		    "needs root or the log's owner", path);
	else
		fatal("%s: ACL", path);
}

/* The log's directory is auditd's alone, but for what readers may read. */
static void
log_dir_open(const char *dir)
{
	int fd;

	if ((fd = priv_state_dir(dir, auditd_conf.auditd.user)) == -1)
		fatal("%s", dir);
	readers_grant(fd, dir, 1);
	close(fd);
}

/* The key's and the checkpoint's: auditd's alone. */
static void
state_dir_open(const char *dir)
{
	int fd;

	if ((fd = priv_state_dir(dir, auditd_conf.auditd.user)) == -1)
		fatal("%s", dir);
	close(fd);
}

/* Writes one of auditd's records at start-up, or exits. */
static void
start_record(const char *what, int r)
{
	if (r == -1)
		fatalx("cannot record %s", what);
	writer_commit();
	if (auditd_log.failures > 0)
		fatal("%s: cannot record %s", auditd_log.path, what);
}

/*
 * The log is behind its latest checkpoint, differs at its seq, or is
 * another log: the file is moved aside as evidence and a new segment
 * chains from the checkpoint, starting with what was found.  1 when it
 * did.
 */
static int
log_anchor(void)
{
	char old[PATH_MAX];
	const char *event;
	struct ckpt c;
	json_t *note;

	if (ckpt_check(&auditd_log, &c, &event, &note) == -1)
		fatalx("%s: cannot compare the log with its checkpoint",
		    auditd_conf.auditd.checkpoint_file);
	if (note == NULL)
		return 0;
	if (strcmp(auditd_conf.auditd.on_truncation, "refuse") == 0)
		fatalx("%s: %s (on_truncation: refuse)", auditd_log.path,
		    event);
	if (alog_rotate(&auditd_log, old, sizeof(old)) == -1)
		fatal("%s: cannot move the log aside", auditd_log.path);
	auditd_log.seq = c.seq;
	memcpy(auditd_log.head, c.head, sizeof(auditd_log.head));
	if (json_object_set_new(note, "previous_file",
	    json_string(basename(old))) == -1)
		fatalx("cannot record %s", event);
	start_record(event, writer_own_event(event, note));
	return 1;
}

int
main(int argc, char *argv[])
{
	struct daemon_opts opts;
	struct sandbox_paths paths = { .rw = { NULL }, .ro = { NULL } };
	char logdir[PATH_MAX], ckptdir[PATH_MAX], keydir[PATH_MAX];
	json_t *note;
	int named;

	daemon_start(argc, argv, "auditd", &opts, &auditd_conf);
	audit_acl = auditd_conf.auditd.peers;
	acl_merge(&audit_acl, &auditd_conf.auditd.readers);
	if (server_listen(&auditd_conf, &audit_listener) == -1)
		fatal("%s", audit_listener.name);
	daemon_signals(auditd_sighup);
	strlcpy(logdir, auditd_conf.auditd.log, sizeof(logdir));
	paths.rw[1] = dirname(logdir);
	log_dir_open(paths.rw[1]);
	strlcpy(ckptdir, auditd_conf.auditd.checkpoint_file, sizeof(ckptdir));
	paths.rw[2] = dirname(ckptdir);
	strlcpy(keydir, auditd_conf.auditd.key, sizeof(keydir));
	state_dir_open(paths.rw[2]);
	state_dir_open(dirname(keydir));
	ckpt_setup(&auditd_conf.auditd);
	if (forward_open(&auditd_forward, auditd_conf.auditd.forward_syslog) ==
	    -1)
		fatal("forward_syslog %s", auditd_conf.auditd.forward_syslog);
	priv_drop(auditd_conf.auditd.user);
	/* As our own user: rotation makes files in this directory. */
	if (alog_open(&auditd_log, auditd_conf.auditd.log, &note) == -1)
		fatal("%s", auditd_conf.auditd.log);
	readers_grant(auditd_log.fd, auditd_conf.auditd.log, 0);
	if ((named = ckpt_origin_find(&auditd_log)) == -1)
		fatal("%s: cannot read the log's origin", auditd_log.path);
	/* A new segment's first record names the checkpoint's origin. */
	if (log_anchor())
		named = auditd_log.origin[0] != '\0';
	if (note != NULL)
		start_record("the recovery", writer_own_event("audit.recovered",
		    note));
	if (!named)
		start_record("the log's origin",
		    ckpt_origin_record(&auditd_log));
	if (seen_load(&auditd_log) == -1)
		fatal("%s: cannot read the writers' last events",
		    auditd_log.path);
	paths.rw[0] = auditd_conf.runtime_dir;
	sandbox_enter(ROLE_AUDITD, &paths, daemon_trap(&auditd_conf));
	log_info("%s: seq %llu", auditd_log.path,
	    (unsigned long long)auditd_log.seq);
	writer_checkpoint_start();
	daemon_run();
	writer_commit();
	if (writer_checkpoint() == -1)
		fatalx("%s: no checkpoint at shutdown", auditd_log.path);
	return 0;
}
