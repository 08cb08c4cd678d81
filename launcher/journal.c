/* SPDX-License-Identifier: ISC */
/*
 * The crash trail, launcher side.  When runnerd is gone the launcher
 * tears down what still runs, and notes each sandbox in a journal in
 * the state directory ("req-... call|session <time> [ses-...]"), synced
 * before it exits.  It holds a lock on launcher.lock all its life, so
 * the next launcher, which takes the lock before anything else, reads
 * the journal only once the old one has finished.  runnerd audits the
 * journal (trail.c) and then has it removed.  The launcher is root in
 * a directory runnerd's user owns: the directory is opened once and
 * every file in it by openat with O_NOFOLLOW.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "io.h"
#include "launcher.h"
#include "log.h"

#define JOURNAL_FILE	"launcher.journal"
#define LOCK_FILE	"launcher.lock"
#define LOCK_WAIT_MS	30000
#define LOCK_POLL_MS	100
#define JOURNAL_MAX	(1024 * 1024)

static int	 state_fd = -1;
static int	 journal_fd = -1;

/*
 * Opens the state directory and takes the lock, waiting for a launcher
 * of a previous runnerd to finish its teardown.
 */
void
journal_lock(const struct as_config *conf)
{
	struct timespec poll = { 0, LOCK_POLL_MS * 1000000L };
	int fd, waited = 0;

	if ((state_fd = open(conf->runnerd.state_dir, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1)
		fatal("%s", conf->runnerd.state_dir);
	if ((fd = openat(state_fd, LOCK_FILE, O_RDONLY | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		fatal("%s/%s", conf->runnerd.state_dir, LOCK_FILE);
	while (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			fatal("lock %s/%s", conf->runnerd.state_dir, LOCK_FILE);
		if (waited == 0)
			log_info("waiting for the previous launcher to finish");
		if ((waited += LOCK_POLL_MS) > LOCK_WAIT_MS)
			fatalx("the launcher of a previous runnerd still holds "
			    "%s/%s after %d s: it may hang tearing down its "
			    "sandboxes (fuser -v that file names it); end it "
			    "and start runnerd again", conf->runnerd.state_dir,
			    LOCK_FILE, LOCK_WAIT_MS / 1000);
		nanosleep(&poll, NULL);
	}
	/* Held until the launcher exits: the descriptor stays open. */
}

/* A regular file of root's with one name: not planted, not a link. */
static int
journal_ours(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == -1)
		return 0;
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != 0 ||
	    st.st_size > JOURNAL_MAX) {
		log_warnx("%s is not the launcher's: ignored", JOURNAL_FILE);
		return 0;
	}
	return 1;
}

/* One line as {"request_id", "kind", "when", "session_id"?}, or NULL. */
static json_t *
journal_entry(char *line)
{
	char rid[REQID_STR_LEN + 1], kind[8], when[32], sid[32];
	uint64_t id;
	int n;

	n = sscanf(line, "%21s %7s %31s %31s", rid, kind, when, sid);
	if (n < 3 || reqid_parse(rid, &id) == -1 ||
	    (strcmp(kind, "call") != 0 && strcmp(kind, "session") != 0))
		return NULL;
	return json_pack("{s:s, s:s, s:s, s:s*}", "request_id", rid, "kind",
	    kind, "when", when, "session_id", n == 4 ? sid : NULL);
}

/*
 * The entries a previous launcher left, or NULL when it left no
 * journal.  A line cut short by a crash is dropped.
 */
json_t *
journal_read(void)
{
	char *buf, *line, *save;
	json_t *a, *e;
	int fd;

	if ((fd = openat(state_fd, JOURNAL_FILE, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		if (errno != ENOENT)
			log_warn("%s", JOURNAL_FILE);
		return NULL;
	}
	buf = journal_ours(fd) ? read_lines(fd, JOURNAL_MAX) : NULL;
	close(fd);
	if (buf == NULL || (a = json_array()) == NULL) {
		free(buf);
		return NULL;
	}
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if ((e = journal_entry(line)) != NULL)
			json_array_append_new(a, e);
	free(buf);
	log_info("%s: %zu sandboxes torn down after runnerd stopped",
	    JOURNAL_FILE, json_array_size(a));
	return a;
}

/* Notes a sandbox torn down; session is NULL for a one-shot call's. */
void
journal_note(uint64_t id, const char *session)
{
	char rid[REQID_STR_LEN], when[32], line[128];
	struct tm tm;
	time_t now;
	int fd;

	if (journal_fd == -1) {
		if ((fd = openat(state_fd, JOURNAL_FILE, O_WRONLY | O_APPEND |
		    O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) == -1) {
			log_warn("%s", JOURNAL_FILE);
			return;
		}
		if (!journal_ours(fd)) {
			close(fd);
			return;
		}
		journal_fd = fd;
	}
	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	reqid_format(id, rid);
	snprintf(line, sizeof(line), "%s %s %s%s%s\n", rid, session != NULL ?
	    "session" : "call", when, session != NULL ? " " : "",
	    session != NULL ? session : "");
	if (write(journal_fd, line, strlen(line)) != (ssize_t)strlen(line))
		log_warn("%s", JOURNAL_FILE);
}

/* Before the launcher exits: what it noted is on disk. */
void
journal_sync(void)
{
	if (journal_fd == -1)
		return;
	if (fsync(journal_fd) == -1)
		log_warn("%s", JOURNAL_FILE);
	close(journal_fd);
	journal_fd = -1;
}

/* runnerd recorded every entry: the journal has served. */
void
journal_remove(void)
{
	if (unlinkat(state_fd, JOURNAL_FILE, 0) == -1 && errno != ENOENT)
		log_warn("%s", JOURNAL_FILE);
}
